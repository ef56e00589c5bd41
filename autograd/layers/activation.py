"""Parameter-free layers: ReLU, Sigmoid, Tanh, Softmax and Dropout, wrapping their operations
so that they can sit in a Sequential.

>>> import numpy as np, autograd
>>> autograd.ReLU()(autograd.Tensor(data=[-1.0, 2.0])).to_numpy()
array([0., 2.], dtype=float32)
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..operations import activation as activation_ops
from ..operations import dropout as dropout_ops
from ..operations import softmax as softmax_ops
from .base import AxisLayer, Layer

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = ["ReLU", "Sigmoid", "Tanh", "Softmax", "Dropout"]


class _Elementwise(Layer):
    """A layer that applies one shape-preserving operation."""

    def output_shape(self, input_shape):
        return tuple(input_shape)


class ReLU(_Elementwise):
    """max(x, 0) elementwise (``autograd.relu``)."""

    def forward(self, x: Tensor) -> Tensor:
        return activation_ops.relu(x)


class Sigmoid(_Elementwise):
    """1 / (1 + e^-x) elementwise (``autograd.sigmoid``)."""

    def forward(self, x: Tensor) -> Tensor:
        return activation_ops.sigmoid(x)


class Tanh(_Elementwise):
    """tanh(x) elementwise (``autograd.tanh``)."""

    def forward(self, x: Tensor) -> Tensor:
        return activation_ops.tanh(x)


class Softmax(AxisLayer, _Elementwise):
    """Softmax along ``axis``; the default axis=1 (the class axis of (N, C) or (N, C, ...)) is
    SINGA's, where PyTorch's nn.Softmax wants the axis named."""

    def __init__(self, axis: int = 1) -> None:
        super().__init__(axis)

    def output_shape(self, input_shape):
        shape = tuple(input_shape)
        self.check_input(-len(shape) <= self.axis < len(shape),
                         f"with axis {self.axis}", shape)
        return shape

    def forward(self, x: Tensor) -> Tensor:
        self.output_shape(x.shape)
        return softmax_ops.softmax(x, axis=self.axis)


class Dropout(_Elementwise):
    """Zeroes each element with probability ``ratio`` in training and scales the rest by
    1 / (1 - ratio) (inverted dropout); the identity in evaluation (``eval()`` or
    ``autograd.training = False``). The mask comes from the device's generator, so
    ``autograd.manual_seed`` makes it repeatable."""

    def __init__(self, ratio: float = 0.5) -> None:
        super().__init__()
        if not 0.0 <= ratio < 1.0:
            raise ValueError(f"Dropout: ratio must be in [0, 1), got {ratio!r}")
        self.ratio = float(ratio)

    def extra_repr(self):
        return f"ratio={self.ratio}"

    def forward(self, x: Tensor) -> Tensor:
        return dropout_ops.dropout(x, ratio=self.ratio, training=self.is_training)
