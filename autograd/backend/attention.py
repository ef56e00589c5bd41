"""The attention softmax: scores (..., Tq, Tk) turned into probabilities over the keys in
place, and the softmax part of its backward, on the CPU split over the threads by (batch,
head) slices. PyTorch's CPU attention runs these passes on every thread; NumPy's ufuncs run on
one, which left half of a 2-core machine idle for the (T, T) passes of a long context.

Without a mask or dropout, :func:`fused_forward` and :func:`fused_backward` run the whole
attention of each head in the compiled kernels (csrc/kernel_attention.h), the heads split over
the threads: NumPy's batched products ran one head after another on one thread, each of the
nine passes over all heads leaving the caches cold for the next.

>>> import numpy as np
>>> scores = np.zeros((1, 2, 2))
>>> masked_softmax(scores, np.tri(2, 2, dtype=bool), guard=False)
array([[[1. , 0. ],
        [0.5, 0.5]]])
"""
import numpy as np

from ..device import get_array_module
from . import buffer_cache, native, threads

__all__ = []     # reached through the kernels of numpy_kernels.py / cupy_kernels.py


def _slices(array):
    """``array`` (..., Tq, Tk) as (B, Tq, Tk), B the product of the leading axes (a view)."""
    return array.reshape((-1,) + tuple(array.shape[-2:]))


def masked_softmax(scores, keep, guard, causal=False):
    """softmax over the last axis of ``scores`` (..., Tq, Tk), in place, after setting the
    places where ``keep`` (boolean, broadcasting to scores; None for none) is False to -inf,
    and with ``causal`` the keys after each query too (those where numpy.tri(Tq, Tk) is
    False). With ``guard``, a row whose every key is masked gives zeros, not NaN. Returns the
    probabilities (scores itself when it is C-contiguous, else a C-contiguous copy)."""
    xp = get_array_module(scores)
    scores = xp.ascontiguousarray(scores)      # the (B, Tq, Tk) view below must not copy
    blocks = _slices(scores)
    queries, keys = blocks.shape[1:]
    if causal and keep is None and not guard and queries > 0:
        # no other mask: the compiled kernel knows the causal pattern without a boolean array
        # (not with guard: a row that an added mask made all -inf must give zeros, not NaN)
        rows = blocks.reshape(-1, keys)
        if native.takes_rows(rows):
            threads.parallel_for(lambda start, stop: native.attention_softmax(
                rows[start * queries:stop * queries], queries, True), blocks.shape[0], scores)
            return scores
    if causal:
        tri = xp.tri(queries, keys, dtype=bool)
        keep = tri if keep is None else keep & tri
    # (a broadcast causal mask stays a view; a padding mask may become one boolean copy)
    mask = None if keep is None else _slices(xp.broadcast_to(keep, scores.shape))

    def normalise(start, stop):
        part = blocks[start:stop]
        if (mask is None and not guard
                and native.attention_softmax(part.reshape(-1, keys), queries, False)):
            return
        if mask is not None:
            xp.copyto(part, -xp.inf, where=~mask[start:stop])
        peak = part.max(axis=-1, keepdims=True)
        if guard:
            peak[~xp.isfinite(peak)] = 0
        part -= peak
        xp.exp(part, out=part)
        total = part.sum(axis=-1, keepdims=True)
        if guard:
            total[total == 0] = 1
        part /= total

    threads.parallel_for(normalise, blocks.shape[0], scores)
    return scores


def softmax_backward(gradient, probabilities, rowsum):
    """dS = P * (G - rowsum), in place in ``gradient`` G (..., Tq, Tk); ``rowsum`` (..., Tq, 1)
    is rowsum(P * G) (attention gets it as rowsum(dy * y)). Returns dS (gradient itself when
    it is C-contiguous)."""
    gradient = get_array_module(gradient).ascontiguousarray(gradient)
    blocks, saved = _slices(gradient), _slices(probabilities)
    sums = rowsum.reshape((-1,) + tuple(rowsum.shape[-2:]))

    def apply(start, stop):
        part = blocks[start:stop]
        part -= sums[start:stop]
        part *= saved[start:stop]

    threads.parallel_for(apply, blocks.shape[0], gradient)
    return gradient


def _heads_of(*arrays):
    """The arrays (..., T, D) of one batch shape as 4-D (N, H, T, D) views ((B, T, D) as
    (1, B, T, D)) where the compiled kernels take them, else None."""
    if len({x.shape[:-2] for x in arrays}) != 1 or arrays[0].ndim not in (3, 4):
        return None
    heads = [x if x.ndim == 4 else x[None] for x in arrays]
    return heads if native.takes_heads(*heads) else None


def _laid_out_like(shape, like):
    """An uninitialised float32 array of ``shape`` (..., T, D) whose heads are laid out as
    ``like``'s: where ``like`` interleaves its heads by row (the (N, T, H, D) memory of a
    projection split into heads, whose T axis strides over the heads), the same, so that
    merging the heads back (a transpose and a reshape) is a view, not a copy."""
    if like.ndim == 4 and like.strides[2] > like.strides[1]:
        n, h, t, d = shape
        return buffer_cache.empty(np, (n, t, h, d), np.float32).transpose(0, 2, 1, 3)
    return buffer_cache.empty(np, shape, np.float32)


def _gradients_in_place_of(q, k, v):
    """dq, dk and dv, uninitialised. Where q, k and v are disjoint pieces of one array (the
    heads of a packed q/k/v projection), they are the same pieces of one new array, so that the
    projection's Split joins them without a copy (operations/joining.py: 1.3 ms of a GPT step);
    else each is laid out as its input."""
    base = q.base
    if (base is None or k.base is not base or v.base is not base
            or np.shares_memory(q, k) or np.shares_memory(q, v) or np.shares_memory(k, v)):
        return tuple(_laid_out_like(x.shape, x) for x in (q, k, v))
    bounds = [_byte_bounds(x) for x in (q, k, v)]
    low = min(start for start, _ in bounds)
    high = max(stop for _, stop in bounds)
    whole = buffer_cache.empty(np, ((high - low) // 4,), np.float32)
    return tuple(np.ndarray(x.shape, np.float32, buffer=whole, strides=x.strides,
                            offset=x.__array_interface__["data"][0] - low) for x in (q, k, v))


def _byte_bounds(x):
    """The first and one past the last byte address of a non-empty array's elements."""
    low = high = x.__array_interface__["data"][0]
    for size, stride in zip(x.shape, x.strides):
        if stride < 0:
            low += (size - 1) * stride
        else:
            high += (size - 1) * stride
    return low, high + x.itemsize


def fused_forward(q, k, v, scale, causal):
    """``(y, p)`` with p = softmax(q k^T scale) over the keys (``causal``: the keys after each
    query masked) and y = p v, for float32 q (..., Tq, D), k (..., Tk, D), v (..., Tk, Dv) of
    one batch shape, 3-D or 4-D, by the compiled kernels; None where they do not apply. y, and
    the gradients of :func:`fused_backward`, are laid out as q, k and v are."""
    inputs = _heads_of(q, k, v)
    if inputs is None:
        return None
    batch = q.shape[:-2]
    p = buffer_cache.empty(np, batch + (q.shape[-2], k.shape[-2]), q.dtype)
    y = _laid_out_like(batch + (q.shape[-2], v.shape[-1]), q)
    outputs = _heads_of(p, y)
    heads = outputs[0].shape[0] * outputs[0].shape[1]
    threads.parallel_for(lambda start, stop: native.attention_forward(
        *inputs, *outputs, scale, causal, start, stop), heads, p)
    return y, p


def fused_backward(q, k, v, p, y, dy, scale, causal):
    """``(dq, dk, dv)`` of :func:`fused_forward`'s y (and p, with the same ``causal``) for its
    gradient dy, by the compiled kernels; None where they do not apply."""
    inputs = _heads_of(q, k, v, p, y, dy)
    if inputs is None:
        return None
    grads = _gradients_in_place_of(q, k, v)
    outputs = _heads_of(*grads)
    heads = inputs[0].shape[0] * inputs[0].shape[1]
    threads.parallel_for(lambda start, stop: native.attention_backward(
        *inputs, *outputs, scale, causal, start, stop), heads, p)
    return grads
