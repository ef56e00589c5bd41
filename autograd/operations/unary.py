"""Elementwise functions of one tensor: exp, log, roots, absolute value and sign, rounding,
clipping (the trigonometric and hyperbolic functions are in trigonometry.py).

>>> from autograd import Tensor
>>> exp(Tensor(data=[0.0, 1.0])).to_numpy().round(4)
array([1.    , 2.7183], dtype=float32)
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from ..device import get_array_module
from .base import Operation
from .utils import scalar_value

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = [
    "negative", "neg", "exp", "log", "sqrt", "abs", "sign", "reciprocal", "clip", "ceil",
    "floor", "round", "rounde", "identity",
]


class Negative(Operation):
    """y = -x.   dx = -dy"""

    def forward(self, x):
        return -x

    def backward(self, dy):
        return -dy


class Exp(Operation):
    """y = e^x.   dx = dy * y"""

    def forward(self, x):
        y = get_array_module(x).exp(x)
        self.save_for_backward(y)
        return y

    def backward(self, dy):
        (y,) = self.saved
        return dy * y


class Log(Operation):
    """y = ln x.   dx = dy / x"""

    def forward(self, x):
        self.save_for_backward(x)
        return get_array_module(x).log(x)

    def backward(self, dy):
        (x,) = self.saved
        return dy / x


class Sqrt(Operation):
    """y = sqrt(x).   dx = dy / (2 y)"""

    def forward(self, x):
        y = get_array_module(x).sqrt(x)
        self.save_for_backward(y)
        return y

    def backward(self, dy):
        (y,) = self.saved
        return dy / (y + y)


class _Unary(Operation):
    """A one-input op whose backward needs only x: y = f(x), dx = dy * f'(x). Subclasses give
    ``function(xp, x)`` and ``derivative(xp, x)`` (trigonometry.py has most of them)."""

    def forward(self, x):
        self.save_for_backward(x)
        return self.function(get_array_module(x), x)

    def backward(self, dy):
        (x,) = self.saved
        return dy * self.derivative(get_array_module(x), x)


class Abs(_Unary):
    """y = |x|.   dx = dy * sign(x)   (0 at x = 0)"""
    function = staticmethod(lambda xp, x: xp.abs(x))
    derivative = staticmethod(lambda xp, x: xp.sign(x))


class Sign(Operation):
    """y = sign(x) in {-1, 0, 1}.   dx = 0"""

    def forward(self, x):
        return get_array_module(x).sign(x)

    def backward(self, dy):
        return dy * 0


class Reciprocal(Operation):
    """y = 1 / x.   dx = -dy * y^2"""

    def forward(self, x):
        y = 1 / x
        self.save_for_backward(y)
        return y

    def backward(self, dy):
        (y,) = self.saved
        return -dy * y * y


class Clip(Operation):
    """y = min(max(x, low), high).   dx = dy where low <= x <= high, else 0"""

    def __init__(self, low, high):
        self.low, self.high = low, high

    def forward(self, x):
        xp = get_array_module(x)
        inside = xp.ones(x.shape, dtype=bool)
        if self.low is not None:
            inside &= x >= self.low
        if self.high is not None:
            inside &= x <= self.high
        self.save_for_backward(inside)
        return xp.clip(x, self.low, self.high)

    def backward(self, dy):
        (inside,) = self.saved
        return dy * inside


def negative(x: Tensor) -> Tensor:
    """-x elementwise."""
    return Negative()(x)


neg = negative


def exp(x: Tensor) -> Tensor:
    """e to the power of each element."""
    return Exp()(x)


def log(x: Tensor) -> Tensor:
    """Natural logarithm of each element."""
    return Log()(x)


def sqrt(x: Tensor) -> Tensor:
    """Square root of each element."""
    return Sqrt()(x)


def abs(x: Tensor) -> Tensor:
    """Absolute value of each element; the gradient at 0 is 0."""
    return Abs()(x)


def sign(x: Tensor) -> Tensor:
    """-1, 0 or 1 by the sign of each element; its gradient is 0."""
    return Sign()(x)


def reciprocal(x: Tensor) -> Tensor:
    """1 / x elementwise."""
    return Reciprocal()(x)


def clip(x: Tensor, min: Optional[float] = None, max: Optional[float] = None) -> Tensor:
    """Each element limited to [min, max] (either may be None); the gradient is zero outside.

    >>> from autograd import Tensor
    >>> clip(Tensor(data=[-2.0, 0.5, 2.0]), -1, 1).to_numpy()
    array([-1. ,  0.5,  1. ], dtype=float32)
    """
    if min is None and max is None:
        raise ValueError("clip: give min, max or both")
    return Clip(scalar_value(min) if min is not None else None,
                scalar_value(max) if max is not None else None)(x)


# ---------------------------------------------------------------- rounding and identity

class _Step(Operation):
    """A piecewise-constant function: its gradient is zero wherever it is defined."""

    def forward(self, x):
        return self.function(get_array_module(x), x)

    def backward(self, dy):
        return dy * 0


class Ceil(_Step):
    """y = ceil x.   dx = 0"""
    function = staticmethod(lambda xp, x: xp.ceil(x))


class Floor(_Step):
    """y = floor x.   dx = 0"""
    function = staticmethod(lambda xp, x: xp.floor(x))


class Round(_Step):
    """y = x rounded half away from zero (ONNX/SINGA Round is half to even: see rounde).
    dx = 0"""
    function = staticmethod(lambda xp, x: xp.sign(x) * xp.floor(xp.abs(x) + 0.5))


class RoundEven(_Step):
    """y = x rounded half to even (NumPy's rint).   dx = 0"""
    function = staticmethod(lambda xp, x: xp.rint(x))


class Identity(Operation):
    """y = x (a new tensor in the graph).   dx = dy"""

    def forward(self, x):
        return x.copy()

    def backward(self, dy):
        return dy


def ceil(x: Tensor) -> Tensor:
    """Smallest integer >= each element (as floats); zero gradient."""
    return Ceil()(x)


def floor(x: Tensor) -> Tensor:
    """Largest integer <= each element (as floats); zero gradient."""
    return Floor()(x)


def round(x: Tensor) -> Tensor:
    """Each element rounded to the nearest integer, halves away from zero; zero gradient.

    >>> from autograd import Tensor
    >>> round(Tensor(data=[0.5, 1.5, -2.5])).to_numpy()
    array([ 1.,  2., -3.], dtype=float32)
    """
    return Round()(x)


def rounde(x: Tensor) -> Tensor:
    """Each element rounded to the nearest integer, halves to even (SINGA's rounde).

    >>> from autograd import Tensor
    >>> rounde(Tensor(data=[0.5, 1.5, -2.5])).to_numpy()
    array([ 0.,  2., -2.], dtype=float32)
    """
    return RoundEven()(x)


def identity(x: Tensor) -> Tensor:
    """A copy of x that stays in the graph (gradient passes through unchanged)."""
    return Identity()(x)
