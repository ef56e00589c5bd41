"""Dropout: inverted scaling in training, identity in eval.

The mask comes from the input's device generator (``x.device.random``), which
``autograd.manual_seed(s)`` restarts, so two runs after the same seed drop the same units.

>>> import numpy as np, autograd
>>> x = autograd.Tensor(data=np.ones(6, np.float32))
>>> autograd.manual_seed(0); a = dropout(x, 0.5, training=True).to_numpy()
>>> autograd.manual_seed(0); b = dropout(x, 0.5, training=True).to_numpy()
>>> bool((a == b).all()), sorted(set(a.tolist())) <= [0.0, 2.0]
(True, True)
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import numbers

from ..recording import config
from .base import Operation

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = ["dropout"]


class Dropout(Operation):
    """y = x * mask / (1 - ratio), mask[i] = 1 with probability 1 - ratio (else 0); y has x's
    shape.   dx = dy * mask / (1 - ratio)

    (SINGA's Dropout computes its scale as ``1 / 1 - ratio``, which is 1 - ratio; here the
    kept elements are divided by 1 - ratio so that the expected value is unchanged.)"""

    def __init__(self, ratio, generator):
        self.ratio, self.generator = ratio, generator

    def forward(self, x):
        draws = self.generator.random(x.shape, dtype=x.dtype)
        # The scaled mask in x's dtype: kept == 1 / (1 - ratio), dropped == 0.
        scaled_mask = (draws >= self.ratio).astype(x.dtype)
        scaled_mask *= 1.0 / (1.0 - self.ratio)
        self.save_for_backward(scaled_mask)
        return x * scaled_mask

    def backward(self, dy):
        (scaled_mask,) = self.saved
        return dy * scaled_mask


def dropout(x: Tensor, ratio: float = 0.5, training: Optional[bool] = None) -> Tensor:
    """Zero each element of x with probability ``ratio`` and scale the rest by
    1 / (1 - ratio) when training (default: follow ``autograd.training``); return x itself in
    eval mode. The mask is drawn from ``x.device.random`` (see ``autograd.manual_seed``)."""
    if isinstance(ratio, bool) or not isinstance(ratio, numbers.Real) or not 0.0 <= ratio < 1.0:
        raise ValueError(f"dropout: ratio must be in [0, 1), got {ratio!r}")
    if training is None:
        training = config.training
    if not training or ratio == 0.0:
        return x
    if x.dtype.kind != "f":
        raise TypeError(f"dropout: expected a floating x, got {x.dtype}")
    return Dropout(float(ratio), x.device.random)(x)
