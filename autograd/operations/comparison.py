"""Comparisons and logic (SINGA's greater, less, equal, _and, _or, _not, _xor).

They are not differentiable: each returns a new Tensor of 0.0/1.0 (the floating dtype of its
input, float32 for non-floating input) outside the graph, so ``autograd.backward`` of one is
the usual "not produced by a recorded operation" error.

>>> from autograd import Tensor
>>> greater(Tensor(data=[1.0, 3.0]), 2.0).to_numpy()
array([0., 1.], dtype=float32)
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .utils import as_tensor_like, check_broadcast, check_tensor, constant, scalar_value
from .._types import Operand

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = ["greater", "less", "equal", "greater_equal", "less_equal", "not_equal",
           "_and", "_or", "_xor", "_not"]


def _result(like, mask):
    dtype = like.data.dtype if like.data.dtype.kind == "f" else np.float32
    return constant(mask.astype(dtype), like)


def _compare(name, x, y, relation):
    if not hasattr(x, "creator"):
        raise TypeError(f"{name}: expected a Tensor first, got {type(x).__name__}")
    c = scalar_value(y)
    if c is not None:
        return _result(x, relation(x.data, c))
    y = as_tensor_like(y, x, name)
    if y.device is not x.device:
        raise TypeError(f"{name}: inputs are on different devices ({x.device} and {y.device})")
    check_broadcast(name, x.data, y.data)
    return _result(x, relation(x.data, y.data))


def greater(x: Operand, y: Operand) -> Tensor:
    """1.0 where x > y, else 0.0 (broadcast; y may be a scalar)."""
    return _compare("greater", x, y, lambda a, b: a > b)


def less(x: Operand, y: Operand) -> Tensor:
    """1.0 where x < y, else 0.0 (broadcast; y may be a scalar)."""
    return _compare("less", x, y, lambda a, b: a < b)


def equal(x: Operand, y: Operand) -> Tensor:
    """1.0 where x == y, else 0.0 (broadcast; y may be a scalar)."""
    return _compare("equal", x, y, lambda a, b: a == b)


def greater_equal(x: Operand, y: Operand) -> Tensor:
    """1.0 where x >= y, else 0.0."""
    return _compare("greater_equal", x, y, lambda a, b: a >= b)


def less_equal(x: Operand, y: Operand) -> Tensor:
    """1.0 where x <= y, else 0.0."""
    return _compare("less_equal", x, y, lambda a, b: a <= b)


def not_equal(x: Operand, y: Operand) -> Tensor:
    """1.0 where x != y, else 0.0."""
    return _compare("not_equal", x, y, lambda a, b: a != b)


def _and(x: Operand, y: Operand) -> Tensor:
    """Logical and of two tensors read as booleans (nonzero = true), as 0.0/1.0."""
    return _compare("_and", x, y, lambda a, b: (a != 0) & (b != 0))


def _or(x: Operand, y: Operand) -> Tensor:
    """Logical or of two tensors read as booleans, as 0.0/1.0."""
    return _compare("_or", x, y, lambda a, b: (a != 0) | (b != 0))


def _xor(x: Operand, y: Operand) -> Tensor:
    """Logical exclusive or of two tensors read as booleans, as 0.0/1.0."""
    return _compare("_xor", x, y, lambda a, b: (a != 0) ^ (b != 0))


def _not(x: Tensor) -> Tensor:
    """Logical not of a tensor read as booleans, as 0.0/1.0."""
    check_tensor(x, "_not")
    return _result(x, x.data == 0)
