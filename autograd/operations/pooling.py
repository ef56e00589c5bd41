"""2-D pooling on NCHW images: max, average, global average. The window geometry is
``autograd.geometry``; the backend's pooling kernels (autograd/backend/pooling.py) run it.

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
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from ..backend import kernels_for
from ..backend.pooling import Windows
from ..device import get_array_module
from ..geometry import ConvGeometry, _plain, per_axis
from .base import Operation
from .._types import IntOrPair

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = ["max_pool2d", "avg_pool2d", "global_avg_pool2d", "globalaveragepool"]


class MaxPool2d(Operation):
    """y[n, c, oh, ow] = max of the window of xpad (padded with -inf) at (oh, ow); x (N, C, H, W),
    y (N, C, OH, OW).   dx = dy routed to the first maximum of each window"""

    def __init__(self, windows):
        self.windows = windows

    def forward(self, x):
        y, winner = kernels_for(x).max_pool2d_forward(x, self.windows, self.recording)
        self.save_for_backward(winner)
        self.input_shape = x.shape
        return y

    def forward_plan(self, x):
        return kernels_for(x).max_pool2d_plan(x, self.windows)

    def forward_plan_key(self):
        return self.windows

    def backward(self, dy):
        (winner,) = self.saved
        return kernels_for(dy).max_pool2d_backward(dy, winner, self.windows, self.input_shape)


class AvgPool2d(Operation):
    """y[n, c, oh, ow] = sum of the window of xpad (zero padded) at (oh, ow) / divisor[oh, ow];
    x (N, C, H, W), y (N, C, OH, OW).   dx = dy / divisor spread over each window"""

    def __init__(self, windows, divisor):
        self.windows = windows
        self.divisor = divisor      # a Python number, or an (OH, OW) NumPy array of counts

    def forward(self, x):
        if isinstance(self.divisor, np.ndarray):
            # moved to x's device and dtype once, for both passes
            self.divisor = get_array_module(x).asarray(self.divisor, dtype=x.dtype)
        y, self.layout = kernels_for(x).avg_pool2d_forward(x, self.windows, self.divisor)
        self.input_shape = x.shape
        return y

    def backward(self, dy):
        return kernels_for(dy).avg_pool2d_backward(dy, self.windows, self.divisor,
                                                   self.input_shape, self.layout)


def _windows(name, x, kernel_size, stride, padding, ceil_mode, pad_mode):
    """The checked :class:`Windows` of a pooling (and its geometry): the ceil-mode overhang
    goes into the after pads, so that the kernels see whole windows. A functional pool called
    with the same plain arguments on the same shape (every step of a CNN) is checked once: the
    checks took a fifth of a batch-1 pool's time."""
    key = (name, x.shape, kernel_size, stride, padding, ceil_mode, pad_mode)
    cacheable = (type(ceil_mode) is bool and (stride is None or _plain((stride,)))
                 and _plain((kernel_size, padding, pad_mode)))
    if cacheable:
        checked = _CHECKED.get(key)
        if checked is not None:
            return checked
    checked = _check_windows(name, x, kernel_size, stride, padding, ceil_mode, pad_mode)
    if cacheable and len(_CHECKED) < _CHECKED_LIMIT:
        _CHECKED[key] = checked
    return checked


_CHECKED: dict = {}      # (name, input shape, arguments) -> (Windows, ConvGeometry)
_CHECKED_LIMIT = 1024    # distinct keys kept; later ones are checked per call


def _check_windows(name, x, kernel_size, stride, padding, ceil_mode, pad_mode):
    if x.ndim != 4:
        raise ValueError(f"{name}: expected x of shape (N, C, H, W), got {tuple(x.shape)}")
    kernel = per_axis(kernel_size, 2, name, "kernel_size")
    geometry = ConvGeometry(kernel, kernel if stride is None else stride, padding,
                            pad_mode=pad_mode, ceil_mode=ceil_mode, name=name)
    size = x.shape[2:]
    pads = geometry.pads(size)
    if geometry.pad_mode == "NOTSET" and not all(
            0 <= before == after <= k // 2 for (before, after), k in zip(pads, kernel)):
        raise ValueError(f"{name}: padding must be between 0 and half the kernel size "
                         f"{kernel}, got {tuple(before for before, _ in pads)}")
    out_size = geometry.output_size(size)
    if min(out_size) < 1:
        where = (f"padded input {tuple(size)} with padding {padding}"
                 if geometry.pad_mode == "NOTSET" else
                 f"input {tuple(size)} with pad_mode={pad_mode!r}")
        raise ValueError(f"{name}: kernel {kernel} is larger than the {where}")
    if ceil_mode:
        pads = tuple((before, max((out - 1) * s + k - (n + before), after))
                     for (before, after), out, s, k, n in
                     zip(pads, out_size, geometry.stride, kernel, size))
    return Windows(kernel, geometry.stride, pads, out_size), geometry


def max_pool2d(x: Tensor, kernel_size: IntOrPair, stride: Optional[IntOrPair] = None,
               padding: IntOrPair = 0, ceil_mode: bool = False, pad_mode: str = "NOTSET") -> Tensor:
    """Max pooling of x (N, C, H, W) over kernel_size windows (int or pair), moving by stride
    (default: kernel_size), with -inf padding of at most half the kernel. ``ceil_mode`` keeps a
    last partial window (one that starts inside the input or the leading padding). The gradient
    of each output goes to the first maximum of its window.

    >>> from autograd import Tensor
    >>> max_pool2d(Tensor(shape=(2, 3, 7, 7)), 3, 2, padding=1, ceil_mode=True).shape
    (2, 3, 4, 4)
    """
    windows, _ = _windows("max_pool2d", x, kernel_size, stride, padding, ceil_mode, pad_mode)
    return MaxPool2d(windows)(x)


def avg_pool2d(x: Tensor, kernel_size: IntOrPair, stride: Optional[IntOrPair] = None,
               padding: IntOrPair = 0, ceil_mode: bool = False,
               count_include_pad: bool = True, pad_mode: str = "NOTSET") -> Tensor:
    """Average pooling of x (N, C, H, W), arguments as :func:`max_pool2d` with zero padding.
    Each window is divided by the number of its pixels inside the padded input (the ceil-mode
    overhang never counts) or, with ``count_include_pad=False``, inside the input itself.

    >>> import numpy as np
    >>> from autograd import Tensor
    >>> x = Tensor(data=np.ones((1, 1, 2, 2), np.float32))
    >>> avg_pool2d(x, 2, 1, padding=1, count_include_pad=False).to_numpy()[0, 0].tolist()
    [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    """
    windows, geometry = _windows("avg_pool2d", x, kernel_size, stride, padding, ceil_mode,
                                 pad_mode)
    counts = []
    for axis, size in enumerate(x.shape[2:]):
        before, after = geometry.pads(x.shape[2:])[axis]     # a ceil-mode overhang never counts
        low, high = (-before, size + after) if count_include_pad else (0, size)
        starts = np.arange(windows.out_size[axis]) * windows.stride[axis] - before
        counts.append(np.minimum(starts + windows.kernel[axis], high) - np.maximum(starts, low))
    divisor: Any = np.outer(counts[0], counts[1])      # an array, or below one number
    if (divisor == divisor.flat[0]).all():
        divisor = int(divisor.flat[0])      # the common case: one Python number, no array
    return AvgPool2d(windows, divisor)(x)


class GlobalAvgPool2d(Operation):
    """y[n, c, 0, 0] = mean of x[n, c] over H and W; x (N, C, H, W), y (N, C, 1, 1).
    dx = dy / (H * W) broadcast over H and W"""

    def forward(self, x):
        self.shape = x.shape
        return kernels_for(x).spatial_mean(x)

    def backward(self, dy):
        xp = get_array_module(dy)
        count = self.shape[2] * self.shape[3]
        return xp.broadcast_to(dy / dy.dtype.type(count), self.shape)


def global_avg_pool2d(x: Tensor) -> Tensor:
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


class GlobalAveragePool(Operation):
    """y = mean of x over ``axes`` (the spatial ones), kept as size-1 axes; e.g. x (N, H, W, C),
    axes (1, 2), y (N, 1, 1, C).   dx = dy / (product of the averaged sizes) broadcast over them"""

    def __init__(self, axes):
        self.axes = axes

    def forward(self, x):
        self.shape = x.shape
        return x.mean(axis=self.axes, keepdims=True)

    def backward(self, dy):
        xp = get_array_module(dy)
        count = int(np.prod([self.shape[axis] for axis in self.axes]))
        return xp.broadcast_to(dy / dy.dtype.type(count), self.shape)


def globalaveragepool(x: Tensor, data_format: str = "channels_first") -> Tensor:
    """SINGA's GlobalAveragePool: the mean over every spatial axis, kept as size 1. With
    ``data_format="channels_first"`` x is (N, C, d1, d2, ...) (for images the same as
    :func:`global_avg_pool2d`); with ``"channels_last"`` x is (N, d1, d2, ..., C) and the result
    (N, 1, 1, ..., C).

    >>> import numpy as np
    >>> from autograd import Tensor
    >>> x = Tensor(data=np.arange(8, dtype=np.float32).reshape(1, 2, 2, 2))    # N, H, W, C
    >>> globalaveragepool(x, "channels_last").to_numpy()
    array([[[[3., 4.]]]], dtype=float32)
    """
    if data_format not in ("channels_first", "channels_last"):
        raise ValueError(f"globalaveragepool: data_format must be 'channels_first' or "
                         f"'channels_last', got {data_format!r}")
    if x.ndim < 3:
        raise ValueError(f"globalaveragepool: expected x with a batch, a channel and at least one "
                         f"spatial axis, got shape {tuple(x.shape)}")
    if data_format == "channels_first":
        if x.ndim == 4:
            return global_avg_pool2d(x)         # the op that ONNX export knows
        return GlobalAveragePool(tuple(range(2, x.ndim)))(x)
    return GlobalAveragePool(tuple(range(1, x.ndim - 1)))(x)
