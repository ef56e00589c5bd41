"""Losses: each returns a scalar (a 0-d tensor), the mean over the batch.

The classification losses take logits, probabilities or log-probabilities ``(N, C)`` and targets
either as one-hot / soft targets ``(N, C)`` (floating) or as integer class labels ``(N,)`` (an int
NumPy array, list or int Tensor; a label outside ``[0, C)`` is a ValueError, where NumPy would
wrap -1 silently). ``softmax_cross_entropy`` fuses log-softmax and the loss, so large logits give
finite losses and gradients. The elementwise losses (``mse_loss``, the binary cross entropies)
average over all elements, as PyTorch does. Targets are constants for most uses, but a floating
target that requires a gradient gets one. SINGA's ``cossim`` and ``ranking_loss`` are in
similarity.py.

>>> import numpy as np
>>> from autograd import Tensor
>>> x = Tensor(data=[[2.0, 0.0, 0.0], [0.0, 0.0, 1000.0]], stores_grad=True)
>>> round(softmax_cross_entropy(x, np.array([0, 2])).item(), 4)   # finite despite the 1000
0.1198
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..device import get_array_module, move_array
from .base import Operation
from .utils import as_tensor_like, constant, out_of_range, ignore_float_warnings
from .softmax import log_softmax_array
from . import special
from .._types import Indices

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = [
    "softmax_cross_entropy", "cross_entropy", "nll_loss", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "mse_loss",
]


def _is_labels(t):
    return t.dtype.kind in "iu"


# ---------------------------------------------------------------- operand checks

def _check_float_tensor(x, name, what):
    if not hasattr(x, "creator"):
        raise TypeError(f"{name}: expected {what} as a Tensor, got {type(x).__name__}")
    if x.dtype.kind != "f":
        raise TypeError(f"{name}: expected floating {what}, got dtype {x.dtype}")


def _target_operand(t, x, name):
    """``t`` as a Tensor on ``x``'s device. Integer arrays and lists stay integer (labels);
    booleans and lists of floats take x's dtype; a floating array keeps its own dtype (so float64
    targets with float32 inputs are reported, not silently mixed)."""
    if hasattr(t, "creator"):
        return t
    if not hasattr(t, "dtype"):
        with x.device.activate():
            t = x.device.xp.asarray(t)
            if t.dtype.kind == "f":
                t = t.astype(x.dtype)
    if _is_labels(t):
        return constant(move_array(t, x.device), x)
    if t.dtype.kind == "b":
        t = t.astype(x.dtype)
    if t.dtype.kind != "f":
        raise TypeError(f"{name}: expected floating targets or integer labels, got dtype {t.dtype}")
    return as_tensor_like(t, x, name)


def _classification_operands(x, t, name, what):
    """Check (N, C) inputs against (N, C) targets or (N,) labels in [0, C); return Tensors.
    As in SINGA, labels may also come as a column (N, 1) and targets as integers (N, C)."""
    _check_float_tensor(x, name, what)
    host_labels = t if isinstance(t, (list, tuple, np.ndarray)) else None
    t = _target_operand(t, x, name)
    if x.ndim != 2:
        raise ValueError(f"{name}: expected {what} of shape (N, C), got {tuple(x.shape)}")
    n, classes = x.shape
    if n == 0 or classes == 0:
        raise ValueError(f"{name}: expected a non-empty batch, got {what} of shape "
                         f"{tuple(x.shape)}")
    if _is_labels(t) and tuple(t.shape) == (n, 1):        # SINGA's column of labels
        t = constant(t.data.reshape(n), t)
        host_labels = None if host_labels is None else np.asarray(host_labels).reshape(n)
    elif _is_labels(t) and tuple(t.shape) == (n, classes):   # SINGA's integer one-hot
        t = constant(t.data.astype(x.dtype), t)
    if _is_labels(t):
        if tuple(t.shape) != (n,):
            raise ValueError(f"{name}: expected integer labels of shape ({n},) for {what} of "
                             f"shape {tuple(x.shape)}, got labels of shape {tuple(t.shape)}")
        # host labels are checked where they came from: no device synchronisation
        bad = out_of_range(np.asarray(host_labels) if host_labels is not None else t.data,
                           0, classes)
        if bad is not None:
            raise ValueError(f"{name}: label {bad} is outside [0, {classes}) for {classes} "
                             "classes")
    elif tuple(t.shape) == (n,):
        raise TypeError(f"{name}: labels of shape ({n},) must be integers, got {t.dtype} "
                        f"(cast them: labels.astype(int)); floating targets must have the "
                        f"{what}' shape {tuple(x.shape)}")
    elif tuple(t.shape) != tuple(x.shape):
        raise ValueError(f"{name}: expected targets of shape {tuple(x.shape)} like the {what}, "
                         f"or integer labels of shape ({n},), got {tuple(t.shape)} "
                         f"({t.dtype})")
    return x, t


def _same_shape_operands(x, t, name, what):
    _check_float_tensor(x, name, what)
    t = _target_operand(t, x, name)
    if _is_labels(t):
        t = constant(t.data.astype(x.dtype), t)
    if tuple(t.shape) != tuple(x.shape):
        raise ValueError(f"{name}: {what} has shape {tuple(x.shape)} but targets have shape "
                         f"{tuple(t.shape)}; they must match")
    if x.size == 0:
        raise ValueError(f"{name}: expected a non-empty {what}, got shape {tuple(x.shape)}")
    return x, t


# ---------------------------------------------------------------- classification

class SoftmaxCrossEntropy(Operation):
    """loss = -sum(t * log_softmax(x)) / N; x (N, C), t (N, C) or labels (N,).
    dx = (softmax(x) * sum_c t - t) / N * dy  (softmax - onehot for one-hot t);
    dt = -log_softmax(x) / N * dy"""

    def forward(self, x, t):
        xp = get_array_module(x)
        n = x.shape[0]
        logp = log_softmax_array(x, 1)
        self.save_for_backward(logp, t)
        if _is_labels(t):
            total = logp[xp.arange(n), t].sum()
        else:
            total = (t * logp).sum()
        return xp.asarray(total) * (-1.0 / n)

    def backward(self, dy):
        logp, t = self.saved
        xp = get_array_module(logp)
        n = logp.shape[0]
        scale = dy * (1.0 / n)
        dx = dt = None
        if self.needs_input_grad[0]:
            if _is_labels(t):
                dx = xp.exp(logp)
                dx[xp.arange(n), t] -= 1
            else:
                dx = xp.exp(logp) * t.sum(axis=1, keepdims=True) - t
            dx *= scale
        if self.needs_input_grad[1]:
            dt = logp * -scale
        return dx, dt


class CrossEntropy(Operation):
    """loss = -sum(t * log p) / N; p (N, C) probabilities, t (N, C) or labels (N,).
    dp = -t / p / N * dy (0 where t = 0);   dt = -log p / N * dy (also where t = 0; +inf
    where p = 0)"""

    def forward(self, p, t):
        xp = get_array_module(p)
        n = p.shape[0]
        if _is_labels(t):
            self.save_for_backward(p, t)
            total = xp.log(p[xp.arange(n), t]).sum()
        else:
            with ignore_float_warnings(xp):
                log_p = xp.log(p)
                # 0 * log 0 is 0 here: a class with no target weight adds nothing
                logp = xp.where(t == 0, 0, log_p)
            self.save_for_backward(p, t, log_p)     # dt needs log p also where t = 0
            total = (t * logp).sum()
        return xp.asarray(total) * (-1.0 / p.shape[0])

    def backward(self, dy):
        p, t = self.saved[:2]
        xp = get_array_module(p)
        n = p.shape[0]
        scale = dy * (1.0 / n)
        dp = dt = None
        if _is_labels(t):
            if self.needs_input_grad[0]:
                rows = xp.arange(n)
                dp = xp.zeros_like(p)
                dp[rows, t] = -scale / p[rows, t]
            return dp, None
        if self.needs_input_grad[0]:
            with ignore_float_warnings(xp):
                dp = xp.where(t == 0, 0, t / p) * -scale
        if self.needs_input_grad[1]:
            dt = self.saved[2] * -scale
        return dp, dt


class NLLLoss(Operation):
    """loss = -sum(t * logp) / N; logp (N, C) log-probabilities, t (N, C) or labels (N,).
    dlogp = -t / N * dy (-1/N at each label);   dt = -logp / N * dy"""

    def forward(self, logp, t):
        xp = get_array_module(logp)
        n = logp.shape[0]
        if _is_labels(t):
            total = logp[xp.arange(n), t].sum()
            self.save_for_backward(t)
        else:
            total = (t * logp).sum()
            self.save_for_backward(t, logp)
        self.shape = logp.shape
        return xp.asarray(total) * (-1.0 / n)

    def backward(self, dy):
        t = self.saved[0]
        xp = get_array_module(t)
        n = self.shape[0]
        if _is_labels(t):
            dlogp = xp.zeros(self.shape, dtype=dy.dtype)
            dlogp[xp.arange(n), t] = dy * (-1.0 / n)
            return dlogp, None
        scale = dy * (-1.0 / n)
        return (t * scale if self.needs_input_grad[0] else None,
                self.saved[1] * scale if self.needs_input_grad[1] else None)


def softmax_cross_entropy(x: Tensor, t: Indices) -> Tensor:
    """Cross entropy of the softmax of logits ``x`` (N, C) against ``t``: one-hot or soft targets
    (N, C), or integer class labels (N,). Mean over the batch; fused and stable for large logits.

    >>> import numpy as np
    >>> from autograd import Tensor
    >>> x = Tensor(data=np.zeros((2, 4), np.float32), stores_grad=True)
    >>> round(softmax_cross_entropy(x, np.array([1, 3])).item(), 4)   # log 4
    1.3863
    >>> softmax_cross_entropy(x, np.array([1, 4]))
    Traceback (most recent call last):
    ...
    ValueError: softmax_cross_entropy: label 4 is outside [0, 4) for 4 classes
    """
    return SoftmaxCrossEntropy()(*_classification_operands(x, t, "softmax_cross_entropy",
                                                           "logits"))


def cross_entropy(p: Tensor, t: Indices) -> Tensor:
    """``-mean over the batch of sum(t * log p)`` for probabilities ``p`` (N, C) and one-hot or
    soft targets (N, C) or integer labels (N,). SINGA's CrossEntropy; for logits use
    :func:`softmax_cross_entropy` (stable), which is what PyTorch's ``cross_entropy`` computes."""
    return CrossEntropy()(*_classification_operands(p, t, "cross_entropy", "probabilities"))


def nll_loss(logp: Tensor, t: Indices) -> Tensor:
    """Negative log likelihood: ``-mean over the batch of logp[i, t_i]`` for log-probabilities
    ``logp`` (N, C) (e.g. from :func:`log_softmax`) and integer labels (N,) or one-hot (N, C).

    >>> import numpy as np
    >>> from autograd import Tensor
    >>> nll_loss(Tensor(data=[[-1.0, -2.0], [-3.0, -4.0]]), np.array([1, 0])).item()
    2.5
    """
    return NLLLoss()(*_classification_operands(logp, t, "nll_loss", "log-probabilities"))


# ---------------------------------------------------------------- elementwise

class BinaryCrossEntropy(Operation):
    """loss = -mean(t log p + (1 - t) log(1 - p)), each log clamped at -100 (as PyTorch).
    dp = (p - t) / max(p (1 - p), 1e-12) / size * dy;   dt = (log(1 - p) - log p) / size * dy"""

    def forward(self, p, t):
        xp = get_array_module(p)
        with ignore_float_warnings(xp):
            log_p = xp.maximum(xp.log(p), -100)
            log_not_p = xp.maximum(xp.log1p(-p), -100)
        self.save_for_backward(p, t, log_p, log_not_p)
        total = (t * (log_p - log_not_p) + log_not_p).sum()
        return xp.asarray(total) * (-1.0 / p.size)

    def backward(self, dy):
        p, t, log_p, log_not_p = self.saved
        xp = get_array_module(p)
        scale = dy * (1.0 / p.size)
        dp = dt = None
        if self.needs_input_grad[0]:
            dp = (p - t) / xp.maximum(p * (1 - p), 1e-12) * scale
        if self.needs_input_grad[1]:
            dt = (log_not_p - log_p) * scale
        return dp, dt


class BinaryCrossEntropyWithLogits(Operation):
    """loss = mean(max(x, 0) - x t + log(1 + e^-|x|)) = BCE(sigmoid(x), t), without overflow.
    dx = (sigmoid(x) - t) / size * dy;   dt = -x / size * dy"""

    def forward(self, x, t):
        xp = get_array_module(x)
        self.save_for_backward(x, t)
        total = (xp.maximum(x, 0) - x * t + xp.log1p(xp.exp(-xp.abs(x)))).sum()
        return xp.asarray(total) * (1.0 / x.size)

    def backward(self, dy):
        x, t = self.saved
        scale = dy * (1.0 / x.size)
        return ((special.expit(x) - t) * scale if self.needs_input_grad[0] else None,
                x * -scale if self.needs_input_grad[1] else None)


class MSELoss(Operation):
    """loss = mean((x - t)^2) over all elements.   dx = 2 (x - t) / size * dy, dt = -dx"""

    def forward(self, x, t):
        xp = get_array_module(x)
        difference = x - t
        self.save_for_backward(difference)
        return xp.asarray((difference * difference).sum()) * (1.0 / x.size)

    def backward(self, dy):
        (difference,) = self.saved
        dx = difference * (dy * (2.0 / difference.size))
        return dx, (-dx if self.needs_input_grad[1] else None)


def binary_cross_entropy(p: Tensor, t: Indices) -> Tensor:
    """Binary cross entropy of probabilities ``p`` against targets ``t`` in [0, 1] (same shape),
    averaged over all elements as PyTorch does (for ``p`` of shape (N,) that is the batch mean).
    Logs are clamped at -100, so p = 0 or 1 gives a finite loss; prefer
    :func:`binary_cross_entropy_with_logits` on logits.

    >>> from autograd import Tensor
    >>> round(binary_cross_entropy(Tensor(data=[0.5, 0.5]), Tensor(data=[0.0, 1.0])).item(), 4)
    0.6931
    """
    return BinaryCrossEntropy()(*_same_shape_operands(p, t, "binary_cross_entropy",
                                                      "probabilities"))


def binary_cross_entropy_with_logits(x: Tensor, t: Indices) -> Tensor:
    """Binary cross entropy of ``sigmoid(x)`` against targets ``t`` (same shape), computed from
    the logits ``x`` without overflow; the mean over all elements (PyTorch's
    ``binary_cross_entropy_with_logits``).

    >>> from autograd import Tensor
    >>> binary_cross_entropy_with_logits(Tensor(data=[1000.0, -1000.0]),
    ...                                  Tensor(data=[1.0, 0.0])).item()
    0.0
    """
    return BinaryCrossEntropyWithLogits()(*_same_shape_operands(
        x, t, "binary_cross_entropy_with_logits", "logits"))


def mse_loss(x: Tensor, t: Indices) -> Tensor:
    """Mean squared error ``mean((x - t)^2)`` over all elements (PyTorch's reduction; SINGA's
    MeanSquareError differs by a constant factor). ``t`` must have x's shape.

    >>> from autograd import Tensor
    >>> mse_loss(Tensor(data=[1.0, 3.0]), Tensor(data=[0.0, 0.0])).item()
    5.0
    """
    return MSELoss()(*_same_shape_operands(x, t, "mse_loss", "input"))
