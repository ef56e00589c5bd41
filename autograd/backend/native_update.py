"""The compiled parameter updates (csrc/kernel_update.h, update_bindings.h) for update.py:
``y += alpha x`` and a whole Adam step, each one pass over float32 NumPy arrays split over the
compiled kernels' threads. As in native.py, each function returns True, or None where the
kernel does not apply (nothing written), and the caller runs its portable NumPy code.

Why not BLAS's ``saxpy``, one pass too: OpenBLAS's threads sleep soon after each call, and a
step's updates are many calls in a row (a GPT's 52 parameters) that each woke a worker, while
the compiled kernels' workers spin for a while after each part and find the next one awake.
An Adam step in NumPy is ten passes over the parameter's size; here it is one.
"""
import numpy as np

from .native import _FLOAT32, _native, _split_threads, _state

__all__ = []     # used by update.py


def _flat_float32(*arrays):
    """Whether the kernels apply: switched on, and C-contiguous float32 NumPy arrays of one
    size, none overlapping another (the C loops read and write them as independent)."""
    if not _state["enabled"]:
        return False
    size = arrays[0].size
    for array in arrays:
        if (type(array) is not np.ndarray or array.dtype != _FLOAT32
                or not array.flags.c_contiguous or array.size != size):
            return False
    if len(arrays) == 2:             # axpy's x and y: one comparison (a step makes many)
        return not np.may_share_memory(*arrays)
    for k, array in enumerate(arrays):
        for other in arrays[k + 1:]:
            if np.may_share_memory(array, other):
                return False
    return True


def axpy(alpha, x, y):
    """``y += alpha * x`` in place (y writable)."""
    if not (_flat_float32(x, y) and y.flags.writeable):
        return None
    _native.axpy(alpha, x, y, _split_threads())
    return True


def adam(data, grad, m, v, settings):
    """One Adam step in place on ``data``, ``m`` and ``v`` (writable) from ``grad``; ``settings``
    as the C kernel's AdamSettings: (beta_1, beta_2, 1 - beta_1, 1 - beta_2, epsilon, l2, decay,
    1 / (1 - beta_2^t), -lr / (1 - beta_1^t)), update.py's adam_update says what each is."""
    if not (_flat_float32(data, grad, m, v) and data.flags.writeable and m.flags.writeable
            and v.flags.writeable):
        return None
    _native.adam(data, grad, m, v, settings, _split_threads())
    return True


def sum_of_squares(x):
    """sum(x ** 2) of a C-contiguous float32 NumPy x as a Python float, added in float64 (by
    blocks whose sums are added in order: the same bits at any thread count); None where the
    kernels do not apply."""
    if not _flat_float32(x):
        return None
    return _native.sum_of_squares(x, _split_threads())


def scale(alpha, x, y):
    """``y = alpha * x`` (y writable, not overlapping x), as NumPy's ``np.multiply(x,
    float32(alpha), out=y)`` rounds it."""
    if not (_flat_float32(x, y) and y.flags.writeable):
        return None
    _native.scale(alpha, x, y, _split_threads())
    return True
