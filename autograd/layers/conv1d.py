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
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..operations import conv1d as conv1d_ops
from ..operations import pooling as pooling_ops
from .arguments import conv_padding
from .conv import _Averaging, _Convolution, _Pooling

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = ["Conv1d", "MaxPool1d", "AvgPool1d"]


def _int(value, what, layer, smallest):
    if isinstance(value, (list, tuple)) and len(value) == 1:
        value = value[0]
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < smallest:
        kind = "a positive int" if smallest == 1 else "a non-negative int"
        raise ValueError(f"{layer}: {what} must be {kind}, got {value!r}")
    return int(value)


class Conv1d(_Convolution):
    """1-D convolution (``autograd.conv1d``) of (N, in_channels, L) with W (out_channels,
    in_channels / groups, kernel_size) and b (out_channels,), giving (N, out_channels, OL).

    Arguments as :class:`Conv2d` with ints for kernel_size, stride, padding and dilation:
    ``padding`` also "same" / "valid", SINGA's ``pad_mode`` ("SAME_UPPER", "SAME_LOWER",
    "VALID") overrides it, ``group`` spells ``groups``, and the lazy form
    ``Conv1d(out_channels, kernel_size)`` takes in_channels from the first input. ``init``
    (Glorot uniform by default) uses fan_in = in_channels / groups * k, fan_out =
    out_channels * k; b starts at 0.
    """

    _LAYER = "Conv1d"
    _AXES = ("L",)
    _operation = staticmethod(conv1d_ops.conv1d)

    def _count(self, value, what):
        return _int(value, what, "Conv1d", 1)

    _sizes = _count

    def _padding(self, padding):
        return conv_padding(padding, "Conv1d", "an int",
                            lambda value: _int(value, "padding", "Conv1d", 0))

    @staticmethod
    def _per_axis(value):
        return (value,)


class _Pool1d(_Pooling):
    """The 1-D pooling layers' ints. Besides (N, C, L) they take SINGA's layout (N, C, 1, L)
    (SINGA pools sequences as images of height 1) and keep it."""

    _AXES = ("L",)
    _per_axis = staticmethod(Conv1d._per_axis)

    @staticmethod
    def _sizes(value, what, name):
        return _int(value, what, name, 1)

    @staticmethod
    def _padding(padding, name):
        return _int(padding, "padding", name, 0)

    def _check_layout(self, shape):
        self.check_input(len(shape) == 3 or (len(shape) == 4 and shape[2] == 1),
                         "(N, C, L) or (N, C, 1, L)", shape)

    _operations = (conv1d_ops.max_pool1d, conv1d_ops.avg_pool1d)      # max, average

    def forward(self, x: Tensor) -> Tensor:
        if x.ndim != 4:
            return super().forward(x)
        self.output_shape(x.shape)              # SINGA's (N, C, 1, L): pooled as an image
        operation = (pooling_ops.max_pool2d, pooling_ops.avg_pool2d)[self._averaging]
        return operation(x, (1, self.kernel_size), (1, self.stride), (0, self.padding),
                         self.ceil_mode, *self._extra_arguments())


class MaxPool1d(_Pool1d):
    """Max pooling (``autograd.max_pool1d``) over windows of kernel_size moving by stride
    (default kernel_size), -inf padding of at most half the kernel; ``ceil_mode`` keeps a last
    partial window."""


class AvgPool1d(_Averaging, _Pool1d):
    """Average pooling (``autograd.avg_pool1d``), arguments as MaxPool1d; zero padding, counted
    in the divisor when ``count_include_pad`` (the default, as PyTorch)."""
