"""Joining and cutting tensors along an axis: cat (SINGA's name; also ``concat``) and split,
each the other's gradient. The other shape operations live in ``shape.py``.

>>> import numpy as np
>>> from autograd import Tensor
>>> x = Tensor(data=np.arange(6.0).reshape(2, 3))
>>> cat([x, x], axis=1).shape, [p.shape for p in split(x, 1, [1, 2])]
((2, 6), [(2, 1), (2, 2)])
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence

import numpy as np

from ..device import get_array_module
from .base import Operation
from .utils import normalize_axis, axis_slice
from .._types import IntOrTuple

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = ["cat", "concat", "split"]


class Concat(Operation):
    """y = the inputs joined along ``axis``.   dxi = the slice of dy that xi fills"""

    def __init__(self, axis):
        self.axis = axis

    def forward(self, *xs):
        self.sizes = [x.shape[self.axis] for x in xs]
        return get_array_module(xs[0]).concatenate(xs, axis=self.axis)

    def backward(self, dy):
        grads, start = [], 0
        for size, need in zip(self.sizes, self.needs_input_grad):
            grads.append(dy[axis_slice(self.axis, start, start + size)] if need else None)
            start += size
        return tuple(grads)


def cat(xs: Sequence[Tensor], axis: int = 0) -> Tensor:
    """SINGA's ``cat(xs, axis=0)``: the tensors in ``xs`` joined along ``axis``; every other
    axis must match. Also called ``concat``.

    >>> from autograd import Tensor
    >>> cat([Tensor(shape=(2, 3)), Tensor(shape=(2, 4))], axis=0)
    Traceback (most recent call last):
    ...
    ValueError: cat: cannot join (2, 3) and (2, 4) along axis 0
    """
    xs = list(xs)
    if not xs:
        raise ValueError("cat: expected at least one tensor, got none")
    if not all(hasattr(t, "creator") for t in xs):
        raise TypeError(f"cat: expected Tensors, got ({', '.join(type(t).__name__ for t in xs)})")
    first = xs[0]
    ndim = first.ndim
    if ndim == 0:
        raise ValueError("cat: cannot join 0-d tensors; unsqueeze them first")
    axis = normalize_axis(axis, ndim, "cat")
    for t in xs[1:]:
        if t.ndim != ndim or any(a != b for i, (a, b) in enumerate(zip(first.shape, t.shape))
                                 if i != axis):
            raise ValueError(f"cat: cannot join {tuple(first.shape)} and {tuple(t.shape)} "
                             f"along axis {axis}")
        if t.dtype != first.dtype:
            raise TypeError(f"cat: cannot join {first.dtype} and {t.dtype} tensors; cast one "
                            "with as_type()")
    return Concat(axis)(*xs)


concat = cat


class Split(Operation):
    """y1, y2, ... = consecutive pieces of x along ``axis`` with the given sizes.
    dx = dy1, dy2, ... joined along axis (zeros for a piece nobody used)"""

    def __init__(self, axis, sizes):
        self.axis, self.sizes = axis, sizes

    def forward(self, x):
        pieces, start = [], 0
        for size in self.sizes:
            pieces.append(x[axis_slice(self.axis, start, start + size)])
            start += size
        return tuple(pieces)

    def backward(self, *dys):
        joined = _joined(dys, self.axis)
        if joined is not None:
            return joined
        return get_array_module(dys[0]).concatenate(dys, axis=self.axis)


def _joined(parts, axis):
    """The array of which ``parts`` are the consecutive pieces along ``axis``, where they are
    views of one buffer laid side by side (the compiled attention writes the gradients of a
    packed q/k/v projection's heads so): their concatenation without a copy. None otherwise, or
    where the joined view would not be contiguous (and so might overlap itself)."""
    first = next((part for part in parts if getattr(part, "size", 0)), None)
    if type(first) is not np.ndarray or first.base is None:
        return None                       # not NumPy, all empty, or not a view of a buffer
    address = first.__array_interface__["data"][0]
    for part in parts:
        if (type(part) is not np.ndarray or part.dtype != first.dtype
                or part.shape[:axis] != first.shape[:axis]
                or part.shape[axis + 1:] != first.shape[axis + 1:]):
            return None
        if part.size == 0:
            continue                      # an empty piece: nothing of it to place
        if (part.base is not first.base or part.strides != first.strides
                or part.__array_interface__["data"][0] != address):
            return None
        address += part.shape[axis] * first.strides[axis]
    shape = list(first.shape)
    shape[axis] = sum(part.shape[axis] for part in parts)
    base = first.base
    if (type(base) is not np.ndarray or not base.flags.c_contiguous
            or not base.flags.writeable):
        return None
    # a view of the buffer itself (as_strided took 40 us); NumPy checks that it fits in it
    offset = first.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    joined = np.ndarray(shape, first.dtype, buffer=base, offset=offset, strides=first.strides)
    if not (joined.flags.c_contiguous or joined.flags.f_contiguous):
        return None
    return joined


def split(x: Tensor, axis: int, parts: Optional[IntOrTuple],
          num_output: Optional[int] = None) -> tuple[Tensor, ...]:
    """SINGA/ONNX Split: x cut along ``axis`` into pieces of the sizes in ``parts`` (a list), or
    into ``parts`` equal pieces when it is an int; returns a tuple of Tensors. SINGA's
    ``split(x, axis, None, num_output=n)`` also gives n equal pieces.

    >>> from autograd import Tensor
    >>> [p.shape for p in split(Tensor(shape=(5, 2)), 0, [2, 3])]
    [(2, 2), (3, 2)]
    """
    if x.ndim == 0:
        raise ValueError("split: cannot split a 0-d tensor")
    axis = normalize_axis(axis, x.ndim, "split")
    length = x.shape[axis]
    if parts is None:
        parts = num_output
    if isinstance(parts, (int, np.integer)):
        if parts <= 0 or length % parts:
            raise ValueError(f"split: cannot split axis {axis} of length {length} (shape "
                             f"{tuple(x.shape)}) into {parts} equal parts")
        sizes = [length // int(parts)] * int(parts)
    elif parts is None:
        raise ValueError("split: give parts (a list of sizes or a count)")
    else:
        sizes = [int(p) for p in parts]
        if not sizes or any(p < 0 for p in sizes) or sum(sizes) != length:
            raise ValueError(f"split: sizes {sizes} must be non-negative and sum to the length "
                             f"{length} of axis {axis} (shape {tuple(x.shape)})")
    return Split(axis, sizes)(x)
