"""Attention layers: MultiHeadAttention, the pre-norm TransformerBlock (and PyTorch's
TransformerEncoderLayer signature), a learned PositionalEmbedding.

Sequences are (N, T, E), PyTorch's ``batch_first=True`` convention; projections are Linear
layers (SINGA's W (in, out)) applied to the (N*T, E) rows.

>>> import numpy as np, autograd
>>> attn = autograd.MultiHeadAttention(embed_dim=8, num_heads=2)
>>> x = autograd.Tensor(data=np.ones((3, 5, 8), np.float32))
>>> attn(x, x, x, causal=True).shape
(3, 5, 8)
>>> [name for name, _ in attn.named_parameters()]
['in_proj.W', 'in_proj.b', 'out_proj.W', 'out_proj.b']
"""
from __future__ import annotations

from typing import Any, Optional

from ..operations import activation, attention as attention_ops, dropout as dropout_ops
from ..operations import joining, shape as shape_ops
from ..operations.indexing import getitem
from ..tensor import Tensor
from .arguments import positive_int
from .base import Layer, shape_text
from .linear import Linear
from .normalization import LayerNorm

__all__ = ["MultiHeadAttention", "TransformerBlock", "TransformerEncoderLayer",
           "PositionalEmbedding", "apply_rows"]


def apply_rows(layer, x):
    """``layer`` (a Linear) applied to the last axis of x (..., in) -> (..., out), through the
    (rows, in) matrix that Linear takes."""
    leading = tuple(x.shape[:-1])
    y = layer(shape_ops.reshape(x, (-1, x.shape[-1])))
    return shape_ops.reshape(y, leading + (y.shape[-1],))


class MultiHeadAttention(Layer):
    """``MultiHeadAttention(embed_dim, num_heads, dropout=0.0, bias=True, kdim=None,
    vdim=None, packed=None)``: PyTorch's multi-head attention on (N, T, E) sequences.

    ``attn(query, key, value, key_padding_mask=None, attn_mask=None, causal=False)`` projects
    query (N, Tq, E), key (N, Tk, kdim) and value (N, Tk, vdim) to ``num_heads`` heads of
    E / num_heads features, runs :func:`autograd.scaled_dot_product_attention` on each head and
    projects the concatenated heads back: (N, Tq, E). ``key_padding_mask`` (N, Tk) is True at
    keys to IGNORE (PyTorch's convention for it); ``attn_mask`` is as in
    scaled_dot_product_attention (boolean True = attend, or floating added). ``dropout`` drops
    attention probabilities while training.

    Projections: with ``packed`` (the default when kdim == vdim == embed_dim) one Linear
    ``in_proj`` (E, 3E) computes q, k and v in one product (self-attention passes one tensor
    three times); otherwise ``q_proj``, ``k_proj``, ``v_proj``. ``out_proj`` is (E, E).
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0,
                 bias: bool = True, kdim: Optional[int] = None, vdim: Optional[int] = None,
                 packed: Optional[bool] = None) -> None:
        super().__init__()
        self.embed_dim = positive_int(embed_dim, "embed_dim", "MultiHeadAttention")
        self.num_heads = positive_int(num_heads, "num_heads", "MultiHeadAttention")
        if self.embed_dim % self.num_heads:
            raise ValueError(f"MultiHeadAttention: embed_dim {embed_dim} must be divisible by "
                             f"num_heads {num_heads}")
        if not 0.0 <= float(dropout) < 1.0:
            raise ValueError(f"MultiHeadAttention: dropout must be in [0, 1), got {dropout!r}")
        self.dropout = float(dropout)
        self.kdim = self.embed_dim if kdim is None else positive_int(kdim, "kdim",
                                                                      "MultiHeadAttention")
        self.vdim = self.embed_dim if vdim is None else positive_int(vdim, "vdim",
                                                                      "MultiHeadAttention")
        same = self.kdim == self.embed_dim and self.vdim == self.embed_dim
        self.packed = same if packed is None else bool(packed)
        if self.packed and not same:
            raise ValueError("MultiHeadAttention: packed projections need kdim == vdim == "
                             f"embed_dim, got kdim={self.kdim}, vdim={self.vdim}")
        E = self.embed_dim
        if self.packed:
            self.in_proj = Linear(E, 3 * E, bias=bias)
        else:
            self.q_proj = Linear(E, E, bias=bias)
            self.k_proj = Linear(self.kdim, E, bias=bias)
            self.v_proj = Linear(self.vdim, E, bias=bias)
        self.out_proj = Linear(E, E, bias=bias)

    def extra_repr(self):
        text = f"{self.embed_dim}, num_heads={self.num_heads}"
        if self.dropout:
            text += f", dropout={self.dropout}"
        return text + ("" if self.packed else ", packed=False")

    def _check(self, what, x, width):
        if x.ndim != 3 or x.shape[-1] != width:
            raise ValueError(f"{self.describe()}: expected {what} of shape (N, T, {width}), "
                             f"got {shape_text(x.shape)}")

    def _heads(self, x):
        """(N, T, E) -> (N, H, T, E / H)"""
        n, t, _ = x.shape
        x = shape_ops.reshape(x, (n, t, self.num_heads, self.embed_dim // self.num_heads))
        return shape_ops.transpose(x, (0, 2, 1, 3))

    def project(self, query, key, value):
        """The per-head q, k, v, each (N, H, T, E / H)."""
        if self.packed and key is query and value is query:
            qkv = apply_rows(self.in_proj, query)
            return [self._heads(part) for part in joining.split(qkv, 2, 3)]
        if self.packed:
            E = self.embed_dim
            W, b = self.in_proj.W, self.in_proj.b
            parts = []
            for i, x in enumerate((query, key, value)):
                rows = shape_ops.reshape(x, (-1, E))
                y = rows @ getitem(W, (slice(None), slice(i * E, (i + 1) * E)))
                if b is not None:
                    y = y + getitem(b, slice(i * E, (i + 1) * E))
                parts.append(self._heads(shape_ops.reshape(y, tuple(x.shape[:2]) + (E,))))
            return parts
        return [self._heads(apply_rows(layer, x)) for layer, x in
                ((self.q_proj, query), (self.k_proj, key), (self.v_proj, value))]

    def forward(self, query: Tensor, key: Optional[Tensor] = None,
                value: Optional[Tensor] = None, key_padding_mask: Any = None,
                attn_mask: Any = None, causal: bool = False) -> Tensor:
        key = query if key is None else key
        value = key if value is None else value
        self._check("query", query, self.embed_dim)
        self._check("key", key, self.kdim)
        self._check("value", value, self.vdim)
        n, tq = query.shape[:2]
        tk = key.shape[1]
        if key.shape[0] != n or value.shape[:2] != key.shape[:2]:
            raise ValueError(f"{self.describe()}: query {shape_text(query.shape)}, key "
                             f"{shape_text(key.shape)} and value {shape_text(value.shape)} "
                             "must share N, and key and value T")
        mask = self._mask(key_padding_mask, attn_mask, n, tq, tk, query)
        q, k, v = self.project(query, key, value)
        heads = attention_ops.scaled_dot_product_attention(
            q, k, v, mask=mask, causal=causal,
            dropout=self.dropout if self.is_training else 0.0)
        merged = shape_ops.reshape(shape_ops.transpose(heads, (0, 2, 1, 3)),
                                   (n * tq, self.embed_dim))
        return shape_ops.reshape(self.out_proj(merged), (n, tq, self.embed_dim))

    def _mask(self, key_padding_mask, attn_mask, n, tq, tk, like):
        xp = like.device.xp
        raw = [m.data if isinstance(m, Tensor) else m for m in (key_padding_mask, attn_mask)]
        padding, mask = (None if m is None else xp.asarray(m) for m in raw)
        if padding is not None:
            if padding.shape != (n, tk) or padding.dtype != bool:
                raise ValueError(f"{self.describe()}: expected a boolean key_padding_mask of "
                                 f"shape ({n}, {tk}), got {padding.dtype} "
                                 f"{shape_text(padding.shape)}")
            keep = ~padding[:, None, None, :]
            if mask is None:
                return keep
            if mask.dtype == bool:
                return keep & mask
            return xp.where(keep, mask.astype(like.dtype), -xp.inf)
        return mask


class PositionalEmbedding(Layer):
    """A learned position table W (max_len, embed_dim), N(0, std^2): x (N, T, E) -> x + W[:T]
    (T <= max_len)."""

    def __init__(self, max_len: int, embed_dim: int, std: float = 0.02) -> None:
        super().__init__()
        self.max_len = positive_int(max_len, "max_len", "PositionalEmbedding")
        self.embed_dim = positive_int(embed_dim, "embed_dim", "PositionalEmbedding")
        self.W = Tensor(shape=(self.max_len, self.embed_dim), stores_grad=True).gaussian(0.0,
                                                                                         std)

    def extra_repr(self):
        return f"{self.max_len}, {self.embed_dim}"

    def forward(self, x: Tensor) -> Tensor:
        if x.ndim != 3 or x.shape[-1] != self.embed_dim or x.shape[1] > self.max_len:
            raise ValueError(f"{self.describe()}: expected input of shape (N, T <= "
                             f"{self.max_len}, {self.embed_dim}), got {shape_text(x.shape)}")
        return x + getitem(self.W, slice(0, x.shape[1]))


class TransformerBlock(Layer):
    """A transformer layer on (N, T, E): with ``norm_first`` (the default, GPT-2's pre-norm)
    ``x + drop(attn(ln1(x)))`` then ``x + drop(mlp(ln2(x)))``; without it PyTorch's post-norm
    ``ln1(x + drop(attn(x)))``, ``ln2(x + drop(mlp(x)))``. The MLP is Linear(E, hidden) -
    activation ("gelu" by default, or "relu") - dropout - Linear(hidden, E), hidden =
    ``mlp_ratio * E`` unless ``hidden_dim`` is given. ``causal`` makes it a decoder block
    (each position sees itself and the past); ``block(x, key_padding_mask=...)`` passes a
    padding mask to the attention."""

    def __init__(self, embed_dim: int, num_heads: int, mlp_ratio: float = 4,
                 dropout: float = 0.0, causal: bool = False, activation: str = "gelu",
                 norm_first: bool = True, hidden_dim: Optional[int] = None, eps: float = 1e-5,
                 bias: bool = True) -> None:
        super().__init__()
        if activation not in ("gelu", "relu"):
            raise ValueError(f"{type(self).__name__}: activation must be 'gelu' or 'relu', got "
                             f"{activation!r}")
        E = positive_int(embed_dim, "embed_dim", type(self).__name__)
        hidden = int(mlp_ratio * E) if hidden_dim is None else hidden_dim
        self.embed_dim, self.hidden_dim, self.activation = E, hidden, activation
        self.causal, self.norm_first, self.dropout = bool(causal), bool(norm_first), float(dropout)
        self.ln1 = LayerNorm(E, eps=eps)
        self.attn = MultiHeadAttention(E, num_heads, dropout=dropout, bias=bias)
        self.ln2 = LayerNorm(E, eps=eps)
        self.fc = Linear(E, hidden, bias=bias)
        self.proj = Linear(hidden, E, bias=bias)

    def extra_repr(self):
        return (f"{self.embed_dim}, num_heads={self.attn.num_heads}, hidden={self.hidden_dim}"
                + (", causal" if self.causal else "") + ("" if self.norm_first else
                                                         ", post-norm"))

    def _drop(self, x):
        return dropout_ops.dropout(x, self.dropout, training=self.is_training)

    def mlp(self, x):
        h = apply_rows(self.fc, x)
        h = activation.gelu(h) if self.activation == "gelu" else activation.relu(h)
        return apply_rows(self.proj, self._drop(h))

    def forward(self, x: Tensor, key_padding_mask: Any = None,
                attn_mask: Any = None) -> Tensor:
        def attend(h):
            return self._drop(self.attn(h, h, h, key_padding_mask=key_padding_mask,
                                        attn_mask=attn_mask, causal=self.causal))
        if self.norm_first:
            x = x + attend(self.ln1(x))
            return x + self._drop(self.mlp(self.ln2(x)))
        x = self.ln1(x + attend(x))
        return self.ln2(x + self._drop(self.mlp(x)))


class TransformerEncoderLayer(TransformerBlock):
    """PyTorch's ``TransformerEncoderLayer(d_model, nhead, dim_feedforward=2048, dropout=0.1,
    activation="relu", layer_norm_eps=1e-5, norm_first=False)`` with ``batch_first=True``
    (the only layout here): a :class:`TransformerBlock` with PyTorch's defaults. Call it as
    ``layer(src, src_mask=None, src_key_padding_mask=None, is_causal=False)``."""

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: str = "relu", layer_norm_eps: float = 1e-5,
                 batch_first: bool = True, norm_first: bool = False, bias: bool = True) -> None:
        if not batch_first:
            raise ValueError("TransformerEncoderLayer: only batch_first=True (N, T, E) is "
                             "supported")
        super().__init__(d_model, nhead, dropout=dropout, activation=activation,
                         norm_first=norm_first, hidden_dim=dim_feedforward, eps=layer_norm_eps,
                         bias=bias)

    def forward(self, src: Tensor, src_mask: Any = None,  # type: ignore[override]
                src_key_padding_mask: Any = None, is_causal: bool = False) -> Tensor:
        self.causal = bool(is_causal)
        return super().forward(src, key_padding_mask=src_key_padding_mask, attn_mask=src_mask)
