"""Attention: scaled dot-product attention with its softmax fused into one op, masked_fill and
the triangular masks triu/tril.

Masks follow PyTorch's ``scaled_dot_product_attention``: a boolean ``mask`` is True where a
query may attend to a key; a floating mask is added to the scores. ``causal=True`` lets query
i see keys 0..i (the top-left aligned lower triangle).

>>> import numpy as np
>>> from autograd import Tensor
>>> q = k = v = Tensor(data=np.eye(2, dtype=np.float32)[None])        # (1, 2, 2)
>>> scaled_dot_product_attention(q, k, v, causal=True).to_numpy().round(3)
array([[[1.  , 0.  ],
        [0.33, 0.67]]], dtype=float32)
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

import math
import numbers

import numpy as np

from ..backend import kernels_for
from ..device import get_array_module
from ..recording import config
from .base import Operation
from .conversion import cast
from .utils import unbroadcast, check_tensor

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = ["scaled_dot_product_attention", "masked_fill", "triu", "tril"]


class ScaledDotProductAttention(Operation):
    """y = P @ v, P = softmax(q k^T * scale + mask) over the keys (dropout on P when asked);
    q (..., Tq, D), k (..., Tk, D), v (..., Tk, Dv), y (..., Tq, Dv).
    With G = dy v^T (times the dropout mask): dS = P * (G - rowsum(dy * y)), dq = dS k scale,
    dk = dS^T q scale, dv = P_dropped^T dy.

    Only the probabilities P (..., Tq, Tk) are kept for backward (plus the dropout mask when
    there is one); backward makes one (Tq, Tk) temporary, G, and turns it into dS in place,
    because rowsum(P * G) equals rowsum(dy * y) (y is P_dropped v). Without a mask or dropout
    the backend may run both directions whole (``kernels.attention_forward`` and
    ``attention_backward``: on the CPU one compiled call per head), else the passes below."""

    def __init__(self, scale, mask_kind, causal, dropout, generator):
        self.scale, self.mask_kind = scale, mask_kind      # mask_kind: None, "keep", "add"
        self.causal, self.dropout, self.generator = causal, dropout, generator

    def forward(self, q, k, v, *mask):
        if self.mask_kind is None and self.dropout == 0.0:
            fused = kernels_for(q).attention_forward(q, k, v, self.scale, self.causal)
            if fused is not None:                   # the compiled kernels, head by head
                y, probabilities = fused
                self.save_for_backward(q, k, v, probabilities, None, y)
                return y
        xp = get_array_module(q)
        scores = (q * q.dtype.type(self.scale)) @ k.swapaxes(-1, -2)
        masked = self.mask_kind is not None
        if masked and mask[0].ndim > scores.ndim:
            # the mask has leading axes that only v shares (q and k have fewer): the scores
            # take them, as the softmax of each batch entry differs
            shape = np.broadcast_shapes(scores.shape, mask[0].shape)
            scores = xp.ascontiguousarray(xp.broadcast_to(scores, shape))
        if self.mask_kind == "add":
            scores += mask[0]
        keep = mask[0] if self.mask_kind == "keep" else None
        # softmax over the keys in place, masked places (and with causal the later keys) -inf
        # first; with a user mask a row whose every key is masked gets probabilities (and
        # output) 0, not NaN
        probabilities = kernels_for(scores).masked_softmax(scores, keep, guard=masked,
                                                           causal=self.causal)
        dropped = probabilities
        mask = None
        if self.dropout > 0.0:
            draws = self.generator.random(probabilities.shape, dtype=probabilities.dtype)
            mask = (draws >= self.dropout).astype(probabilities.dtype)
            mask *= 1.0 / (1.0 - self.dropout)
            dropped = probabilities * mask
        y = dropped @ v
        self.save_for_backward(q, k, v, probabilities, mask, y)
        return y

    def backward(self, dy):
        q, k, v, probabilities, mask, y = self.saved
        need_q, need_k, need_v = self.needs_input_grad[:3]
        no_mask_grad = (None,) * (len(self.needs_input_grad) - 3)
        if self.mask_kind is None and mask is None:
            fused = kernels_for(dy).attention_backward(q, k, v, probabilities, y, dy,
                                                       self.scale, self.causal)
            if fused is not None:
                return tuple(g if need else None for g, need in
                             zip(fused, (need_q, need_k, need_v))) + no_mask_grad
        dv = None
        if need_v:
            dropped = probabilities if mask is None else probabilities * mask
            dv = unbroadcast(dropped.swapaxes(-1, -2) @ dy, v.shape)
        if not (need_q or need_k):
            return (None, None, dv) + no_mask_grad
        ds = dy @ v.swapaxes(-1, -2)            # G: the one (Tq, Tk) temporary
        if mask is not None:
            ds *= mask
        ds = kernels_for(ds).softmax_backward(ds, probabilities,
                                              (dy * y).sum(axis=-1, keepdims=True))
        scale = q.dtype.type(self.scale)
        dq = dk = None
        if need_q:
            dq = unbroadcast(ds @ k, q.shape)
            dq *= scale
        if need_k:
            dk = unbroadcast(ds.swapaxes(-1, -2) @ q, k.shape)
            dk *= scale
        return (dq, dk, dv) + no_mask_grad


def _raw(x):
    return x.data if hasattr(x, "creator") else x


def scaled_dot_product_attention(q: Tensor, k: Tensor, v: Tensor, mask: Any = None,
                                 causal: bool = False, dropout: float = 0.0,
                                 scale: Optional[float] = None,
                                 training: Optional[bool] = None) -> Tensor:
    """softmax(q k^T / sqrt(D) + mask) v over the last two axes, as PyTorch's
    ``scaled_dot_product_attention`` (its ``attn_mask``, ``is_causal``, ``dropout_p``).

    q (..., Tq, D), k (..., Tk, D), v (..., Tk, Dv) -> (..., Tq, Dv); leading axes broadcast.
    ``mask`` (a Tensor or array broadcasting to (..., Tq, Tk), a constant): boolean True where
    attention is allowed, or floating values added to the scores. ``causal`` masks keys after
    each query. A query whose keys are all masked gets zeros (PyTorch gives NaN). ``dropout``
    zeroes probabilities with that ratio (and rescales) while training: by default when
    ``autograd.training`` is on; ``training=False`` turns it off. ``scale`` defaults to
    1 / sqrt(D).

    >>> import numpy as np
    >>> from autograd import Tensor
    >>> q = Tensor(data=np.zeros((2, 3, 4), np.float32))
    >>> scaled_dot_product_attention(q, q, q, mask=np.ones((3, 2), bool))
    Traceback (most recent call last):
    ...
    ValueError: scaled_dot_product_attention: mask of shape (3, 2) does not broadcast to the scores (2, 3, 3)
    """
    name = "scaled_dot_product_attention"
    for label, t in (("q", q), ("k", k), ("v", v)):
        check_tensor(t, name)
        if t.ndim < 2:
            raise ValueError(f"{name}: expected {label} with at least 2 dimensions (..., T, D), "
                             f"got {tuple(t.shape)}")
        if t.dtype.kind != "f":
            raise TypeError(f"{name}: expected floating {label}, got {t.dtype}")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"{name}: q {tuple(q.shape)} and k {tuple(k.shape)} must have the same "
                         "feature size D (last axis)")
    if v.shape[-2] != k.shape[-2]:
        raise ValueError(f"{name}: expected v of shape (..., {k.shape[-2]}, Dv) with as many "
                         f"keys as k {tuple(k.shape)}, got {tuple(v.shape)}")
    try:
        batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except ValueError:
        raise ValueError(f"{name}: the leading axes of q {tuple(q.shape)}, k {tuple(k.shape)} "
                         f"and v {tuple(v.shape)} do not broadcast") from None
    if isinstance(dropout, bool) or not isinstance(dropout, numbers.Real) or \
            not 0.0 <= dropout < 1.0:
        raise ValueError(f"{name}: dropout must be in [0, 1), got {dropout!r}")
    if training is None:
        training = config.training
    mask_kind, inputs = None, (q, k, v)
    if mask is not None:
        mask_tensor = mask if hasattr(mask, "creator") else None
        mask = _raw(mask)
        xp = q.device.xp
        if get_array_module(mask) is not xp:
            mask, mask_tensor = xp.asarray(mask), None
        scores_shape = tuple(batch) + (q.shape[-2], k.shape[-2])
        try:
            target = np.broadcast_shapes(mask.shape, scores_shape)
        except ValueError:
            target = None
        if target != scores_shape:
            raise ValueError(f"{name}: mask of shape {tuple(mask.shape)} does not broadcast to "
                             f"the scores {scores_shape}")
        if mask.dtype.kind not in "bf":
            raise TypeError(f"{name}: mask must be boolean (True = attend) or floating "
                            f"(added), got {mask.dtype}")
        # the mask is an input, not an attribute, so that graph mode replays a new one
        mask_tensor = q.new_output(mask) if mask_tensor is None else mask_tensor
        mask_kind = "keep" if mask.dtype == bool else "add"
        if mask_kind == "add" and mask.dtype != q.dtype:
            mask_tensor = cast(mask_tensor, q.dtype)
        inputs = (q, k, v, mask_tensor)
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
    rate = float(dropout) if training else 0.0
    return ScaledDotProductAttention(scale, mask_kind, bool(causal), rate,
                                     q.device.random)(*inputs)


class MaskedFill(Operation):
    """y = value where mask, else x (mask broadcasts to x).   dx = dy where not mask, else 0"""

    def __init__(self, value):
        self.value = value

    def forward(self, x, mask):
        self.save_for_backward(mask)
        return get_array_module(x).where(mask, x.dtype.type(self.value), x)

    def backward(self, dy):
        (mask,) = self.saved
        return get_array_module(dy).where(mask, dy.dtype.type(0), dy), None


def masked_fill(x: Tensor, mask: Any, value: float) -> Tensor:
    """x with ``value`` written where the boolean ``mask`` (broadcasting to x's shape) is True,
    as PyTorch's ``Tensor.masked_fill``; no gradient flows to the filled places.

    >>> import numpy as np
    >>> from autograd import Tensor
    >>> masked_fill(Tensor(data=[[1.0, 2.0]]), np.array([False, True]), -np.inf).to_numpy()
    array([[  1., -inf]], dtype=float32)
    """
    check_tensor(x, "masked_fill")
    mask = _raw(mask)
    if not hasattr(mask, "dtype"):
        mask = np.asarray(mask)
    if mask.dtype != bool:
        raise TypeError(f"masked_fill: mask must be boolean, got {mask.dtype}")
    try:
        target = np.broadcast_shapes(mask.shape, x.shape)
    except ValueError:
        target = None
    if target != tuple(x.shape):
        raise ValueError(f"masked_fill: mask of shape {tuple(mask.shape)} does not broadcast to "
                         f"x of shape {tuple(x.shape)}")
    xp = x.device.xp
    if get_array_module(mask) is not xp:
        mask = xp.asarray(mask)
    if not isinstance(value, numbers.Real):
        raise TypeError(f"masked_fill: value must be a real number, got {type(value).__name__}")
    # the mask is an input, not an attribute, so that graph mode replays a new one
    return MaskedFill(float(value))(x, x.new_output(mask))


class Triangle(Operation):
    """y = x with the elements above (triu: below) diagonal k of the last two axes zeroed.
    dx = the same triangle of dy"""

    def __init__(self, upper, k):
        self.upper, self.k = upper, k

    def forward(self, x):
        xp = get_array_module(x)
        return xp.triu(x, self.k) if self.upper else xp.tril(x, self.k)

    def backward(self, dy):
        xp = get_array_module(dy)
        return xp.triu(dy, self.k) if self.upper else xp.tril(dy, self.k)


def _triangle(x, k, upper, name):
    check_tensor(x, name)
    if x.ndim < 2:
        raise ValueError(f"{name}: expected at least 2 dimensions, got {tuple(x.shape)}")
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise TypeError(f"{name}: diagonal must be an int, got {type(k).__name__}")
    return Triangle(upper, int(k))(x)


def triu(x: Tensor, diagonal: int = 0) -> Tensor:
    """The upper triangle of the last two axes: elements below ``diagonal`` set to 0.

    >>> from autograd import Tensor
    >>> triu(Tensor(data=[[1.0, 2.0], [3.0, 4.0]]), 1).to_numpy()
    array([[0., 2.],
           [0., 0.]], dtype=float32)
    """
    return _triangle(x, diagonal, True, "triu")


def tril(x: Tensor, diagonal: int = 0) -> Tensor:
    """The lower triangle of the last two axes: elements above ``diagonal`` set to 0.

    >>> from autograd import Tensor
    >>> tril(Tensor(data=[[1.0, 2.0], [3.0, 4.0]])).to_numpy()
    array([[1., 0.],
           [3., 4.]], dtype=float32)
    """
    return _triangle(x, diagonal, False, "tril")
