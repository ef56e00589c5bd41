"""Numerical gradient checking: the way to test an Operation you wrote.

``gradcheck(fn, inputs)`` runs ``fn`` on float64 copies of the inputs, backpropagates a random
upstream gradient ``dy`` (random, so that an op whose outputs sum to a constant, like softmax,
is still checked), and compares each input's gradient with central finite differences of
``sum(fn(inputs) * dy)``.

>>> import numpy as np, autograd
>>> class Cube(autograd.Operation):
...     def forward(self, x):
...         self.save_for_backward(x)
...         return x ** 3
...     def backward(self, dy):
...         (x,) = self.saved
...         return 3 * x ** 2 * dy
>>> gradcheck(lambda t: Cube()(t), [autograd.Tensor(data=np.random.rand(3, 4))])
True
"""
import numpy as np

from .device import move_array
from .graph import gradients, no_grad
from .tensor import Tensor
from .operations.elementwise import mul
from .operations.reduction import sum as reduce_all

__all__ = ["gradcheck", "GradcheckError"]


class GradcheckError(AssertionError):
    """An analytic gradient disagrees with finite differences; the message says where."""


def gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, seed=0):
    """Check the gradients of ``fn(*inputs)`` against central finite differences in float64.

    ``inputs`` are Tensors or arrays. Floating inputs with ``requires_grad=True`` are checked;
    others (labels, indices, ``requires_grad=False`` constants) are passed through unchanged.
    ``fn`` may return a Tensor or a tuple of Tensors. An element passes when
    ``|analytic - numeric| <= atol + rtol * |numeric|``.

    Returns True, or raises :class:`GradcheckError` naming the input, the element, and the
    numeric and analytic values of the first mismatch.
    """
    tensors, checked = _float64_inputs(inputs)
    outputs = _as_tuple(fn(*tensors), "gradcheck: fn")
    rng = np.random.default_rng(seed)
    upstream = [move_array(rng.standard_normal(o.shape), o.device) for o in outputs]
    for o in outputs:
        if o.data.dtype != np.float64:
            raise TypeError(f"gradcheck: fn returned a {o.data.dtype} tensor from float64 inputs")
    analytic = _analytic(outputs, upstream)

    def objective():
        with no_grad():
            results = _as_tuple(fn(*tensors), "gradcheck: fn")
        return sum(float((r.data * u).sum()) for r, u in zip(results, upstream))

    for position in checked:
        data = tensors[position].data
        grad = analytic.get(tensors[position])
        grad = np.zeros(data.shape) if grad is None else grad.to_numpy()
        for element in np.ndindex(*data.shape):
            original = data[element].item()
            data[element] = original + eps
            above = objective()
            data[element] = original - eps
            below = objective()
            data[element] = original
            numeric = (above - below) / (2 * eps)
            value = float(grad[element])
            if not abs(value - numeric) <= atol + rtol * abs(numeric):
                raise GradcheckError(
                    f"gradcheck: input {position}, element {element}: numeric {numeric:.8g}, "
                    f"analytic {value:.8g} (difference {abs(value - numeric):.3g}, "
                    f"tolerance {atol + rtol * abs(numeric):.3g})")
    return True


def _float64_inputs(inputs):
    tensors, checked = [], []
    for position, x in enumerate(inputs):
        data = x.data if isinstance(x, Tensor) else x
        wants_grad = x.requires_grad if isinstance(x, Tensor) else True
        if not hasattr(data, "dtype"):
            data = np.asarray(data, dtype=np.float64)
        if data.dtype.kind == "f":
            device = x.device if isinstance(x, Tensor) else None
            t = Tensor(data=data, device=device, dtype=np.float64,
                       requires_grad=wants_grad, stores_grad=wants_grad)
            if wants_grad:
                checked.append(position)
        else:
            t = x if isinstance(x, Tensor) else Tensor(data=data)
        tensors.append(t)
    if not checked:
        raise ValueError("gradcheck: no floating input requires a gradient; nothing to check")
    return tensors, checked


def _as_tuple(outputs, name):
    outputs = outputs if isinstance(outputs, (tuple, list)) else (outputs,)
    for o in outputs:
        if not isinstance(o, Tensor):
            raise TypeError(f"{name} must return Tensors, got {type(o).__name__}")
    return tuple(outputs)


def _analytic(outputs, upstream):
    recorded = [(o, u) for o, u in zip(outputs, upstream) if o.creator is not None]
    if not recorded:
        return {}
    if len(recorded) == 1:
        output, dy = recorded[0]
        return gradients(output, dy)
    total = reduce_all(*[reduce_all(mul(o, Tensor(data=u, device=o.device,
                                                  requires_grad=False)))
                         for o, u in recorded])
    return gradients(total)
