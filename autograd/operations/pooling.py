"""2-D pooling on NCHW images: max, average, global average.

Windows are never materialised. Average pooling sums separably, first over the kernel's columns
with one strided slice per column, then over its rows: kh + kw whole-batch array operations. Max
pooling visits the kh * kw kernel offsets in row-major order and records, per output, the offset
of the first maximum of its window (a small integer array); backward gives each output's gradient
to exactly that input, as PyTorch does (ties are not split).

>>> import numpy as np
>>> from autograd import Tensor
>>> x = Tensor(data=np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4))
>>> max_pool2d(x, 2).to_numpy()[0, 0]
array([[ 5.,  7.],
       [13., 15.]], dtype=float32)
>>> avg_pool2d(x, 2).to_numpy()[0, 0]
array([[ 2.5,  4.5],
       [10.5, 12.5]], dtype=float32)
"""
import numpy as np

from ..device import get_array_module
from .. import memory, threads
from .base import Operation
from .im2col import (pair, output_size, pad2d, unpad2d, offset_slice, same_pads,
                     split_image_axis)
from .layout import image_axis_order
from .utils import axis_slice

__all__ = ["max_pool2d", "avg_pool2d", "global_avg_pool2d", "globalaveragepool"]

_UNIT = (1, 1)


class _Pool2d(Operation):
    """Shared geometry: the padded input (with the ceil-mode overhang after) and output size."""

    def __init__(self, kernel, stride, pads_h, pads_w, out_size):
        self.kernel, self.stride, self.out_size = kernel, stride, out_size
        self.pads_h, self.pads_w = pads_h, pads_w

    def row_slices(self):
        """For each kernel row i: the rows of the padded input it reads, one per output row."""
        step, out_h = self.stride[0], self.out_size[0]
        return [(Ellipsis, slice(i, i + step * (out_h - 1) + 1, step), slice(None))
                for i in range(self.kernel[0])]

    def column_slices(self):
        """For each kernel column j: the columns it reads, one per output column."""
        step, out_w = self.stride[1], self.out_size[1]
        return [(Ellipsis, slice(j, j + step * (out_w - 1) + 1, step))
                for j in range(self.kernel[1])]

    def offset_slices(self):
        """For each kernel offset (i, j), row-major: the inputs it reads, one per output."""
        return [offset_slice(i, j, self.out_size[0], self.out_size[1], self.stride, _UNIT)
                for i in range(self.kernel[0]) for j in range(self.kernel[1])]

    def reduce_windows(self, padded, combine):
        """``combine`` (maximum or add) over each window, separably: first along the columns of
        every padded row, then along the rows: kh + kw whole-batch operations, not kh * kw."""
        columns = self.column_slices()
        rows = padded[columns[0]].copy(order="K")      # "K": in padded's layout
        for index in columns[1:]:
            combine(rows, padded[index], out=rows)
        row_indices = self.row_slices()
        y = rows[row_indices[0]].copy(order="K")
        for index in row_indices[1:]:
            combine(y, rows[index], out=y)
        return y


class MaxPool2d(_Pool2d):
    """y[n, c, oh, ow] = max of the window of xpad (padded with -inf) at (oh, ow); x (N, C, H, W),
    y (N, C, OH, OW).   dx = dy routed to the first maximum of each window"""

    def forward(self, x):
        xp = get_array_module(x)
        padded = pad2d(x, self.pads_h, self.pads_w, -np.inf)
        offsets = self.offset_slices()
        # y and the winners keep x's layout (a batch-last x from conv2d: every strided read of
        # an offset then runs along the batch, contiguous); the threads split the outermost of
        # the batch and channel axes.
        order = image_axis_order(padded) or (0, 1, 2, 3)
        y = memory.empty(xp, x.shape[:2] + self.out_size, x.dtype, order)
        winner = memory.empty(xp, y.shape, np.uint8 if len(offsets) < 256 else np.int32, order)
        axis = split_image_axis(padded.shape, order)

        def pool_block(start, stop):            # images or channels [start, stop)
            block = axis_slice(axis, start, stop)
            inputs, y_part, winner_part = padded[block], y[block], winner[block]
            y_part[...] = inputs[offsets[0]]
            winner_part.fill(0)
            # Which kernel offset (row-major) holds each window's first maximum: backward needs
            # only this small integer array, not x and y, and routes dy with one comparison per
            # offset (comparing x with y again in backward, plus a mask against ties, was 1.5x
            # slower).
            for k, index in enumerate(offsets[1:], 1):
                # One strided read into a dense copy: two passes over the view cost more
                candidate = inputs[index].copy(order="K")
                greater = candidate > y_part       # strictly: a tie keeps the earlier offset
                xp.maximum(y_part, candidate, out=y_part)
                # winner < k so far: the maximum takes k exactly where this offset is greater
                xp.maximum(winner_part, greater * winner.dtype.type(k), out=winner_part)

        threads.parallel_for(pool_block, x.shape[axis], padded)
        self.save_for_backward(winner)
        self.padded_shape = padded.shape
        return y

    def backward(self, dy):
        (winner,) = self.saved
        xp = get_array_module(dy)
        kh, kw = self.kernel
        disjoint = self.stride[0] >= kh and self.stride[1] >= kw
        tiled = disjoint and self.stride == self.kernel and self.padded_shape[2:] == (
            self.out_size[0] * kh, self.out_size[1] * kw)
        order = image_axis_order(winner) or (0, 1, 2, 3)
        if image_axis_order(dy) != order:
            # one copy into the winners' layout, rather than every pass below mixing two
            dy = threads.copy(memory.empty(xp, dy.shape, dy.dtype, order), dy)
        # Windows that tile the input exactly write every element once: no zeroing needed.
        dpadded = memory.empty(xp, self.padded_shape, dy.dtype, order)
        offsets = self.offset_slices()
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
        return unpad2d(dpadded, self.pads_h, self.pads_w)


def _zeros(xp, shape, dtype, axis_order):
    """Zeros laid out as ``axis_order`` (see ``memory.axis_order``; None: C order)."""
    zeros = memory.empty(xp, shape, dtype, axis_order)
    zeros.fill(0)
    return zeros


class AvgPool2d(_Pool2d):
    """y[n, c, oh, ow] = sum of the window of xpad (zero padded) at (oh, ow) / divisor[oh, ow];
    x (N, C, H, W), y (N, C, OH, OW).   dx = dy / divisor spread over each window"""

    def __init__(self, kernel, stride, pads_h, pads_w, out_size, divisor):
        super().__init__(kernel, stride, pads_h, pads_w, out_size)
        self.divisor = divisor      # a Python number, or an (OH, OW) NumPy array of counts

    def forward(self, x):
        xp = get_array_module(x)
        padded = pad2d(x, self.pads_h, self.pads_w, 0.0)
        y = self.reduce_windows(padded, xp.add)
        if isinstance(self.divisor, np.ndarray):
            # moved to y's device and dtype once, for both passes
            self.divisor = xp.asarray(self.divisor, dtype=y.dtype)
        y /= self.divisor
        self.padded_shape = padded.shape
        self.order = image_axis_order(padded)
        return y

    def backward(self, dy):
        xp = get_array_module(dy)
        share = dy / self.divisor
        n, c, padded_h, padded_w = self.padded_shape
        # The transpose of the separable forward: spread along rows, then along columns.
        rows = _zeros(xp, (n, c, padded_h, self.out_size[1]), dy.dtype, self.order)
        for index in self.row_slices():
            rows[index] += share
        dpadded = _zeros(xp, self.padded_shape, dy.dtype, self.order)
        for index in self.column_slices():
            dpadded[index] += rows
        return unpad2d(dpadded, self.pads_h, self.pads_w)


def _geometry(name, x, kernel_size, stride, padding, ceil_mode):
    """Checked kernel, stride, (before, after) pads per axis (after includes the ceil-mode
    overhang) and output size."""
    if x.ndim != 4:
        raise ValueError(f"{name}: expected x of shape (N, C, H, W), got {tuple(x.shape)}")
    kernel = pair(kernel_size, name, "kernel_size")
    stride = kernel if stride is None else pair(stride, name, "stride")
    padding = pair(padding, name, "padding")
    if min(kernel) < 1 or min(stride) < 1:
        raise ValueError(f"{name}: kernel_size and stride must be positive, got {kernel} and "
                         f"{stride}")
    if not (0 <= padding[0] <= kernel[0] // 2 and 0 <= padding[1] <= kernel[1] // 2):
        raise ValueError(f"{name}: padding must be between 0 and half the kernel size "
                         f"{kernel}, got {padding}")
    pads, out_size = [], []
    for axis, size in enumerate(x.shape[2:]):
        p = (padding[axis], padding[axis])
        out = output_size(size, kernel[axis], stride[axis], 1, p, ceil_mode)
        if out < 1:
            raise ValueError(f"{name}: kernel {kernel} is larger than the padded input "
                             f"{tuple(x.shape[2:])} with padding {padding}")
        overhang = max((out - 1) * stride[axis] + kernel[axis] - (size + 2 * padding[axis]), 0)
        pads.append((padding[axis], padding[axis] + overhang))
        out_size.append(out)
    return kernel, stride, padding, pads, tuple(out_size)


def max_pool2d(x, kernel_size, stride=None, padding=0, ceil_mode=False, pad_mode="NOTSET"):
    """Max pooling of x (N, C, H, W) over kernel_size windows (int or pair), moving by stride
    (default: kernel_size), with -inf padding of at most half the kernel. ``ceil_mode`` keeps a
    last partial window (one that starts inside the input or the leading padding). The gradient
    of each output goes to the first maximum of its window.

    >>> from autograd import Tensor
    >>> max_pool2d(Tensor(shape=(2, 3, 7, 7)), 3, 2, padding=1, ceil_mode=True).shape
    (2, 3, 4, 4)
    """
    if pad_mode != "NOTSET":
        kernel, stride, (pads_h, pads_w), out_size = _auto_pad_geometry(
            "max_pool2d", x, kernel_size, stride, pad_mode)
        return MaxPool2d(kernel, stride, pads_h, pads_w, out_size)(x)
    kernel, stride, _, (pads_h, pads_w), out_size = _geometry(
        "max_pool2d", x, kernel_size, stride, padding, ceil_mode)
    return MaxPool2d(kernel, stride, pads_h, pads_w, out_size)(x)


def avg_pool2d(x, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, pad_mode="NOTSET"):
    """Average pooling of x (N, C, H, W), arguments as :func:`max_pool2d` with zero padding.
    Each window is divided by the number of its pixels inside the padded input (the ceil-mode
    overhang never counts) or, with ``count_include_pad=False``, inside the input itself.

    >>> import numpy as np
    >>> from autograd import Tensor
    >>> x = Tensor(data=np.ones((1, 1, 2, 2), np.float32))
    >>> avg_pool2d(x, 2, 1, padding=1, count_include_pad=False).to_numpy()[0, 0].tolist()
    [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    """
    if pad_mode != "NOTSET":
        kernel, stride, (pads_h, pads_w), out_size = _auto_pad_geometry(
            "avg_pool2d", x, kernel_size, stride, pad_mode)
    else:
        kernel, stride, padding, (pads_h, pads_w), out_size = _geometry(
            "avg_pool2d", x, kernel_size, stride, padding, ceil_mode)
    counts = []
    for axis, size in enumerate(x.shape[2:]):
        before, after = (pads_h, pads_w)[axis]
        if pad_mode == "NOTSET":
            after = before            # a ceil-mode overhang is never counted
        low, high = (-before, size + after) if count_include_pad else (0, size)
        starts = np.arange(out_size[axis]) * stride[axis] - before
        counts.append(np.minimum(starts + kernel[axis], high) - np.maximum(starts, low))
    divisor = np.outer(counts[0], counts[1])
    if (divisor == divisor.flat[0]).all():
        divisor = int(divisor.flat[0])      # the common case: one Python number, no array
    return AvgPool2d(kernel, stride, pads_h, pads_w, out_size, divisor)(x)


class GlobalAvgPool2d(Operation):
    """y[n, c, 0, 0] = mean of x[n, c] over H and W; x (N, C, H, W), y (N, C, 1, 1).
    dx = dy / (H * W) broadcast over H and W"""

    def forward(self, x):
        self.shape = x.shape
        return x.mean(axis=(2, 3), keepdims=True)

    def backward(self, dy):
        xp = get_array_module(dy)
        count = self.shape[2] * self.shape[3]
        return xp.broadcast_to(dy / dy.dtype.type(count), self.shape)


def global_avg_pool2d(x):
    """Mean of each channel of x (N, C, H, W) over its pixels, shaped (N, C, 1, 1).

    >>> import numpy as np
    >>> from autograd import Tensor
    >>> global_avg_pool2d(Tensor(data=np.arange(8, dtype=np.float32).reshape(1, 2, 2, 2))).to_numpy().ravel()
    array([1.5, 5.5], dtype=float32)
    """
    if x.ndim != 4:
        raise ValueError(f"global_avg_pool2d: expected x of shape (N, C, H, W), got "
                         f"{tuple(x.shape)}")
    return GlobalAvgPool2d()(x)


def _auto_pad_geometry(name, x, kernel_size, stride, pad_mode):
    """Kernel, stride, (before, after) pads per axis and output size for SINGA's / ONNX's
    auto_pad: "VALID" pads nothing; "SAME_UPPER" / "SAME_LOWER" pad so that each axis gives
    ceil(size / stride) outputs, the odd pixel after / before."""
    if pad_mode not in ("VALID", "SAME_UPPER", "SAME_LOWER"):
        raise ValueError(f"{name}: pad_mode must be 'NOTSET', 'VALID', 'SAME_UPPER' or "
                         f"'SAME_LOWER', got {pad_mode!r}")
    if x.ndim != 4:
        raise ValueError(f"{name}: expected x of shape (N, C, H, W), got {tuple(x.shape)}")
    kernel = pair(kernel_size, name, "kernel_size")
    stride = kernel if stride is None else pair(stride, name, "stride")
    pads, out_size = [], []
    for size, k, s in zip(x.shape[2:], kernel, stride):
        if pad_mode == "VALID":
            if k > size:
                raise ValueError(f"{name}: kernel {kernel} is larger than the input "
                                 f"{tuple(x.shape[2:])} with pad_mode='VALID'")
            pads.append((0, 0))
            out_size.append((size - k) // s + 1)
        else:
            pads.append(same_pads(size, k, s, 1, lower=pad_mode == "SAME_LOWER"))
            out_size.append(-(-size // s))
    return kernel, stride, tuple(pads), tuple(out_size)


def globalaveragepool(x, data_format="channels_first"):
    """SINGA's spelling of :func:`global_avg_pool2d` (channels first only)."""
    if data_format != "channels_first":
        raise ValueError(f"globalaveragepool: only data_format='channels_first' is supported, "
                         f"got {data_format!r}")
    return global_avg_pool2d(x)
