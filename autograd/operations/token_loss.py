"""The language-model loss: cross entropy of logits over a vocabulary (class axis last) against
integer targets, with ``ignore_index``, log-softmax and loss fused in one op.

``autograd.cross_entropy`` is SINGA's loss on probabilities, so the logits form that PyTorch
calls ``cross_entropy`` is ``token_cross_entropy`` here; it takes (N, T, V) logits as they come
out of a language model, without reshaping them to (N*T, V).

>>> import numpy as np
>>> from autograd import Tensor
>>> logits = Tensor(data=np.zeros((1, 2, 4), np.float32), stores_grad=True)
>>> round(token_cross_entropy(logits, np.array([[3, -100]])).item(), 4)     # log 4
1.3863
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..backend import kernels_for
from ..device import get_array_module
from .base import Operation
from .utils import check_tensor, out_of_range
from .._types import Indices

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = ["token_cross_entropy"]


class TokenCrossEntropy(Operation):
    """loss = -sum over kept positions of log_softmax(x)[t] / (number kept); x (..., V),
    t (...) integers, a position kept unless t == ignore_index.
    dx = (softmax(x) - onehot(t)) * dy / (number kept) at kept positions, 0 elsewhere

    One pass over the (positions, V) logits builds the probabilities, which are all that
    backward needs (saved once, in place of the shifted logits)."""

    def __init__(self, ignore_index, reduction):
        self.ignore_index, self.reduction = ignore_index, reduction

    def forward(self, x, targets):
        xp = get_array_module(x)
        flat = targets.reshape(-1)
        ignored = flat == self.ignore_index
        self.kept = (~ignored).astype(x.dtype)
        self.targets = xp.where(ignored, 0, flat)
        vocabulary = x.shape[-1]
        self.logits_shape = x.shape
        rows = x.reshape(-1, vocabulary)
        losses, probabilities = kernels_for(x).softmax_rows(rows, self.targets)
        losses *= self.kept
        self.save_for_backward(probabilities)
        kept_count = self.kept.sum()
        if self.reduction == "sum":
            return xp.asarray(losses.sum(), dtype=x.dtype)
        if self.reduction == "none":
            return losses.reshape(x.shape[:-1])
        self.kept_count = kept_count
        return xp.asarray(losses.sum() / kept_count, dtype=x.dtype)

    def backward(self, dy):
        (probabilities,) = self.saved
        if self.reduction == "none":
            weight = dy.reshape(-1) * self.kept
        elif self.reduction == "sum":
            weight = dy * self.kept
        else:
            weight = (dy / self.kept_count).astype(dy.dtype) * self.kept
        dx = kernels_for(probabilities).softmax_rows_backward(probabilities, self.targets, weight)
        return dx.reshape(self.logits_shape), None


def token_cross_entropy(logits: Tensor, targets: Indices, ignore_index: int = -100,
                        reduction: str = "mean") -> Tensor:
    """Cross entropy of ``logits`` (..., V) (class axis last: (N, T, V) for a language model,
    (N, V) for a classifier) against integer ``targets`` (...) in [0, V); positions whose target
    is ``ignore_index`` take no part. ``reduction``: "mean" over the kept positions (PyTorch's
    default), "sum", or "none" (the loss at each position, 0 where ignored).

    >>> import numpy as np
    >>> from autograd import Tensor
    >>> token_cross_entropy(Tensor(data=np.zeros((2, 3), np.float32)), np.array([0, 3]))
    Traceback (most recent call last):
    ...
    ValueError: token_cross_entropy: target 3 is outside [0, 3) (ignore_index -100 aside)
    """
    name = "token_cross_entropy"
    check_tensor(logits, name)
    if logits.dtype.kind != "f":
        raise TypeError(f"{name}: expected floating logits, got {logits.dtype}")
    if logits.ndim < 1 or logits.shape[-1] == 0:
        raise ValueError(f"{name}: expected logits of shape (..., V) with V > 0, got "
                         f"{tuple(logits.shape)}")
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{name}: reduction must be 'mean', 'sum' or 'none', got "
                         f"{reduction!r}")
    if hasattr(targets, "creator"):
        targets = targets.data
    elif not hasattr(targets, "dtype"):
        targets = np.asarray(targets)
    if targets.dtype.kind not in "iu":
        raise TypeError(f"{name}: expected integer targets, got {targets.dtype}")
    # targets is an array here; the checker still sees the Union of the signature
    if tuple(targets.shape) != tuple(logits.shape[:-1]):  # type: ignore[arg-type]
        raise ValueError(f"{name}: expected targets of shape {tuple(logits.shape[:-1])} for "
                         f"logits {tuple(logits.shape)}, "
                         f"got {tuple(targets.shape)}")  # type: ignore[arg-type]
    vocabulary = logits.shape[-1]
    flat = targets.reshape(-1)
    ignored = flat == ignore_index
    bad = out_of_range(flat[~ignored], 0, vocabulary)
    if bad is not None:
        raise ValueError(f"{name}: target {bad} is outside [0, {vocabulary}) (ignore_index "
                         f"{ignore_index} aside)")
    xp = logits.device.xp
    if get_array_module(targets) is not xp:
        with logits.device.activate():
            targets = xp.asarray(targets)
    # the targets are an input, not an attribute, so that graph mode replays new ones
    return TokenCrossEntropy(ignore_index, reduction)(logits, logits.new_output(targets))
