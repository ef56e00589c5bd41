"""Elementwise arithmetic: binary ops with NumPy broadcasting, and their scalar forms.

A Python or NumPy scalar operand becomes an attribute of a one-input op (``x * 2.0`` is
``MulScalar(2.0)(x)``), so it takes the tensor's dtype and costs no extra graph node.

>>> from autograd import Tensor
>>> (Tensor(data=[1.0, 2.0]) * 3 + 1).to_numpy()
array([4., 7.], dtype=float32)
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import math

from ..device import get_array_module
from .base import Operation
from .utils import (unbroadcast, as_tensor_like, scalar_value, scalar_operand, check_broadcast,
                    ignore_float_warnings)
from .._types import Operand

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = [
    "add", "sub", "mul", "div", "pow", "maximum", "minimum",
]


def _operands(a, b, name):
    """Two Tensors on one device for a binary op: constants become Tensors like the other
    operand, an integer Tensor takes the floating one's dtype, and shapes must broadcast."""
    if not hasattr(a, "creator"):
        a = as_tensor_like(a, b, name)
    elif not hasattr(b, "creator"):
        b = as_tensor_like(b, a, name)
    da, db = a.data.dtype, b.data.dtype
    if da.kind != db.kind:
        if da.kind == "f" and db.kind in "iub":
            b = as_tensor_like(b.data.astype(da), a, name)
        elif db.kind == "f" and da.kind in "iub":
            a = as_tensor_like(a.data.astype(db), b, name)
    check_broadcast(name, a.data, b.data)
    return a, b


# ---------------------------------------------------------------- binary, broadcasting

class Add(Operation):
    """y = a + b (broadcast).   da = dy, db = dy, each summed to its input's shape"""

    def forward(self, a, b):
        self.shapes = a.shape, b.shape
        return a + b

    def backward(self, dy):
        sa, sb = self.shapes
        need_a, need_b = self.needs_input_grad
        return (unbroadcast(dy, sa) if need_a else None,
                unbroadcast(dy, sb) if need_b else None)


class Sub(Operation):
    """y = a - b (broadcast).   da = dy, db = -dy"""

    def forward(self, a, b):
        self.shapes = a.shape, b.shape
        return a - b

    def backward(self, dy):
        sa, sb = self.shapes
        need_a, need_b = self.needs_input_grad
        return (unbroadcast(dy, sa) if need_a else None,
                unbroadcast(-dy, sb) if need_b else None)


class Mul(Operation):
    """y = a * b (broadcast).   da = dy * b, db = dy * a"""

    def forward(self, a, b):
        self.save_for_backward(a, b)
        return a * b

    def backward(self, dy):
        a, b = self.saved
        need_a, need_b = self.needs_input_grad
        return (unbroadcast(dy * b, a.shape) if need_a else None,
                unbroadcast(dy * a, b.shape) if need_b else None)


class Div(Operation):
    """y = a / b (broadcast).   da = dy / b, db = -dy * a / b^2"""

    def forward(self, a, b):
        self.save_for_backward(a, b)
        return a / b

    def backward(self, dy):
        a, b = self.saved
        need_a, need_b = self.needs_input_grad
        da = dy / b
        return (unbroadcast(da, a.shape) if need_a else None,
                unbroadcast(-da * a / b, b.shape) if need_b else None)


class Pow(Operation):
    """y = a ** b (broadcast).   da = dy * b * a^(b-1), db = dy * y * log(a)"""

    def forward(self, a, b):
        y = a ** b
        self.save_for_backward(a, b, y)
        return y

    def backward(self, dy):
        a, b, y = self.saved
        need_a, need_b = self.needs_input_grad
        xp = get_array_module(a)
        da = unbroadcast(dy * b * a ** (b - 1), a.shape) if need_a else None
        db = None
        if need_b:
            with ignore_float_warnings(xp):   # log(a) is nan for a < 0; where y = 0 the product is still nan
                db = unbroadcast(dy * y * xp.log(a), b.shape)
        return da, db


class Maximum(Operation):
    """y = max(a, b) elementwise (broadcast).   the gradient goes to the larger input; on a tie
    each input takes half"""

    def forward(self, a, b):
        self.save_for_backward(a, b)
        return get_array_module(a).maximum(a, b)

    def backward(self, dy):
        a, b = self.saved
        return _split_extremum(dy, a > b, a == b, a.shape, b.shape, self.needs_input_grad)


class Minimum(Operation):
    """y = min(a, b) elementwise (broadcast).   the gradient goes to the smaller input; on a tie
    each input takes half"""

    def forward(self, a, b):
        self.save_for_backward(a, b)
        return get_array_module(a).minimum(a, b)

    def backward(self, dy):
        a, b = self.saved
        return _split_extremum(dy, a < b, a == b, a.shape, b.shape, self.needs_input_grad)


def _split_extremum(dy, a_wins, tie, shape_a, shape_b, needs):
    # 1 where a wins, 0.5 on a tie, 0 where b wins, built in dy's dtype (no float64 temporary)
    share_a = a_wins.astype(dy.dtype) + tie.astype(dy.dtype) * 0.5
    return (unbroadcast(dy * share_a, shape_a) if needs[0] else None,
            unbroadcast(dy * (1 - share_a), shape_b) if needs[1] else None)


# ---------------------------------------------------------------- a tensor and a scalar

def _float32_for_int(x, c):
    """SINGA's rule: an integer (or bool) array with a Python float gives float32 (NumPy's would
    be float64, which would then refuse to mix with the float32 model). The hot scalar ops
    (add, multiply, divide: the tape's) test inline before calling this: a call per op cost 1%
    of the tape."""
    if isinstance(c, float) and x.dtype.kind in "biu":
        return x.astype("float32")
    return x


class AddScalar(Operation):
    """y = x + c.   dx = dy"""

    def __init__(self, c):
        self.c = c

    def forward(self, x):
        if x.dtype.kind in "biu":
            x = _float32_for_int(x, self.c)
        return x + self.c

    def backward(self, dy):
        return dy


class MulScalar(Operation):
    """y = c * x.   dx = c * dy"""

    def __init__(self, c):
        self.c = c

    def forward(self, x):
        # converted once for both passes: see scalar_operand (a number used once stays one)
        if x.dtype.kind in "biu":
            x = _float32_for_int(x, self.c)
        self.operand = scalar_operand(self.c, x)
        return x * self.operand

    def backward(self, dy):
        return dy * self.operand


class DivScalar(Operation):
    """y = x / c.   dx = dy / c"""

    def __init__(self, c):
        self.c = c

    def forward(self, x):
        x = _float32_for_int(x, self.c)
        self.operand = scalar_operand(self.c, x)
        return x / self.operand

    def backward(self, dy):
        return dy / self.operand


class RSubScalar(Operation):
    """y = c - x.   dx = -dy"""

    def __init__(self, c):
        self.c = c

    def forward(self, x):
        return self.c - _float32_for_int(x, self.c)

    def backward(self, dy):
        return -dy


class RDivScalar(Operation):
    """y = c / x.   dx = -dy * y / x"""

    def __init__(self, c):
        self.c = c

    def forward(self, x):
        x = _float32_for_int(x, self.c)
        y = self.c / x
        self.save_for_backward(x, y)
        return y

    def backward(self, dy):
        x, y = self.saved
        return -dy * y / x


class PowScalar(Operation):
    """y = x ** c.   dx = dy * c * x^(c-1)"""

    def __init__(self, c):
        self.c = c

    def forward(self, x):
        x = _float32_for_int(x, self.c)
        self.save_for_backward(x)
        return x * x if self.c == 2 else x ** self.c

    def backward(self, dy):
        (x,) = self.saved
        c = self.c
        if c == 2:
            return dy * (x + x)
        return dy * (c * x ** (c - 1))


class RPowScalar(Operation):
    """y = c ** x.   dx = dy * y * log(c)"""

    def __init__(self, c):
        self.c = c

    def forward(self, x):
        y = self.c ** _float32_for_int(x, self.c)
        self.save_for_backward(y)
        return y

    def backward(self, dy):
        (y,) = self.saved
        return dy * y * math.log(self.c)


def add(a: Operand, b: Operand) -> Tensor:
    """a + b elementwise, with NumPy broadcasting; either may be a Python scalar."""
    c = scalar_value(b)
    if c is not None:
        return AddScalar(c)(a)
    c = scalar_value(a)
    if c is not None:
        return AddScalar(c)(b)
    return Add()(*_operands(a, b, "add"))


def sub(a: Operand, b: Operand) -> Tensor:
    """a - b elementwise, with NumPy broadcasting; either may be a Python scalar."""
    c = scalar_value(b)
    if c is not None:
        return AddScalar(-c)(a)
    c = scalar_value(a)
    if c is not None:
        return RSubScalar(c)(b)
    return Sub()(*_operands(a, b, "sub"))


def mul(a: Operand, b: Operand) -> Tensor:
    """a * b elementwise, with NumPy broadcasting; either may be a Python scalar."""
    c = scalar_value(b)
    if c is not None:
        return MulScalar(c)(a)
    c = scalar_value(a)
    if c is not None:
        return MulScalar(c)(b)
    return Mul()(*_operands(a, b, "mul"))


def div(a: Operand, b: Operand) -> Tensor:
    """a / b elementwise, with NumPy broadcasting; either may be a Python scalar."""
    c = scalar_value(b)
    if c is not None:
        return DivScalar(c)(a)
    c = scalar_value(a)
    if c is not None:
        return RDivScalar(c)(b)
    return Div()(*_operands(a, b, "div"))


def pow(a: Operand, b: Operand) -> Tensor:
    """a ** b elementwise, with NumPy broadcasting; either may be a Python scalar.

    >>> from autograd import Tensor
    >>> pow(Tensor(data=[2.0, 3.0]), 2).to_numpy()
    array([4., 9.], dtype=float32)
    """
    c = scalar_value(b)
    if c is not None:
        return PowScalar(c)(a)
    c = scalar_value(a)
    if c is not None:
        return RPowScalar(c)(b)
    return Pow()(*_operands(a, b, "pow"))


def maximum(a: Operand, b: Operand) -> Tensor:
    """The larger of a and b elementwise (broadcast); ties share the gradient equally."""
    return Maximum()(*_operands(a, b, "maximum"))


def minimum(a: Operand, b: Operand) -> Tensor:
    """The smaller of a and b elementwise (broadcast); ties share the gradient equally."""
    return Minimum()(*_operands(a, b, "minimum"))
