"""Helpers the operation modules share: broadcasting and turning constants into operands."""
import contextlib
import numbers

import numpy as np

from ..backend import kernels_for, native
from ..device import device_of_array, get_array_module
from ..geometry import axis_slice

__all__ = ["unbroadcast", "as_tensor_like", "constant", "scalar_value", "scalar_operand",
           "check_broadcast", "normalize_axes", "normalize_axis", "out_of_range", "check_tensor",
           "ignore_float_warnings", "axis_slice", "scatter_add"]


def unbroadcast(grad, shape):
    """Sum ``grad`` over the axes that broadcasting added or stretched, giving ``shape``."""
    if grad.shape == shape:
        return grad
    extra = grad.ndim - len(shape)
    axes = tuple(range(extra)) + tuple(
        extra + i for i, n in enumerate(shape) if n == 1 and grad.shape[extra + i] != 1)
    if not axes:
        return grad.reshape(shape)
    if axes == tuple(range(len(axes))) and grad.ndim > 1 and grad.flags.c_contiguous:
        # summed over leading axes only (a bias's gradient): a sum over the rows of a matrix
        rows = 1
        for size in grad.shape[:len(axes)]:
            rows *= size
        return kernels_for(grad).sum_rows(grad.reshape(rows, -1)).reshape(shape)
    return grad.sum(axis=axes, keepdims=True).reshape(shape)


def check_broadcast(name, a, b):
    """Raise ValueError naming the op and both shapes when ``a`` and ``b`` do not broadcast."""
    if a.shape != b.shape:
        try:
            np.broadcast_shapes(a.shape, b.shape)
        except ValueError:
            raise ValueError(
                f"{name}: cannot broadcast shapes {tuple(a.shape)} and {tuple(b.shape)}") from None


def scalar_value(value):
    """A Python number for a Python or NumPy scalar, so that it takes the tensor's dtype;
    ``None`` for anything else."""
    kind = type(value)
    if kind is float or kind is int:
        return value
    if isinstance(value, np.generic) and isinstance(value, numbers.Number):
        return value.item()       # np.float64 subclasses float but would upcast float32
    if isinstance(value, (int, float)):
        return value
    return None


_scalar_operands: dict = {}
_MAX_SCALAR_OPERANDS = 256
_ndarray = np.ndarray         # a module global: one lookup on this hot path, not two


def scalar_operand(c, x):
    """The Python number ``c`` ready to combine with the array ``x``: for a floating NumPy
    array, a cached read-only 0-d array of x's dtype, which NumPy combines with x much faster
    than a number it must convert on every call (a (4,) float32 multiply: 6,900 -> 4,200
    instructions); otherwise ``c`` itself. The result is the same: NumPy casts a Python number
    to a floating array's dtype. Zeros (whose sign a cache keyed by value would lose) and NaN
    stay numbers.

    >>> scalar_operand(0.5, np.ones(2, np.float32))
    array(0.5, dtype=float32)
    """
    if type(x) is not _ndarray or not c or c != c:
        return c
    scalar_type = x.dtype.type      # np.float32 & co.: hashing a dtype costs 1,000 instructions
    key = (c, scalar_type)
    operand = _scalar_operands.get(key)
    if operand is None:
        if not issubclass(scalar_type, np.floating):
            return c
        if len(_scalar_operands) >= _MAX_SCALAR_OPERANDS:   # e.g. a scalar that changes each step
            _scalar_operands.clear()
        operand = np.array(c, scalar_type)
        operand.flags.writeable = False
        _scalar_operands[key] = operand
    return operand


def as_tensor_like(value, like, name):
    """``value`` as a constant Tensor (no gradient) on ``like``'s device. A non-floating value
    (a list, an int array) takes ``like``'s floating dtype, and so does a NumPy scalar, which
    acts as the Python number it holds (as in PyTorch); a floating array keeps its own, so
    mixing float64 into float32 is still reported by the op."""
    if hasattr(value, "creator"):
        return value
    if value is None or isinstance(value, (str, bytes)):     # NumPy would make NaN or fail
        raise TypeError(f"{name}: expected a Tensor, an array or a number, got "
                        f"{type(value).__name__}")
    xp = like.device.xp
    if not hasattr(value, "dtype") or value.dtype.kind != "f" or isinstance(value, np.generic):
        dtype = like.data.dtype if like.data.dtype.kind == "f" else None
        value = xp.asarray(value, dtype=dtype)
    elif type(value) is not xp.ndarray or device_of_array(value) is not like.device:
        raise TypeError(f"{name}: a {type(value).__module__}.{type(value).__name__} cannot be "
                        f"combined with a Tensor on {like.device} (the array is on "
                        f"{device_of_array(value)}); move it first")
    return constant(value, like)


def constant(array, like):
    """The array (already on ``like``'s device) as a Tensor of ``like``'s type outside the
    graph: no creator, no gradient."""
    return type(like).from_operation(array, like.device, None, 0)


def normalize_axes(axis, ndim, name):
    """``axis`` (None, int or sequence) as a sorted tuple of non-negative axes, checked."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    result = []
    for a in axes:
        if not -ndim <= a < max(ndim, 1):
            raise ValueError(f"{name}: axis {a} is out of range for a {ndim}-d tensor")
        result.append(int(a) % max(ndim, 1))
    if len(set(result)) != len(result):
        raise ValueError(f"{name}: repeated axis in {axis}")
    return tuple(sorted(result))


def normalize_axis(axis, ndim, name):
    """One integer ``axis`` in [-ndim, ndim) as a non-negative int; a ValueError naming the op
    otherwise (a 0-d tensor has no axis)."""
    if not isinstance(axis, (int, np.integer)) or not -ndim <= axis < ndim:
        raise ValueError(f"{name}: axis {axis} is out of range for a {ndim}-d tensor")
    return int(axis) % ndim


def out_of_range(values, low, high):
    """The first element of the integer array ``values`` outside [low, high), or None.

    Range checks run every training step on labels and ids, so the common case costs one
    comparison and, for a GPU array, a single host synchronisation; the offending value is
    looked up only on the error path. Check host arrays before moving them to a device."""
    if values.size == 0:
        return None
    outside = (values < low) | (values >= high)
    if not bool(outside.any()):
        return None
    return int(values[outside].ravel()[0])


def check_tensor(x, name):
    """A TypeError naming the op unless ``x`` is a Tensor (a raw array or list is not)."""
    if not hasattr(x, "creator"):
        raise TypeError(f"{name}: expected a Tensor, got {type(x).__name__}")


def ignore_float_warnings(xp):
    """A context that silences NumPy's divide/invalid warnings where an inf or nan is the
    honest, handled result (CuPy never warns)."""
    errstate = getattr(xp, "errstate", None)
    return errstate(divide="ignore", invalid="ignore") if errstate else contextlib.nullcontext()


def scatter_add(target, index, values):
    """``target[index] += values`` in place, where an index that repeats adds each of its values
    (plain fancy-index assignment would keep only the last)."""
    if get_array_module(target) is np:
        if not native.scatter_rows_add(target, index, values):
            np.add.at(target, index, values)
    else:
        import cupyx
        cupyx.scatter_add(target, index, values)
