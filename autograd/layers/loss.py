"""SINGA's stateless loss layers: ``SoftMaxCrossEntropy()(x, t)``, ``MeanSquareError()(x, t)``,
``CrossEntropy()(p, t)`` and ``BinaryCrossEntropy()(p, t)``, each the loss function of
:mod:`autograd.operations.loss` as a layer (a scalar, the mean over the batch).

Each checks the shapes of its two inputs first, with an error naming the layer; targets follow
the loss functions (integer labels (N,) or (N, C) targets for the classification losses).

>>> import numpy as np, autograd
>>> x = autograd.Tensor(data=np.zeros((2, 4), np.float32))
>>> round(autograd.SoftMaxCrossEntropy()(x, np.array([1, 3])).item(), 4)   # log 4
1.3863
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..operations import loss as loss_ops
from .base import Layer, shape_text
from .._types import Indices

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = ["SoftMaxCrossEntropy", "MeanSquareError", "CrossEntropy", "BinaryCrossEntropy"]


def _shape(value):
    return tuple(value.shape) if hasattr(value, "shape") else None


class _ClassificationLoss(Layer):
    """Inputs (N, C) against targets (N, C) or integer labels (N,) (or, as SINGA's programs
    pass them, a label column (N, 1))."""

    what = "input"

    def output_shape(self, input_shape, target_shape=None):
        """The loss is a scalar: ``()``; checks the input (and target) shapes."""
        shape = tuple(input_shape)
        self.check_input(len(shape) == 2, f"{self.what} {shape_text(('N', 'C'))}", shape)
        if target_shape is not None and tuple(target_shape) not in (shape, shape[:1],
                                                                  (shape[0], 1)):
            raise ValueError(f"{self.describe()}: expected targets of shape {shape_text(shape)} "
                             f"or labels of shape {shape_text(shape[:1])} for {self.what} of "
                             f"shape {shape_text(shape)}, got {shape_text(target_shape)}")
        return ()


class _ElementwiseLoss(Layer):
    """Inputs and targets of the same shape."""

    def output_shape(self, input_shape, target_shape=None):
        """The loss is a scalar: ``()``; checks that the target shape matches."""
        shape = tuple(input_shape)
        if target_shape is not None and tuple(target_shape) != shape:
            raise ValueError(f"{self.describe()}: expected targets of the input's shape "
                             f"{shape_text(shape)}, got {shape_text(target_shape)}")
        return ()


class SoftMaxCrossEntropy(_ClassificationLoss):
    """Cross entropy of softmax(x) for logits x (N, C) against one-hot / soft targets (N, C) or
    integer labels (N,): ``autograd.softmax_cross_entropy`` (fused, stable)."""

    what = "logits"

    def forward(self, x: Tensor, t: Indices) -> Tensor:
        self.output_shape(x.shape, _shape(t))
        return loss_ops.softmax_cross_entropy(x, t)


class CrossEntropy(_ClassificationLoss):
    """``-mean over the batch of sum(t * log p)`` for probabilities p (N, C):
    ``autograd.cross_entropy``."""

    what = "probabilities"

    def forward(self, p: Tensor, t: Indices) -> Tensor:
        self.output_shape(p.shape, _shape(t))
        return loss_ops.cross_entropy(p, t)


class MeanSquareError(_ElementwiseLoss):
    """``mean((x - t)^2)`` over all elements: ``autograd.mse_loss``. SINGA's MeanSquareError
    divides the sum of squares by 2N instead (for x of shape (N, C), C / 2 times our value);
    we keep the mean over all elements that PyTorch's MSELoss gives."""

    def forward(self, x: Tensor, t: Indices) -> Tensor:
        self.output_shape(x.shape, _shape(t))
        return loss_ops.mse_loss(x, t)


class BinaryCrossEntropy(_ElementwiseLoss):
    """``-mean(t log p + (1 - t) log(1 - p))`` over all elements for probabilities p:
    ``autograd.binary_cross_entropy`` (logs clamped at -100)."""

    def forward(self, p: Tensor, t: Indices) -> Tensor:
        self.output_shape(p.shape, _shape(t))
        return loss_ops.binary_cross_entropy(p, t)
