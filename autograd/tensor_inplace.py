"""SINGA's in-place Tensor methods: ``+= -= *= /=``, ``copy_data``, ``copy_from``,
``copy_from_numpy`` and ``bernoulli``.

They change a tensor's array and record nothing, as SINGA's do. Tensor inherits them from
:class:`InPlaceMethods`; they live here because they are a family of their own: the rest of
Tensor's operators are recorded operations.

>>> from autograd import Tensor
>>> w = Tensor(data=[1.0, 2.0], stores_grad=True)
>>> w -= 0.5
>>> w.to_numpy(), w.creator is None
(array([0.5, 1.5], dtype=float32), True)
"""
from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Any, Callable, TypeVar

import numpy as np

from ._types import Array, Operand
from .device import device_of_array, get_array_module, move_array

if TYPE_CHECKING:
    from .device import Device

_T = TypeVar("_T", bound="InPlaceMethods")      # the methods return self: a Tensor

__all__ = ["InPlaceMethods"]


class InPlaceMethods:
    """Unrecorded in-place arithmetic and fills for Tensor (see the module docstring)."""

    __slots__ = ()          # Tensor is slotted: a mixin must not bring a __dict__

    if TYPE_CHECKING:       # what the methods read of Tensor, for the type checker
        data: Array
        device: Device
        creator: Any

        @property
        def shape(self) -> tuple[int, ...]: ...

        @property
        def size(self) -> int: ...

        def _float_dtype(self) -> np.dtype: ...

    def _in_place(self: _T, other: Any, update: Callable[[Any, Any], Any], symbol: str) -> _T:
        """Apply ``update(self.data, other)``. A tensor that a recorded operation produced is
        refused, since changing it would silently corrupt the gradients of its graph."""
        if self.creator is not None:
            raise RuntimeError(
                f"Tensor {symbol}: in-place arithmetic on a tensor produced by a recorded "
                f"{type(self.creator).__name__} would corrupt its gradients; write "
                f"y = y {symbol[0]} x instead")
        if hasattr(other, "creator"):
            if other.device is not self.device:
                raise TypeError(f"Tensor {symbol}: other is on {other.device}, self on "
                                f"{self.device}")
            other = other.data
        elif _is_array(other):
            # an array of another module or GPU would reach CuPy's bare "Unsupported type"
            # or a silent peer copy: say which op and which devices instead
            where = device_of_array(other)
            if get_array_module(other) is not self.device.xp or where is not self.device:
                raise TypeError(f"Tensor {symbol}: other is a {type(other).__module__}."
                                f"{type(other).__name__} on {where}, self on {self.device} "
                                f"(move it to {self.device} first)")
        with self.device.activate():        # CuPy runs kernels on the current device only
            update(self.data, other)
        return self

    def __iadd__(self: _T, other: Operand) -> _T:
        return self._in_place(other, operator.iadd, "+=")

    def __isub__(self: _T, other: Operand) -> _T:
        return self._in_place(other, operator.isub, "-=")

    def __imul__(self: _T, other: Operand) -> _T:
        return self._in_place(other, operator.imul, "*=")

    def __itruediv__(self: _T, other: Operand) -> _T:
        return self._in_place(other, operator.itruediv, "/=")

    def copy_data(self: _T, other: Any) -> _T:
        """Copy ``other``'s values into this tensor's array in place (shapes must match)."""
        value = other.data if hasattr(other, "creator") else other
        if tuple(value.shape) != self.shape:
            raise ValueError(f"copy_data: expected shape {self.shape}, got {tuple(value.shape)}")
        with self.device.activate():
            self.data[...] = move_array(value, self.device) if hasattr(value, "dtype") else value
        return self

    def copy_from(self: _T, other: Any) -> _T:
        """SINGA's name of :meth:`copy_data`."""
        return self.copy_data(other)

    def copy_from_numpy(self: _T, array: Any, offset: int = 0) -> _T:
        """Copy a NumPy array of as many elements as this tensor into it, in place, cast to
        this tensor's dtype and laid out in its shape (SINGA's ``Tensor.copy_from_numpy``,
        with which drivers refill one input tensor every batch); returns self.

        >>> from autograd import Tensor
        >>> import numpy as np
        >>> Tensor(shape=(2, 2)).copy_from_numpy(np.arange(4)).to_numpy()
        array([[0., 1.],
               [2., 3.]], dtype=float32)
        """
        if offset != 0:
            raise ValueError(f"copy_from_numpy: only offset=0 is supported, got {offset}")
        array = np.asarray(array)
        if array.size != self.size:
            raise ValueError(f"copy_from_numpy: the tensor of shape {self.shape} holds "
                             f"{self.size} elements, got an array of shape {array.shape}")
        self.data[...] = move_array(array.reshape(self.shape), self.device)
        return self

    def bernoulli(self: _T, p: float) -> _T:
        """Fill with 1.0 with probability ``p`` and 0.0 otherwise, in place; returns self."""
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"bernoulli: p must lie in [0, 1], got {p}")
        with self.device.activate():
            draws = self.device.random.random(self.data.shape, dtype=self._float_dtype())
            self.data[...] = draws < p
        return self


def _is_array(value: Any) -> bool:
    """An array of some module (NumPy scalars and Python numbers and lists are values)."""
    return hasattr(value, "shape") and hasattr(value, "dtype") and not isinstance(value, np.generic)
