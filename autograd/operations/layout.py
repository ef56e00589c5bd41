"""Image layouts: every image array is (N, C, H, W) by shape (the public contract), but it may be
stored batch-last, as a view of a C-contiguous (C, H, W, N) array.

conv2d's column path computes batch-last: its im2col copies and col2im adds then run along
OW * N contiguous elements rather than OW, and its GEMM writes that layout directly, so it returns
it. ReLU (and every op through ``threads.elementwise``), max and average pooling, BatchNorm and
the Winograd convolution keep the layout of their input, so a conv-relu-pool chain never
transposes; an op that needs another layout (a reshape to (N, features), say) copies, as NumPy
does for any strided array, and NumPy's own ufuncs give results in their inputs' layout.
Measured on the example CNN's step at 2 threads, against NCHW outputs with a transposing copy at
each convolution: 20.3-24.4 against 22.4-27.6 ms (three alternating pairs).

>>> import numpy as np
>>> x = from_batch_last(np.zeros((3, 4, 5, 2), np.float32))
>>> x.shape, is_batch_last(x), batch_last(x).shape
((2, 3, 4, 5), True, (3, 4, 5, 2))
"""
from .. import memory, threads

__all__ = []     # internal helpers, not part of the public API

BATCH_LAST = (1, 2, 3, 0)     # memory.axis_order of an (N, C, H, W) array stored (C, H, W, N)


def is_batch_last(x):
    """Whether (N, C, H, W) ``x`` is a view of a C-contiguous (C, H, W, N) array (where N or
    C * H * W is 1, it is C order as well)."""
    return x.ndim == 4 and x.transpose(BATCH_LAST).flags.c_contiguous


def image_axis_order(x):
    """``memory.axis_order`` of (N, C, H, W) images, where a batch-last ``x`` counts as
    ``BATCH_LAST`` even when axes of length 1 make other orders fit too (an (N, C, 1, 1) x, whose
    padding or pooling must still come out batch-last); None where x is not dense."""
    if is_batch_last(x) and not x.flags.c_contiguous:
        return BATCH_LAST
    return memory.axis_order(x)


def batch_last(x):
    """(N, C, H, W) images as a C-contiguous (C, H, W, N) array: a view of ``x`` where it is
    batch-last already, else a copy (split over the threads)."""
    return threads.ascontiguousarray(x.transpose(BATCH_LAST))


def from_batch_last(array):
    """The (N, C, H, W) view of a (C, H, W, N) array."""
    return array.transpose(3, 0, 1, 2)
