"""softmax and log_softmax along one axis, both computed stably (the maximum subtracted
first), and the raw-array log_softmax that the losses share.

>>> from autograd import Tensor
>>> softmax(Tensor(data=[1.0, 1.0])).to_numpy()
array([0.5, 0.5], dtype=float32)
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..device import get_array_module
from .base import Operation
from .utils import normalize_axes, check_tensor

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = ["softmax", "log_softmax"]


class Softmax(Operation):
    """y = e^x / sum(e^x) along ``axis`` (the max subtracted first).
    dx = y * (dy - sum(dy * y) along axis)"""

    def __init__(self, axis):
        self.axis = axis

    def forward(self, x):
        xp = get_array_module(x)
        e = xp.exp(x - x.max(axis=self.axis, keepdims=True))
        y = e / e.sum(axis=self.axis, keepdims=True)
        self.save_for_backward(y)
        return y

    def backward(self, dy):
        (y,) = self.saved
        weighted = dy * y
        return weighted - y * weighted.sum(axis=self.axis, keepdims=True)


class LogSoftmax(Operation):
    """y = x - log(sum(e^x)) along ``axis`` (the max subtracted first).
    dx = dy - e^y * sum(dy) along axis"""

    def __init__(self, axis):
        self.axis = axis

    def forward(self, x):
        y = log_softmax_array(x, self.axis)
        self.save_for_backward(y)
        return y

    def backward(self, dy):
        (y,) = self.saved
        return dy - get_array_module(y).exp(y) * dy.sum(axis=self.axis, keepdims=True)


def log_softmax_array(x, axis):
    """log_softmax of a raw array, stable for large x (shared with the losses)."""
    xp = get_array_module(x)
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - xp.log(xp.exp(shifted).sum(axis=axis, keepdims=True))


def _single_axis(x, axis, name):
    check_tensor(x, name)
    if not isinstance(axis, int) and not hasattr(axis, "__index__"):
        raise TypeError(f"{name}: axis must be an int, got {type(axis).__name__}")
    if x.ndim == 0:
        raise ValueError(f"{name}: expected a tensor with at least 1 dimension, got shape ()")
    return normalize_axes(int(axis), x.ndim, name)[0]


def softmax(x: Tensor, axis: int = -1) -> Tensor:
    """e^x normalised to sum to 1 along ``axis``; stable for large x.

    >>> from autograd import Tensor
    >>> softmax(Tensor(data=[[1000.0, 1000.0], [0.0, -1000.0]])).to_numpy()
    array([[0.5, 0.5],
           [1. , 0. ]], dtype=float32)
    """
    return Softmax(_single_axis(x, axis, "softmax"))(x)


def log_softmax(x: Tensor, axis: int = -1) -> Tensor:
    """The logarithm of softmax along ``axis``, computed directly (finite where softmax
    underflows to 0).

    >>> from autograd import Tensor
    >>> log_softmax(Tensor(data=[0.0, -1000.0])).to_numpy()
    array([    0., -1000.], dtype=float32)
    """
    return LogSoftmax(_single_axis(x, axis, "log_softmax"))(x)
