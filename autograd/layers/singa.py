"""SINGA's layers beyond the common ones: Gemm, SeparableConv2d, Pooling2d, and SoftMax (SINGA's
spelling of Softmax). Add, Cat and Reshape live in :mod:`autograd.layers.combine`, the loss
layers in :mod:`autograd.layers.loss`.

>>> import numpy as np, autograd
>>> gemm = autograd.Gemm(3)                       # W is created from the first input
>>> gemm(autograd.Tensor(data=np.ones((2, 4), np.float32))).shape, gemm.W.shape, gemm.b.shape
((2, 3), (3, 4), (1, 3))
"""
from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import numpy as np

from ..operations import elementwise as elementwise_ops
from ..operations import linalg
from ..operations import pooling as pooling_ops
from ..operations import padding as padding_ops
from ..geometry import ConvGeometry, pair
from ..tensor import Tensor
from .activation import Softmax
from .arguments import conv_padding, pad_mode_argument, positive_int, positive_pair
from .base import Layer, shape_text
from .conv import Conv2d, checked_output_size
from .init import check_scheme, initialize
from .._types import IntOrPair, IntOrTuple, Padding

__all__ = ["Gemm", "SeparableConv2d", "Pooling2d", "SoftMax"]


class Gemm(Layer):
    """SINGA's Gemm layer (ONNX Gemm): ``y = alpha * op(x) @ op(W) + beta * b`` through
    ``autograd.gemm``, op transposing when ``transA`` / ``transB`` say so.

    W is created on the first call, from the input's features (x's columns, or its rows when
    ``transA``): (nb_kernels, in_features) with the default ``transB=True`` (PyTorch's layout),
    (in_features, nb_kernels) otherwise. b is (1, nb_kernels) as in SINGA, or ``bias_shape``
    (any shape that broadcasts to the output), and starts at zero; ``bias=False`` drops it.
    ``init`` (Glorot uniform, the variance of SINGA's Gaussian 2 / (in + out)) and ``wscale``
    pick W's scheme. The output is (M, nb_kernels), M = x's rows (its columns when transA).
    """

    W: Any                  # a Tensor; None until the first input builds it
    b: Any                  # a Tensor, or None without a bias


    def __init__(self, nb_kernels: int, alpha: float = 1.0, beta: float = 1.0,
                 transA: Union[bool, int] = False, transB: Union[bool, int] = True,
                 bias: bool = True,
                 bias_shape: Optional[Sequence[int]] = None, init: str = "xavier",
                 wscale: float = 1.0) -> None:
        super().__init__()
        self.nb_kernels = positive_int(nb_kernels, "nb_kernels", "Gemm")
        self.alpha, self.beta = float(alpha), float(beta)
        self.transA, self.transB = bool(transA), bool(transB)
        self.bias = bool(bias)
        self.bias_shape = (1, self.nb_kernels) if bias_shape is None else tuple(bias_shape)
        try:
            np.broadcast_shapes(self.bias_shape, (1, self.nb_kernels))
        except ValueError:
            raise ValueError(f"Gemm: bias_shape {self.bias_shape} does not broadcast to the "
                             f"output (M, {self.nb_kernels})") from None
        self.init = check_scheme(init, "Gemm")
        self.wscale = wscale
        self.in_features = None
        self.W = None
        self.b = None

    def _weight_shape(self, in_features):
        return ((self.nb_kernels, in_features) if self.transB
                else (in_features, self.nb_kernels))

    def _build(self, in_features, dtype, device):
        self.in_features = in_features
        W = Tensor(shape=self._weight_shape(in_features), dtype=dtype, device=device,
                   stores_grad=True)
        self.W = initialize(W, self.init, in_features, self.nb_kernels, self.wscale)
        if self.bias:
            self.b = Tensor(shape=self.bias_shape, dtype=dtype, device=device, stores_grad=True)

    def extra_repr(self):
        inputs = "?" if self.in_features is None else self.in_features
        text = f"{inputs}->{self.nb_kernels}"
        if self.alpha != 1.0 or self.beta != 1.0:
            text += f", alpha={self.alpha}, beta={self.beta}"
        text += f", transA={self.transA}, transB={self.transB}"
        return text + ("" if self.bias else ", bias=False")

    def output_shape(self, input_shape):
        shape = tuple(input_shape)
        known = "in_features" if self.in_features is None else self.in_features
        expected = shape_text((known, "M") if self.transA else ("M", known))
        self.check_input(len(shape) == 2, expected, shape)
        rows, features = shape[::-1] if self.transA else shape
        self.check_input(self.in_features is None or features == self.in_features, expected,
                         shape)
        if rows is not None and self.bias:
            try:
                np.broadcast_shapes(self.bias_shape, (rows, self.nb_kernels))
            except ValueError:
                raise ValueError(f"{self.describe()}: b of shape {self.bias_shape} does not "
                                 f"broadcast to the output ({rows}, {self.nb_kernels}) of input "
                                 f"{shape_text(shape)}") from None
        return (rows, self.nb_kernels)

    def forward(self, x: Tensor) -> Tensor:
        self.output_shape(x.shape)
        if self.W is None:
            dtype = x.dtype if x.dtype.kind == "f" else np.float32
            self._build(x.shape[0] if self.transA else x.shape[1], dtype, x.device)
        return linalg.gemm(x, self.W, self.b, alpha=self.alpha, beta=self.beta,
                           transA=self.transA, transB=self.transB)

    def count_parameters(self, input_shape=None):
        if self.W is None and input_shape is not None:
            features = input_shape[0] if self.transA else input_shape[1]
            return features * self.nb_kernels + (int(np.prod(self.bias_shape)) if self.bias
                                                 else 0)
        return super().count_parameters()

    def _lazy_parameters(self, prefix, state):
        value = state.get(prefix + "W")
        if self.W is not None or value is None:
            return {}
        features = (value.shape[1] if self.transB else value.shape[0]) if value.ndim == 2 \
            else None
        dtype = value.dtype if value.dtype.kind == "f" else np.dtype(np.float32)
        pending = {prefix + "W": (self._weight_shape(features), dtype)}
        if self.bias:
            pending[prefix + "b"] = (self.bias_shape, dtype)
        return pending

    def _materialize_from_state(self, prefix, state):
        value = state.get(prefix + "W")
        if self.W is None and value is not None:
            self._build(value.shape[1] if self.transB else value.shape[0], value.dtype, None)


class SeparableConv2d(Layer):
    """SINGA's depthwise separable convolution: a depthwise Conv2d (kernel_size, stride,
    padding, groups = in_channels: one filter per channel) then a pointwise 1x1 Conv2d to
    out_channels. Parameters ``depthwise_conv.W`` (C, 1, kh, kw) and ``point_conv.W``
    (out_channels, C, 1, 1), plus their biases when ``bias`` (False by default, as SINGA).

    ``SeparableConv2d(in_channels, out_channels, kernel_size)`` builds both now; SINGA's lazy
    ``SeparableConv2d(out_channels, kernel_size)`` builds them on the first call from the
    input's channels. ``padding`` is what :class:`Conv2d` takes (int, pair, "same", "valid").
    """

    depthwise_conv: Any     # a Conv2d; None until the first input builds it (lazy form)
    point_conv: Any


    def __init__(self, in_channels: int, out_channels: IntOrPair,
                 kernel_size: Optional[IntOrPair] = None, stride: IntOrPair = 1,
                 padding: Padding = 0, bias: bool = False) -> None:
        super().__init__()
        if kernel_size is None:                    # SINGA's (nb_kernels, kernel_size)
            # SINGA's positional form shifts the arguments: out_channels holds the kernel size
            in_channels, out_channels, kernel_size = (
                None, in_channels, out_channels)  # type: ignore[assignment]
        self.out_channels = positive_int(out_channels, "out_channels", "SeparableConv2d")
        self.kernel_size = positive_pair(kernel_size, "kernel_size", "SeparableConv2d")
        self.stride = positive_pair(stride, "stride", "SeparableConv2d")
        self.padding = conv_padding(padding, "SeparableConv2d")
        self.bias = bool(bias)
        self.in_channels = None
        self.depthwise_conv = None
        self.point_conv = None
        if in_channels is not None:
            self._build(positive_int(in_channels, "in_channels", "SeparableConv2d"), lazy=False)

    def _build(self, in_channels, lazy):
        """The two convolutions: eager ones hold float32 parameters on the default device now;
        lazy ones (SINGA's Conv2d(out_channels, kernel_size) form) take their dtype and device
        from the first input."""
        self.in_channels = in_channels
        options = dict(stride=self.stride, padding=self.padding, groups=in_channels,
                       bias=self.bias)
        if lazy:
            self.depthwise_conv = Conv2d(in_channels, self.kernel_size, **options)
            self.point_conv = Conv2d(self.out_channels, 1, bias=self.bias)
        else:
            self.depthwise_conv = Conv2d(in_channels, in_channels, self.kernel_size, **options)
            self.point_conv = Conv2d(in_channels, self.out_channels, 1, bias=self.bias)

    def extra_repr(self):
        inputs = "?" if self.in_channels is None else self.in_channels
        text = f"{inputs}->{self.out_channels}, kernel_size={self.kernel_size}"
        if self.stride != (1, 1):
            text += f", stride={self.stride}"
        if self.padding != (0, 0):
            text += f", padding={self.padding!r}"
        return text + (", bias=True" if self.bias else "")

    def output_shape(self, input_shape):
        shape = tuple(input_shape)
        known = self.in_channels
        expected = shape_text(("N", "C" if known is None else known, "H", "W"))
        self.check_input(len(shape) == 4 and (known is None or shape[1] == known), expected,
                         shape)
        # The depthwise conv decides the spatial size: its geometry, checked in this layer's name
        probe = Conv2d(1, self.kernel_size, stride=self.stride, padding=self.padding)
        spatial = checked_output_size(self, probe.geometry, ("H", "W"), expected, shape)
        return (shape[0], self.out_channels) + spatial

    def forward(self, x: Tensor) -> Tensor:
        self.output_shape(x.shape)
        if self.depthwise_conv is None:
            self._build(x.shape[1], lazy=True)
        return self.point_conv(self.depthwise_conv(x))

    def count_parameters(self, input_shape=None):
        if self.depthwise_conv is None and input_shape is not None:
            channels = input_shape[1]
            kh, kw = self.kernel_size
            biases = channels + self.out_channels if self.bias else 0
            return channels * kh * kw + self.out_channels * channels + biases
        return super().count_parameters()

    def _lazy_parameters(self, prefix, state):
        value = state.get(prefix + "depthwise_conv.W")
        if self.depthwise_conv is not None or value is None:
            return {}
        channels = value.shape[0] if value.ndim == 4 else None
        dtype = value.dtype if value.dtype.kind == "f" else np.dtype(np.float32)
        pending = {prefix + "depthwise_conv.W": ((channels, 1) + self.kernel_size, dtype),
                   prefix + "point_conv.W": ((self.out_channels, channels, 1, 1), dtype)}
        if self.bias:
            pending[prefix + "depthwise_conv.b"] = ((channels,), dtype)
            pending[prefix + "point_conv.b"] = ((self.out_channels,), dtype)
        return pending

    def _materialize_from_state(self, prefix, state):
        value = state.get(prefix + "depthwise_conv.W")
        if self.depthwise_conv is None and value is not None:
            self._build(value.shape[0], lazy=True)
            for name in ("depthwise_conv", "point_conv"):
                getattr(self, name)._materialize_from_state(f"{prefix}{name}.", state)


class Pooling2d(Layer):
    """SINGA's generic 2-D pooling layer: max (``is_max=True``) or average pooling over
    kernel_size windows moving by stride (default kernel_size).

    ``padding`` is an int, a (height, width) pair, or SINGA's four values (top, bottom, left,
    right), each at most half the kernel; SINGA's ``pad_mode`` "SAME_UPPER" / "SAME_LOWER"
    pads for ceil(size / stride) outputs (the odd pixel after / before) and "VALID" pads
    nothing: one pooling op on x, whose backward returns x's gradient. Uneven explicit padding
    is added first (-inf for max, zeros for average) before a pooling without padding.
    Average pooling counts padding in the divisor unless ``count_include_pad=False`` (our
    addition; AvgPool2d's default).
    """

    def __init__(self, kernel_size: IntOrPair, stride: Optional[IntOrPair] = None,
                 padding: IntOrTuple = 0, is_max: bool = True, pad_mode: str = "NOTSET",
                 count_include_pad: bool = True) -> None:
        super().__init__()
        name = type(self).__name__
        self.kernel_size = positive_pair(kernel_size, "kernel_size", name)
        self.stride = self.kernel_size if stride is None else \
            positive_pair(stride, "stride", name)
        self.is_max = bool(is_max)
        self.pad_mode = pad_mode_argument(pad_mode, name)
        if isinstance(padding, (list, tuple)) and len(padding) == 4:
            top, bottom, left, right = (int(p) for p in padding)
        else:
            (top, left) = pair(padding, name, "padding")
            bottom, right = top, left
        self.padding = ((top, bottom), (left, right))
        kh, kw = self.kernel_size
        if not all(0 <= p <= kh // 2 for p in (top, bottom)) or \
                not all(0 <= p <= kw // 2 for p in (left, right)):
            raise ValueError(f"{name}: padding must be between 0 and half the kernel size "
                             f"{self.kernel_size}, got {padding!r}")
        self.geometry = ConvGeometry(self.kernel_size, self.stride, (top, bottom, left, right),
                                     pad_mode=self.pad_mode, name=name)
        self.count_include_pad = bool(count_include_pad)

    def extra_repr(self):
        text = f"kernel_size={self.kernel_size}, stride={self.stride}"
        if self.pad_mode != "NOTSET":
            text += f", pad_mode={self.pad_mode!r}"
        elif self.padding != ((0, 0), (0, 0)):
            text += f", padding={self.padding}"
        return text + ("" if self.is_max else ", is_max=False")

    def output_shape(self, input_shape):
        shape = tuple(input_shape)
        self.check_input(len(shape) == 4, "(N, C, H, W)", shape)
        pads = self.geometry.pads(shape[2:])
        out = self.geometry.output_size(shape[2:], pads)
        for letter, count, smallest in zip("HW", out, self.geometry.smallest_input(pads)):
            self.check_input(count is None or count >= 1, f"(N, C, H, W) with {letter} >= "
                             f"{smallest}", shape)
        return shape[:2] + out

    def forward(self, x: Tensor) -> Tensor:
        out_shape = self.output_shape(x.shape)
        if self.pad_mode != "NOTSET":
            # one op on x (the ops pad for themselves): its backward is x's gradient
            if self.is_max:
                return pooling_ops.max_pool2d(x, self.kernel_size, self.stride,
                                              pad_mode=self.pad_mode)
            return pooling_ops.avg_pool2d(x, self.kernel_size, self.stride, pad_mode=self.pad_mode,
                                          count_include_pad=self.count_include_pad)
        (top, bottom), (left, right) = self.geometry.pads(x.shape[2:])
        if top == bottom and left == right:
            if self.is_max:
                return pooling_ops.max_pool2d(x, self.kernel_size, self.stride, (top, left))
            return pooling_ops.avg_pool2d(x, self.kernel_size, self.stride, (top, left),
                                          count_include_pad=self.count_include_pad)
        fill = -np.inf if self.is_max else 0.0
        padded = padding_ops.pad(x, "constant", [0, 0, top, left, 0, 0, bottom, right], fill)
        if self.is_max:
            return pooling_ops.max_pool2d(padded, self.kernel_size, self.stride)
        y = pooling_ops.avg_pool2d(padded, self.kernel_size, self.stride)
        if self.count_include_pad:
            return y
        # The op divided every window by kh * kw; rescale to the pixels inside x.
        counts = [self._inside_counts(x.shape[2 + a], a, pads, out_shape[2 + a])
                  for a, pads in ((0, (top, bottom)), (1, (left, right)))]
        scale = float(np.prod(self.kernel_size)) / np.outer(counts[0], counts[1])
        return elementwise_ops.mul(y, Tensor(data=scale.astype(x.dtype), device=x.device,
                                             requires_grad=False))

    def _inside_counts(self, size, axis, pads, count):
        starts = np.arange(count) * self.stride[axis] - pads[0]
        return np.minimum(starts + self.kernel_size[axis], size) - np.maximum(starts, 0)


class SoftMax(Softmax):
    """SINGA's spelling of :class:`Softmax`: softmax along ``axis`` (1 by default, as SINGA)."""
