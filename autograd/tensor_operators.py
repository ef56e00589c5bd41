"""The Tensor methods that record operations (``+ - * / ** @ -x``, indexing, ``T``,
``reshape``, ``sum``, ``mean``, ``repeat``) and the comparisons, elementwise like SINGA's and
PyTorch's (``==`` included) but outside the graph. Tensor (tensor.py) takes them as a mixin.

>>> from autograd import Tensor
>>> ((Tensor(data=[1.0, 2.0]) * 2.0 + 1.0) >= 4.0).to_numpy()
array([0., 1.], dtype=float32)
"""
from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from ._types import Array, Axes, IntOrTuple, Operand

from .operations.elementwise import AddScalar, MulScalar
from .operations import (elementwise, linalg, reduction, unary, comparison, indexing,
                         shape as shape_ops)

if TYPE_CHECKING:
    from .tensor import Tensor

__all__ = ["OperatorMethods", "repeat"]


class OperatorMethods:
    """Operators, shape methods and comparisons of :class:`~autograd.Tensor`."""

    __slots__ = ()          # Tensor is slotted: a mixin must not bring a __dict__
    __hash__ = object.__hash__     # by identity: defining __eq__ would otherwise unset it

    if TYPE_CHECKING:       # what the methods read of Tensor, for the type checker
        data: Array

        @property
        def shape(self) -> tuple[int, ...]: ...

    # ------------------------------------------------------------ recorded operators
    def __add__(self, other: Operand) -> Tensor:
        if type(other) is float:        # the commonest case, two calls shorter
            return AddScalar(other)(self)
        return elementwise.add(self, other)

    def __radd__(self, other: Operand) -> Tensor:
        return elementwise.add(other, self)

    def __sub__(self, other: Operand) -> Tensor:
        return elementwise.sub(self, other)

    def __rsub__(self, other: Operand) -> Tensor:
        return elementwise.sub(other, self)

    def __mul__(self, other: Operand) -> Tensor:
        if type(other) is float:
            return MulScalar(other)(self)
        return elementwise.mul(self, other)

    def __rmul__(self, other: Operand) -> Tensor:
        return elementwise.mul(other, self)

    def __truediv__(self, other: Operand) -> Tensor:
        return elementwise.div(self, other)

    def __rtruediv__(self, other: Operand) -> Tensor:
        return elementwise.div(other, self)

    def __pow__(self, other: Operand) -> Tensor:
        return elementwise.pow(self, other)

    def __rpow__(self, other: Operand) -> Tensor:
        return elementwise.pow(other, self)

    def __neg__(self) -> Tensor:
        return unary.negative(self)

    def __matmul__(self, other: Operand) -> Tensor:
        return linalg.matmul(self, other)

    def __rmatmul__(self, other: Operand) -> Tensor:
        return linalg.matmul(other, self)

    def __getitem__(self, index: Any) -> Tensor:
        return shape_ops.getitem(self, index)

    @property
    def T(self) -> Tensor:
        """The transpose (all axes reversed), recorded."""
        return shape_ops.transpose(self)

    def transpose(self, axes: Optional[IntOrTuple] = None) -> Tensor:
        """Axes permuted (reversed when ``axes`` is None), recorded."""
        return shape_ops.transpose(self, axes)

    def reshape(self, *shape: Any) -> Tensor:
        """The same data in a new shape (one -1 allowed), recorded."""
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = shape[0]
        return shape_ops.reshape(self, shape)

    def sum(self, axis: Axes = None, keepdims: bool = False) -> Tensor:
        """Sum over ``axis`` (all by default), recorded."""
        return reduction.sum(self, axis=axis, keepdims=keepdims)

    def mean(self, axis: Axes = None, keepdims: bool = False) -> Tensor:
        """Mean over ``axis`` (all by default), recorded."""
        return reduction.mean(self, axis=axis, keepdims=keepdims)

    def repeat(self, repeats: IntOrTuple, axis: Optional[int] = None) -> Tensor:
        """Each element repeated ``repeats`` times along ``axis`` (flattened when None), as
        ``np.repeat``; recorded (gradients of the copies are summed)."""
        return repeat(self, repeats, axis)

    # ------------------------------------------------------------ comparisons (not recorded)
    # `==` is elementwise (SINGA, PyTorch); hashing stays by identity, so dicts and sets keyed
    # by Tensors still work (they compare hashes, then identity, before any __eq__).
    def lt(self, other: Operand) -> Tensor:
        """1.0 where self < other, else 0.0 (a float Tensor outside the graph)."""
        return comparison.less(self, other)

    def le(self, other: Operand) -> Tensor:
        """1.0 where self <= other, else 0.0."""
        return comparison.less_equal(self, other)

    def gt(self, other: Operand) -> Tensor:
        """1.0 where self > other, else 0.0."""
        return comparison.greater(self, other)

    def ge(self, other: Operand) -> Tensor:
        """1.0 where self >= other, else 0.0."""
        return comparison.greater_equal(self, other)

    def eq(self, other: Operand) -> Tensor:
        """1.0 where self == other, else 0.0 (also the ``==`` operator)."""
        return comparison.equal(self, other)

    def ne(self, other: Operand) -> Tensor:
        """1.0 where self != other, else 0.0 (also the ``!=`` operator)."""
        return comparison.not_equal(self, other)

    __lt__, __le__, __gt__, __ge__ = lt, le, gt, ge

    def __eq__(self, other: object) -> Tensor:  # type: ignore[override]
        """Elementwise, as in SINGA and PyTorch: a float 0.0/1.0 Tensor.

        >>> from autograd import Tensor
        >>> (Tensor(data=[1.0, 2.0]) == Tensor(data=[1.0, 5.0])).to_numpy()
        array([1., 0.], dtype=float32)
        >>> t = Tensor(data=[1.0]); {t: "kept"}[t]           # hashing stays by identity
        'kept'
        """
        if not _comparable(other):
            return NotImplemented         # None, text, objects: Python's identity answer
        return comparison.equal(self, other)

    def __ne__(self, other: object) -> Tensor:  # type: ignore[override]
        """Elementwise, as ``==``."""
        if not _comparable(other):
            return NotImplemented
        return comparison.not_equal(self, other)

    def __bool__(self) -> bool:
        """The truth of a one-element Tensor; any other is ambiguous (a ValueError), as in
        NumPy and PyTorch: ``if t == u`` over many elements would otherwise mean nothing."""
        if self.data.size != 1:
            raise ValueError(f"Tensor: the truth value of a Tensor of shape {self.shape} is "
                             "ambiguous; reduce it first (autograd.max, t.to_numpy().all())")
        return bool(self.data.reshape(()))


def repeat(t: Tensor, repeats: IntOrTuple, axis: Optional[int] = None) -> Tensor:
    """Each element of ``t`` repeated ``repeats`` times (an int, or one count per element)
    along ``axis`` (the flattened tensor when None), as ``np.repeat``; recorded.

    >>> from autograd import Tensor
    >>> repeat(Tensor(data=[1.0, 2.0]), 2).to_numpy()
    array([1., 1., 2., 2.], dtype=float32)
    """
    if axis is None:
        t, axis = shape_ops.reshape(t, (-1,)), 0
    length = t.shape[axis]
    index = np.repeat(np.arange(length), repeats)
    return indexing.gather(t, axis, index)



def _comparable(other: object) -> bool:
    """What ``==`` compares elementwise: Tensors, arrays, numbers, and lists of numbers."""
    return (isinstance(other, (OperatorMethods, numbers.Number, np.ndarray, np.generic, list,
                               tuple))
            or type(other).__module__.split(".")[0] == "cupy")
