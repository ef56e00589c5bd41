"""Activations: elementwise nonlinearities (softmax and log_softmax are in softmax.py).

Signatures and defaults follow SINGA (``leakyrelu(x, a=0.01)``, ``selu(x, alpha=1.67326,
gamma=1.0507)``, ``hardsigmoid(x, alpha=0.2, gamma=0.5)``). Every op is stable for large |x|:
sigmoid, softplus and elu never overflow.

>>> from autograd import Tensor
>>> relu(Tensor(data=[-1.0, 2.0])).to_numpy()
array([0., 2.], dtype=float32)
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import math

from ..device import get_array_module
from ..backend import kernels_for
from .base import Operation
from .utils import unbroadcast, as_tensor_like, check_broadcast, check_tensor
from . import special
from .._types import Operand

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = [
    "tanh", "sigmoid", "relu", "leakyrelu", "elu", "selu", "gelu", "softplus", "softsign",
    "hardsigmoid", "erf", "prelu",
]

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


# ---------------------------------------------------------------- the hot path

class Tanh(Operation):
    """y = tanh(x), elementwise.   dx = dy * (1 - y^2)"""

    def forward(self, x):
        y = get_array_module(x).tanh(x)
        self.save_for_backward(y)          # keep the output: backward needs only y
        return y

    def backward(self, dy):
        (y,) = self.saved
        # dy * (1 - y^2) written without the Python number 1, which NumPy converts on each
        # call: three array operations cost a fifth less on small arrays
        return dy - dy * (y * y)


class Sigmoid(Operation):
    """y = 1 / (1 + e^-x), elementwise.   dx = dy * y * (1 - y)"""

    def forward(self, x):
        y = special.expit(x)               # no overflow in e^-x for x << 0
        self.save_for_backward(y)
        return y

    def backward(self, dy):
        (y,) = self.saved
        return dy * (y - y * y)


class ReLU(Operation):
    """y = max(x, 0), elementwise.   dx = dy where y > 0, else 0"""

    def forward(self, x):
        y = kernels_for(x).relu(x)
        self.save_for_backward(y)
        return y

    def forward_plan(self, x):
        return kernels_for(x).relu_plan(x)

    def forward_plan_key(self):
        return ()

    def backward(self, dy):
        (y,) = self.saved
        return kernels_for(dy).relu_backward(dy, y)


def tanh(x: Tensor) -> Tensor:
    """Hyperbolic tangent of each element.

    >>> from autograd import Tensor
    >>> tanh(Tensor(data=[0.0, 1.0])).to_numpy().round(4)
    array([0.    , 0.7616], dtype=float32)
    """
    return Tanh()(x)


def sigmoid(x: Tensor) -> Tensor:
    """The logistic function 1 / (1 + e^-x) of each element; exact for large |x|.

    >>> from autograd import Tensor
    >>> sigmoid(Tensor(data=[-1000.0, 0.0, 1000.0])).to_numpy()
    array([0. , 0.5, 1. ], dtype=float32)
    """
    return Sigmoid()(x)


def relu(x: Tensor) -> Tensor:
    """max(x, 0) for each element; the gradient at 0 is 0."""
    return ReLU()(x)


# ---------------------------------------------------------------- piecewise

class LeakyReLU(Operation):
    """y = x for x > 0, a * x otherwise.   dx = dy for x > 0, a * dy otherwise"""

    def __init__(self, a):
        self.a = a

    def forward(self, x):
        positive = x > 0
        self.save_for_backward(positive)
        return get_array_module(x).where(positive, x, x * self.a)

    def backward(self, dy):
        (positive,) = self.saved
        return get_array_module(dy).where(positive, dy, dy * self.a)


class ELU(Operation):
    """y = x for x > 0, alpha * (e^x - 1) otherwise.   dx = dy for x > 0, dy * (y + alpha)
    otherwise"""

    def __init__(self, alpha):
        self.alpha = alpha

    def forward(self, x):
        xp = get_array_module(x)
        positive = x > 0
        # expm1 of min(x, 0): e^x of a large positive x would overflow in the unused branch
        y = xp.where(positive, x, self.alpha * xp.expm1(xp.minimum(x, 0)))
        self.save_for_backward(positive, y)
        return y

    def backward(self, dy):
        positive, y = self.saved
        return get_array_module(dy).where(positive, dy, dy * (y + self.alpha))


class SELU(Operation):
    """y = gamma * x for x > 0, gamma * alpha * (e^x - 1) otherwise.   dx = gamma * dy for
    x > 0, dy * (y + gamma * alpha) otherwise"""

    def __init__(self, alpha, gamma):
        self.alpha, self.gamma = alpha, gamma

    def forward(self, x):
        xp = get_array_module(x)
        positive = x > 0
        scale = self.gamma * self.alpha
        y = xp.where(positive, x * self.gamma, scale * xp.expm1(xp.minimum(x, 0)))
        self.save_for_backward(positive, y)
        return y

    def backward(self, dy):
        positive, y = self.saved
        return get_array_module(dy).where(positive, dy * self.gamma,
                                          dy * (y + self.gamma * self.alpha))


class HardSigmoid(Operation):
    """y = min(max(alpha * x + gamma, 0), 1).   dx = alpha * dy where 0 < alpha x + gamma < 1,
    else 0"""

    def __init__(self, alpha, gamma):
        self.alpha, self.gamma = alpha, gamma

    def forward(self, x):
        z = x * self.alpha + self.gamma
        self.save_for_backward((z > 0) & (z < 1))
        return get_array_module(x).clip(z, 0, 1)

    def backward(self, dy):
        (inside,) = self.saved
        return dy * inside * self.alpha


def leakyrelu(x: Tensor, a: float = 0.01) -> Tensor:
    """x for positive elements, ``a * x`` otherwise (SINGA's name and default slope).

    >>> from autograd import Tensor
    >>> leakyrelu(Tensor(data=[-2.0, 3.0]), a=0.1).to_numpy()
    array([-0.2,  3. ], dtype=float32)
    """
    return LeakyReLU(float(a))(x)


def elu(x: Tensor, alpha: float = 1.0) -> Tensor:
    """Exponential linear unit: x for x > 0, ``alpha * (e^x - 1)`` otherwise."""
    return ELU(float(alpha))(x)


def selu(x: Tensor, alpha: float = 1.67326, gamma: float = 1.0507) -> Tensor:
    """Scaled ELU with SINGA's signature: ``gamma * x`` for x > 0, ``gamma * alpha * (e^x - 1)``
    otherwise. (PyTorch calls gamma ``scale`` and uses more digits of the same constants.)"""
    return SELU(float(alpha), float(gamma))(x)


def hardsigmoid(x: Tensor, alpha: float = 0.2, gamma: float = 0.5) -> Tensor:
    """``clip(alpha * x + gamma, 0, 1)``, SINGA's defaults. (PyTorch's hardsigmoid is
    alpha=1/6, gamma=0.5.)

    >>> from autograd import Tensor
    >>> hardsigmoid(Tensor(data=[-5.0, 0.0, 1.0, 5.0])).to_numpy()
    array([0. , 0.5, 0.7, 1. ], dtype=float32)
    """
    return HardSigmoid(float(alpha), float(gamma))(x)


class PRelu(Operation):
    """y = x for x > 0, slope * x otherwise; x and slope broadcast both ways (SINGA), y has
    their broadcast shape.
    dx = dy for x > 0, slope * dy otherwise, summed to x's shape;
    dslope = dy * x where x <= 0, summed to slope's shape"""

    def forward(self, x, slope):
        positive = x > 0
        self.save_for_backward(x, slope, positive)
        return get_array_module(x).where(positive, x, x * slope)

    def backward(self, dy):
        x, slope, positive = self.saved
        xp = get_array_module(dy)
        need_x, need_slope = self.needs_input_grad
        dx = unbroadcast(xp.where(positive, dy, dy * slope), x.shape) if need_x else None
        dslope = unbroadcast(xp.where(positive, 0, dy * x), slope.shape) if need_slope else None
        return dx, dslope


def prelu(x: Tensor, slope: Operand) -> Tensor:
    """SINGA's PRelu: x where x > 0, ``slope * x`` elsewhere, with a learnable ``slope`` (a
    Tensor, or a number or array taken as a constant). As in SINGA, x and slope broadcast both
    ways: a (C,) slope against (N, C), a (1, C, 1, 1) one against (N, C, H, W), or a slope
    with more axes than x, which gives an output of their broadcast shape; each gradient is
    summed back to its input's shape.

    >>> from autograd import Tensor
    >>> prelu(Tensor(data=[[-2.0, 3.0], [-1.0, -4.0]]), Tensor(data=[0.5, 0.25])).to_numpy()
    array([[-1. ,  3. ],
           [-0.5, -1. ]], dtype=float32)
    >>> prelu(Tensor(data=[-2.0, 4.0]), Tensor(data=[[0.5], [1.0]])).to_numpy()
    array([[-1.,  4.],
           [-2.,  4.]], dtype=float32)
    """
    check_tensor(x, "prelu")
    slope = as_tensor_like(slope, x, "prelu")
    check_broadcast("prelu", x, slope)
    return PRelu()(x, slope)


# ---------------------------------------------------------------- smooth

class GELU(Operation):
    """y = x * Phi(x), Phi the standard normal CDF.   dx = dy * (Phi(x) + x * phi(x));
    with approximate="tanh", Phi(x) ~ (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) / 2"""

    def __init__(self, approximate):
        self.approximate = approximate

    def forward(self, x):
        if self.approximate:
            self.save_for_backward(x)
            inner = _SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)
            return 0.5 * x * (1 + get_array_module(x).tanh(inner))
        # one pass gives y and the slope Phi(x) + x phi(x), saved for backward (no second erf)
        y, slope = kernels_for(x).gelu_forward(x)
        self.save_for_backward(slope)
        return y

    def backward(self, dy):
        if not self.approximate:
            return kernels_for(dy).gelu_backward(dy, self.saved[0])
        x = self.saved[0]
        xp = get_array_module(x)
        if self.approximate:
            square = x * x
            t = xp.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * square * x))
            slope = 0.5 * (1 + t) + (0.5 * _SQRT_2_OVER_PI) * x * (1 - t * t) * (
                1 + 3 * 0.044715 * square)
            return dy * slope


class Softplus(Operation):
    """y = log(1 + e^x), computed as max(x, 0) + log1p(e^-|x|).   dx = dy * sigmoid(x)"""

    def forward(self, x):
        xp = get_array_module(x)
        self.save_for_backward(x)
        return xp.maximum(x, 0) + xp.log1p(xp.exp(-xp.abs(x)))

    def backward(self, dy):
        (x,) = self.saved
        return dy * special.expit(x)


class Softsign(Operation):
    """y = x / (1 + |x|).   dx = dy / (1 + |x|)^2"""

    def forward(self, x):
        denominator = 1 + get_array_module(x).abs(x)
        self.save_for_backward(denominator)
        return x / denominator

    def backward(self, dy):
        (denominator,) = self.saved
        return dy / (denominator * denominator)


class Erf(Operation):
    """y = erf(x).   dx = dy * 2 / sqrt(pi) * e^(-x^2)

    (SINGA's Erf evaluates this derivative at dy instead of x; here it is evaluated at x.)"""

    def forward(self, x):
        self.save_for_backward(x)
        return special.erf(x)

    def backward(self, dy):
        (x,) = self.saved
        return dy * (_TWO_OVER_SQRT_PI * get_array_module(x).exp(-(x * x)))


def gelu(x: Tensor, approximate: str = "none") -> Tensor:
    """Gaussian error linear unit ``x * Phi(x)``, exact (erf-based) by default;
    ``approximate="tanh"`` gives the tanh approximation (PyTorch's spelling).

    >>> from autograd import Tensor
    >>> gelu(Tensor(data=[-1.0, 0.0, 1.0])).to_numpy().round(4)
    array([-0.1587,  0.    ,  0.8413], dtype=float32)
    """
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return GELU(approximate == "tanh")(x)


def softplus(x: Tensor) -> Tensor:
    """``log(1 + e^x)`` of each element, without overflow for large x."""
    return Softplus()(x)


def softsign(x: Tensor) -> Tensor:
    """``x / (1 + |x|)`` of each element."""
    return Softsign()(x)


def erf(x: Tensor) -> Tensor:
    """The error function of each element.

    >>> from autograd import Tensor
    >>> erf(Tensor(data=[0.0, 1.0])).to_numpy().round(4)
    array([0.    , 0.8427], dtype=float32)
    """
    return Erf()(x)
