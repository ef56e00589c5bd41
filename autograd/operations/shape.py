"""Shape operations: they move, copy or drop elements without arithmetic (reshape, transpose,
flatten, squeeze, unsqueeze, expand, tile). Joining and cutting tensors (cat, split) lives in
``joining.py``, padding in ``padding.py``, indexing (getitem, gather, where) in ``indexing.py``.

>>> import numpy as np
>>> from autograd import Tensor
>>> x = Tensor(data=np.arange(6.0).reshape(2, 3))
>>> reshape(x, (3, -1)).shape, transpose(x).shape, tile(x, 2).shape
((3, 2), (3, 2), (2, 6))
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence

import functools
import math

import numpy as np

from ..device import get_array_module
from .base import Operation
from .indexing import getitem  # noqa: F401  (Tensor.__getitem__ finds it here)
from .utils import normalize_axes, unbroadcast
from .._types import Axes, IntOrTuple, Shape

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = ["reshape", "transpose", "flatten", "squeeze", "unsqueeze", "expand", "broadcast_to",
           "tile"]


class Reshape(Operation):
    """y = x viewed with a new shape (same elements, same order).   dx = dy reshaped back"""

    def __init__(self, shape):
        self.shape = shape

    def forward(self, x):
        self.input_shape = x.shape
        return x.reshape(self.shape)

    def backward(self, dy):
        return dy.reshape(self.input_shape)


def reshape(x: Tensor, shape: Shape) -> Tensor:
    """x with a new shape; one entry may be -1 (inferred), and a 0 copies the input's size at
    that position (SINGA's and ONNX's Reshape; NumPy would make an empty axis).

    >>> from autograd import Tensor
    >>> reshape(Tensor(shape=(2, 3, 4)), (0, -1)).shape
    (2, 12)
    >>> reshape(Tensor(shape=(2, 3)), (4, 2))
    Traceback (most recent call last):
    ...
    ValueError: reshape: cannot reshape (2, 3) (6 elements) into (4, 2)
    """
    try:
        target = _targets.get((x.shape, shape))
    except TypeError:                   # a list of sizes: checked every call
        return Reshape(_target_shape(x, shape))(x)
    if target is None:
        target = _target_shape(x, shape)
        if len(_targets) < _MOST_TARGETS:
            _targets[(x.shape, shape)] = target
    return Reshape(target)(x)


_targets: dict = {}     # (input shape, sizes asked) -> the checked target: the checks took
_MOST_TARGETS = 1024    # 1.5 of a batch-1 CNN's 2.3 us reshape


def _target_shape(x, shape):
    """The shape reshape gives x for ``shape`` (a 0 resolved), checked."""
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(int(n) for n in shape)
    if 0 in shape:
        if any(n == 0 and i >= x.ndim for i, n in enumerate(shape)):
            raise ValueError(f"reshape: a 0 in {shape} copies the input's size at that position, "
                             f"but the input {tuple(x.shape)} has only {x.ndim} dimensions")
        shape = tuple(x.shape[i] if n == 0 else n for i, n in enumerate(shape))
    known = 1
    for n in shape:
        if n != -1:
            known *= n
    unknown = shape.count(-1)
    size = x.size
    if unknown > 1 or any(n < -1 for n in shape) or (
            known != size if not unknown else (known == 0 or size % known)):
        raise ValueError(f"reshape: cannot reshape {tuple(x.shape)} ({size} elements) into "
                         f"{shape}")
    return shape


def flatten(x: Tensor, axis: int = 1) -> Tensor:
    """SINGA/ONNX Flatten: a 2-D tensor (product of shape[:axis], product of shape[axis:]);
    ``axis`` in [-ndim, ndim].

    >>> from autograd import Tensor
    >>> flatten(Tensor(shape=(2, 3, 4))).shape, flatten(Tensor(shape=(2, 3, 4)), 0).shape
    ((2, 12), (1, 24))
    """
    ndim = x.ndim
    if not isinstance(axis, (int, np.integer)) or not -ndim <= axis <= ndim:
        raise ValueError(f"flatten: axis {axis} is out of range [{-ndim}, {ndim}] for shape "
                         f"{tuple(x.shape)}")
    axis = int(axis) + ndim if axis < 0 else int(axis)
    return Reshape((math.prod(x.shape[:axis]), math.prod(x.shape[axis:])))(x)


def squeeze(x: Tensor, axis: Axes = None) -> Tensor:
    """x without the size-1 axes listed in ``axis`` (an int or a list); all of them when
    ``axis`` is None or empty (SINGA's default ``axis=[]``).

    >>> from autograd import Tensor
    >>> squeeze(Tensor(shape=(1, 3, 1))).shape, squeeze(Tensor(shape=(1, 3, 1)), [-1]).shape
    ((3,), (1, 3))
    """
    shape = x.shape
    if axis is None or (not isinstance(axis, (int, np.integer)) and len(axis) == 0):
        axes = tuple(i for i, n in enumerate(shape) if n == 1)
    else:
        if x.ndim == 0:
            raise ValueError(f"squeeze: a 0-d tensor has no axis {axis}")
        axes = normalize_axes(axis, x.ndim, "squeeze")
        for a in axes:
            if shape[a] != 1:
                raise ValueError(f"squeeze: axis {a} of shape {tuple(shape)} has size "
                                 f"{shape[a]}, not 1")
    return Reshape(tuple(n for i, n in enumerate(shape) if i not in axes))(x)


def unsqueeze(x: Tensor, axis: IntOrTuple = -1) -> Tensor:
    """x with size-1 axes inserted at ``axis`` (an int or a list), positions in the result as in
    ONNX: ``unsqueeze(x, [0, 3])`` of a (2, 3) tensor is (1, 2, 3, 1); the default (SINGA's
    ``axis=-1``) appends one.

    >>> from autograd import Tensor
    >>> unsqueeze(Tensor(shape=(2, 3)), [0, -1]).shape
    (1, 2, 3, 1)
    """
    count = 1 if isinstance(axis, (int, np.integer)) else len(axis)
    axes = normalize_axes(axis, x.ndim + count, "unsqueeze")
    dims = iter(x.shape)
    return Reshape(tuple(1 if i in axes else next(dims) for i in range(x.ndim + count)))(x)


class Transpose(Operation):
    """y = x with axes permuted by ``axes``.   dx = dy permuted by the inverse permutation"""

    def __init__(self, axes):
        self.axes = tuple(axes)

    def forward(self, x):
        return x.transpose(self.axes)

    def backward(self, dy):
        return dy.transpose(_inverse_permutation(self.axes))


@functools.lru_cache(maxsize=256)
def _inverse_permutation(axes):
    """The permutation that undoes ``axes`` (np.argsort's, cached: it took 11 us of a GPT head
    transpose's 12)."""
    return tuple(int(a) for a in np.argsort(axes))


def transpose(x: Tensor, axes: Optional[Sequence[int]] = None) -> Tensor:
    """x with its axes permuted; reversed when ``axes`` is None (SINGA's ``transpose(x, axes)``).

    >>> from autograd import Tensor
    >>> transpose(Tensor(shape=(2, 3, 4)), (1, -1, 0)).shape
    (3, 4, 2)
    """
    ndim = x.ndim
    if axes is None:
        axes = tuple(range(ndim - 1, -1, -1))
    else:
        axes = tuple(int(a) % ndim if -ndim <= a < ndim else a for a in axes)
        if sorted(axes) != list(range(ndim)):
            raise ValueError(f"transpose: axes {tuple(axes)} are not a permutation of the "
                             f"{ndim} axes of shape {tuple(x.shape)}")
    return Transpose(axes)(x)


class Expand(Operation):
    """y = x broadcast to ``shape`` (a read-only view).   dx = dy summed over the broadcast
    axes"""

    def __init__(self, shape):
        self.shape = shape

    def forward(self, x):
        self.input_shape = x.shape
        return get_array_module(x).broadcast_to(x, self.shape)

    def backward(self, dy):
        return unbroadcast(dy, self.input_shape)


def expand(x: Tensor, shape: Shape) -> Tensor:
    """ONNX/SINGA Expand: x broadcast against ``shape`` in both directions, so the result has
    shape ``np.broadcast_shapes(x.shape, shape)`` (a 1 in ``shape`` keeps x's size).

    >>> from autograd import Tensor
    >>> expand(Tensor(shape=(3, 1)), (2, 1, 4)).shape
    (2, 3, 4)
    """
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(int(n) for n in shape)
    try:
        result = np.broadcast_shapes(x.shape, shape)
    except ValueError:
        raise ValueError(f"expand: cannot broadcast {tuple(x.shape)} to {shape}") from None
    return Expand(result)(x)


def broadcast_to(x: Tensor, shape: Shape) -> Tensor:
    """NumPy's ``broadcast_to``: x broadcast to exactly ``shape``.

    >>> from autograd import Tensor
    >>> broadcast_to(Tensor(shape=(3, 1)), (2, 3, 4)).shape
    (2, 3, 4)
    """
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(int(n) for n in shape)
    try:
        fits = np.broadcast_shapes(x.shape, shape) == shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"broadcast_to: cannot broadcast {tuple(x.shape)} to {shape}")
    return Expand(shape)(x)


class Tile(Operation):
    """y = x repeated ``repeats[i]`` times along axis i (x first reshaped to ``shape``, which
    has as many axes as repeats).   dx = dy summed over the copies"""

    def __init__(self, shape, repeats):
        self.shape, self.repeats = shape, repeats

    def forward(self, x):
        self.input_shape = x.shape
        return get_array_module(x).tile(x.reshape(self.shape), self.repeats)

    def backward(self, dy):
        split = []
        for copies, n in zip(self.repeats, self.shape):
            split += [copies, n]
        copy_axes = tuple(range(0, len(split), 2))
        return dy.reshape(split).sum(axis=copy_axes).reshape(self.input_shape)


def tile(x: Tensor, repeats: IntOrTuple) -> Tensor:
    """x repeated along each axis as ``np.tile``: more repeats than axes add leading axes,
    fewer repeat the trailing axes.

    >>> from autograd import Tensor
    >>> tile(Tensor(shape=(2, 3)), [2, 1, 2]).shape, tile(Tensor(shape=(2, 3)), 2).shape
    ((2, 2, 6), (2, 6))
    """
    repeats = ((repeats,) if isinstance(repeats, (int, np.integer))
               else tuple(int(r) for r in repeats))
    if any(r < 0 for r in repeats):
        raise ValueError(f"tile: repeats must be non-negative, got {repeats}")
    ndim = max(x.ndim, len(repeats))
    shape = (1,) * (ndim - x.ndim) + tuple(x.shape)
    return Tile(shape, (1,) * (ndim - len(repeats)) + repeats)(x)
