"""The 2-D pooling kernels. ``windows`` is a :class:`Windows`: kernel, stride, the (before,
after) pads per axis (after includes any ceil-mode overhang) and the output size.

Windows are never materialised. Average pooling sums separably, first over the kernel's rows
with one strided slice per row, then over its columns: kh + kw - 2 whole-batch operations. Max
pooling visits the kh * kw kernel offsets in row-major order and records, per output, the offset
of the first maximum of its window (a small integer array); backward gives each output's gradient
to exactly that input, as PyTorch does (ties are not split). Outputs keep the input's layout
(layout.py), and the threads split the outermost of the batch and channel axes.

>>> import numpy as np
>>> windows = Windows((2, 2), (2, 2), ((0, 0), (0, 0)), (1, 1))
>>> y, winner = max_pool2d_forward(np.arange(4.0).reshape(1, 1, 2, 2), windows)
>>> y.ravel(), winner.ravel()
(array([3.]), array([3], dtype=uint8))
"""
from collections import namedtuple

import numpy as np

from ..device import get_array_module
from . import buffer_cache, native_elementwise, native_pooling, threads
from .im2col import pad2d, unpad2d, offset_slice, split_image_axis
from ..geometry import axis_slice
from .layout import batch_last, image_axis_order, is_batch_last
from .matmul import ones

__all__ = []     # reached through the kernels of numpy_kernels.py / cupy_kernels.py

Windows = namedtuple("Windows", "kernel stride pads out_size")
_UNIT = (1, 1)


def _row_slices(windows):
    """For each kernel row i: the rows of the padded input it reads, one per output row."""
    step, out_h = windows.stride[0], windows.out_size[0]
    return [(Ellipsis, slice(i, i + step * (out_h - 1) + 1, step), slice(None))
            for i in range(windows.kernel[0])]


def _column_slices(windows):
    """For each kernel column j: the columns it reads, one per output column."""
    step, out_w = windows.stride[1], windows.out_size[1]
    return [(Ellipsis, slice(j, j + step * (out_w - 1) + 1, step))
            for j in range(windows.kernel[1])]


def _offset_slices(windows):
    """For each kernel offset (i, j), row-major: the inputs it reads, one per output."""
    return [offset_slice(i, j, windows.out_size[0], windows.out_size[1], windows.stride, _UNIT)
            for i in range(windows.kernel[0]) for j in range(windows.kernel[1])]


def _reduce_windows(windows, padded, combine):
    """``combine`` (maximum or add) over each window, separably: first along the rows (a row
    slice keeps each row's W or W * N elements contiguous, so the pass over the larger array
    runs along long rows and only the smaller one is strided), then along the columns:
    kh + kw - 2 whole-batch operations, not kh * kw, the first of each axis on two views
    with no copy before it, each thread on its own images or channels. Both results are
    reused buffers (buffer_cache.py: a fresh 12 MB array page-faults on first touch) in
    padded's layout. Measured at 1 thread, max 3x3 stride 2 of (8, 64, 111, 111) batch-last:
    13.0 against 15.8 ms columns first into fresh arrays."""
    xp = get_array_module(padded)
    order = image_axis_order(padded) or (0, 1, 2, 3)
    row_indices, columns = _row_slices(windows), _column_slices(windows)
    rows = buffer_cache.empty(xp, padded[row_indices[0]].shape, padded.dtype, order)
    y = buffer_cache.empty(xp, rows[columns[0]].shape, padded.dtype, order)
    axis = split_image_axis(padded.shape, order)

    def reduce_block(start, stop):          # images or channels [start, stop) of one thread
        block = axis_slice(axis, start, stop)
        _combine_all(combine, padded[block], row_indices, rows[block])
        _combine_all(combine, rows[block], columns, y[block])
    threads.parallel_for(reduce_block, padded.shape[axis], padded)
    return y


def _combine_all(combine, source, indices, out):
    """out = ``combine`` over ``source[index]`` for every index, in order."""
    if len(indices) == 1:
        out[...] = source[indices[0]]
        return
    combine(source[indices[0]], source[indices[1]], out=out)
    for index in indices[2:]:
        combine(out, source[index], out=out)


def max_pool2d_forward(x, windows, with_winner=True):
    """y (N, C, OH, OW), the max of each window of x padded with -inf, and ``winner``: which
    kernel offset (row-major) holds each window's first maximum (uint8, or int32 for kernels
    of 256 offsets or more). Without ``with_winner`` (no backward will run), winner is None and
    the max is taken separably, kh + kw whole-batch passes rather than a compare per offset."""
    compiled = _compiled_max_pool(x, windows, with_winner)
    if compiled is not None:
        return compiled
    xp = get_array_module(x)
    padded = pad2d(x, *windows.pads, -np.inf)
    if not with_winner:
        return _reduce_windows(windows, padded, xp.maximum), None
    offsets = _offset_slices(windows)
    order = image_axis_order(padded) or (0, 1, 2, 3)
    y = buffer_cache.empty(xp, x.shape[:2] + tuple(windows.out_size), x.dtype, order)
    winner = buffer_cache.empty(xp, y.shape, np.uint8 if len(offsets) < 256 else np.int32,
                                order)
    axis = split_image_axis(padded.shape, order)

    def pool_block(start, stop):            # images or channels [start, stop)
        block = axis_slice(axis, start, stop)
        inputs, y_part, winner_part = padded[block], y[block], winner[block]
        y_part[...] = inputs[offsets[0]]
        winner_part.fill(0)
        # Backward needs only this small integer array, not x and y, and routes dy with one
        # comparison per offset (comparing x with y again in backward, plus a mask against
        # ties, was 1.5x slower).
        for k, index in enumerate(offsets[1:], 1):
            # One strided read into a dense copy: two passes over the view cost more
            candidate = inputs[index].copy(order="K")
            greater = candidate > y_part       # strictly: a tie keeps the earlier offset
            xp.maximum(y_part, candidate, out=y_part)
            # winner < k so far: the maximum takes k exactly where this offset is greater
            xp.maximum(winner_part, greater * winner.dtype.type(k), out=winner_part)

    threads.parallel_for(pool_block, x.shape[axis], padded)
    return y, winner


def _compiled_max_pool(x, windows, with_winner):
    """(y, winner) by the compiled kernel (native_pooling.py), laid out as x; None where it
    does not apply. It reads x in place, padding included, where the NumPy passes pad a copy
    first, and keeps the winners without a pass per offset over the whole batch: (8, 64, 112,
    112) 3x3 stride 2 took 12.5 against 36.6 ms, (1, 32, 8, 8) 2x2 0.03 against 0.08 ms at 2
    threads. Without winners (inference) it takes each plane separably, 5.2 against 14.4 ms and
    1.0 against 1.7 ms for SqueezeNet's first pool; but many tiny planes cost it more per plane
    than NumPy's whole-batch passes ((8, 32, 8, 8) to 4 x 4: 0.15 against 0.07 ms), and so do
    rows that are not contiguous (a batch-last layout's W strides over the batch: 18.9 against
    15.0 ms; with winners too from 16 images, native_pooling.steps_past_lines), so those stay
    with NumPy, unless the windows are 2x2 pairs tiling a C-contiguous or batch-last batch,
    which the kernel pools as rows of the whole batch (native_pooling.tiles_by_pairs: 0.033 ms
    for those (8, 32, 8, 8)), or the windows have no winners and stride 2 along the rows of a
    batch-last batch (native_pooling.pools_by_halves)."""
    order = compiled_layout(x, windows, with_winner)
    if order is None:
        return None
    order = order or None
    y = buffer_cache.empty(np, x.shape[:2] + tuple(windows.out_size), x.dtype, order)
    winner = buffer_cache.empty(np, y.shape, np.uint8, order) if with_winner else None
    native_pooling.max_pool_forward_into(x, y, winner, windows)
    return y, winner


def compiled_layout(x, windows, with_winner):
    """Where the compiled max pooling takes x (the rules of :func:`_compiled_max_pool`): the
    axis order of its outputs, () for C order; None where it does not take x."""
    if not (native_pooling.takes_images(x) and native_pooling.fits(windows)):
        return None
    # whole rows of the batch at a time (2x2 pairs, or without winners at stride 2 by
    # halves): none of the rules below, which are about plane-by-plane pooling
    whole_rows = native_pooling.tiles_by_pairs(x, windows) or (
        not with_winner and native_pooling.pools_by_halves(x, windows))
    if not whole_rows and native_pooling.steps_past_lines(x):
        return None
    outputs = windows.out_size[0] * windows.out_size[1]
    if not with_winner and not whole_rows and (
            x.strides[3] != x.itemsize or outputs < _SEPARABLE_MIN_PLANE and (
                x.shape[0] * x.shape[1] * outputs > _SEPARABLE_MAX_TINY_OUTPUTS)):
        return None
    return () if x.flags.c_contiguous else image_axis_order(x) or ()


_SEPARABLE_MIN_PLANE = 64            # outputs in a plane
_SEPARABLE_MAX_TINY_OUTPUTS = 1024   # below this many in all, the NumPy passes' overhead rules


def max_pool2d_backward(dy, winner, windows, input_shape):
    """dx (``input_shape``): each output's gradient added to the input its window's winner
    names."""
    pairs = native_pooling.pairs_tile(input_shape, windows)
    if (native_pooling.takes_images(dy) and winner.dtype == np.uint8 and (pairs or not (
            native_pooling.steps_past_lines(dy) or native_pooling.steps_past_lines(winner)))):
        both_c_order = winner.flags.c_contiguous and dy.flags.c_contiguous
        order = None if both_c_order else image_axis_order(winner)
        if order is not None and image_axis_order(dy) != order and pairs:
            # pairs pool as rows only where dy, the winners and dx share a layout: a flatten's
            # C-order dy (64, 64, 7, 7) copied batch-last first took 1.5 ms, against 4.7 ms
            # plane by plane
            dy = threads.copy(buffer_cache.empty(np, dy.shape, dy.dtype, order), dy)
        dx = buffer_cache.empty(np, input_shape, dy.dtype, order)
        if native_pooling.max_pool_backward_into(dy, winner, dx, windows):
            return dx
    xp = get_array_module(dy)
    kh, kw = windows.kernel
    (top, bottom), (left, right) = windows.pads
    padded_shape = input_shape[:2] + (input_shape[2] + top + bottom,
                                      input_shape[3] + left + right)
    disjoint = windows.stride[0] >= kh and windows.stride[1] >= kw
    tiled = disjoint and tuple(windows.stride) == tuple(windows.kernel) and \
        padded_shape[2:] == (windows.out_size[0] * kh, windows.out_size[1] * kw)
    order = image_axis_order(winner) or (0, 1, 2, 3)
    if image_axis_order(dy) != order:
        # one copy into the winners' layout, rather than every pass below mixing two
        dy = threads.copy(buffer_cache.empty(xp, dy.shape, dy.dtype, order), dy)
    # Windows that tile the input exactly write every element once: no zeroing needed.
    dpadded = buffer_cache.empty(xp, padded_shape, dy.dtype, order)
    offsets = _offset_slices(windows)
    axis = split_image_axis(dpadded.shape, order)

    def route_block(start, stop):           # images or channels [start, stop)
        block = axis_slice(axis, start, stop)
        dy_part, winner_part, dpadded_part = dy[block], winner[block], dpadded[block]
        if not tiled:
            dpadded_part.fill(0)
        for k, index in enumerate(offsets):
            if disjoint:
                xp.multiply(dy_part, winner_part == k, out=dpadded_part[index])
            else:
                dpadded_part[index] += dy_part * (winner_part == k)

    threads.parallel_for(route_block, dy.shape[axis], dpadded)
    return unpad2d(dpadded, *windows.pads)


def avg_pool2d_forward(x, windows, divisor):
    """y (N, C, OH, OW): each window's sum over x zero padded, divided by ``divisor`` (a number
    or an (OH, OW) array on x's device); and the layout backward should give dx."""
    xp = get_array_module(x)
    padded = pad2d(x, *windows.pads, 0.0)
    y = _reduce_windows(windows, padded, xp.add)
    y /= divisor
    return y, image_axis_order(padded)


def avg_pool2d_backward(dy, windows, divisor, input_shape, order):
    """dx (``input_shape``, laid out as ``order``; None: C order): dy / divisor spread over
    each window. The transpose of the separable forward: along rows, then along columns."""
    xp = get_array_module(dy)
    share = dy / divisor
    (top, bottom), (left, right) = windows.pads
    n, c = input_shape[:2]
    padded_shape = (n, c, input_shape[2] + top + bottom, input_shape[3] + left + right)
    rows = _zeros(xp, (n, c, padded_shape[2], windows.out_size[1]), dy.dtype, order)
    for index in _row_slices(windows):
        rows[index] += share
    dpadded = _zeros(xp, padded_shape, dy.dtype, order)
    for index in _column_slices(windows):
        dpadded[index] += rows
    return unpad2d(dpadded, *windows.pads)


def spatial_mean(x):
    """The mean of each (n, c) plane of x (N, C, H, W), shaped (N, C, 1, 1). A C-contiguous
    float32 NumPy x takes the compiled row pass, its planes split over the threads (each core
    reads the planes it wrote, if a convolution split them alike: 46-63 us inside SqueezeNet's
    forward by a GEMV, from the other core's cache too); else a float NumPy x takes products
    by a vector of ones: C-contiguous, one GEMV over all its planes (NumPy's mean took 49
    against 12 us for a SqueezeNet's (1, 1000, 13, 13), 351 against 51 us at batch 8); a
    batch-last batch (layout.py), one per channel (NumPy reduces its pixels at a stride with
    N values apart: 2.6 against 0.14 ms at batch 8); any other x NumPy's mean.

    >>> spatial_mean(np.arange(8.0).reshape(2, 1, 2, 2)).ravel()
    array([1.5, 5.5])
    """
    n, channels, height, width = x.shape
    if type(x) is not np.ndarray or x.dtype not in (np.float32, np.float64):
        return x.mean(axis=(2, 3), keepdims=True)
    scale = x.dtype.type(1.0 / max(height * width, 1))
    if x.flags.c_contiguous and x.size:
        means = native_elementwise.row_means(x.reshape(n * channels, height * width), scale)
        if means is not None:
            return means.reshape(n, channels, 1, 1)
        sums = np.matmul(x.reshape(n * channels, height * width), ones(height * width, x.dtype))
        sums *= scale
        return sums.reshape(n, channels, 1, 1)
    if n < 2 or not is_batch_last(x):
        return x.mean(axis=(2, 3), keepdims=True)
    pixels = batch_last(x).reshape(channels, height * width, n)
    sums = np.matmul(ones(height * width, x.dtype), pixels)          # (C, N)
    sums *= scale
    return sums.T.reshape(n, channels, 1, 1)


def _zeros(xp, shape, dtype, axis_order):
    """Zeros laid out as ``axis_order`` (see ``buffer_cache.axis_order``; None: C order)."""
    zeros = buffer_cache.empty(xp, shape, dtype, axis_order)
    zeros.fill(0)
    return zeros
