"""Gradient clipping by the global norm over the (param, grad) pairs of one backward."""
import numpy as np

from ..backend import buffer_cache, native_update, threads
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
        squares = _sum_of_squares(array) if xp is np else xp.sum(array * array)
        total = squares if total is None else total + squares
    norm = xp.sqrt(xp.asarray(total))
    scale = xp.minimum(1.0, max_norm / (norm + epsilon))

    clipped = []
    for (param, grad), array in zip(pairs, arrays):
        if xp is np:        # a cached buffer: no fresh pages for a large gradient each step
            factor = scale.astype(array.dtype)
            scaled = buffer_cache.empty_like(array)
            if not native_update.scale(factor, array, scaled):
                # split over the threads when large: 10 MB took 1.6 ms on one core, 0.7 on two
                threads.elementwise(lambda out, x: np.multiply(x, factor, out=out), scaled,
                                    array)
        else:
            scaled = array * scale.astype(array.dtype)
        if isinstance(grad, Tensor):
            scaled = Tensor.from_gradient(scaled, grad.device)
        clipped.append((param, scaled))
    device = pairs[0][1].device if isinstance(pairs[0][1], Tensor) else device_of_array(arrays[0])
    return clipped, Tensor.from_gradient(norm, device)


# float32 dot products over blocks of this many elements, the blocks' sums added in float64:
# one pass over the gradient without a temporary of its size, and a rounding error bounded by
# a block's, not the whole gradient's
_SQUARES_BLOCK = 1 << 16


def _sum_of_squares(array):
    """sum(array ** 2) of a NumPy array, in its dtype: float32 by the compiled pass (added in
    float64 over the threads: 10 MB in 0.11 ms on two cores), else by blocks of BLAS dot
    products (the blocks split over the threads: 10 MB took 0.58 ms on one core, 0.40 on
    two)."""
    total = native_update.sum_of_squares(array)
    if total is not None:
        return array.dtype.type(total)
    flat = array.reshape(-1) if array.flags.c_contiguous else np.ravel(array)
    if flat.size <= _SQUARES_BLOCK or flat.dtype.itemsize < 4:
        return np.sum(flat * flat)
    count = -(-flat.size // _SQUARES_BLOCK)
    sums = np.empty(count)

    def blocks(start, stop):
        for index in range(start, stop):
            block = flat[index * _SQUARES_BLOCK:(index + 1) * _SQUARES_BLOCK]
            sums[index] = np.dot(block, block)

    threads.parallel_for(blocks, count, flat)
    return flat.dtype.type(sums.sum())
