"""Normalization layers: BatchNorm2d (and BatchNorm1d) with running statistics, LayerNorm.

Momentum follows SINGA, the opposite of PyTorch:
``running = momentum * running + (1 - momentum) * batch_statistic``, so the default
momentum=0.9 here is PyTorch's momentum=0.1.

>>> import autograd
>>> bn = autograd.BatchNorm2d(3)
>>> [n for n, _ in bn.named_parameters()], [n for n, _ in bn.named_buffers()]
(['scale', 'bias'], ['running_mean', 'running_var'])
"""
from __future__ import annotations

import numbers

import numpy as np

from ..operations import normalization as normalization_ops
from ..tensor import Tensor
from .base import Layer, shape_text
from .._types import Shape

__all__ = ["BatchNorm2d", "BatchNorm1d", "LayerNorm"]


class BatchNorm2d(Layer):
    """Batch normalization of (N, C, H, W) per channel (``autograd.batch_norm``), with
    parameters ``scale`` (C,) starting at 1 and ``bias`` (C,) at 0, and buffers
    ``running_mean`` (C,) starting at 0 and ``running_var`` (C,) at 1.

    In training mode (``train()`` and ``autograd.training`` both on) it normalises with the
    batch mean and biased variance and updates the running statistics in place:
    ``running = momentum * running + (1 - momentum) * batch`` (SINGA's convention; PyTorch's
    momentum is 1 - this one), the running variance taking the unbiased batch variance. In
    evaluation mode it normalises with the running statistics and changes nothing. A rejected
    input leaves the running statistics as they were.
    """

    num_features: int       # for the type checker (set in __init__)
    momentum: float
    eps: float
    scale: Tensor
    bias: Tensor
    running_mean: Tensor    # buffers
    running_var: Tensor


    _layout: tuple[str, ...] = ("N", "C", "H", "W")

    def __init__(self, num_features: int, momentum: float = 0.9, eps: float = 1e-5) -> None:
        super().__init__()
        name = type(self).__name__
        if isinstance(num_features, bool) or not isinstance(num_features, (int, np.integer)) \
                or num_features < 1:
            raise ValueError(f"{name}: num_features must be a positive int, got "
                             f"{num_features!r}")
        if not isinstance(momentum, numbers.Real) or not 0.0 <= momentum <= 1.0:
            raise ValueError(f"{name}: momentum must be in [0, 1], got {momentum!r}")
        if not isinstance(eps, numbers.Real) or eps <= 0:
            raise ValueError(f"{name}: eps must be positive, got {eps!r}")
        self.num_features = int(num_features)
        self.momentum = float(momentum)
        self.eps = float(eps)
        channels = (self.num_features,)
        self.scale = Tensor(data=np.ones(channels, np.float32), stores_grad=True)
        self.bias = Tensor(data=np.zeros(channels, np.float32), stores_grad=True)
        self.register_buffer("running_mean",
                             Tensor(data=np.zeros(channels, np.float32), requires_grad=False))
        self.register_buffer("running_var",
                             Tensor(data=np.ones(channels, np.float32), requires_grad=False))

    def extra_repr(self):
        text = f"{self.num_features}"
        if self.momentum != 0.9:
            text += f", momentum={self.momentum}"
        return text + (f", eps={self.eps}" if self.eps != 1e-5 else "")

    def output_shape(self, input_shape):
        shape = tuple(input_shape)
        layout = self._layout
        self.check_input(len(shape) == len(layout) and shape[1] == self.num_features,
                         shape_text(layout[:1] + (self.num_features,) + layout[2:]), shape)
        return shape

    def forward(self, x: Tensor) -> Tensor:
        self.output_shape(x.shape)
        training = self.is_training
        if training and x.size // self.num_features < 2:
            raise ValueError(f"{self.describe()}: training needs more than one value per "
                             f"channel, got input {shape_text(x.shape)}")
        return normalization_ops.batch_norm(
            x, self.scale, self.bias, self.running_mean, self.running_var,
            momentum=self.momentum, eps=self.eps, training=training)


class BatchNorm1d(BatchNorm2d):
    """BatchNorm2d for (N, C) batches (features of a Linear layer)."""

    _layout = ("N", "C")


class LayerNorm(Layer):
    """Layer normalization over the trailing ``normalized_shape`` dimensions of each sample
    (``autograd.layer_norm``), with ``scale`` (ones) and ``bias`` (zeros) of that shape unless
    ``elementwise_affine=False``."""

    def __init__(self, normalized_shape: Shape, eps: float = 1e-5,
                 elementwise_affine: bool = True) -> None:
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, numbers.Integral) else \
            tuple(normalized_shape)     # type: ignore[arg-type]  # not narrowed by Integral
        if not shape or any(not isinstance(n, numbers.Integral) or n < 1 for n in shape):
            raise ValueError(f"LayerNorm: normalized_shape must be a positive int or a tuple of "
                             f"them, got {normalized_shape!r}")
        self.normalized_shape = tuple(int(n) for n in shape)
        self.eps = float(eps)
        self.scale = self.bias = None
        if elementwise_affine:
            self.scale = Tensor(data=np.ones(self.normalized_shape, np.float32), stores_grad=True)
            self.bias = Tensor(data=np.zeros(self.normalized_shape, np.float32), stores_grad=True)

    def extra_repr(self):
        return f"{self.normalized_shape}" + ("" if self.scale is not None else
                                             ", elementwise_affine=False")

    def output_shape(self, input_shape):
        shape = tuple(input_shape)
        k = len(self.normalized_shape)
        self.check_input(len(shape) > k and shape[-k:] == self.normalized_shape,
                         shape_text(("N", "...") + self.normalized_shape), shape)
        return shape

    def forward(self, x: Tensor) -> Tensor:
        self.output_shape(x.shape)
        return normalization_ops.layer_norm(x, self.normalized_shape, self.scale, self.bias,
                                            eps=self.eps)
