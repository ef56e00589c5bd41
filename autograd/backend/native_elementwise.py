"""The compiled elementwise passes (csrc/kernel_rows.h, elementwise_bindings.h) for
elementwise.py: ReLU and its gradient over float32 NumPy arrays in any dense layout, split over
the compiled kernels' threads. As in native.py, each returns True, or None where the kernel does
not apply (nothing written), and the caller runs its portable NumPy code.

Why: NumPy's ``maximum(x, 0)`` has no SIMD loop for a scalar operand, and a small batch's
activations are short passes whose Python around them costs as much as the loop: a CNN's
(8, 32, 8, 8) batch-last ReLU took 20 us here against PyTorch's 2.4 (benchmarks/NOTES.md,
nineteenth session).

>>> import numpy as np
>>> x = np.array([[-1.0, 2.0], [3.0, -4.0]], np.float32).T       # a transposed (dense) array
>>> y = np.empty_like(x)                                          # laid out as x
>>> if not relu(x, y):                                            # not built, or switched off
...     np.maximum(x, 0, out=y)
>>> y
array([[0., 3.],
       [2., 0.]], dtype=float32)
"""
import numpy as np

from .native import _FLOAT32, _native, _split_threads, _state

__all__ = []     # used by elementwise.py


def relu(x, y):
    """``y = max(x, 0)``, y writable and laid out as x (the same strides)."""
    flat = _flat_views(x, y)
    if flat is None:
        return None
    _native.relu_forward(*flat, _split_threads())
    return True


def relu_backward(dy, y, dx):
    """``dx = dy`` where ``y > 0``, else 0; the three laid out alike, dx writable."""
    flat = _flat_views(dy, y, dx)
    if flat is None:
        return None
    _native.relu_backward(*flat, _split_threads())
    return True


def row_means(x, scale):
    """``scale * x.sum(axis=1)`` of a C-contiguous float32 2-D NumPy x as a new (R,) array, its
    rows split over the threads (kernel_rows.h's row_means: each row's values in 16 float32
    partial sums, added in order); None where the kernel does not apply."""
    if not (_state["enabled"] and type(x) is np.ndarray and x.dtype == _FLOAT32 and x.ndim == 2
            and x.flags.c_contiguous and x.shape[0] and x.shape[1]):
        return None
    out = np.empty(x.shape[0], _FLOAT32)
    _native.row_means(x, out, scale, _split_threads())
    return out


def _flat_views(*arrays):
    """The arrays (the last one written) as C-contiguous views in their memory order, or None
    where the kernel does not apply: switched off, not float32 NumPy arrays of one shape and
    one layout, not dense. The binding refuses a written array that overlaps a read one."""
    if not _state["enabled"]:
        return None
    out = arrays[-1]
    shape, strides = out.shape, out.strides
    contiguous = True
    for array in arrays:
        if type(array) is not np.ndarray or array.dtype != _FLOAT32 or array.shape != shape:
            return None
        contiguous = contiguous and array.flags.c_contiguous
    if contiguous:       # whatever the strides of axes of length 1 (a batch of one image's)
        return arrays
    for array in arrays:
        if array.strides != strides:
            return None
    # ravel('K') is a view exactly when the array is dense (else a copy, whose base is None);
    # of out it must be one, and the inputs, with out's strides, are then dense too
    flat = [array.ravel("K") for array in arrays]
    return flat if flat[-1].base is not None else None
