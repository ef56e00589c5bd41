"""Sequence layers on (N, C, L) batches: Conv1d, MaxPool1d, AvgPool1d.

They wrap ``autograd.conv1d``, ``max_pool1d`` and ``avg_pool1d``, which run the 2-D operations
on the sequence viewed as an image of height 1.

>>> import autograd
>>> conv = autograd.Conv1d(4, 8, 3, padding=1)
>>> [(name, p.shape) for name, p in conv.named_parameters()], conv.output_shape((2, 4, 50))
([('W', (8, 4, 3)), ('b', (8,))], (2, 8, 50))
>>> autograd.MaxPool1d(2).output_shape((2, 8, 50))
(2, 8, 25)
"""
import numpy as np

from ..operations import conv1d as conv1d_ops
from ..operations import pooling as pooling_ops
from ..operations.im2col import output_size, same_pads
from ..tensor import Tensor
from .arguments import PAD_MODES
from .base import Layer, shape_text
from .init import check_scheme, initialize

__all__ = ["Conv1d", "MaxPool1d", "AvgPool1d"]


def _int(value, what, layer, smallest):
    if isinstance(value, (list, tuple)) and len(value) == 1:
        value = value[0]
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < smallest:
        kind = "a positive int" if smallest == 1 else "a non-negative int"
        raise ValueError(f"{layer}: {what} must be {kind}, got {value!r}")
    return int(value)


class Conv1d(Layer):
    """1-D convolution (``autograd.conv1d``) of (N, in_channels, L) with W (out_channels,
    in_channels / groups, kernel_size) and b (out_channels,), giving (N, out_channels, OL).

    Arguments as :class:`Conv2d` with ints for kernel_size, stride, padding and dilation:
    ``padding`` also "same" / "valid", SINGA's ``pad_mode`` ("SAME_UPPER", "SAME_LOWER",
    "VALID") overrides it, ``group`` spells ``groups``, and the lazy form
    ``Conv1d(out_channels, kernel_size)`` takes in_channels from the first input. ``init``
    (Glorot uniform by default) uses fan_in = in_channels / groups * k, fan_out =
    out_channels * k; b starts at 0.
    """

    def __init__(self, in_channels, out_channels, kernel_size=None, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, pad_mode="NOTSET", init="xavier", wscale=1.0,
                 group=None):
        super().__init__()
        if kernel_size is None:                     # SINGA's lazy (out_channels, kernel_size)
            in_channels, out_channels, kernel_size = None, in_channels, out_channels
        groups = groups if group is None else group
        self.out_channels = _int(out_channels, "out_channels", "Conv1d", 1)
        self.groups = _int(groups, "groups", "Conv1d", 1)
        self.kernel_size = _int(kernel_size, "kernel_size", "Conv1d", 1)
        self.stride = _int(stride, "stride", "Conv1d", 1)
        self.dilation = _int(dilation, "dilation", "Conv1d", 1)
        self.pad_mode = pad_mode.upper() if isinstance(pad_mode, str) else pad_mode
        if self.pad_mode not in PAD_MODES:
            raise ValueError(f"Conv1d: pad_mode must be one of {PAD_MODES}, got {pad_mode!r}")
        if isinstance(padding, str):
            if padding.lower() not in ("same", "valid"):
                raise ValueError(f"Conv1d: padding must be an int, 'same' or 'valid', got "
                                 f"{padding!r}")
            self.padding = padding.lower()
        else:
            self.padding = _int(padding, "padding", "Conv1d", 0)
        if self.out_channels % self.groups:
            raise ValueError(f"Conv1d: groups={self.groups} must divide "
                             f"out_channels={self.out_channels}")
        self.bias = bool(bias)
        self.init = check_scheme(init, "Conv1d")
        self.wscale = wscale
        self.in_channels = None
        self.W = None
        self.b = None
        if in_channels is not None:
            self._build(_int(in_channels, "in_channels", "Conv1d", 1), np.float32, None)

    def _build(self, in_channels, dtype, device):
        if in_channels % self.groups:
            raise ValueError(f"Conv1d: groups={self.groups} must divide "
                             f"in_channels={in_channels}")
        self.in_channels = in_channels
        k = self.kernel_size
        W = Tensor(shape=(self.out_channels, in_channels // self.groups, k), dtype=dtype,
                   device=device, stores_grad=True)
        self.W = initialize(W, self.init, in_channels // self.groups * k, self.out_channels * k,
                            self.wscale)
        if self.bias:
            self.b = Tensor(shape=(self.out_channels,), dtype=dtype, device=device,
                            stores_grad=True)

    def extra_repr(self):
        inputs = "?" if self.in_channels is None else self.in_channels
        text = f"{inputs}->{self.out_channels}, kernel_size={self.kernel_size}"
        if self.stride != 1:
            text += f", stride={self.stride}"
        if self.pad_mode != "NOTSET":
            text += f", pad_mode={self.pad_mode!r}"
        elif self.padding != 0:
            text += f", padding={self.padding!r}"
        if self.dilation != 1:
            text += f", dilation={self.dilation}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        return text + ("" if self.bias else ", bias=False")

    def _pads(self, length):
        mode = self.pad_mode
        if mode == "NOTSET" and isinstance(self.padding, str):
            mode = "SAME_UPPER" if self.padding == "same" else "VALID"
        if mode == "VALID":
            return (0, 0)
        if mode == "NOTSET":
            return (self.padding, self.padding)
        return same_pads(length, self.kernel_size, self.stride, self.dilation,
                         lower=mode == "SAME_LOWER")

    def output_shape(self, input_shape):
        shape = tuple(input_shape)
        channels = "C" if self.in_channels is None else self.in_channels
        expected = shape_text(("N", channels, "L"))
        fits = len(shape) == 3 and (self.in_channels is None or shape[1] == self.in_channels)
        if fits and self.in_channels is None and shape[1] is not None:
            fits = shape[1] % self.groups == 0
            expected = f"(N, C, L) with C divisible by groups={self.groups}"
        self.check_input(fits, expected, shape)
        length = shape[2]
        if length is None:
            return (shape[0], self.out_channels, None)
        pads = self._pads(length)
        count = output_size(length, self.kernel_size, self.stride, self.dilation, pads)
        span = self.dilation * (self.kernel_size - 1) + 1
        self.check_input(count >= 1, f"{expected} with L >= {span - pads[0] - pads[1]} "
                         f"(padding {pads})", shape)
        return (shape[0], self.out_channels, count)

    def forward(self, x):
        self.output_shape(x.shape)
        if self.W is None:
            dtype = x.dtype if x.dtype.kind == "f" else np.float32
            self._build(x.shape[1], dtype, x.device)
        return conv1d_ops.conv1d(x, self.W, self.b, stride=self.stride, padding=self.padding,
                                 dilation=self.dilation, groups=self.groups,
                                 pad_mode=self.pad_mode)

    def count_parameters(self, input_shape=None):
        if self.W is None and input_shape is not None:
            weights = self.out_channels * input_shape[1] // self.groups * self.kernel_size
            return weights + (self.out_channels if self.bias else 0)
        return super().count_parameters()

    def _lazy_parameters(self, prefix, state):
        value = state.get(prefix + "W")
        if self.W is not None or value is None:
            return {}
        per_group = value.shape[1] if value.ndim == 3 else None
        dtype = value.dtype if value.dtype.kind == "f" else np.dtype(np.float32)
        pending = {prefix + "W": ((self.out_channels, per_group, self.kernel_size), dtype)}
        if self.bias:
            pending[prefix + "b"] = ((self.out_channels,), dtype)
        return pending

    def _materialize_from_state(self, prefix, state):
        value = state.get(prefix + "W")
        if self.W is None and value is not None:
            self._build(value.shape[1] * self.groups, value.dtype, None)


class _Pool1d(Layer):
    """Shared arguments and shape inference of the 1-D pooling layers. Besides (N, C, L) they
    take SINGA's layout (N, C, 1, L) (SINGA pools sequences as images of height 1) and keep it."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False):
        super().__init__()
        name = type(self).__name__
        self.kernel_size = _int(kernel_size, "kernel_size", name, 1)
        self.stride = self.kernel_size if stride is None else _int(stride, "stride", name, 1)
        self.padding = _int(padding, "padding", name, 0)
        if self.padding > self.kernel_size // 2:
            raise ValueError(f"{name}: padding must be between 0 and half the kernel size "
                             f"{self.kernel_size}, got {padding!r}")
        self.ceil_mode = bool(ceil_mode)

    def extra_repr(self):
        text = f"kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding:
            text += f", padding={self.padding}"
        return text + (", ceil_mode=True" if self.ceil_mode else "")

    def output_shape(self, input_shape):
        shape = tuple(input_shape)
        self.check_input(len(shape) == 3 or (len(shape) == 4 and shape[2] == 1),
                         "(N, C, L) or (N, C, 1, L)", shape)
        length = shape[-1]
        if length is None:
            return shape
        count = output_size(length, self.kernel_size, self.stride, 1,
                            (self.padding, self.padding), self.ceil_mode)
        self.check_input(count >= 1, f"{shape_text(('N', 'C', 'L'))} with L >= "
                         f"{self.kernel_size - 2 * self.padding}", shape)
        return shape[:-1] + (count,)

    def _geometry(self):
        return ((1, self.kernel_size), (1, self.stride), (0, self.padding), self.ceil_mode)


class MaxPool1d(_Pool1d):
    """Max pooling (``autograd.max_pool1d``) over windows of kernel_size moving by stride
    (default kernel_size), -inf padding of at most half the kernel; ``ceil_mode`` keeps a last
    partial window."""

    def forward(self, x):
        self.output_shape(x.shape)
        if x.ndim == 4:
            return pooling_ops.max_pool2d(x, *self._geometry())
        return conv1d_ops.max_pool1d(x, self.kernel_size, self.stride, self.padding,
                                     self.ceil_mode)


class AvgPool1d(_Pool1d):
    """Average pooling (``autograd.avg_pool1d``), arguments as MaxPool1d; zero padding, counted
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
        if x.ndim == 4:
            return pooling_ops.avg_pool2d(x, *self._geometry(), self.count_include_pad)
        return conv1d_ops.avg_pool1d(x, self.kernel_size, self.stride, self.padding,
                                     self.ceil_mode, self.count_include_pad)
