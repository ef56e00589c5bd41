"""ONNX-style conversions SINGA has: shape, constant_of_shape, cast, onehot, nonzero.

Only ``cast`` between floating dtypes is differentiable; the others describe or build tensors
and return Tensors outside the graph.

>>> from autograd import Tensor
>>> onehot(-1, Tensor(data=[0, 2], dtype="int64"), 3).to_numpy()
array([[1., 0., 0.],
       [0., 0., 1.]], dtype=float32)
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from .base import Operation
from ..device import get_array_module
from ..recording import replayable, not_replayable
from .utils import constant, check_tensor
from .._types import DTypeLike

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = ["shape", "constant_of_shape", "cast", "onehot", "nonzero"]


class Shape(Operation):
    """y = x's shape as a 1-D int64 array (ONNX and SINGA Shape).   dx: none (a shape has no
    gradient)"""

    def forward(self, x):
        return get_array_module(x).asarray(x.shape, dtype=np.int64)

    def backward(self, dy):
        return None


def shape(x: Tensor) -> Tensor:
    """x's shape as a 1-D int64 Tensor (ONNX Shape), recorded as an op as in SINGA.

    >>> from autograd import Tensor
    >>> s = shape(Tensor(data=np.ones((2, 3)), stores_grad=True))
    >>> s.to_numpy(), type(s.creator).__name__
    (array([2, 3]), 'Shape')
    """
    check_tensor(x, "shape")
    return Shape()(x)


def constant_of_shape(shape_tensor: Tensor, value: float = 0.0) -> Tensor:
    """A float32 Tensor of the shape held in ``shape_tensor`` (a 1-D int Tensor, as ONNX
    ConstantOfShape takes), every element ``value``."""
    dims = tuple(int(n) for n in shape_tensor.to_numpy().ravel())
    if any(n < 0 for n in dims):
        raise ValueError(f"constant_of_shape: dimensions must be >= 0, got {dims}")
    with shape_tensor.device.activate():
        return constant(shape_tensor.device.xp.full(dims, value, dtype=np.float32), shape_tensor)


class Cast(Operation):
    """y = x converted to ``dtype``.   dx = dy converted back (floating to floating only)"""

    def __init__(self, dtype):
        self.dtype = dtype

    def forward(self, x):
        self.input_dtype = x.dtype
        return x.astype(self.dtype)

    def backward(self, dy):
        return dy.astype(self.input_dtype)


# SINGA's tensor type codes (singa.tensor.float32 == 0, int32 == 2, ...)
_SINGA_TYPE_CODES = {0: np.float32, 1: np.float16, 2: np.int32}


def cast(x: Tensor, to: DTypeLike) -> Tensor:
    """x converted to dtype ``to``: a NumPy dtype, its name, or one of SINGA's type codes (0
    float32, 1 float16, 2 int32). A cast between floating types stays in the graph; a cast to an
    integer or boolean type is outside it."""
    if isinstance(to, int) and not isinstance(to, bool):
        if to not in _SINGA_TYPE_CODES:
            raise TypeError(f"cast: unknown SINGA type code {to}; use 0 (float32), 1 (float16), "
                            "2 (int32) or a NumPy dtype")
        to = _SINGA_TYPE_CODES[to]
    try:
        target = np.dtype(to)
    except TypeError:
        raise TypeError(f"cast: expected a dtype, a dtype name or a SINGA type code, got "
                        f"{to!r}") from None
    if target.kind == "f" and x.dtype.kind == "f":
        return Cast(target)(x)
    return _cast_outside_graph(x, target)


@replayable       # no gradient, so not an Operation; graph mode still replays it
def _cast_outside_graph(x, target):
    return constant(x.data.astype(target), x)


def _depth(depth):
    """``depth`` as an int: a number, or (ONNX's and SINGA's form) an array or Tensor holding
    one integer."""
    if hasattr(depth, "to_numpy"):
        depth = depth.to_numpy()
    if hasattr(depth, "shape"):
        if int(np.prod(depth.shape)) != 1 or np.asarray(depth).dtype.kind not in "iuf":
            raise ValueError(f"onehot: depth must be an int or hold one number, got an array "
                             f"of shape {tuple(depth.shape)}")
        depth = np.asarray(depth).reshape(())[()]
    if isinstance(depth, bool) or int(depth) != depth or int(depth) < 1:
        raise ValueError(f"onehot: depth must be a positive integer, got {depth!r}")
    return int(depth)


def onehot(axis: int, indices: Tensor, depth: Any, values: Sequence[float] = (0.0, 1.0)) -> Tensor:
    """SINGA/ONNX OneHot: a new axis of length ``depth`` inserted at ``axis`` holding
    ``values[1]`` at each index and ``values[0]`` elsewhere. Indices may be negative (counted
    from ``depth``, as ONNX allows); outside [-depth, depth) is a ValueError. ``depth`` is an
    int or, as in ONNX and SINGA, an array or Tensor holding one.

    >>> import numpy as np
    >>> from autograd import Tensor
    >>> onehot(-1, Tensor(data=np.array([0, 2])), np.array([3])).to_numpy()
    array([[1., 0., 0.],
           [0., 0., 1.]], dtype=float32)
    """
    if not hasattr(indices, "creator"):
        raise TypeError(f"onehot: indices must be a Tensor (wrap an array with "
                        f"Tensor(data=...)), got {type(indices).__name__}")
    with indices.device.activate():       # the arrays made here belong on the indices' GPU
        return _onehot(axis, indices, depth, values)


@replayable       # computed on the arrays, outside the graph; graph mode replays it
def _onehot(axis, indices, depth, values):
    data, xp = indices.data, indices.device.xp
    if data.dtype.kind not in "iu" and not (data.dtype.kind == "f" and
                                            bool((data == xp.round(data)).all())):
        raise TypeError(f"onehot: indices must be integers, got {data.dtype}")
    data = data.astype(np.int64)
    depth = _depth(depth)
    if data.size and (int(data.min()) < -depth or int(data.max()) >= depth):
        raise ValueError(f"onehot: indices must lie in [{-depth}, {depth}), got values from "
                         f"{int(data.min())} to {int(data.max())}")
    data = xp.where(data < 0, data + depth, data)
    off, on = (float(v) for v in (values.to_numpy().ravel() if hasattr(values, "creator")
                                  else values))
    result = xp.where(data[..., None] == xp.arange(depth), on, off).astype(np.float32)
    ndim = result.ndim
    if not -ndim <= axis < ndim:
        raise ValueError(f"onehot: axis {axis} is out of range for a {ndim}-d result")
    return constant(xp.moveaxis(result, -1, axis % ndim), indices)


def nonzero(x: Tensor) -> Tensor:
    """The indices of x's nonzero elements as an int64 Tensor of shape (x.ndim, count)
    (ONNX NonZero)."""
    if x.ndim == 0:
        raise ValueError("nonzero: expected a tensor of at least 1 dimension, got a scalar")
    not_replayable("nonzero's result has as many columns as x has nonzero values")
    with x.device.activate():
        return constant(x.device.xp.stack(x.data.nonzero()).astype(np.int64), x)
