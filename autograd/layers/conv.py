"""Image layers on NCHW batches: Conv2d, MaxPool2d, AvgPool2d, GlobalAvgPool2d.

>>> import autograd
>>> conv = autograd.Conv2d(1, 32, 3, padding=1, bias=False)
>>> [(name, p.shape) for name, p in conv.named_parameters()], conv.output_shape((4, 1, 28, 28))
([('W', (32, 1, 3, 3))], (4, 32, 28, 28))
>>> autograd.MaxPool2d(3, 2).output_shape((4, 32, 28, 28))
(4, 32, 13, 13)
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Union

import math

import numpy as np

from ..operations import conv as conv_ops
from ..operations import pooling as pooling_ops
from ..geometry import ConvGeometry, pair
from ..tensor import Tensor
from .arguments import conv_padding, pad_mode_argument, positive_int, positive_pair
from .base import Layer, shape_text
from .fused_activation import fused_activation
from .init import check_scheme, initialize
from .._types import IntOrPair, Padding

__all__ = ["Conv2d", "MaxPool2d", "AvgPool2d", "GlobalAvgPool2d"]


class _Convolution(Layer):
    """What Conv2d and Conv1d share: parameters, shape inference, repr and lazy loading. Each
    subclass names itself (``_LAYER``) and its spatial axes (``_AXES``), converts its own
    arguments (pairs for Conv2d, ints for Conv1d, so errors speak of that layer's forms) and
    gives its operation; ``_per_axis`` turns an argument into one value per spatial axis."""

    _LAYER = "Conv2d"
    _AXES: tuple[str, ...] = ("H", "W")
    # for the type checker: what each subclass gives, and the lazily created parameters
    _count: Callable[..., int]
    _sizes: Callable[..., Any]
    _padding: Callable[..., Any]
    _operation: Callable[..., Tensor]
    W: Any                  # a Tensor; None until the first input (lazy form) builds it
    b: Any                  # a Tensor, or None without a bias

    @staticmethod
    def _per_axis(value):
        """2-D arguments are pairs already; Conv1d and the 1-D poolings wrap their ints."""
        return value

    def __init__(self, in_channels: int, out_channels: IntOrPair,
                 kernel_size: Optional[IntOrPair] = None, stride: IntOrPair = 1,
                 padding: Padding = 0, dilation: IntOrPair = 1, groups: int = 1, bias: bool = True,
                 pad_mode: str = "NOTSET", init: str = "xavier", wscale: float = 1.0,
                 group: Optional[int] = None) -> None:
        super().__init__()
        if kernel_size is None:                     # SINGA's lazy (out_channels, kernel_size)
            in_channels, out_channels, kernel_size = (
                None, in_channels, out_channels)  # type: ignore[assignment]
        groups = groups if group is None else group
        self.out_channels = self._count(out_channels, "out_channels")
        self.groups = self._count(groups, "groups")
        self.kernel_size = self._sizes(kernel_size, "kernel_size")
        self.stride = self._sizes(stride, "stride")
        self.dilation = self._sizes(dilation, "dilation")
        self.pad_mode = pad_mode_argument(pad_mode, self._LAYER)
        self.padding = self._padding(padding)
        if self.out_channels % self.groups:
            raise ValueError(f"{self._LAYER}: groups={self.groups} must divide "
                             f"out_channels={self.out_channels}")
        self.geometry = ConvGeometry(
            self._per_axis(self.kernel_size), self._per_axis(self.stride),
            self.padding if isinstance(self.padding, str) else self._per_axis(self.padding),
            self._per_axis(self.dilation), self.groups, self.pad_mode, dims=len(self._AXES),
            name=self._LAYER)
        self.bias = bool(bias)
        self.init = check_scheme(init, self._LAYER)
        self.wscale = wscale
        self.in_channels = None
        self.W = None
        self.b = None
        if in_channels is not None:
            self._build(self._count(in_channels, "in_channels"), np.float32, None)

    def _build(self, in_channels, dtype, device):
        if in_channels % self.groups:
            raise ValueError(f"{self._LAYER}: groups={self.groups} must divide "
                             f"in_channels={in_channels}")
        self.in_channels = in_channels
        kernel = self._per_axis(self.kernel_size)
        W = Tensor(shape=(self.out_channels, in_channels // self.groups) + kernel, dtype=dtype,
                   device=device, stores_grad=True)
        self.W = initialize(W, self.init, in_channels // self.groups * math.prod(kernel),
                            self.out_channels * math.prod(kernel), self.wscale)
        if self.bias:
            self.b = Tensor(shape=(self.out_channels,), dtype=dtype, device=device,
                            stores_grad=True)

    def extra_repr(self):
        inputs = "?" if self.in_channels is None else self.in_channels
        text = f"{inputs}->{self.out_channels}, kernel_size={self.kernel_size}"
        if any(s != 1 for s in self._per_axis(self.stride)):
            text += f", stride={self.stride}"
        if self.pad_mode != "NOTSET":
            text += f", pad_mode={self.pad_mode!r}"
        elif isinstance(self.padding, str) or any(self._per_axis(self.padding)):
            text += f", padding={self.padding!r}"
        if any(d != 1 for d in self._per_axis(self.dilation)):
            text += f", dilation={self.dilation}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        return text + ("" if self.bias else ", bias=False")

    def output_shape(self, input_shape):
        shape = tuple(input_shape)
        channels = "C" if self.in_channels is None else self.in_channels
        expected = shape_text(("N", channels) + self._AXES)
        fits = len(shape) == 2 + len(self._AXES) and (self.in_channels is None
                                                       or shape[1] == self.in_channels)
        if fits and self.in_channels is None and shape[1] is not None:
            fits = shape[1] % self.groups == 0
            expected = f"{expected} with C divisible by groups={self.groups}"
        self.check_input(fits, expected, shape)
        out = checked_output_size(self, self.geometry, self._AXES, expected, shape)
        return (shape[0], self.out_channels) + out

    def forward(self, x: Tensor) -> Tensor:
        self.output_shape(x.shape)
        if self.W is None:
            dtype = x.dtype if x.dtype.kind == "f" else np.float32
            self._build(x.shape[1], dtype, x.device)
        return self._operation(x, self.W, self.b, stride=self.stride, padding=self.padding,
                               dilation=self.dilation, groups=self.groups,
                               pad_mode=self.pad_mode)

    def count_parameters(self, input_shape=None):
        if self.W is None and input_shape is not None:
            weights = self.out_channels * input_shape[1] // self.groups * \
                math.prod(self._per_axis(self.kernel_size))
            return weights + (self.out_channels if self.bias else 0)
        return super().count_parameters()

    def _lazy_parameters(self, prefix, state):
        value = state.get(prefix + "W")
        if self.W is not None or value is None:
            return {}
        kernel = self._per_axis(self.kernel_size)
        per_group = value.shape[1] if value.ndim == 2 + len(kernel) else None
        dtype = value.dtype if value.dtype.kind == "f" else np.dtype(np.float32)
        pending = {prefix + "W": ((self.out_channels, per_group) + kernel, dtype)}
        if self.bias:
            pending[prefix + "b"] = ((self.out_channels,), dtype)
        return pending

    def _materialize_from_state(self, prefix, state):
        value = state.get(prefix + "W")
        if self.W is None and value is not None:
            self._build(value.shape[1] * self.groups, value.dtype, None)


def checked_output_size(layer, geometry, axes, expected, shape):
    """The output sizes of ``geometry`` over the trailing ``axes`` of ``shape``; an input too
    small for one output is ``layer``'s error: ``expected`` with the smallest size that fits."""
    sizes = shape[2:]
    pads = geometry.pads(sizes)
    out = geometry.output_size(sizes, pads)
    for letter, count, smallest, axis_pads in zip(axes, out, geometry.smallest_input(pads), pads):
        layer.check_input(count is None or count >= 1, f"{expected} with {letter} >= "
                          f"{smallest} (padding {axis_pads})", shape)
    return out


@fused_activation         # SINGA's Conv2d(..., activation="RELU")
class Conv2d(_Convolution):
    """2-D convolution (``autograd.conv2d``) with W (out_channels, in_channels / groups, kh, kw)
    and b (out_channels,).

    ``padding`` is an int, a (height, width) pair, or PyTorch's ``"same"`` / ``"valid"``;
    SINGA's ``pad_mode`` ("SAME_UPPER", "SAME_LOWER", "VALID"; "NOTSET" uses ``padding``)
    overrides it. ``group`` is SINGA's spelling of ``groups``. SINGA's lazy form
    ``Conv2d(out_channels, kernel_size)`` (two positional arguments) takes in_channels from the
    first input. ``init`` (Glorot uniform by default) and ``wscale`` pick the weight scheme with
    fan_in = in_channels / groups * kh * kw and fan_out = out_channels * kh * kw; b starts at 0.
    """

    _operation = staticmethod(conv_ops.conv2d)

    def _count(self, value, what):
        return positive_int(value, what, "Conv2d")

    def _sizes(self, value, what):
        return positive_pair(value, what, "Conv2d")

    def _padding(self, padding):
        return conv_padding(padding, "Conv2d")


class _Pooling(Layer):
    """What the 2-D and 1-D pooling layers share: their arguments (converted by the subclass:
    pairs or ints), repr and shape inference over the last ``len(_AXES)`` axes."""

    _AXES: tuple[str, ...] = ("H", "W")
    _per_axis = staticmethod(_Convolution._per_axis)
    _averaging = False
    # for the type checker: what each subclass gives
    _sizes: Callable[..., Any]
    _padding: Callable[..., Any]
    _operations: tuple[Callable[..., Tensor], Callable[..., Tensor]]

    def __init__(self, kernel_size: IntOrPair, stride: Optional[IntOrPair] = None,
                 padding: IntOrPair = 0, ceil_mode: bool = False) -> None:
        super().__init__()
        name = type(self).__name__
        self.kernel_size = self._sizes(kernel_size, "kernel_size", name)
        self.stride = self.kernel_size if stride is None else \
            self._sizes(stride, "stride", name)
        self.padding = self._padding(padding, name)
        kernel = self._per_axis(self.kernel_size)
        if not all(0 <= p <= k // 2 for p, k in zip(self._per_axis(self.padding), kernel)):
            raise ValueError(f"{name}: padding must be between 0 and half the kernel size "
                             f"{self.kernel_size}, got {padding!r}")
        self.ceil_mode = bool(ceil_mode)
        self.geometry = ConvGeometry(kernel, self._per_axis(self.stride),
                                     self._per_axis(self.padding), ceil_mode=self.ceil_mode,
                                     dims=len(self._AXES), name=name)

    def extra_repr(self):
        text = f"kernel_size={self.kernel_size}, stride={self.stride}"
        if any(self._per_axis(self.padding)):
            text += f", padding={self.padding}"
        return text + (", ceil_mode=True" if self.ceil_mode else "")

    def _check_layout(self, shape):
        self.check_input(len(shape) == 4, "(N, C, H, W)", shape)

    def output_shape(self, input_shape):
        shape = tuple(input_shape)
        self._check_layout(shape)
        layout = shape_text(("N", "C") + self._AXES)
        first = len(shape) - len(self._AXES)
        pads = self.geometry.pads(shape[first:])
        out = self.geometry.output_size(shape[first:], pads)
        for letter, count, smallest in zip(self._AXES, out, self.geometry.smallest_input(pads)):
            self.check_input(count is None or count >= 1, f"{layout} with {letter} >= {smallest}",
                             shape)
        return shape[:first] + out


    def _extra_arguments(self):
        return (self.count_include_pad,) if self._averaging else ()

    def forward(self, x: Tensor) -> Tensor:
        self.output_shape(x.shape)
        operation = self._operations[self._averaging]
        return operation(x, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                         *self._extra_arguments())


class _Pool2d(_Pooling):
    """The 2-D pooling layers: pairs, and SINGA's ``pad_mode`` ("SAME_UPPER", "SAME_LOWER",
    "VALID"; "NOTSET" uses ``padding``), which SINGA passes as the fourth positional argument
    (where ours is ``ceil_mode``: a string there is taken as the pad_mode)."""

    _sizes = staticmethod(positive_pair)
    _operations = (pooling_ops.max_pool2d, pooling_ops.avg_pool2d)      # max, average

    def __init__(self, kernel_size: IntOrPair, stride: Optional[IntOrPair] = None,
                 padding: IntOrPair = 0, ceil_mode: Union[bool, str] = False,
                 pad_mode: str = "NOTSET") -> None:
        if isinstance(ceil_mode, str):        # SINGA's MaxPool2d(k, stride, padding, pad_mode)
            pad_mode = ceil_mode
            ceil_mode = False
        super().__init__(kernel_size, stride, padding, ceil_mode)
        self.pad_mode = pad_mode_argument(pad_mode, type(self).__name__)
        if self.pad_mode != "NOTSET":
            self.geometry = ConvGeometry(self.kernel_size, self.stride, self.padding,
                                         pad_mode=self.pad_mode, ceil_mode=self.ceil_mode,
                                         name=type(self).__name__)

    @staticmethod
    def _padding(padding, name):
        return pair(padding, name, "padding")

    def extra_repr(self):
        text = super().extra_repr()
        return text if self.pad_mode == "NOTSET" else f"{text}, pad_mode={self.pad_mode!r}"

    def forward(self, x: Tensor) -> Tensor:
        if self.pad_mode == "NOTSET":
            return super().forward(x)
        self.output_shape(x.shape)
        operation = self._operations[self._averaging]
        return operation(x, self.kernel_size, self.stride, 0,  # type: ignore[misc]
                         self.ceil_mode, *self._extra_arguments(), pad_mode=self.pad_mode)


class _Averaging:
    """``count_include_pad``, which average pooling adds to the pooling arguments."""

    _averaging = True

    def __init__(self, kernel_size: IntOrPair, stride: Optional[IntOrPair] = None,
                 padding: IntOrPair = 0, ceil_mode: Union[bool, str] = False,
                 count_include_pad: bool = True, **options: Any) -> None:
        super().__init__(kernel_size, stride, padding,  # type: ignore[call-arg]
                         ceil_mode, **options)
        self.count_include_pad = bool(count_include_pad)

    def extra_repr(self):
        return super().extra_repr() + ("" if self.count_include_pad else
                                       ", count_include_pad=False")


class MaxPool2d(_Pool2d):
    """Max pooling (``autograd.max_pool2d``) over kernel_size windows moving by stride (default
    kernel_size), -inf padding of at most half the kernel; ``ceil_mode`` keeps a last partial
    window; SINGA's ``pad_mode`` "SAME_UPPER" / "SAME_LOWER" pads for ceil(size / stride)
    outputs (the odd pixel after / before).

    >>> import autograd
    >>> autograd.MaxPool2d(2, 2, pad_mode="SAME_UPPER").output_shape((1, 3, 5, 5))
    (1, 3, 3, 3)
    """


class AvgPool2d(_Averaging, _Pool2d):
    """Average pooling (``autograd.avg_pool2d``), arguments as MaxPool2d; zero padding, counted
    in the divisor when ``count_include_pad`` (the default, as PyTorch)."""


class GlobalAvgPool2d(Layer):
    """The mean of each channel over its pixels: (N, C, H, W) -> (N, C, 1, 1)."""

    def output_shape(self, input_shape):
        shape = tuple(input_shape)
        self.check_input(len(shape) == 4, "(N, C, H, W)", shape)
        return (shape[0], shape[1], 1, 1)

    def forward(self, x: Tensor) -> Tensor:
        self.output_shape(x.shape)
        return pooling_ops.global_avg_pool2d(x)
