"""pad: constant, reflect and edge padding with SINGA's (ONNX's) ``pads`` layout.

>>> import numpy as np
>>> from autograd import Tensor
>>> pad(Tensor(data=np.ones((1, 2))), "constant", [0, 1, 0, 1]).to_numpy()
array([[0., 1., 1., 0.]])
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence

from ..device import get_array_module
from .base import Operation
from .utils import axis_slice

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = ["pad"]


class Pad(Operation):
    """y = x with ``widths[i] = (begin, end)`` entries added around axis i: a constant, the
    mirror image without the edge ("reflect"; a pad equal to the axis length is a copy of the
    whole axis, SINGA's rule) or copies of the edge ("edge").
    dx = the middle of dy, plus (reflect, edge) the pad entries added back to their sources"""

    def __init__(self, mode, widths, constant):
        self.mode, self.widths, self.constant = mode, widths, constant

    def forward(self, x):
        self.input_shape = x.shape
        xp = get_array_module(x)
        if not self.widths:                   # a 0-d x, which xp.pad refuses
            return x.copy()
        if self.mode == "constant":
            return xp.pad(x, self.widths, mode="constant", constant_values=self.constant)
        if self.mode == "reflect" and _copies_an_axis(self.widths, x.shape):
            return self._reflect_by_axis(xp, x)
        return xp.pad(x, self.widths, mode=self.mode)

    def _reflect_by_axis(self, xp, x):
        """Reflect padding one axis at a time (as xp.pad does), a side whose pad equals the
        axis length getting a copy of the axis instead of its mirror image."""
        for axis, ((begin, end), n) in enumerate(zip(self.widths, self.input_shape)):
            mirrored = [begin if begin < n else 0, end if end < n else 0]
            if mirrored != [0, 0]:
                widths = [(0, 0)] * x.ndim
                widths[axis] = tuple(mirrored)
                x = xp.pad(x, widths, mode="reflect")
            whole = x[axis_slice(axis, mirrored[0], mirrored[0] + n)]
            parts = [whole] if begin == n else []
            parts.append(x)
            if end == n:
                parts.append(whole)
            if len(parts) > 1:
                x = xp.concatenate(parts, axis=axis)
        return x

    def backward(self, dy):
        xp = get_array_module(dy)
        grad = dy
        for axis, ((begin, end), n) in enumerate(zip(self.widths, self.input_shape)):
            if not begin and not end:
                continue
            middle = grad[axis_slice(axis, begin, begin + n)]
            if self.mode != "constant":
                middle = middle.copy()        # pad entries are added into it below
                before = grad[axis_slice(axis, 0, begin)]
                after = grad[axis_slice(axis, begin + n, None)]
                if self.mode == "edge":
                    middle[axis_slice(axis, 0, 1)] += before.sum(axis=axis, keepdims=True)
                    middle[axis_slice(axis, n - 1, n)] += after.sum(axis=axis, keepdims=True)
                else:                         # reflect: entry begin-j came from entry j
                    if begin == n:            # a copy of the whole axis
                        middle += before
                    else:
                        middle[axis_slice(axis, 1, begin + 1)] += xp.flip(before, axis)
                    if end == n:
                        middle += after
                    else:
                        middle[axis_slice(axis, n - 1 - end, n - 1)] += xp.flip(after, axis)
            grad = middle
        return grad


def _copies_an_axis(widths, shape):
    """Whether a reflect pad equals its axis's length (SINGA then copies the whole axis)."""
    return any(n and n in (begin, end) for (begin, end), n in zip(widths, shape))


def pad(x: Tensor, mode: str = "constant", pads: Optional[Sequence[int]] = None,
        constant: float = 0.0) -> Tensor:
    """SINGA/ONNX Pad: ``pads`` = [x1_begin, x2_begin, ..., x1_end, x2_end, ...] entries added
    before and after each axis; ``mode`` "constant" (filled with ``constant``), "reflect"
    (mirrored, edge not repeated) or "edge". A reflect pad may be as long as its axis: as in
    SINGA, a pad equal to the axis length adds a copy of the whole axis (NumPy would reflect
    again from the far end); longer pads are an error.

    >>> from autograd import Tensor
    >>> pad(Tensor(data=[1.0, 2.0, 3.0]), "reflect", [2, 1]).to_numpy()
    array([3., 2., 1., 2., 3., 2.], dtype=float32)
    >>> pad(Tensor(data=[1.0, 2.0, 3.0]), "reflect", [3, 0]).to_numpy()
    array([1., 2., 3., 1., 2., 3.], dtype=float32)
    """
    if mode not in ("constant", "reflect", "edge"):
        raise ValueError(f"pad: mode must be 'constant', 'reflect' or 'edge', got {mode!r}")
    ndim, shape = x.ndim, tuple(x.shape)
    if pads is None or len(pads) != 2 * ndim:
        raise ValueError(f"pad: pads needs {2 * ndim} values (begins then ends) for shape "
                         f"{shape}, got {pads}")
    pads = [int(p) for p in pads]
    if any(p < 0 for p in pads):
        raise ValueError(f"pad: pads must be non-negative, got {pads}")
    widths = tuple(zip(pads[:ndim], pads[ndim:]))
    for axis, ((begin, end), n) in enumerate(zip(widths, shape)):
        if mode == "reflect" and not (begin <= n and end <= n):
            raise ValueError(f"pad: reflect needs pads no longer than the axis; axis {axis} of "
                             f"shape {shape} has length {n}, pads ({begin}, {end})")
        if mode == "edge" and (begin or end) and not n:
            raise ValueError(f"pad: edge cannot pad the empty axis {axis} of shape {shape}")
    return Pad(mode, widths, float(constant))(x)
