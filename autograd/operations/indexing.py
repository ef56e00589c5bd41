"""Indexing: select elements by position (getitem, gather) or by a condition (where).

Their backward scatters dy back to the selected positions; a position selected several times
(a repeated index) receives the sum of its gradients.

>>> import numpy as np
>>> from autograd import Tensor
>>> x = Tensor(data=np.arange(6.0).reshape(2, 3))
>>> x[1, ::2].to_numpy(), gather(x, 1, [2, 0]).to_numpy().tolist()
(array([3., 5.]), [[2.0, 0.0], [5.0, 3.0]])
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Sequence

import builtins
import math

import numpy as np

from ..device import get_array_module
from ..recording import not_replayable
from .base import Operation
from .elementwise import _operands
from .utils import unbroadcast, out_of_range, normalize_axis, scatter_add
from .._types import Indices, Operand

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = ["getitem", "gather", "where", "scatter_elements", "slice"]


class GetItem(Operation):
    """y = x[index] (ints, slices, None, Ellipsis, integer or boolean arrays).   dx = zeros with
    dy added at index; repeated indices accumulate

    The arrays inside the index are inputs of the op (after x), not attributes, so that graph
    mode replays an index computed in the step; ``template`` is the index with them left out.
    """

    def __init__(self, template):
        self.template = template

    def forward(self, x, *index_arrays):
        self.input_shape, self.input_dtype = x.shape, x.dtype
        index = _fill(self.template, iter(index_arrays))
        self.save_for_backward(index)
        try:
            return get_array_module(x).asarray(x[index])
        except IndexError as error:
            raise IndexError(f"getitem: {error} (tensor of shape {x.shape})") from None

    def backward(self, dy):
        (index,) = self.saved
        xp = get_array_module(dy)
        dx = xp.zeros(self.input_shape, self.input_dtype)
        if _is_basic(index):
            dx[index] = dy           # a basic index selects each element at most once
        else:
            scatter_add(dx, index, dy)
        return (dx,) + (None,) * (len(self.needs_input_grad) - 1)


class _ArrayPart:
    """Where an array stood in an index (the array itself is an input of GetItem)."""


_ARRAY_PART = _ArrayPart()


def _split(index, arrays):
    """``index`` with each array replaced by a marker; the arrays appended to ``arrays``."""
    if isinstance(index, tuple):
        return tuple(_split(part, arrays) for part in index)
    if hasattr(index, "dtype") and hasattr(index, "shape"):
        arrays.append(index)
        return _ARRAY_PART
    return index


def _fill(template, arrays):
    if isinstance(template, tuple):
        return tuple(_fill(part, arrays) for part in template)
    return next(arrays) if template is _ARRAY_PART else template


def _is_basic(index):
    parts = index if isinstance(index, tuple) else (index,)
    return all(p is None or p is Ellipsis or isinstance(p, (int, np.integer, builtins.slice))
               for p in parts)


def _raw_index(index):
    """The index with Tensors and lists replaced by arrays, so the op can apply it to arrays."""
    if isinstance(index, tuple):
        return tuple(_raw_index(p) for p in index)
    if hasattr(index, "creator"):
        return index.data
    if isinstance(index, list):
        # an empty list would become a float64 array, which NumPy refuses as an index
        return np.asarray(index) if index else np.zeros(0, np.intp)
    return index


def getitem(x: Tensor, index: Any) -> Tensor:
    """x[index] with NumPy's indexing: ints, slices with steps, None, Ellipsis, and integer or
    boolean arrays (or Tensors); a gradient flows to every selected element, summed where an
    index repeats.

    >>> from autograd import Tensor
    >>> getitem(Tensor(data=[1.0, 2.0, 3.0]), [2, 2, 0]).to_numpy()
    array([3., 3., 1.], dtype=float32)
    """
    index = _raw_index(index)
    if x.device.kind != "cpu":
        index = _to_device_index(index, x.device)
    arrays: list = []
    template = _split(index, arrays)
    if any(a.dtype == bool for a in arrays):
        not_replayable("getitem with a boolean mask has as many results as the mask has True "
                       "values")
    return GetItem(template)(x, *[x.new_output(a) for a in arrays])


def _to_device_index(index, device):
    if isinstance(index, tuple):
        return tuple(_to_device_index(p, device) for p in index)
    if isinstance(index, np.ndarray):
        with device.activate():
            return device.xp.asarray(index)
    return index


class Gather(Operation):
    """y = take(x, indices, axis): x (..., n, ...), indices of any shape I, y (..., *I, ...).
    dx = zeros with dy added at the gathered positions along axis; repeats accumulate"""

    def __init__(self, axis):
        self.axis = axis

    def forward(self, x, indices):
        self.input_shape, self.input_dtype = x.shape, x.dtype
        indices = indices % max(x.shape[self.axis], 1)     # one meaning of negative indices
        self.save_for_backward(indices)
        return get_array_module(x).take(x, indices, axis=self.axis)

    def backward(self, dy):
        (indices,) = self.saved
        xp = get_array_module(dy)
        shape, axis = self.input_shape, self.axis
        before, after = math.prod(shape[:axis]), math.prod(shape[axis + 1:])
        count = indices.size
        # Bring the gathered positions to the front so that one scatter along axis 0 does it.
        rows = dy.reshape(before, count, after).transpose(1, 0, 2)
        dx = xp.zeros((shape[axis], before, after), self.input_dtype)
        scatter_add(dx, indices.reshape(count), rows)
        return dx.transpose(1, 0, 2).reshape(shape), None


def gather(x: Tensor, axis: int, indices: Indices) -> Tensor:
    """SINGA/ONNX Gather, which is ``np.take(x, indices, axis)``: the entries of x at
    ``indices`` (an int, a list, an int array or an int Tensor; negative counts from the end)
    along ``axis``. Repeated indices accumulate their gradients.

    >>> from autograd import Tensor
    >>> gather(Tensor(data=[[1.0, 2.0], [3.0, 4.0]]), 0, [[1], [0]]).shape
    (2, 1, 2)
    """
    axis = normalize_axis(axis, x.ndim, "gather")
    if hasattr(indices, "creator"):
        if indices.device is not x.device:
            raise TypeError(f"gather: indices are on {indices.device} but x is on {x.device}; "
                            "move one with to_device()")
        indices = indices.data
    xp = x.device.xp
    if not hasattr(indices, "dtype"):
        indices = np.asarray(indices)
    if indices.dtype.kind not in "iu":
        raise TypeError(f"gather: indices must be integers, got {indices.dtype}")
    length = x.shape[axis]
    with x.device.activate():        # GPU indices are checked, and host ones land, on x's GPU
        bad = out_of_range(indices, -length, length)     # before the upload: no device sync
        if bad is not None:
            raise IndexError(f"gather: index {bad} is out of range for axis {axis} of length "
                             f"{length} (shape {tuple(x.shape)})")
        indices = xp.asarray(indices)
    # the indices are an input, not an attribute, so that graph mode replays new ones
    return Gather(axis)(x, x.new_output(indices))


class Where(Operation):
    """y = x where condition else y, all three broadcast together.   dx = dy where condition,
    dy_other = dy elsewhere, each summed to its input's shape"""

    def forward(self, x, y, condition):
        self.shapes = x.shape, y.shape
        if condition.dtype != bool:
            condition = condition != 0
        self.save_for_backward(condition)
        return get_array_module(x).where(condition, x, y)

    def backward(self, dy):
        (condition,) = self.saved
        xp = get_array_module(dy)
        zero = xp.zeros((), dy.dtype)
        need_x, need_y = self.needs_input_grad[:2]
        return (unbroadcast(xp.where(condition, dy, zero), self.shapes[0]) if need_x
                else None,
                unbroadcast(xp.where(condition, zero, dy), self.shapes[1]) if need_y
                else None, None)


def where(x: Operand, y: Operand, condition: Any) -> Tensor:
    """Elements of x where ``condition`` holds, else of y. The order is SINGA's; NumPy and
    PyTorch put the condition first (``np.where(condition, x, y)``). ``condition`` is a bool
    or 0/1 array or Tensor; x and y are Tensors or scalars; all three broadcast. The gradient
    goes to x where the condition holds and to y elsewhere.

    >>> from autograd import Tensor
    >>> where(Tensor(data=[1.0, 2.0]), 0.0, [True, False]).to_numpy()
    array([1., 0.], dtype=float32)
    """
    if not hasattr(x, "creator") and not hasattr(y, "creator"):
        raise TypeError(f"where: x or y must be a Tensor, got {type(x).__name__} and "
                        f"{type(y).__name__}")
    x, y = _operands(x, y, "where")
    if hasattr(condition, "creator"):
        if condition.device is not x.device:
            raise TypeError(f"where: condition is on {condition.device} but x and y are on "
                            f"{x.device}")
        condition = condition.data
    with x.device.activate():
        condition = x.device.xp.asarray(condition)
        if condition.dtype.kind not in "biuf":
            raise TypeError(f"where: condition must be bool or numbers, got {condition.dtype} "
                            f"(from {type(condition).__name__})")
    try:
        np.broadcast_shapes(condition.shape, x.shape, y.shape)
    except ValueError:
        raise ValueError(f"where: cannot broadcast condition {tuple(condition.shape)}, "
                         f"x {tuple(x.shape)} and y {tuple(y.shape)}") from None
    # the condition is an input, not an attribute, so that graph mode replays a new one
    return Where()(x, y, x.new_output(condition))


class ScatterElements(Operation):
    """y = x with y[..., indices[i], ...] = updates[i] along ``axis`` (ONNX ScatterElements).
    dx = dy with the written positions zeroed, dupdates = dy at those positions"""

    def __init__(self, index):
        self.index = index      # a full advanced index: `axis` from indices, others positional

    def forward(self, x, updates):
        y = x.copy()
        y[self.index] = updates
        return y

    def backward(self, dy):
        need_x, need_updates = self.needs_input_grad
        dx = None
        if need_x:
            dx = dy.copy()
            dx[self.index] = 0
        return dx, (dy[self.index] if need_updates else None)


def scatter_elements(x: Tensor, indices: Indices, updates: Operand, axis: int = 0) -> Tensor:
    """A copy of x with ``updates`` written at ``indices`` along ``axis``: for a 2-D x and
    axis 0, ``y[indices[i][j]][j] = updates[i][j]`` (ONNX ScatterElements, SINGA's signature).
    ``indices`` (ints, negative counted from the end) and ``updates`` have the same shape, of
    x's rank; indices that repeat within a column write one of their values (ONNX leaves the
    order undefined), so keep them distinct where gradients matter.

    >>> import numpy as np
    >>> from autograd import Tensor
    >>> scatter_elements(Tensor(shape=(2, 3)), np.array([[1, 0, 1]]),
    ...                  Tensor(data=[[5.0, 6.0, 7.0]])).to_numpy()
    array([[0., 6., 0.],
           [5., 0., 7.]], dtype=float32)
    """
    if hasattr(indices, "creator") and indices.device is not x.device:
        raise TypeError(f"scatter_elements: indices are on {indices.device} but x is on "
                        f"{x.device}; move one with to_device()")
    with x.device.activate():           # the index arrays made here belong on x's device
        return _scatter_elements(x, indices, updates, axis)


def _scatter_elements(x, indices, updates, axis):
    xp = x.device.xp
    indices = indices.data if hasattr(indices, "creator") else xp.asarray(indices)
    if indices.dtype.kind not in "iu":
        raise TypeError(f"scatter_elements: indices must be integers, got {indices.dtype}")
    if indices.ndim != x.ndim or tuple(indices.shape) != tuple(updates.shape):
        raise ValueError(f"scatter_elements: indices {tuple(indices.shape)} and updates "
                         f"{tuple(updates.shape)} must have one shape, of x's rank "
                         f"({x.ndim}, x is {x.shape})")
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"scatter_elements: axis {axis} is out of range for shape {x.shape}")
    axis %= x.ndim
    if any(i > n for i, n in zip(indices.shape, x.shape)):
        raise ValueError(f"scatter_elements: indices {tuple(indices.shape)} are larger than "
                         f"x {x.shape}")
    size = x.shape[axis]
    if indices.size and (int(indices.min()) < -size or int(indices.max()) >= size):
        raise ValueError(f"scatter_elements: indices must lie in [{-size}, {size}) along "
                         f"axis {axis}, got values from {int(indices.min())} to "
                         f"{int(indices.max())}")
    # one broadcasting arange per axis (NumPy's indices(sparse=True), which CuPy lacks)
    ndim = indices.ndim
    positions = [xp.arange(n).reshape((1,) * k + (n,) + (1,) * (ndim - k - 1))
                 for k, n in enumerate(indices.shape)]
    positions[axis] = indices % size
    if not hasattr(updates, "creator"):
        raise TypeError(f"scatter_elements: updates must be a Tensor, got "
                        f"{type(updates).__name__}")
    return ScatterElements(tuple(positions))(x, updates)


def slice(x: Tensor, starts: Sequence[int], ends: Sequence[int],
          axes: Optional[Sequence[int]] = None, steps: Optional[Sequence[int]] = None) -> Tensor:
    """SINGA's (ONNX's) Slice: x[starts[i]:ends[i]:steps[i]] along ``axes[i]`` (the first
    len(starts) axes by default, steps 1). Out-of-range bounds clamp as Python slicing does,
    which is ONNX's rule too, so exporters' huge sentinels (ends = 2**63 - 1) work. Recorded
    as ``getitem``.

    >>> import numpy as np
    >>> from autograd import Tensor
    >>> slice(Tensor(data=np.arange(10.0)), [2], [8], steps=[3]).to_numpy()
    array([2., 5.])
    """
    if not (len(starts) == len(ends) and (axes is None or len(axes) == len(starts))
            and (steps is None or len(steps) == len(starts))):
        raise ValueError(f"slice: starts {list(starts)}, ends {list(ends)}, axes {axes} and "
                         f"steps {steps} must have one length")
    axes = range(len(starts)) if axes is None else axes
    steps = [1] * len(starts) if steps is None else steps
    index = [builtins.slice(None)] * x.ndim
    for start, end, axis, step in zip(starts, ends, axes, steps):
        if not -x.ndim <= axis < x.ndim:
            raise ValueError(f"slice: axis {axis} is out of range for shape {x.shape}")
        if step == 0:
            raise ValueError("slice: a step cannot be 0")
        index[axis % x.ndim] = builtins.slice(int(start), int(end), int(step))
    return getitem(x, tuple(index))
