"""Image layers on NCHW batches: Conv2d, MaxPool2d, AvgPool2d, GlobalAvgPool2d.

>>> import autograd
>>> conv = autograd.Conv2d(1, 32, 3, padding=1, bias=False)
>>> [(name, p.shape) for name, p in conv.named_parameters()], conv.output_shape((4, 1, 28, 28))
([('W', (32, 1, 3, 3))], (4, 32, 28, 28))
>>> autograd.MaxPool2d(3, 2).output_shape((4, 32, 28, 28))
(4, 32, 13, 13)
"""
import numpy as np

from ..operations import conv as conv_ops
from ..operations import pooling as pooling_ops
from ..operations.im2col import output_size, pair, same_pads
from ..tensor import Tensor
from .arguments import PAD_MODES, positive_int, positive_pair
from .base import Layer, shape_text
from .init import check_scheme, initialize

__all__ = ["Conv2d", "MaxPool2d", "AvgPool2d", "GlobalAvgPool2d"]


class Conv2d(Layer):
    """2-D convolution (``autograd.conv2d``) with W (out_channels, in_channels / groups, kh, kw)
    and b (out_channels,).

    ``padding`` is an int, a (height, width) pair, or PyTorch's ``"same"`` / ``"valid"``;
    SINGA's ``pad_mode`` ("SAME_UPPER", "SAME_LOWER", "VALID"; "NOTSET" uses ``padding``)
    overrides it. ``group`` is SINGA's spelling of ``groups``. SINGA's lazy form
    ``Conv2d(out_channels, kernel_size)`` (two positional arguments) takes in_channels from the
    first input. ``init`` (Glorot uniform by default) and ``wscale`` pick the weight scheme with
    fan_in = in_channels / groups * kh * kw and fan_out = out_channels * kh * kw; b starts at 0.
    """

    def __init__(self, in_channels, out_channels, kernel_size=None, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, pad_mode="NOTSET", init="xavier", wscale=1.0,
                 group=None):
        super().__init__()
        if kernel_size is None:                     # SINGA's Conv2d(out_channels, kernel_size)
            in_channels, out_channels, kernel_size = None, in_channels, out_channels
        groups = groups if group is None else group
        self.out_channels = positive_int(out_channels, "out_channels", "Conv2d")
        self.groups = positive_int(groups, "groups", "Conv2d")
        self.in_channels = None
        self.kernel_size = positive_pair(kernel_size, "kernel_size", "Conv2d")
        self.stride = positive_pair(stride, "stride", "Conv2d")
        self.dilation = positive_pair(dilation, "dilation", "Conv2d")
        self.pad_mode = pad_mode.upper() if isinstance(pad_mode, str) else pad_mode
        if self.pad_mode not in PAD_MODES:
            raise ValueError(f"Conv2d: pad_mode must be one of {PAD_MODES}, got {pad_mode!r}")
        if isinstance(padding, str):
            if padding.lower() not in ("same", "valid"):
                raise ValueError(f"Conv2d: padding must be an int, a pair, 'same' or 'valid', "
                                 f"got {padding!r}")
            self.padding = padding.lower()
        else:
            self.padding = pair(padding, "Conv2d", "padding")
            if min(self.padding) < 0:
                raise ValueError(f"Conv2d: padding must be non-negative, got {padding!r}")
        if self.out_channels % self.groups:
            raise ValueError(f"Conv2d: groups={self.groups} must divide "
                             f"out_channels={self.out_channels}")
        self.bias = bool(bias)
        self.init = check_scheme(init, "Conv2d")
        self.wscale = wscale
        self.W = None
        self.b = None
        if in_channels is not None:
            self._build(positive_int(in_channels, "in_channels", "Conv2d"), np.float32, None)

    def _build(self, in_channels, dtype, device):
        if in_channels % self.groups:
            raise ValueError(f"Conv2d: groups={self.groups} must divide "
                             f"in_channels={in_channels}")
        self.in_channels = in_channels
        kh, kw = self.kernel_size
        W = Tensor(shape=(self.out_channels, in_channels // self.groups, kh, kw), dtype=dtype,
                   device=device, stores_grad=True)
        self.W = initialize(W, self.init, in_channels // self.groups * kh * kw,
                            self.out_channels * kh * kw, self.wscale)
        if self.bias:
            self.b = Tensor(shape=(self.out_channels,), dtype=dtype, device=device,
                            stores_grad=True)

    def extra_repr(self):
        inputs = "?" if self.in_channels is None else self.in_channels
        text = f"{inputs}->{self.out_channels}, kernel_size={self.kernel_size}"
        if self.stride != (1, 1):
            text += f", stride={self.stride}"
        if self.pad_mode != "NOTSET":
            text += f", pad_mode={self.pad_mode!r}"
        elif self.padding != (0, 0):
            text += f", padding={self.padding!r}" if isinstance(self.padding, str) else \
                f", padding={self.padding}"
        if self.dilation != (1, 1):
            text += f", dilation={self.dilation}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        return text + ("" if self.bias else ", bias=False")

    def _pads(self, size, axis):
        mode = self.pad_mode
        if mode == "NOTSET" and isinstance(self.padding, str):
            mode = "SAME_UPPER" if self.padding == "same" else "VALID"
        if mode == "VALID":
            return (0, 0)
        if mode in ("SAME_UPPER", "SAME_LOWER"):
            if size is None:
                return None
            return same_pads(size, self.kernel_size[axis], self.stride[axis],
                             self.dilation[axis], lower=mode == "SAME_LOWER")
        return (self.padding[axis], self.padding[axis])

    def output_shape(self, input_shape):
        shape = tuple(input_shape)
        channels = "C" if self.in_channels is None else self.in_channels
        expected = shape_text(("N", channels, "H", "W"))
        fits = len(shape) == 4 and (self.in_channels is None or shape[1] == self.in_channels)
        if fits and self.in_channels is None and shape[1] is not None:
            fits = shape[1] % self.groups == 0
            expected = f"(N, C, H, W) with C divisible by groups={self.groups}"
        self.check_input(fits, expected, shape)
        out = []
        for axis in (0, 1):
            size = shape[2 + axis]
            pads = self._pads(size, axis)
            if size is None:
                out.append(None)
                continue
            count = output_size(size, self.kernel_size[axis], self.stride[axis],
                                self.dilation[axis], pads)
            span = self.dilation[axis] * (self.kernel_size[axis] - 1) + 1
            self.check_input(count >= 1, f"{expected} with {'HW'[axis]} >= "
                             f"{span - pads[0] - pads[1]} (padding {pads})", shape)
            out.append(count)
        return (shape[0], self.out_channels, out[0], out[1])

    def forward(self, x):
        self.output_shape(x.shape)
        if self.W is None:
            dtype = x.dtype if x.dtype.kind == "f" else np.float32
            self._build(x.shape[1], dtype, x.device)
        return conv_ops.conv2d(x, self.W, self.b, stride=self.stride, padding=self.padding,
                               dilation=self.dilation, groups=self.groups,
                               pad_mode=self.pad_mode)

    def count_parameters(self, input_shape=None):
        if self.W is None and input_shape is not None:
            kh, kw = self.kernel_size
            weights = self.out_channels * input_shape[1] // self.groups * kh * kw
            return weights + (self.out_channels if self.bias else 0)
        return super().count_parameters()

    def _lazy_parameters(self, prefix, state):
        value = state.get(prefix + "W")
        if self.W is not None or value is None:
            return {}
        per_group = value.shape[1] if value.ndim == 4 else None
        dtype = value.dtype if value.dtype.kind == "f" else np.dtype(np.float32)
        pending = {prefix + "W": ((self.out_channels, per_group) + self.kernel_size, dtype)}
        if self.bias:
            pending[prefix + "b"] = ((self.out_channels,), dtype)
        return pending

    def _materialize_from_state(self, prefix, state):
        value = state.get(prefix + "W")
        if self.W is None and value is not None:
            self._build(value.shape[1] * self.groups, value.dtype, None)


class _Pool2d(Layer):
    """Shared arguments and shape inference of the pooling layers."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False):
        super().__init__()
        name = type(self).__name__
        self.kernel_size = positive_pair(kernel_size, "kernel_size", name)
        self.stride = self.kernel_size if stride is None else \
            positive_pair(stride, "stride", name)
        self.padding = pair(padding, name, "padding")
        if not all(0 <= p <= k // 2 for p, k in zip(self.padding, self.kernel_size)):
            raise ValueError(f"{name}: padding must be between 0 and half the kernel size "
                             f"{self.kernel_size}, got {padding!r}")
        self.ceil_mode = bool(ceil_mode)

    def extra_repr(self):
        text = f"kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0, 0):
            text += f", padding={self.padding}"
        return text + (", ceil_mode=True" if self.ceil_mode else "")

    def output_shape(self, input_shape):
        shape = tuple(input_shape)
        self.check_input(len(shape) == 4, "(N, C, H, W)", shape)
        out = []
        for axis in (0, 1):
            size, kernel, p = shape[2 + axis], self.kernel_size[axis], self.padding[axis]
            if size is None:
                out.append(None)
                continue
            count = output_size(size, kernel, self.stride[axis], 1, (p, p), self.ceil_mode)
            self.check_input(count >= 1, f"(N, C, H, W) with {'HW'[axis]} >= {kernel - 2 * p}",
                             shape)
            out.append(count)
        return (shape[0], shape[1], out[0], out[1])


class MaxPool2d(_Pool2d):
    """Max pooling (``autograd.max_pool2d``) over kernel_size windows moving by stride (default
    kernel_size), -inf padding of at most half the kernel; ``ceil_mode`` keeps a last partial
    window."""

    def forward(self, x):
        self.output_shape(x.shape)
        return pooling_ops.max_pool2d(x, self.kernel_size, self.stride, self.padding,
                                      self.ceil_mode)


class AvgPool2d(_Pool2d):
    """Average pooling (``autograd.avg_pool2d``), arguments as MaxPool2d; zero padding, counted
    in the divisor when ``count_include_pad`` (the default, as PyTorch)."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__(kernel_size, stride, padding, ceil_mode)
        self.count_include_pad = bool(count_include_pad)

    def extra_repr(self):
        return super().extra_repr() + ("" if self.count_include_pad else
                                       ", count_include_pad=False")

    def forward(self, x):
        self.output_shape(x.shape)
        return pooling_ops.avg_pool2d(x, self.kernel_size, self.stride, self.padding,
                                      self.ceil_mode, self.count_include_pad)


class GlobalAvgPool2d(Layer):
    """The mean of each channel over its pixels: (N, C, H, W) -> (N, C, 1, 1)."""

    def output_shape(self, input_shape):
        shape = tuple(input_shape)
        self.check_input(len(shape) == 4, "(N, C, H, W)", shape)
        return (shape[0], shape[1], 1, 1)

    def forward(self, x):
        self.output_shape(x.shape)
        return pooling_ops.global_avg_pool2d(x)
