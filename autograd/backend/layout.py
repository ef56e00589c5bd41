"""Image layouts: every image array is (N, C, H, W) by shape (the public contract), but the
backend may store it batch-last, as a view of a C-contiguous (C, H, W, N) array.

The column-path convolution computes batch-last: its im2col copies and col2im adds then run
along OW * N contiguous elements rather than OW, and its GEMM writes that layout directly, so it
returns it. The backend's ReLU, pooling, BatchNorm and Winograd kernels keep the layout of their
input, so a conv-relu-pool chain never transposes. An operation never inspects strides: where it
needs an order it asks for one with :func:`as_layout` (``kernels.as_layout(x, "NCHW")``), which
copies only when x is stored otherwise. NumPy's own functions accept any layout, so ops written
as plain maths need nothing. Measured on the example CNN's step at 2 threads, against NCHW
outputs with a transposing copy at each convolution: 20.3-24.4 against 22.4-27.6 ms.

>>> import numpy as np
>>> x = from_batch_last(np.zeros((3, 4, 5, 2), np.float32))
>>> x.shape, is_batch_last(x), batch_last(x).shape, as_layout(x, "NCHW").flags.c_contiguous
((2, 3, 4, 5), True, (3, 4, 5, 2), True)
"""
from . import buffer_cache, threads

__all__ = []     # internal helpers, not part of the public API

BATCH_LAST = (1, 2, 3, 0)     # buffer_cache.axis_order of an (N, C, H, W) array stored (C, H, W, N)
LAYOUTS = {"NCHW": (0, 1, 2, 3), "CHWN": BATCH_LAST}


def is_batch_last(x):
    """Whether (N, C, H, W) ``x`` is a view of a C-contiguous (C, H, W, N) array (where N or
    C * H * W is 1, it is C order as well)."""
    return x.ndim == 4 and x.transpose(BATCH_LAST).flags.c_contiguous


def image_axis_order(x):
    """``buffer_cache.axis_order`` of (N, C, H, W) images, where a batch-last ``x`` counts as
    ``BATCH_LAST`` even when axes of length 1 make other orders fit too (an (N, C, 1, 1) x, whose
    padding or pooling must still come out batch-last); None where x is not dense."""
    if is_batch_last(x) and not x.flags.c_contiguous:
        return BATCH_LAST
    return buffer_cache.axis_order(x)


def batch_last(x):
    """(N, C, H, W) images as a C-contiguous (C, H, W, N) array: a view of ``x`` where it is
    batch-last already, else a copy (split over the threads)."""
    return threads.ascontiguousarray(x.transpose(BATCH_LAST))


def from_batch_last(array):
    """The (N, C, H, W) view of a (C, H, W, N) array."""
    return array.transpose(3, 0, 1, 2)


def as_layout(x, layout):
    """(N, C, H, W) images ``x`` stored as ``layout`` says: "NCHW" (C order) or "CHWN"
    (batch-last), as an (N, C, H, W) array; ``x`` itself when it is stored so already, else one
    copy (split over the threads). For other ndim, "NCHW" means C order."""
    if layout not in LAYOUTS:
        raise ValueError(f"as_layout: layout must be one of {tuple(LAYOUTS)}, got {layout!r}")
    if layout == "CHWN":
        return from_batch_last(batch_last(x))
    return threads.ascontiguousarray(x)
