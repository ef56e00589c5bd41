"""In-place parameter updates in one pass where the arithmetic allows: the optimizers' kernels.

``p -= lr * g`` in NumPy is two passes over the parameter's size and a temporary as large as
the gradient (``lr * g`` is written, then read back by the subtraction); PyTorch's
``p.add_(g, alpha=-lr)`` is one fused pass. For float32 NumPy arrays that are contiguous and
do not overlap, :func:`axpy` and a whole Adam step run compiled, each one pass split over the
compiled kernels' threads (native_update.py); other float32/float64 contiguous arrays take
BLAS's ``saxpy``/``daxpy`` (``y += a * x`` in place, one read of each and one write of ``y``;
see blas.py for which BLAS); anything else (CuPy, strided, another dtype, a NumPy scalar) the
NumPy expression. Measured at one thread, a (784, 512) float32 parameter: 164 us for ``p -= lr
* g``, 85 us by ``saxpy`` (PyTorch's ``add_``: 78 us).

Rounding: BLAS and the compiled kernels may fuse ``a * x + y`` into one rounding (FMA) where
NumPy rounds ``a * x`` first, so results can differ from the NumPy expression in the last bit;
every update of a parameter goes through the same kernel, so a replayed step still equals the
eager one.

>>> import numpy as np
>>> p = np.array([1.0, 2.0], np.float32)
>>> axpy(-0.5, np.array([2.0, 2.0], np.float32), p)
>>> p
array([0., 1.], dtype=float32)
"""
import numpy as np

from ..device import get_array_module
from . import blas, native_update

__all__ = []     # reached through numpy_kernels / cupy_kernels

# below this many elements a NumPy expression costs less than a call into BLAS
_BLAS_MIN_SIZE = 256


def axpy(alpha, x, y):
    """``y += alpha * x`` in place (``y`` is written, ``x`` is not); x and y of one shape."""
    if native_update.axpy(alpha, x, y):
        return
    if (type(y) is np.ndarray and type(x) is np.ndarray and y.size >= _BLAS_MIN_SIZE
            and y.dtype == x.dtype and y.flags.c_contiguous and x.flags.c_contiguous
            and y.flags.writeable and blas.axpy(alpha, x, y)):
        return
    if alpha == -1.0:
        y -= x
    elif alpha == 1.0:
        y += x
    else:
        y += alpha * x


def with_weight_decay(grad, data, weight_decay):
    """``grad + weight_decay * data`` (the L2 penalty) as a new array, or ``grad`` itself when
    ``weight_decay`` is 0: the caller's gradient may be shared with another parameter's."""
    if weight_decay == 0:
        return grad
    decayed = weight_decay * data
    decayed += grad
    return decayed


def sgd_update(data, grad, state, lr, momentum, dampening, weight_decay, nesterov):
    """One SGD step on ``data`` in place (PyTorch's formula, see ``opt.SGD``); the momentum
    buffer lives in ``state["momentum_buffer"]``. ``grad`` is never written."""
    grad = with_weight_decay(grad, data, weight_decay)
    buffer = state.get("momentum_buffer")
    if momentum != 0 or buffer is not None:
        if buffer is None:
            buffer = state["momentum_buffer"] = grad.copy()
        else:
            buffer *= momentum
            axpy(1.0 - dampening, grad, buffer)
        if nesterov:
            axpy(-lr, grad, data)
            axpy(-lr * momentum, buffer, data)
            return
        grad = buffer
    axpy(-lr, grad, data)


def adam_update(data, grad, state, lr, beta_1, beta_2, epsilon, weight_decay, decoupled):
    """One Adam (``decoupled``: AdamW) step on ``data`` in place, the moments in ``state["m"]``
    and ``state["v"]`` and the count in ``state["step"]``; one temporary of the gradient's size
    (the NumPy expression makes five)."""
    xp = get_array_module(data)
    m = state.get("m")
    if m is None:
        m = state["m"] = xp.zeros_like(data)
    v = state.get("v")
    if v is None:
        v = state["v"] = xp.zeros_like(data)
    t = state.get("step", 0) + 1
    inverse_correction = 1.0 / (1.0 - beta_2 ** t)            # v_hat = v * this
    step = -lr / (1.0 - beta_1 ** t)                           # m_hat's correction folded in
    settings = (beta_1, beta_2, 1.0 - beta_1, 1.0 - beta_2, epsilon,
                0.0 if decoupled else weight_decay,
                1.0 - lr * weight_decay if decoupled else 1.0, inverse_correction, step)
    if native_update.adam(data, grad, m, v, settings):      # the same arithmetic, one pass
        state["step"] = t
        return
    if not decoupled:
        grad = with_weight_decay(grad, data, weight_decay)
    m *= beta_1
    axpy(1.0 - beta_1, grad, m)
    v *= beta_2
    scratch = xp.multiply(grad, grad)
    axpy(1.0 - beta_2, scratch, v)
    if decoupled and weight_decay != 0:
        data *= 1.0 - lr * weight_decay
    xp.multiply(v, inverse_correction, out=scratch)             # v_hat
    xp.sqrt(scratch, out=scratch)
    scratch += epsilon
    xp.divide(m, scratch, out=scratch)                         # m / (sqrt(v_hat) + eps)
    axpy(step, scratch, data)
    state["step"] = t
