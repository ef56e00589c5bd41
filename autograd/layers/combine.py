"""Layers that combine or reshape tensors, as SINGA has them: Add, Cat, Reshape.

They wrap ``autograd.add``, ``autograd.cat`` and ``autograd.reshape`` so that a SINGA model can
call them as layers, and check their inputs first with errors that name the layer.

>>> import autograd
>>> a, b = autograd.Tensor(shape=(2, 3)), autograd.Tensor(shape=(2, 5))
>>> autograd.Cat(axis=1)([a, b]).shape, autograd.Add()(a, autograd.Tensor(shape=(3,))).shape
((2, 8), (2, 3))
>>> autograd.Reshape()(autograd.Tensor(shape=(2, 3, 4)), (0, -1)).shape    # 0 copies a dim
(2, 12)
"""
from __future__ import annotations

from typing import Optional, Sequence, TYPE_CHECKING

import numpy as np

from ..operations import elementwise as elementwise_ops
from ..operations import joining, shape as shape_ops
from .base import AxisLayer, Layer, shape_text
from .._types import Operand

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = ["Add", "Cat", "Reshape"]


class Add(Layer):
    """SINGA's Add layer: ``Add()(a, b)`` is ``a + b`` with NumPy broadcasting
    (``autograd.add``)."""

    def output_shape(self, shape_a, shape_b):
        """The broadcast shape of the two inputs' shapes."""
        try:
            return tuple(np.broadcast_shapes(tuple(shape_a), tuple(shape_b)))
        except ValueError:
            raise ValueError(f"{self.describe()}: expected inputs that broadcast together, got "
                             f"{shape_text(shape_a)} and {shape_text(shape_b)}") from None

    def forward(self, a: Operand, b: Operand) -> Tensor:
        if hasattr(a, "shape") and hasattr(b, "shape"):
            self.output_shape(a.shape, b.shape)
        return elementwise_ops.add(a, b)


class Cat(AxisLayer):
    """SINGA's Cat layer: ``Cat(axis)([x1, x2, ...])`` joins a list of tensors along ``axis``
    (``autograd.cat``); the other axes must match."""

    def __init__(self, axis: int = 0) -> None:
        super().__init__(axis)

    def output_shape(self, input_shapes):
        """The joined shape for a list of input shapes."""
        shapes = [tuple(s) for s in input_shapes]
        if not shapes:
            raise ValueError(f"{self.describe()}: expected a list of at least one tensor, "
                             "got none")
        first = shapes[0]
        ndim = len(first)
        if not -ndim <= self.axis < ndim:
            raise ValueError(f"{self.describe()}: axis {self.axis} is out of range for inputs "
                             f"of shape {shape_text(first)}")
        axis = self.axis % ndim
        for other in shapes[1:]:
            if len(other) != ndim or any(a != b for i, (a, b) in enumerate(zip(first, other))
                                         if i != axis):
                raise ValueError(f"{self.describe()}: expected inputs whose shapes match except "
                                 f"along axis {axis}, got {shape_text(first)} and "
                                 f"{shape_text(other)}")
        joined = None if any(s[axis] is None for s in shapes) else sum(s[axis] for s in shapes)
        return first[:axis] + (joined,) + first[axis + 1:]

    def forward(self, xs: Sequence[Tensor]) -> Tensor:
        if hasattr(xs, "creator"):
            raise TypeError(f"{self.describe()}: expected a list of tensors, got one Tensor "
                            "(write Cat()([a, b]))")
        xs = list(xs)
        self.output_shape([x.shape for x in xs])
        return joining.cat(xs, self.axis)


class Reshape(Layer):
    """SINGA's Reshape layer: ``Reshape()(x, shape)``, or ``Reshape(shape)(x)`` with the shape
    fixed at construction (a shape given in the call wins). As in SINGA (ONNX Reshape), a 0
    copies the input's dimension at that position and one -1 is inferred."""

    def __init__(self, shape: Optional[Sequence[int]] = None) -> None:
        super().__init__()
        self.shape = None if shape is None else self._checked(shape)

    def _checked(self, shape):
        shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
        if not all(isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n >= -1
                   for n in shape) or list(shape).count(-1) > 1:
            raise ValueError(f"Reshape: shape must be ints >= 0 with at most one -1, got "
                             f"{shape}")
        return tuple(int(n) for n in shape)

    def extra_repr(self):
        return "" if self.shape is None else f"shape={self.shape}"

    def output_shape(self, input_shape, shape=None):
        """The target shape with its 0s and -1 resolved against ``input_shape``."""
        source = tuple(input_shape)
        shape = self.shape if shape is None else self._checked(shape)
        if shape is None:
            raise ValueError(f"{self.describe()}: no shape given; call Reshape()(x, shape) or "
                             "build Reshape(shape)")
        if any(n == 0 for n in shape[len(source):]):
            raise ValueError(f"{self.describe()}: a 0 copies the input's dimension, but "
                             f"{shape} has a 0 beyond the {len(source)} dimensions of "
                             f"{shape_text(source)}")
        target = [source[i] if n == 0 else n for i, n in enumerate(shape)]
        if None in source:                  # an unknown batch: -1 stays unknown
            return tuple(None if n == -1 else n for n in target)
        size = int(np.prod(source))
        known = int(np.prod([n for n in target if n != -1]))
        if (-1 in target and (known == 0 or size % known)) or \
                (-1 not in target and known != size):
            raise ValueError(f"{self.describe()}: cannot reshape {shape_text(source)} "
                             f"({size} elements) into {shape}")
        return tuple(size // known if n == -1 else n for n in target)

    def forward(self, x: Tensor, shape: Optional[Sequence[int]] = None) -> Tensor:
        return shape_ops.reshape(x, self.output_shape(x.shape, shape))
