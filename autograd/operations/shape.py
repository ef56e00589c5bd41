"""Shape and indexing operations: they move or select elements without arithmetic.

>>> import numpy as np
>>> from autograd import Tensor
>>> x = Tensor(data=np.arange(6.0).reshape(2, 3))
>>> reshape(x, (3, -1)).shape, transpose(x).shape, x[1, ::2].to_numpy()
((3, 2), (3, 2), array([3., 5.]))
"""
import numpy as np

from ..device import get_array_module
from .base import Operation

__all__ = ["reshape", "transpose", "getitem"]


class Reshape(Operation):
    """y = x viewed with a new shape (same elements, same order).   dx = dy reshaped back"""

    def __init__(self, shape):
        self.shape = shape

    def forward(self, x):
        self.input_shape = x.shape
        return x.reshape(self.shape)

    def backward(self, dy):
        return dy.reshape(self.input_shape)


def reshape(x, shape):
    """x with a new shape; one entry may be -1 (inferred).

    >>> from autograd import Tensor
    >>> reshape(Tensor(shape=(2, 3)), (4, 2))
    Traceback (most recent call last):
    ...
    ValueError: reshape: cannot reshape (2, 3) (6 elements) into (4, 2)
    """
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(int(n) for n in shape)
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
    return Reshape(shape)(x)


class Transpose(Operation):
    """y = x with axes permuted by ``axes``.   dx = dy permuted by the inverse permutation"""

    def __init__(self, axes):
        self.axes = axes

    def forward(self, x):
        return x.transpose(self.axes)

    def backward(self, dy):
        return dy.transpose(np.argsort(self.axes))


def transpose(x, axes=None):
    """x with its axes permuted; reversed when ``axes`` is None (SINGA's ``transpose(x, axes)``)."""
    ndim = x.ndim
    if axes is None:
        axes = tuple(range(ndim - 1, -1, -1))
    else:
        axes = tuple(int(a) % ndim if -ndim <= a < ndim else a for a in axes)
        if sorted(axes) != list(range(ndim)):
            raise ValueError(f"transpose: axes {tuple(axes)} are not a permutation of the "
                             f"{ndim} axes of shape {tuple(x.shape)}")
    return Transpose(axes)(x)


class GetItem(Operation):
    """y = x[index] (ints, slices, None, Ellipsis, integer or boolean arrays).   dx = zeros with
    dy added at index; repeated indices accumulate"""

    def __init__(self, index):
        self.index = index

    def forward(self, x):
        self.input_shape, self.input_dtype = x.shape, x.dtype
        try:
            return get_array_module(x).asarray(x[self.index])
        except IndexError as error:
            raise IndexError(f"getitem: {error} (tensor of shape {x.shape})") from None

    def backward(self, dy):
        xp = get_array_module(dy)
        dx = xp.zeros(self.input_shape, self.input_dtype)
        if _is_basic(self.index):
            dx[self.index] = dy           # a basic index selects each element at most once
        elif xp is np:
            np.add.at(dx, self.index, dy)
        else:
            import cupyx
            cupyx.scatter_add(dx, self.index, dy)
        return dx


def _is_basic(index):
    parts = index if isinstance(index, tuple) else (index,)
    return all(p is None or p is Ellipsis or isinstance(p, (int, np.integer, slice))
               for p in parts)


def _raw_index(index):
    """The index with Tensors and lists replaced by arrays, so the op can apply it to arrays."""
    if isinstance(index, tuple):
        return tuple(_raw_index(p) for p in index)
    if hasattr(index, "creator"):
        return index.data
    if isinstance(index, list):
        return np.asarray(index)
    return index


def getitem(x, index):
    """x[index] with NumPy's indexing: ints, slices with steps, None, Ellipsis, and integer or
    boolean arrays (or Tensors); a gradient flows to every selected element, summed where an
    index repeats."""
    index = _raw_index(index)
    if x.device.kind != "cpu":
        index = _to_device_index(index, x.device)
    return GetItem(index)(x)


def _to_device_index(index, device):
    if isinstance(index, tuple):
        return tuple(_to_device_index(p, device) for p in index)
    if isinstance(index, np.ndarray):
        return device.xp.asarray(index)
    return index
