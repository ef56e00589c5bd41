"""Reductions over axes (sum, mean, max, min) and SINGA's n-ary elementwise forms.

One tensor reduces over ``axis`` (None = all, an int, or a tuple) with ``keepdims``; several
tensors combine elementwise with broadcasting (SINGA's Sum/Mean/Max/Min, like ``torch.max(a, b)``).

>>> from autograd import Tensor
>>> x = Tensor(data=[[1.0, 5.0], [3.0, 2.0]])
>>> max(x, axis=1).to_numpy(), max(x, Tensor(data=[2.0, 2.0])).to_numpy().tolist()
(array([5., 3.], dtype=float32), [[2.0, 5.0], [3.0, 2.0]])
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence, Union

import numpy as np

from ..backend import kernels_for
from ..device import get_array_module
from .base import Operation
from .utils import normalize_axes, unbroadcast
from .nary import ElementwiseMean
from .elementwise import _operands
from .._types import Axes, Operand

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = ["sum", "mean", "max", "min", "reduce_sum", "reduce_mean"]


def _expand(dy, shape, axes, keepdims):
    """dy of a reduction, reshaped so that it broadcasts against the input of ``shape``."""
    if keepdims or not axes:
        return dy
    kept = [1 if i in axes else n for i, n in enumerate(shape)]
    return dy.reshape(kept)


class Sum(Operation):
    """y = sum of x over ``axes``.   dx = dy broadcast back to x's shape"""

    def __init__(self, axes, keepdims):
        self.axes, self.keepdims = axes, keepdims

    def forward(self, x):
        self.shape = x.shape
        return get_array_module(x).asarray(x.sum(axis=self.axes, keepdims=self.keepdims))

    def backward(self, dy):
        xp = get_array_module(dy)
        return xp.broadcast_to(_expand(dy, self.shape, self.axes, self.keepdims), self.shape)


class Mean(Operation):
    """y = mean of x over ``axes``.   dx = dy / count broadcast back to x's shape

    (SINGA's ReduceMean backward leaves out the 1 / count; here it is applied.)"""

    def __init__(self, axes, keepdims):
        self.axes, self.keepdims = axes, keepdims

    def forward(self, x):
        self.shape = x.shape
        count = 1
        for a in self.axes:
            count *= x.shape[a]
        self.count = count
        if x.ndim == 4 and tuple(self.axes) == (2, 3):      # a global average pooling
            y = kernels_for(x).spatial_mean(x)
            return y if self.keepdims else y.reshape(x.shape[:2])
        return get_array_module(x).asarray(x.mean(axis=self.axes, keepdims=self.keepdims))

    def backward(self, dy):
        xp = get_array_module(dy)
        dy = _expand(dy, self.shape, self.axes, self.keepdims) / dy.dtype.type(self.count)
        return xp.broadcast_to(dy, self.shape)


class Extremum(Operation):
    """y = max (or min) of x over ``axes``.   dx = dy at the arg-extremum; k tied elements
    each take dy / k"""

    def __init__(self, axes, keepdims, largest):
        self.axes, self.keepdims, self.largest = axes, keepdims, largest

    def forward(self, x):
        reduce = x.max if self.largest else x.min
        y = reduce(axis=self.axes, keepdims=True)
        self.save_for_backward(x, y)
        if not self.keepdims:
            y = y.reshape([n for i, n in enumerate(x.shape) if i not in self.axes])
        return get_array_module(x).asarray(y)

    def backward(self, dy):
        x, y = self.saved
        hits = x == y
        count = hits.sum(axis=self.axes, keepdims=True).astype(dy.dtype)
        dy = _expand(dy, x.shape, self.axes, self.keepdims)
        return hits * (dy / count)


class ElementwiseSum(Operation):
    """y = x1 + x2 + ... (broadcast).   dxi = dy summed to xi's shape"""

    def forward(self, *xs):
        self.shapes = [x.shape for x in xs]
        y = xs[0] + xs[1]
        for x in xs[2:]:
            y = y + x             # not +=: a later operand may broadcast y to a larger shape
        return y

    def backward(self, dy):
        return tuple(unbroadcast(dy, s) if need else None
                     for s, need in zip(self.shapes, self.needs_input_grad))


class ElementwiseExtremum(Operation):
    """y = max (or min) of x1, x2, ... elementwise (broadcast).   dxi = dy where xi attains y;
    k tied inputs each take dy / k

    (SINGA's Max/Min backward returns the 0/1 masks without multiplying by dy, and gives a
    tie to the first input; here dy is honoured and ties are shared.)"""

    def __init__(self, largest):
        self.largest = largest

    def forward(self, *xs):
        xp = get_array_module(xs[0])
        combine = xp.maximum if self.largest else xp.minimum
        y = combine(xs[0], xs[1])
        for x in xs[2:]:
            y = combine(y, x)
        self.save_for_backward(y, *xs)
        return y

    def backward(self, dy):
        y, *xs = self.saved
        hits = [x == y for x in xs]
        count = hits[0].astype(dy.dtype)
        for h in hits[1:]:
            count = count + h
        share = dy / count
        return tuple(unbroadcast(share * h, x.shape) if need else None
                     for x, h, need in zip(xs, hits, self.needs_input_grad))


def _combine(name, xs):
    """Several operands as Tensors of one dtype whose shapes broadcast together."""
    tensors = [x for x in xs if hasattr(x, "creator")]
    if not tensors:
        raise TypeError(f"{name}: expected Tensors, got {[type(x).__name__ for x in xs]}")
    # The others are converted to match `first`, so a floating one sets the dtype for all.
    first = next((t for t in tensors if t.dtype.kind == "f"), tensors[0])
    tensors = [x if x is first else _operands(x, first, name)[0] for x in xs]
    try:
        np.broadcast_shapes(*[t.shape for t in tensors])
    except ValueError:
        raise ValueError(f"{name}: cannot broadcast shapes "
                         f"{', '.join(str(tuple(t.shape)) for t in tensors)}") from None
    return tensors


def sum(*xs: Operand, axis: Axes = None, keepdims: bool = False) -> Tensor:
    """Sum of one tensor over ``axis`` (all axes by default), or of several tensors elementwise.

    >>> from autograd import Tensor
    >>> sum(Tensor(data=[[1.0, 2.0], [3.0, 4.0]]), axis=0).to_numpy()
    array([4., 6.], dtype=float32)
    """
    if len(xs) == 1:
        x = xs[0]
        return Sum(normalize_axes(axis, x.ndim, "sum"), keepdims)(x)
    _no_axis("sum", xs, axis)
    return ElementwiseSum()(*_combine("sum", xs))


def mean(*xs: Operand, axis: Axes = None, keepdims: bool = False) -> Tensor:
    """Mean of one tensor over ``axis`` (all axes by default), or of several elementwise.

    >>> from autograd import Tensor
    >>> mean(Tensor(data=[1.0, 2.0]), Tensor(data=[[3.0, 6.0]])).to_numpy()
    array([[2., 4.]], dtype=float32)
    """
    if len(xs) == 1:
        x = xs[0]
        return Mean(normalize_axes(axis, x.ndim, "mean"), keepdims)(x)
    _no_axis("mean", xs, axis)
    return ElementwiseMean()(*_combine("mean", xs))     # one op with n inputs, as SINGA's


def max(*xs: Operand, axis: Axes = None, keepdims: bool = False) -> Tensor:
    """Largest element of one tensor over ``axis``, or of several tensors elementwise.
    Ties share the gradient equally."""
    return _extremum("max", xs, axis, keepdims, largest=True)


def min(*xs: Operand, axis: Axes = None, keepdims: bool = False) -> Tensor:
    """Smallest element of one tensor over ``axis``, or of several tensors elementwise.
    Ties share the gradient equally.

    >>> from autograd import Tensor
    >>> min(Tensor(data=[[1.0, 5.0], [3.0, 2.0]]), axis=-1, keepdims=True).to_numpy()
    array([[1.],
           [2.]], dtype=float32)
    """
    return _extremum("min", xs, axis, keepdims, largest=False)


def _extremum(name, xs, axis, keepdims, largest):
    if len(xs) == 1:
        x = xs[0]
        if x.size == 0:
            raise ValueError(f"{name}: cannot reduce an empty tensor of shape {x.shape}")
        return Extremum(normalize_axes(axis, x.ndim, name), keepdims, largest)(x)
    _no_axis(name, xs, axis)
    return ElementwiseExtremum(largest)(*_combine(name, xs))


def _no_axis(name, xs, axis):
    if not xs:
        raise TypeError(f"{name}: expected at least one tensor")
    if axis is not None:
        raise ValueError(f"{name}: axis applies to one tensor; got {len(xs)} tensors and "
                         f"axis={axis}")


def reduce_sum(x: Tensor, axes: Optional[Sequence[int]] = None,
               keepdims: Union[bool, int] = 1) -> Tensor:
    """SINGA/ONNX ReduceSum: sum over ``axes`` (all by default), keeping them unless
    ``keepdims=0``.

    >>> from autograd import Tensor
    >>> reduce_sum(Tensor(shape=(2, 3))).shape, reduce_sum(Tensor(shape=(2, 3)), [1], 0).shape
    ((1, 1), (2,))
    """
    return sum(x, axis=axes, keepdims=bool(keepdims))


def reduce_mean(x: Tensor, axes: Optional[Sequence[int]] = None,
                keepdims: Union[bool, int] = 1) -> Tensor:
    """SINGA/ONNX ReduceMean: mean over ``axes`` (all by default), keeping them unless
    ``keepdims=0``."""
    return mean(x, axis=axes, keepdims=bool(keepdims))
