"""Window helpers shared by the convolution and pooling kernels: padding, the strided views that
turn sliding windows into array axes without copying, and the column matrices built from them
(in reused buffers: see ``buffer_cache.py``). The geometry itself (output sizes, pads) is
``autograd.geometry``.

Shapes follow NCHW. A window at output position (oh, ow) and kernel offset (i, j) reads the
padded input at row ``oh * stride + i * dilation`` and column ``ow * stride + j * dilation``;
:func:`offset_slice` gives, for one kernel offset, the slice that covers every output position.

>>> import numpy as np
>>> x = np.arange(16.0).reshape(1, 1, 4, 4)
>>> columns(x, (2, 2), (3, 3), (1, 1), (1, 1), 1).shape     # (groups, C * kh * kw, OH * OW * N)
(1, 4, 9)
"""
import math

import numpy as np

from ..device import get_array_module
from . import buffer_cache, native_pooling, threads
from ..geometry import axis_slice
from .layout import BATCH_LAST, batch_last, from_batch_last, image_axis_order

__all__ = []     # internal helpers, not part of the public API


def pad2d(x, pads_h, pads_w, value=0.0, axis_order=None):
    """``x`` (N, C, H, W) with ``pads_h`` rows before/after and ``pads_w`` columns, laid out in
    memory as ``axis_order`` says (see ``memory.axis_order``; by default as ``x`` where it is
    dense, else C order); ``x`` itself when no padding is asked for."""
    if not (pads_h[0] or pads_h[1] or pads_w[0] or pads_w[1]):
        return x
    xp = get_array_module(x)
    n, c, h, w = x.shape
    top, left = pads_h[0], pads_w[0]
    if axis_order is None and x.flags.c_contiguous and x.size < threads.MIN_PARALLEL_ELEMENTS:
        # small and C-ordered (so the result is C-ordered too): one filled array and its
        # interior written, without the layout and thread steps below, which cost 24.7 us
        # against 2.7 for one 8x8 image
        padded = xp.full((n, c, h + top + pads_h[1], w + left + pads_w[1]), value, x.dtype)
        padded[:, :, top:top + h, left:left + w] = x
        return padded
    order = axis_order or image_axis_order(x) or (0, 1, 2, 3)
    padded = buffer_cache.empty(xp, (n, c, h + top + pads_h[1], w + left + pads_w[1]), x.dtype, order)
    axis = split_image_axis(padded.shape, order)

    def pad_block(start, stop):            # images (or channels) [start, stop) of one thread
        index = axis_slice(axis, start, stop)
        block = padded[index]
        # Fill only the border: writing the whole array first would touch the interior twice.
        # Each thread fills its own block's: the CNN's conv2 pad takes 0.23 ms at 2 threads,
        # 0.30 with the border written serially.
        block[:, :, :top] = value
        block[:, :, top + h:] = value
        block[:, :, :, :left] = value
        block[:, :, :, left + w:] = value
        block[:, :, top:top + h, left:left + w] = x[index]
    threads.parallel_for(pad_block, padded.shape[axis], padded)
    return padded


def split_image_axis(shape, order):
    """The axis of (N, C, H, W) images laid out as ``order`` (see ``memory.axis_order``) that
    the threads split: the batch or the channels, the outermost in memory of the two that has a
    part for every thread, so that each thread's block is as dense as the layout allows."""
    outer = [axis for axis in order if axis < 2]
    return outer[threads.split_axis([shape[axis] for axis in outer])]


def unpad2d(x, pads_h, pads_w):
    """The interior of a padded (N, C, H, W) array: the inverse of :func:`pad2d`'s shape."""
    h, w = x.shape[2], x.shape[3]
    return x[:, :, pads_h[0]:h - pads_h[1], pads_w[0]:w - pads_w[1]]


def offset_slice(i, j, out_h, out_w, stride, dilation):
    """Index of the (N, C, out_h, out_w) block of a padded input that kernel offset (i, j)
    reads, one element per output position."""
    top, left = i * dilation[0], j * dilation[1]
    return (slice(None), slice(None),
            slice(top, top + stride[0] * (out_h - 1) + 1, stride[0]),
            slice(left, left + stride[1] * (out_w - 1) + 1, stride[1]))


def window_view(padded, kernel, out_size, stride, dilation):
    """A read-only strided view (N, C, kh, kw, OH, OW) of ``padded`` (N, C, Hp, Wp): element
    [n, c, i, j, oh, ow] is the input that kernel offset (i, j) of output (oh, ow) reads. No copy:
    kernel axes come before output axes so that a later copy streams along output columns."""
    xp = get_array_module(padded)
    n, c = padded.shape[:2]
    sn, sc, sh, sw = padded.strides
    shape = (n, c, kernel[0], kernel[1], out_size[0], out_size[1])
    strides = (sn, sc, sh * dilation[0], sw * dilation[1], sh * stride[0], sw * stride[1])
    if type(padded) is np.ndarray and padded.flags.c_contiguous:
        # a view over its buffer: as_strided builds an __array_interface__ on every call
        # (11.4 against 2.0 us)
        return np.ndarray(shape, padded.dtype, padded, strides=strides)
    return xp.lib.stride_tricks.as_strided(padded, shape=shape, strides=strides)


def columns(padded, kernel, out_size, stride, dilation, groups, ones_row=False):
    """The im2col matrix of ``padded`` (N, C, Hp, Wp), shaped (groups, C/groups * kh * kw,
    OH * OW * N): row (c, i, j), column (oh, ow, n). The batch sits inside the columns so that a
    convolution is one large GEMM per group, and innermost, so that the copy (and col2im's adds)
    run along OW * N contiguous elements of a batch-last ``padded`` rather than OW. With
    ``ones_row`` each group has one more row, of ones (a bias as a column of the weights). One
    strided copy into a reused buffer."""
    n, c = padded.shape[:2]
    cols, rows = _columns_buffer(padded, kernel, out_size, groups, ones_row)
    windows = window_view(padded, kernel, out_size, stride, dilation)
    # splitting axes of a view is always a view: the copy writes straight into cols
    shape = (groups, c // groups) + tuple(kernel) + tuple(out_size) + (n,)
    source = windows.transpose(1, 2, 3, 4, 5, 0).reshape(shape)
    threads.copy(cols[:, :rows].reshape(shape), source)
    return cols


def _columns_buffer(images, kernel, out_size, groups, ones_row):
    """An uninitialised (groups, rows (+ 1), OH * OW * N) buffer for the columns of ``images``
    (N, C, H, W), its row of ones written where ``ones_row``; and ``rows``."""
    n, c = images.shape[:2]
    rows = c // groups * kernel[0] * kernel[1]
    cols = buffer_cache.empty(get_array_module(images),
                              (groups, rows + ones_row, math.prod(out_size) * n), images.dtype)
    if ones_row:
        cols[:, rows] = 1
    return cols, rows


def columns_of(x, kernel, out_size, stride, dilation, groups, pads_h, pads_w, ones_row=False):
    """:func:`columns` of ``x`` (N, C, H, W) padded by ``pads_h`` and ``pads_w``: read straight
    from x, with no padded copy, where the compiled kernel takes x (float32 NumPy images in any
    layout: native_pooling.columns); else x padded into a batch-last buffer first."""
    if not native_pooling.takes_images(x):
        return columns(padded_batch_last(x, pads_h, pads_w), kernel, out_size, stride,
                       dilation, groups, ones_row)
    cols, _ = _columns_buffer(x, kernel, out_size, groups, ones_row)
    native_pooling.columns(x, cols, kernel, out_size, stride, dilation, groups, pads_h[0],
                           pads_w[0])
    return cols


def padded_batch_last(x, pads_h, pads_w):
    """``x`` (N, C, H, W) padded, as an (N, C, Hp, Wp) view of a batch-last (C, Hp, Wp, N)
    array (no copy where x is batch-last already and needs no padding)."""
    if pads_h[0] or pads_h[1] or pads_w[0] or pads_w[1]:
        return pad2d(x, pads_h, pads_w, axis_order=BATCH_LAST)
    return from_batch_last(batch_last(x))
