"""Dense layers: Linear (SINGA's W (in, out) and b), Embedding, Flatten.

>>> import numpy as np, autograd
>>> layer = autograd.Linear(4, 3)
>>> [(name, p.shape) for name, p in layer.named_parameters()]
[('W', (4, 3)), ('b', (3,))]
>>> layer(autograd.Tensor(data=np.ones((2, 4), np.float32))).shape
(2, 3)
"""
from __future__ import annotations

from typing import Any, Optional

import math

import numpy as np

from ..operations import embedding as embedding_ops
from ..operations import linalg
from ..operations import shape as shape_ops
from ..tensor import Tensor
from .arguments import positive_int
from .base import AxisLayer, Layer, shape_text
from .init import check_scheme, initialize
from .._types import Indices

__all__ = ["Linear", "Embedding", "Flatten"]


class Linear(Layer):
    """``y = x @ W + b`` on x of shape (N, in_features); W is (in_features, out_features) and b
    (out_features,), as in SINGA (the transpose of PyTorch's weight).

    ``Linear(in_features, out_features)`` creates its parameters now; SINGA's lazy form
    ``Linear(out_features)`` creates them on the first call, taking in_features (and the dtype
    and device) from that input. ``init`` picks the weight scheme (see ``autograd.layers.init``;
    Glorot uniform by default), ``wscale`` scales it; b starts at zero.
    """

    W: Any                  # a Tensor; None until the first input builds it (lazy form)
    b: Any                  # a Tensor, or None without a bias


    def __init__(self, in_features: Optional[int], out_features: Optional[int] = None,
                 bias: bool = True,
                 init: str = "xavier", wscale: float = 1.0) -> None:
        super().__init__()
        if out_features is None:                 # SINGA's Linear(out_features)
            in_features, out_features = None, in_features
        self.out_features = positive_int(out_features, "out_features", "Linear")
        self.in_features = (None if in_features is None
                            else positive_int(in_features, "in_features", "Linear"))
        self.bias = bool(bias)
        self.init = check_scheme(init, "Linear")
        self.wscale = wscale
        self.W = None
        self.b = None
        if self.in_features is not None:
            self._build(self.in_features, np.float32, None)

    def _build(self, in_features, dtype, device):
        self.in_features = in_features
        W = Tensor(shape=(in_features, self.out_features), dtype=dtype, device=device,
                   stores_grad=True)
        self.W = initialize(W, self.init, in_features, self.out_features, self.wscale)
        if self.bias:
            self.b = Tensor(shape=(self.out_features,), dtype=dtype, device=device,
                            stores_grad=True)

    def extra_repr(self):
        inputs = "?" if self.in_features is None else self.in_features
        return f"{inputs}->{self.out_features}" + ("" if self.bias else ", bias=False")

    def output_shape(self, input_shape):
        shape = tuple(input_shape)
        known = self.in_features
        self.check_input(len(shape) == 2 and (known is None or shape[1] == known),
                         shape_text(("N", "in_features" if known is None else known)), shape)
        return (shape[0], self.out_features)

    def forward(self, x: Tensor) -> Tensor:
        self.output_shape(x.shape)
        if self.W is None:
            dtype = x.dtype if x.dtype.kind == "f" else np.float32
            self._build(x.shape[1], dtype, x.device)
        if self.b is None:
            return linalg.matmul(x, self.W)
        # one op, as PyTorch's addmm: a large product takes the bias in its GEMM (beta = 1)
        return linalg.gemm(x, self.W, self.b)

    def count_parameters(self, input_shape=None):
        if self.W is None and input_shape is not None:
            return input_shape[-1] * self.out_features + (self.out_features if self.bias else 0)
        return super().count_parameters()

    def _lazy_parameters(self, prefix, state):
        value = state.get(prefix + "W")
        if self.W is not None or value is None:
            return {}
        rows = value.shape[0] if value.ndim == 2 else None
        dtype = value.dtype if value.dtype.kind == "f" else np.dtype(np.float32)
        pending = {prefix + "W": ((rows, self.out_features), dtype)}
        if self.bias:
            pending[prefix + "b"] = ((self.out_features,), dtype)
        return pending

    def _materialize_from_state(self, prefix, state):
        value = state.get(prefix + "W")
        if self.W is None and value is not None:
            self._build(value.shape[0], value.dtype, None)


class Embedding(Layer):
    """Row lookup: integer ids of any shape (...) give vectors (..., embedding_dim) taken from
    W (num_embeddings, embedding_dim); repeated ids accumulate their gradients. ``init``
    defaults to Glorot uniform over (num_embeddings, embedding_dim)."""

    def __init__(self, num_embeddings: int, embedding_dim: int, init: str = "xavier",
                 wscale: float = 1.0) -> None:
        super().__init__()
        self.num_embeddings = positive_int(num_embeddings, "num_embeddings", "Embedding")
        self.embedding_dim = positive_int(embedding_dim, "embedding_dim", "Embedding")
        check_scheme(init, "Embedding")
        self.W = initialize(Tensor(shape=(self.num_embeddings, self.embedding_dim),
                                   stores_grad=True),
                            init, self.num_embeddings, self.embedding_dim, wscale)

    def extra_repr(self):
        return f"{self.num_embeddings}, {self.embedding_dim}"

    def output_shape(self, input_shape):
        return tuple(input_shape) + (self.embedding_dim,)

    def forward(self, ids: Indices) -> Tensor:
        if not hasattr(ids, "dtype"):                 # a list: the op takes arrays and Tensors
            ids = np.asarray(ids)
        if ids.dtype.kind not in "iu":
            raise TypeError(f"{self.describe()}: expected integer ids, got {ids.dtype}")
        return embedding_ops.embedding(ids, self.W)


class Flatten(AxisLayer):
    """SINGA's flatten as a layer: (d0, ..., dn) -> (d0*...*d(axis-1), d(axis)*...*dn); with
    the default axis=1 an (N, C, H, W) batch becomes (N, C*H*W). A negative axis counts from
    the end (axis=-1 keeps the last dimension)."""

    def __init__(self, axis: int = 1) -> None:
        super().__init__(axis)

    def output_shape(self, input_shape):
        shape = tuple(input_shape)
        self.check_input(-len(shape) <= self.axis <= len(shape),
                         f"with at least {abs(self.axis)} dimensions", shape)
        axis = self.axis + len(shape) if self.axis < 0 else self.axis
        return (_product(shape[:axis]), _product(shape[axis:]))

    def forward(self, x: Tensor) -> Tensor:
        return shape_ops.reshape(x, self.output_shape(x.shape))


def _product(dims):
    if any(d is None for d in dims):
        return None
    return int(math.prod(dims))
