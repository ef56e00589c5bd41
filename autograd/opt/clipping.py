"""Gradient clipping by the global norm over the (param, grad) pairs of one backward."""
import numpy as np

from ..device import cpu, device_of_array, get_array_module
from ..recording import replayable
from ..tensor import Tensor
from .schedules import _positive

__all__ = ["clip_grad_norm"]


@replayable       # raw array maths on the gradients: graph mode records it as one call
def clip_grad_norm(pairs, max_norm, epsilon=1e-6):
    """Scale every gradient by ``min(1, max_norm / (norm + epsilon))``, where ``norm`` is the
    L2 norm of all the gradients together; returns ``(clipped_pairs, norm)``.

    ``pairs`` is an iterable of ``(param, grad)`` as ``autograd.backward`` yields them (grad a
    Tensor or a raw array). The clipped gradients are NEW arrays (Tensors for Tensors, arrays
    for arrays), in the same order; the given ones are left as they were, since backward may
    share one array between several gradients. ``norm`` is a 0-d Tensor on the gradients'
    device: the norm and the scale are computed there, so clipping never waits for the GPU
    (``norm.item()`` does, when you want the number). A non-finite norm gives non-finite
    gradients, which the caller can detect from ``norm``.

    >>> import numpy as np, autograd
    >>> w = autograd.Tensor(data=[3.0, 4.0], stores_grad=True)
    >>> pairs, norm = clip_grad_norm(autograd.backward(autograd.sum(w * w)), max_norm=1.0)
    >>> norm.item(), pairs[0][1].to_numpy().round(4)
    (10.0, array([0.6, 0.8], dtype=float32))
    """
    _positive(max_norm, "clip_grad_norm", "max_norm")
    pairs = list(pairs)
    arrays = []
    for index, pair in enumerate(pairs):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise TypeError(f"clip_grad_norm: expected (param, grad) pairs, item {index} is "
                            f"{type(pair).__name__}")
        grad = pair[1]
        array = grad.data if isinstance(grad, Tensor) else grad
        if not (hasattr(array, "shape") and hasattr(array, "dtype")) or array.dtype.kind != "f":
            raise TypeError(f"clip_grad_norm: the gradient of pair {index} must be a floating "
                            f"Tensor or array, got {type(grad).__name__}")
        arrays.append(array)
    if not arrays:
        return [], Tensor.from_gradient(np.zeros((), np.float32), cpu())
    xp = get_array_module(arrays[0])
    if any(get_array_module(array) is not xp for array in arrays):
        raise TypeError("clip_grad_norm: the gradients are on different devices")

    total = None
    for array in arrays:
        # one pass that writes nothing: a dot product of the gradient with itself (BLAS),
        # not array * array (a temporary the gradient's size) summed after
        flat = array.reshape(-1)
        squares = xp.vdot(flat, flat)
        total = squares if total is None else total + squares
    norm = xp.sqrt(xp.asarray(total))
    scale = xp.minimum(1.0, max_norm / (norm + epsilon))

    clipped = []
    for (param, grad), array in zip(pairs, arrays):
        scaled = array * scale.astype(array.dtype)
        if isinstance(grad, Tensor):
            scaled = Tensor.from_gradient(scaled, grad.device)
        clipped.append((param, scaled))
    device = pairs[0][1].device if isinstance(pairs[0][1], Tensor) else device_of_array(arrays[0])
    return clipped, Tensor.from_gradient(norm, device)
