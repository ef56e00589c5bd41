"""Trading arrays with other libraries: DLPack both ways, ``numpy()``, ``tolist()``, iteration.

DLPack is the array-exchange protocol of NumPy, CuPy, PyTorch, JAX and TensorFlow: a consumer
calls the producer's ``__dlpack__()`` and gets a view of the same memory, no copy. A Tensor
exports its array's memory (a NumPy array on the CPU, a CuPy array on a GPU), and
:func:`from_dlpack` takes anything that implements the protocol. Only the array crosses: the
creator, ``requires_grad`` and ``stores_grad`` stay behind, so gradients never flow through an
exchange (see docs/interop.md).

>>> import numpy as np, autograd
>>> t = autograd.Tensor(data=[[1.0, 2.0], [3.0, 4.0]])
>>> view = np.from_dlpack(t)           # the same memory: a write shows on both sides
>>> view[0, 0] = 10.0
>>> t.tolist(), [row.tolist() for row in t]
([[10.0, 2.0], [3.0, 4.0]], [[10.0, 2.0], [3.0, 4.0]])
>>> back = autograd.from_dlpack(view)
>>> back.data is view or np.shares_memory(back.data, view), back.requires_grad
(True, False)
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator

import numpy as np

from ._types import Array
from .device import cpu, gpu

if TYPE_CHECKING:
    from .device import Device
    from .tensor import Tensor

__all__ = ["ExchangeMethods", "from_dlpack"]

# DLPack device types (dlpack.h, DLDeviceType) that autograd can hold, and names for the rest.
_HOST_TYPES = {1: "CPU", 3: "CUDA host (pinned)", 11: "ROCm host"}     # NumPy reads these
_CUDA_TYPES = {2: "CUDA", 13: "CUDA managed"}                          # CuPy reads these
_OTHER_TYPES = {4: "OpenCL", 7: "Vulkan", 8: "Metal", 9: "VPI", 10: "ROCm", 12: "ext_dev",
                14: "oneAPI", 15: "WebGPU", 16: "Hexagon", 17: "MAIA"}
_DLPACK_KINDS = "biufc"          # bool, signed and unsigned integers, floats, complex
_PRODUCER_ERRORS = (BufferError, TypeError, ValueError, RuntimeError)


class ExchangeMethods:
    """What Tensor offers other libraries (see the module docstring)."""

    __slots__ = ()          # Tensor is slotted: a mixin must not bring a __dict__

    if TYPE_CHECKING:       # what the methods read of Tensor, for the type checker
        data: Array
        device: Device

        def to_numpy(self) -> np.ndarray: ...

        def __getitem__(self, index: Any) -> Tensor: ...

    def __dlpack__(self, *, stream: Any = None, max_version: Any = None, dl_device: Any = None,
                   copy: Any = None) -> Any:
        """A DLPack capsule of this tensor's memory (the protocol's producer side; consumers
        such as ``torch.from_dlpack`` and ``np.from_dlpack`` call it). The keywords are the
        protocol's and go to the NumPy/CuPy array; only those given are passed, so an older
        NumPy that knows only ``stream`` still serves consumers that pass nothing else."""
        if self.data.dtype.kind not in _DLPACK_KINDS:
            raise BufferError(f"Tensor.__dlpack__: cannot export a {self.data.dtype} tensor; "
                              "DLPack carries bool, integer, float and complex dtypes")
        given = {"stream": stream, "max_version": max_version, "dl_device": dl_device,
                 "copy": copy}
        return self.data.__dlpack__(**{k: v for k, v in given.items() if v is not None})

    def __dlpack_device__(self) -> tuple[int, int]:
        """``(DLPack device type, index)`` of this tensor's memory: ``(1, 0)`` on the CPU,
        ``(2, i)`` on gpu:i."""
        return self.data.__dlpack_device__()

    def numpy(self) -> np.ndarray:
        """The data as a NumPy array, shared, not copied (PyTorch's spelling of ``to_numpy()``
        on the CPU). A GPU tensor is an error: copying to the host is ``to_numpy()``'s job."""
        if self.device.kind != "cpu":
            raise TypeError(f"Tensor.numpy: the tensor is on {self.device}; call to_numpy() "
                            "to copy it to the host")
        return self.data

    def tolist(self) -> Any:
        """The data as (nested) Python lists of Python numbers; a 0-d tensor gives a number.

        >>> from autograd import Tensor
        >>> Tensor(data=[[1, 2]]).tolist(), Tensor(data=3.5).tolist()
        ([[1.0, 2.0]], 3.5)
        """
        return self.to_numpy().tolist()

    def __iter__(self) -> Iterator[Tensor]:
        """The sub-tensors along the first axis, ``t[0], t[1], ...`` (recorded like ``t[i]``)."""
        if self.data.ndim == 0:
            raise TypeError("Tensor: iteration over a 0-d tensor (use item())")
        return (self[i] for i in range(self.data.shape[0]))


def from_dlpack(obj: Any, requires_grad: bool = False, copy: bool = False) -> Tensor:
    """A Tensor holding the array of ``obj``, any object that implements DLPack (a NumPy or
    CuPy array, a torch tensor, a JAX array, another autograd Tensor).

    The memory is shared, not copied (a write on either side shows on the other) unless
    ``copy=True``, which gives the tensor its own copy. A host array becomes a CPU tensor (through
    ``np.from_dlpack``), a CUDA array a tensor on its GPU (through ``cupy.from_dlpack``; CuPy
    must be installed). dtype and strides are kept. A read-only producer gives a tensor whose
    array is read-only: in-place writes to it fail, recorded operations work. The result is a
    leaf: the producer's gradient history does not cross (``requires_grad`` starts it anew;
    a non-floating tensor never requires a gradient).

    >>> import numpy as np
    >>> a = np.arange(6.0).reshape(2, 3)[:, ::2]           # a non-contiguous view
    >>> t = from_dlpack(a)
    >>> t.shape, t.data.strides == a.strides, np.shares_memory(t.data, a)
    ((2, 2), True, True)
    """
    from .tensor import Tensor          # tensor.py imports this module for the mixin

    if not hasattr(obj, "__dlpack__") or not hasattr(obj, "__dlpack_device__"):
        hint = (" (a PyCapsule: pass the array itself, which DLPack consumers now take)"
                if type(obj).__name__ == "PyCapsule" else "")
        raise TypeError(f"from_dlpack: expected an object implementing DLPack (__dlpack__ and "
                        f"__dlpack_device__), got {type(obj).__name__}{hint}")
    device_type, index = (int(v) for v in obj.__dlpack_device__())
    if device_type in _HOST_TYPES:
        device, array = cpu(), _import(np, obj, copy)
    elif device_type in _CUDA_TYPES:
        device = gpu(index)            # a clear RuntimeError without CuPy or without that GPU
        with device.activate():
            array = _import(device.xp, obj, copy)
    else:
        name = _OTHER_TYPES.get(device_type, "unknown")
        raise ValueError(f"from_dlpack: the {_type_name(obj)} lives on DLPack device type "
                         f"{device_type} ({name}); autograd holds arrays on the CPU (1) and on "
                         "CUDA GPUs (2): copy it to one of them first")
    return _tensor_of(Tensor, array, device, requires_grad)


def _import(xp, obj, copy):
    try:
        array = xp.from_dlpack(obj)
    except _PRODUCER_ERRORS as error:
        # re-raised as the plain base type: a library's subclass may not take a message
        base = next(kind for kind in _PRODUCER_ERRORS if isinstance(error, kind))
        raise base(f"from_dlpack: cannot take this {_type_name(obj)} "
                   f"({xp.__name__}.from_dlpack: {error})") from error
    return array.copy() if copy else array


def _tensor_of(cls, array, device, requires_grad):
    tensor = cls.from_operation(array, device, None, 0)
    tensor.requires_grad = bool(requires_grad) and array.dtype.kind == "f"
    return tensor


def _type_name(obj):
    kind = type(obj)
    return kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
