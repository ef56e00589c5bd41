"""Trigonometric and hyperbolic functions of each element, and their inverses.

>>> from autograd import Tensor
>>> sin(Tensor(data=[0.0])).to_numpy()
array([0.], dtype=float32)
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..device import get_array_module
from .base import Operation
from .unary import _Unary

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = ["sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh",
           "atanh"]


class Sin(_Unary):
    """y = sin x.   dx = dy * cos x"""
    function = staticmethod(lambda xp, x: xp.sin(x))
    derivative = staticmethod(lambda xp, x: xp.cos(x))


class Cos(_Unary):
    """y = cos x.   dx = -dy * sin x"""
    function = staticmethod(lambda xp, x: xp.cos(x))
    derivative = staticmethod(lambda xp, x: -xp.sin(x))


class Tan(Operation):
    """y = tan x.   dx = dy * (1 + y^2)"""

    def forward(self, x):
        y = get_array_module(x).tan(x)
        self.save_for_backward(y)
        return y

    def backward(self, dy):
        (y,) = self.saved
        return dy * (1 + y * y)


class Asin(_Unary):
    """y = asin x, x in (-1, 1).   dx = dy / sqrt(1 - x^2)"""
    function = staticmethod(lambda xp, x: xp.arcsin(x))
    derivative = staticmethod(lambda xp, x: 1 / xp.sqrt(1 - x * x))


class Acos(_Unary):
    """y = acos x, x in (-1, 1).   dx = -dy / sqrt(1 - x^2)"""
    function = staticmethod(lambda xp, x: xp.arccos(x))
    derivative = staticmethod(lambda xp, x: -1 / xp.sqrt(1 - x * x))


class Atan(_Unary):
    """y = atan x.   dx = dy / (1 + x^2)"""
    function = staticmethod(lambda xp, x: xp.arctan(x))
    derivative = staticmethod(lambda xp, x: 1 / (1 + x * x))


class Sinh(_Unary):
    """y = sinh x.   dx = dy * cosh x"""
    function = staticmethod(lambda xp, x: xp.sinh(x))
    derivative = staticmethod(lambda xp, x: xp.cosh(x))


class Cosh(_Unary):
    """y = cosh x.   dx = dy * sinh x"""
    function = staticmethod(lambda xp, x: xp.cosh(x))
    derivative = staticmethod(lambda xp, x: xp.sinh(x))


class Asinh(_Unary):
    """y = asinh x.   dx = dy / sqrt(x^2 + 1)"""
    function = staticmethod(lambda xp, x: xp.arcsinh(x))
    derivative = staticmethod(lambda xp, x: 1 / xp.sqrt(x * x + 1))


class Acosh(_Unary):
    """y = acosh x, x > 1.   dx = dy / sqrt(x^2 - 1)"""
    function = staticmethod(lambda xp, x: xp.arccosh(x))
    derivative = staticmethod(lambda xp, x: 1 / xp.sqrt(x * x - 1))


class Atanh(_Unary):
    """y = atanh x, x in (-1, 1).   dx = dy / (1 - x^2)"""
    function = staticmethod(lambda xp, x: xp.arctanh(x))
    derivative = staticmethod(lambda xp, x: 1 / (1 - x * x))


def sin(x: Tensor) -> Tensor:
    """Sine of each element (radians)."""
    return Sin()(x)


def cos(x: Tensor) -> Tensor:
    """Cosine of each element (radians)."""
    return Cos()(x)


def tan(x: Tensor) -> Tensor:
    """Tangent of each element (radians)."""
    return Tan()(x)


def asin(x: Tensor) -> Tensor:
    """Inverse sine of each element, defined on [-1, 1]."""
    return Asin()(x)


def acos(x: Tensor) -> Tensor:
    """Inverse cosine of each element, defined on [-1, 1]."""
    return Acos()(x)


def atan(x: Tensor) -> Tensor:
    """Inverse tangent of each element."""
    return Atan()(x)


def sinh(x: Tensor) -> Tensor:
    """Hyperbolic sine of each element."""
    return Sinh()(x)


def cosh(x: Tensor) -> Tensor:
    """Hyperbolic cosine of each element."""
    return Cosh()(x)


def asinh(x: Tensor) -> Tensor:
    """Inverse hyperbolic sine of each element."""
    return Asinh()(x)


def acosh(x: Tensor) -> Tensor:
    """Inverse hyperbolic cosine of each element, defined for x >= 1."""
    return Acosh()(x)


def atanh(x: Tensor) -> Tensor:
    """Inverse hyperbolic tangent of each element, defined on (-1, 1)."""
    return Atanh()(x)
