"""Similarity and ranking (SINGA's CosSim and RankingLoss): cosine similarity of the rows of
two matrices, and a hinge loss on pairs of scores.

>>> from autograd import Tensor
>>> cossim(Tensor(data=[[1.0, 0.0]]), Tensor(data=[[2.0, 0.0]])).to_numpy()
array([1.], dtype=float32)
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..device import get_array_module
from .base import Operation
from .utils import scalar_value
from .loss import _check_float_tensor

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = ["cossim", "ranking_loss"]


def _check_pair(a, b, name, first, second):
    _check_float_tensor(a, name, first)
    _check_float_tensor(b, name, second)
    if tuple(a.shape) != tuple(b.shape):
        raise ValueError(f"{name}: {first} has shape {tuple(a.shape)} but {second} has shape "
                         f"{tuple(b.shape)}; they must match")


class CosSim(Operation):
    """y_i = <a_i, b_i> / (|a_i| |b_i|) for the rows of a, b (N, D), each norm at least eps.
    da_i = dy_i (b_i / (|a_i| |b_i|) - y_i a_i / |a_i|^2), db_i likewise (the second term 0
    where the norm was clamped)"""

    def __init__(self, eps):
        self.eps = eps

    def forward(self, a, b):
        xp = get_array_module(a)
        raw_a = xp.sqrt((a * a).sum(axis=1))
        raw_b = xp.sqrt((b * b).sum(axis=1))
        norm_a, norm_b = xp.maximum(raw_a, self.eps), xp.maximum(raw_b, self.eps)
        y = (a * b).sum(axis=1) / (norm_a * norm_b)
        # a clamped norm is a constant: its derivative term drops out
        inverse_square_a = xp.where(raw_a >= self.eps, 1 / (norm_a * norm_a), 0)
        inverse_square_b = xp.where(raw_b >= self.eps, 1 / (norm_b * norm_b), 0)
        self.save_for_backward(a, b, norm_a * norm_b, y, inverse_square_a, inverse_square_b)
        return y

    def backward(self, dy):
        a, b, norms, y, inverse_square_a, inverse_square_b = self.saved
        need_a, need_b = self.needs_input_grad
        scale = (dy / norms)[:, None]
        weighted = dy * y
        da = scale * b - (weighted * inverse_square_a)[:, None] * a if need_a else None
        db = scale * a - (weighted * inverse_square_b)[:, None] * b if need_b else None
        return da, db


def cossim(a: Tensor, b: Tensor, eps: float = 1e-8) -> Tensor:
    """SINGA's CosSim: the cosine similarity of each row of ``a`` with the same row of ``b``,
    both (N, D), giving (N,). Each norm is clamped below at ``eps`` (as PyTorch's
    ``cosine_similarity``), so a zero row gives 0 rather than nan.

    >>> from autograd import Tensor
    >>> a, b = Tensor(data=[[1.0, 0.0], [3.0, 4.0]]), Tensor(data=[[0.0, 2.0], [6.0, 8.0]])
    >>> cossim(a, b).to_numpy()
    array([0., 1.], dtype=float32)
    """
    _check_pair(a, b, "cossim", "a", "b")
    if a.ndim != 2:
        raise ValueError(f"cossim: expected a and b of shape (N, D), got {tuple(a.shape)}")
    return CosSim(float(eps))(a, b)


class RankingLoss(Operation):
    """loss = mean(max(0, M - pos + neg)) over all elements.
    dpos = -[M - pos + neg > 0] / size * dy,   dneg = [M - pos + neg > 0] / size * dy"""

    def __init__(self, margin):
        self.margin = margin

    def forward(self, pos, neg):
        xp = get_array_module(pos)
        hinge = neg - pos + self.margin
        active = hinge > 0
        self.save_for_backward(active)
        self.dtype = pos.dtype
        return xp.asarray(xp.where(active, hinge, 0).sum()) * (1.0 / pos.size)

    def backward(self, dy):
        (active,) = self.saved
        dneg = active.astype(self.dtype) * (dy * (1.0 / active.size))
        need_pos, need_neg = self.needs_input_grad
        return (-dneg if need_pos else None), (dneg if need_neg else None)


def ranking_loss(pos: Tensor, neg: Tensor, M: float = 0.2) -> Tensor:
    """SINGA's RankingLoss: the hinge ``mean(max(0, M - pos + neg))`` over all elements of the
    scores ``pos`` and ``neg`` (same shape; for scores of shape (N,) or (N, 1) this is SINGA's
    sum over the batch divided by N). It is zero, with zero gradient, for each pair where pos
    beats neg by at least the margin ``M``.

    >>> from autograd import Tensor
    >>> round(ranking_loss(Tensor(data=[1.0, 0.5]), Tensor(data=[0.0, 0.6])).item(), 6)
    0.15
    """
    _check_pair(pos, neg, "ranking_loss", "pos", "neg")
    if pos.size == 0:
        raise ValueError(f"ranking_loss: expected non-empty scores, got shape {tuple(pos.shape)}")
    margin = scalar_value(M)
    if margin is None:
        raise TypeError(f"ranking_loss: M must be a number, got {type(M).__name__}")
    return RankingLoss(float(margin))(pos, neg)
