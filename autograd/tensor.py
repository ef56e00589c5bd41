"""Tensor: an array on a device plus the three records autograd needs.

``creator`` is the Operation that produced it (None for a leaf or an unrecorded result),
``requires_grad`` says whether gradients flow through it, ``stores_grad`` whether
``autograd.backward`` yields its gradient (parameters). Python operators record operations
exactly like the named functions.

>>> import numpy as np
>>> w = Tensor(data=np.array([[1.0, 2.0]], np.float32), stores_grad=True)
>>> y = (w * 3).sum()
>>> y.to_numpy(), y.creator is not None
(array(9., dtype=float32), True)
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from ._types import Array, DTypeLike, Scalar, Shape

from .backend import buffer_cache
from .device import Device, cpu, get_default_device, device_of_array, move_array
from .tensor_inplace import InPlaceMethods
from .tensor_interop import ExchangeMethods
from .tensor_operators import OperatorMethods, repeat
from .operations import joining, linalg

__all__ = ["Tensor", "from_numpy", "to_numpy", "zeros", "ones", "zeros_like", "ones_like",
           "random", "repeat", "concatenate", "einsum", "tensordot", "copy_data_to_from",
           "float32", "float64", "int32", "int64"]

float32, float64, int32, int64 = np.float32, np.float64, np.int32, np.int64   # SINGA's names
_ndarray, _new_object = np.ndarray, object.__new__    # module globals: one lookup, not two


class Tensor(OperatorMethods, InPlaceMethods, ExchangeMethods):
    """``Tensor(shape=None, data=None, device=None, dtype=None, requires_grad=True,
    stores_grad=False, creator=None, name=None)``

    ``shape`` alone gives zeros; SINGA's positional ``Tensor(shape, device, dtype)`` works too.
    ``data`` is copied from a NumPy/CuPy array (its dtype kept), a list or a scalar (float32
    unless ``dtype`` says otherwise). Non-floating data (labels, indices) never requires a
    gradient.
    """

    __slots__ = ("data", "device", "creator", "output_index", "requires_grad", "stores_grad",
                 "name", "__weakref__")
    data: Array                  # for the type checker (annotations only: the slots hold them)
    device: Device
    creator: Any                 # the Operation that produced it, or None
    output_index: int
    requires_grad: bool
    stores_grad: bool
    name: Optional[str]
    __hash__ = object.__hash__      # identity: the graph keys its bookkeeping by tensor objects
    __array_ufunc__ = None          # `ndarray + Tensor` defers to Tensor.__radd__ (recorded)

    def __init__(self, shape: Optional[Shape] = None, data: Any = None,
                 device: Optional[Device] = None, dtype: DTypeLike = None,
                 requires_grad: bool = True, stores_grad: bool = False, creator: Any = None,
                 name: Optional[str] = None) -> None:
        if isinstance(data, Device):      # SINGA's positional order: Tensor(shape, device, dtype)
            if _is_data(dtype):           # ... and its fourth, data: Tensor(shape, dev, dt, data)
                data, device, dtype = dtype, data, device
            else:
                data, device, dtype = None, data, device if dtype is None else dtype
        if stores_grad and not requires_grad:
            raise ValueError("Tensor: stores_grad=True needs requires_grad=True")
        if device is not None and not isinstance(device, Device):
            raise TypeError(f"Tensor: device must be a Device, got {type(device).__name__}")
        if isinstance(data, Tensor):
            data = data.data
        if isinstance(shape, (int, np.integer)):
            shape = (shape,)
        if data is not None:
            array = self._array_from(data, device, dtype, aligned=stores_grad)
            if shape is not None and tuple(array.shape) != tuple(shape):
                raise ValueError(f"Tensor: data has shape {array.shape} but shape={tuple(shape)}")
            device = device_of_array(array)
        elif shape is not None:
            device = device or get_default_device()
            shape = _checked_shape(shape)
            with device.activate():
                array = (buffer_cache.new_host_array(shape, dtype or np.float32)
                         if device.xp is np else device.xp.zeros(shape, dtype=dtype or np.float32))
        else:
            raise ValueError("Tensor: give a shape, data or both")
        if array.dtype.kind != "f":
            if stores_grad:
                raise ValueError(f"Tensor: a {array.dtype} tensor cannot store a gradient; "
                                 "only floating tensors can")
            requires_grad = False
        self.data = array
        self.device = device
        self.creator = creator
        self.output_index = 0
        self.requires_grad = requires_grad
        self.stores_grad = stores_grad
        self.name = name

    @staticmethod
    def _array_from(data, device, dtype, aligned=False):
        if hasattr(data, "dtype") and hasattr(data, "shape"):      # a NumPy or CuPy array
            source = device_of_array(data)
            # host data goes where new tensors go; a GPU array stays on its GPU
            target = device or (source if source.kind != "cpu" else get_default_device())
            array = move_array(data, target)
            with target.activate():
                if array is not data:          # moving already copied: only cast if asked
                    return array if dtype is None else array.astype(dtype, copy=False)
                if aligned and target.xp is np:     # a parameter: products read its rows
                    return buffer_cache.new_host_array(array.shape, dtype or array.dtype, array)
                return target.xp.array(array, dtype=dtype or array.dtype, copy=True)
        target = device or get_default_device()
        with target.activate():
            try:
                return target.xp.array(data, dtype=dtype or np.float32)
            except (ValueError, TypeError) as error:     # ragged lists, strings, ...
                raise type(error)(f"Tensor: cannot make a {np.dtype(dtype or np.float32)} "
                                  f"array from this {type(data).__name__} ({error})") from None

    def new_output(self, data: Array, creator: Any = None, output_index: int = 0) -> Tensor:
        """A Tensor of this one's class and device holding ``data`` (no checks, no copy), made
        by ``creator``'s output ``output_index``: the fast constructor an Operation uses for its
        outputs (its first input's ``new_output``) and ``backward`` for gradients. A method, not
        a classmethod: binding a classmethod per op cost ~1,100 instructions."""
        if type(data) is not _ndarray and isinstance(data, np.generic):
            data = np.asarray(data)           # NumPy reductions return scalars, not 0-d arrays
        t = _new_object(type(self))
        t.data = data
        t.device = self.device
        t.creator = creator
        t.output_index = output_index
        t.requires_grad = creator is not None
        t.stores_grad = False
        t.name = None
        return t

    @classmethod
    def from_operation(cls, data: Array, device: Device, creator: Any = None,
                       output_index: int = 0) -> Tensor:
        """:meth:`new_output` for a caller that has a class and a device, not a tensor."""
        like = _new_object(cls)
        like.device = device
        return like.new_output(data, creator, output_index)

    @classmethod
    def from_gradient(cls, data: Array, device: Device) -> Tensor:
        """A gradient as backward yields it: a plain Tensor needing no gradient itself."""
        return cls.from_operation(data, device)

    # ------------------------------------------------------------ what it is
    @property
    def shape(self) -> tuple[int, ...]:
        """The array's shape, a tuple."""
        return self.data.shape

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return self.data.ndim

    @property
    def size(self) -> int:
        """The number of elements."""
        return self.data.size

    @property
    def dtype(self) -> np.dtype:
        """The array's dtype."""
        return self.data.dtype

    def __len__(self) -> int:
        return len(self.data)

    def __repr__(self) -> str:
        flags = ", stores_grad=True" if self.stores_grad else ""
        if self.creator is not None:
            flags += f", creator={type(self.creator).__name__}"
        body = np.array2string(self.to_numpy(), prefix="Tensor(")
        return f"Tensor({body}, dtype={self.dtype}, device={self.device}{flags})"

    def __array__(self, dtype=None, copy=None):
        if self.device.kind != "cpu":
            raise TypeError(f"Tensor on {self.device}: call to_numpy() to copy it to the host")
        return self.data if dtype is None else self.data.astype(dtype)

    # ------------------------------------------------------------ moving and copying
    def to_numpy(self) -> np.ndarray:
        """The data as a NumPy array (a copy to the host for a GPU tensor, else the array)."""
        return self.data if self.device.kind == "cpu" else self.data.get()

    def to_device(self, device: Device) -> Tensor:
        """Move this tensor's data to ``device`` in place (as SINGA does) and return self."""
        self.data = move_array(self.data, device)
        self.device = device
        return self

    def to_host(self) -> Tensor:
        """Move to the CPU in place and return self."""
        return self.to_device(cpu())

    def item(self) -> Any:
        """The single element as a Python number (a host synchronisation on the GPU)."""
        if self.data.size != 1:
            raise ValueError(f"item: tensor has {self.data.size} elements, expected 1")
        return self.data.item()

    def copy(self) -> Tensor:
        """A new tensor with a copy of the data and the same flags, outside any graph."""
        t = Tensor(data=self.data, device=self.device, requires_grad=self.requires_grad,
                   stores_grad=self.stores_grad)
        t.name = self.name
        return t

    clone = copy

    def deepcopy(self) -> Tensor:
        """Same as :meth:`copy` (SINGA's spelling)."""
        return self.copy()

    def __deepcopy__(self, memo: Any) -> Tensor:
        return self.copy()

    def __copy__(self) -> Tensor:
        return self.copy()

    def detach(self) -> Tensor:
        """The same data as a leaf that requires no gradient (shares the array)."""
        return self.new_output(self.data)

    def as_type(self, dtype: DTypeLike) -> Tensor:
        """A copy converted to ``dtype``, outside any graph (use it to cast explicitly)."""
        return Tensor(data=self.data, device=self.device, dtype=np.dtype(dtype),
                      requires_grad=self.requires_grad)

    # ------------------------------------------------------------ in-place initialisers
    def gaussian(self, mean: float = 0.0, std: float = 1.0) -> Tensor:
        """Fill with samples of N(mean, std^2) from this device's generator; returns self."""
        noise = self.device.random.standard_normal(self.data.shape, dtype=self._float_dtype())
        self.data[...] = noise * std + mean
        return self

    def uniform(self, low: float = 0.0, high: float = 1.0) -> Tensor:
        """Fill with samples of U[low, high) from this device's generator; returns self."""
        noise = self.device.random.random(self.data.shape, dtype=self._float_dtype())
        self.data[...] = noise * (high - low) + low
        return self

    def set_value(self, value: Scalar) -> Tensor:
        """Fill every element with ``value``; returns self."""
        self.data[...] = value
        return self

    def _float_dtype(self):
        dtype = self.data.dtype
        if dtype not in (np.float32, np.float64):
            raise TypeError(f"random initialisers need a float32 or float64 tensor, got {dtype}")
        return dtype


def from_numpy(array: Any) -> Tensor:
    """A Tensor holding a copy of a NumPy array, dtype kept (SINGA's ``tensor.from_numpy``)."""
    return Tensor(data=array)


def to_numpy(tensor: Tensor) -> np.ndarray:
    """The data of ``tensor`` as a NumPy array (SINGA's ``tensor.to_numpy``)."""
    return tensor.to_numpy()


def copy_data_to_from(dst: Tensor, src: Tensor, size: int, dst_offset: int = 0,
                      src_offset: int = 0) -> None:
    """SINGA's ``tensor.copy_data_to_from``: copy ``size`` elements of ``src`` (flattened in C
    order, from ``src_offset``) into ``dst`` (from ``dst_offset``), in place; the two may be on
    different devices. Both must be Tensors of one dtype (cast explicitly).

    >>> dst = Tensor(data=np.zeros((2, 3), np.float32))
    >>> copy_data_to_from(dst, Tensor(data=np.arange(4.0, dtype=np.float32)), 3, 2, 1)
    >>> dst.to_numpy()
    array([[0., 0., 1.],
           [2., 3., 0.]], dtype=float32)
    """
    if not isinstance(dst, Tensor) or not isinstance(src, Tensor):
        raise TypeError(f"copy_data_to_from: expected two Tensors, got {type(dst).__name__} "
                        f"and {type(src).__name__}")
    if dst.dtype != src.dtype:
        raise TypeError(f"copy_data_to_from: dst is {dst.dtype} but src is {src.dtype}; cast "
                        "one explicitly with as_type()")
    for name, value in (("size", size), ("dst_offset", dst_offset), ("src_offset", src_offset)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise ValueError(f"copy_data_to_from: {name} must be a non-negative int, got "
                             f"{value!r}")
    if src_offset + size > src.size or dst_offset + size > dst.size:
        raise ValueError(f"copy_data_to_from: cannot copy {size} elements from offset "
                         f"{src_offset} of {src.size} into offset {dst_offset} of {dst.size}")
    piece = move_array(src.data.reshape(-1)[src_offset:src_offset + size], dst.device)
    flat = dst.data.reshape(-1)          # a view when dst is C-contiguous, else a copy
    flat[dst_offset:dst_offset + size] = piece
    if not dst.data.flags.c_contiguous:
        dst.data[...] = flat.reshape(dst.shape)


def zeros(shape: Shape, device: Optional[Device] = None, dtype: DTypeLike = np.float32) -> Tensor:
    """A new Tensor of zeros."""
    return Tensor(shape=shape, device=device, dtype=dtype)


def ones(shape: Shape, device: Optional[Device] = None, dtype: DTypeLike = np.float32) -> Tensor:
    """A new Tensor of ones."""
    return Tensor(shape=shape, device=device, dtype=dtype).set_value(1)


def zeros_like(t: Tensor) -> Tensor:
    """Zeros with ``t``'s shape, dtype and device."""
    return zeros(t.shape, t.device, t.dtype)


def ones_like(t: Tensor) -> Tensor:
    """Ones with ``t``'s shape, dtype and device."""
    return ones(t.shape, t.device, t.dtype)


def random(shape: Shape, device: Optional[Device] = None) -> Tensor:
    """A new float32 Tensor of samples from U[0, 1) (SINGA's ``tensor.random``)."""
    return Tensor(shape=shape, device=device).uniform(0.0, 1.0)


def concatenate(tensors: Sequence[Tensor], axis: int = 0) -> Tensor:
    """The tensors joined along ``axis`` (``cat``; recorded)."""
    return joining.cat(tensors, axis)


einsum = linalg.einsum
tensordot = linalg.tensordot


def _is_data(value):
    """Whether ``value`` is an array or a list (data), not a dtype."""
    return isinstance(value, (list, np.ndarray)) or (
        hasattr(value, "__array__") and not isinstance(value, (type, np.dtype)))


def _checked_shape(shape):
    """``shape`` as a tuple of non-negative ints, or a ValueError/TypeError naming Tensor."""
    try:
        sizes = tuple(shape)
    except TypeError:
        raise TypeError(f"Tensor: shape must be an int or a sequence of ints, got "
                        f"{type(shape).__name__}") from None
    for size in sizes:
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)):
            raise TypeError(f"Tensor: shape must hold ints, got {sizes!r} (a "
                            f"{type(size).__name__})")
        if size < 0:
            raise ValueError(f"Tensor: shape must not be negative, got {sizes}")
    return sizes
