"""Elementwise functions of one tensor: exp, log, powers, trigonometric and hyperbolic
functions, rounding, clipping.

>>> from autograd import Tensor
>>> exp(Tensor(data=[0.0, 1.0])).to_numpy().round(4)
array([1.    , 2.7183], dtype=float32)
"""
from ..device import get_array_module
from .base import Operation
from .utils import scalar_value

__all__ = [
    "negative", "neg", "exp", "log", "sqrt", "abs", "sign", "reciprocal", "sin", "cos", "tan",
    "clip", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "ceil", "floor",
    "round", "rounde", "identity",
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


class Abs(Operation):
    """y = |x|.   dx = dy * sign(x)   (0 at x = 0)"""

    def forward(self, x):
        self.save_for_backward(x)
        return get_array_module(x).abs(x)

    def backward(self, dy):
        (x,) = self.saved
        return dy * get_array_module(x).sign(x)


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


class Sin(Operation):
    """y = sin x.   dx = dy * cos x"""

    def forward(self, x):
        self.save_for_backward(x)
        return get_array_module(x).sin(x)

    def backward(self, dy):
        (x,) = self.saved
        return dy * get_array_module(x).cos(x)


class Cos(Operation):
    """y = cos x.   dx = -dy * sin x"""

    def forward(self, x):
        self.save_for_backward(x)
        return get_array_module(x).cos(x)

    def backward(self, dy):
        (x,) = self.saved
        return -dy * get_array_module(x).sin(x)


class Tan(Operation):
    """y = tan x.   dx = dy * (1 + y^2)"""

    def forward(self, x):
        y = get_array_module(x).tan(x)
        self.save_for_backward(y)
        return y

    def backward(self, dy):
        (y,) = self.saved
        return dy * (1 + y * y)


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


def negative(x):
    """-x elementwise."""
    return Negative()(x)


neg = negative


def exp(x):
    """e to the power of each element."""
    return Exp()(x)


def log(x):
    """Natural logarithm of each element."""
    return Log()(x)


def sqrt(x):
    """Square root of each element."""
    return Sqrt()(x)


def abs(x):
    """Absolute value of each element; the gradient at 0 is 0."""
    return Abs()(x)


def sign(x):
    """-1, 0 or 1 by the sign of each element; its gradient is 0."""
    return Sign()(x)


def reciprocal(x):
    """1 / x elementwise."""
    return Reciprocal()(x)


def sin(x):
    """Sine of each element (radians)."""
    return Sin()(x)


def cos(x):
    """Cosine of each element (radians)."""
    return Cos()(x)


def tan(x):
    """Tangent of each element (radians)."""
    return Tan()(x)


def clip(x, min=None, max=None):
    """Each element limited to [min, max] (either may be None); the gradient is zero outside.

    >>> from autograd import Tensor
    >>> clip(Tensor(data=[-2.0, 0.5, 2.0]), -1, 1).to_numpy()
    array([-1. ,  0.5,  1. ], dtype=float32)
    """
    if min is None and max is None:
        raise ValueError("clip: give min, max or both")
    return Clip(scalar_value(min) if min is not None else None,
                scalar_value(max) if max is not None else None)(x)


# ---------------------------------------------------------------- SINGA's further unary ops

class _Unary(Operation):
    """A one-input op whose backward needs only x: y = f(x), dx = dy * f'(x). Subclasses give
    ``function(xp, x)`` and ``derivative(xp, x)``."""

    def forward(self, x):
        self.save_for_backward(x)
        return self.function(get_array_module(x), x)

    def backward(self, dy):
        (x,) = self.saved
        return dy * self.derivative(get_array_module(x), x)


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


def asin(x):
    """Inverse sine of each element, defined on [-1, 1]."""
    return Asin()(x)


def acos(x):
    """Inverse cosine of each element, defined on [-1, 1]."""
    return Acos()(x)


def atan(x):
    """Inverse tangent of each element."""
    return Atan()(x)


def sinh(x):
    """Hyperbolic sine of each element."""
    return Sinh()(x)


def cosh(x):
    """Hyperbolic cosine of each element."""
    return Cosh()(x)


def asinh(x):
    """Inverse hyperbolic sine of each element."""
    return Asinh()(x)


def acosh(x):
    """Inverse hyperbolic cosine of each element, defined for x >= 1."""
    return Acosh()(x)


def atanh(x):
    """Inverse hyperbolic tangent of each element, defined on (-1, 1)."""
    return Atanh()(x)


def ceil(x):
    """Smallest integer >= each element (as floats); zero gradient."""
    return Ceil()(x)


def floor(x):
    """Largest integer <= each element (as floats); zero gradient."""
    return Floor()(x)


def round(x):
    """Each element rounded to the nearest integer, halves away from zero; zero gradient.

    >>> from autograd import Tensor
    >>> round(Tensor(data=[0.5, 1.5, -2.5])).to_numpy()
    array([ 1.,  2., -3.], dtype=float32)
    """
    return Round()(x)


def rounde(x):
    """Each element rounded to the nearest integer, halves to even (SINGA's rounde).

    >>> from autograd import Tensor
    >>> rounde(Tensor(data=[0.5, 1.5, -2.5])).to_numpy()
    array([ 0.,  2., -2.], dtype=float32)
    """
    return RoundEven()(x)


def identity(x):
    """A copy of x that stays in the graph (gradient passes through unchanged)."""
    return Identity()(x)
