"""The softmax cross-entropy of a language model's head over rows of logits (positions, V):
the probabilities in one pass over each row and, in backward, ``(P - onehot) * weight``.

A head over a 10k vocabulary makes (positions, V) arrays of tens of megabytes each step; from
``numpy.empty`` they were fresh pages every step (about 15 ms of page faults each for 1120 x
10000 float32 on this machine's CPU), so on the CPU they come from the buffer cache, and the
rows are split over the threads (NumPy's ufuncs run on one).

>>> import numpy as np
>>> losses, probabilities = softmax_rows(np.zeros((1, 4), np.float32), np.array([3]))
>>> round(float(losses[0]), 4), probabilities.tolist()        # log 4
(1.3863, [[0.25, 0.25, 0.25, 0.25]])
"""
from ..device import get_array_module
from . import buffer_cache, native, threads

__all__ = []     # reached through the kernels of numpy_kernels.py / cupy_kernels.py


def softmax_rows(rows, targets):
    """``(losses, probabilities)`` of logits ``rows`` (R, V) against integer ``targets`` (R,),
    all in [0, V): losses[r] = -log softmax(rows[r])[targets[r]], probabilities = softmax over
    V (a new array; ``rows`` is not changed)."""
    xp = get_array_module(rows)
    probabilities = buffer_cache.empty(xp, rows.shape, rows.dtype)
    losses = xp.empty(rows.shape[0], rows.dtype)

    def part(start, stop):
        if native.softmax_cross_entropy(rows[start:stop], targets[start:stop],
                                        probabilities[start:stop], losses[start:stop]):
            return
        out = probabilities[start:stop]
        xp.subtract(rows[start:stop], rows[start:stop].max(axis=1, keepdims=True), out=out)
        picked = out[xp.arange(stop - start), targets[start:stop]]
        xp.exp(out, out=out)
        total = out.sum(axis=1)
        losses[start:stop] = xp.log(total) - picked
        out /= total[:, None]

    threads.parallel_for(part, rows.shape[0], probabilities)
    return losses, probabilities


def softmax_rows_backward(probabilities, targets, weight):
    """dx = (probabilities - onehot(targets)) * weight[:, None] for (R, V) probabilities, (R,)
    targets and row weights (a new array)."""
    xp = get_array_module(probabilities)
    dx = buffer_cache.empty(xp, probabilities.shape, probabilities.dtype)

    def part(start, stop):
        xp.multiply(probabilities[start:stop], weight[start:stop, None], out=dx[start:stop])
        dx[xp.arange(start, stop), targets[start:stop]] -= weight[start:stop]

    threads.parallel_for(part, probabilities.shape[0], dx)
    return dx
