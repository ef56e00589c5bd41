"""SINGA's Tensor indexing for the code of a SINGA program run under the hook.

SINGA's ``Tensor.__getitem__`` slices each axis it is given an integer for down to length 1 and
keeps it: on a (3, 5) Tensor ``t[-1]`` is a (1, 5) row, and ``t[0, 2]`` is (1, 1). Its programs
rely on that: char_rnn.py samples with ``tensor.to_numpy(tensor.softmax(outputs[-1]))[0]``,
the probability row of the last step. autograd's Tensor indexes as NumPy does (``t[-1]`` is
(5,)), and autograd's own code is written for that, so while the hook is installed
:func:`singa_getitem` gives SINGA's meaning only to callers outside the ``autograd`` package
(the program and its modules); autograd's modules keep NumPy's.

Only SINGA's index forms (integers and slices, at most one per axis) change meaning; anything
else SINGA refuses (``None``, ``...``, arrays, masks) keeps NumPy's. The result is recorded, as
our indexing is (SINGA's is a copy outside the tape).

>>> import numpy as np
>>> singa_key(-1, (3, 5)), singa_key((0, slice(1, 3)), (3, 5))
((slice(2, 3, None),), (slice(0, 1, None), slice(1, 3, None)))
>>> singa_key([0, 2], (3, 5))
[0, 2]
"""
import sys

import numpy as np

from ..tensor import Tensor

__all__ = ["singa_key", "singa_getitem", "install_indexing", "uninstall_indexing"]

_own_getitem = Tensor.__dict__.get("__getitem__")      # None: inherited (restored by deleting)
_numpy_getitem = Tensor.__getitem__


def _is_integer(key):
    return isinstance(key, (int, np.integer)) and not isinstance(key, (bool, np.bool_))


def singa_key(key, shape):
    """``key`` with each integer ``i`` on an axis of size n turned into ``slice(i mod n, i mod
    n + 1)`` (SINGA keeps the axis); ``key`` unchanged when it is not made of integers and
    slices only. An integer out of range is an IndexError, as NumPy's."""
    keys = key if isinstance(key, tuple) else (key,)
    if len(keys) > len(shape) or not all(_is_integer(k) or isinstance(k, slice) for k in keys):
        return key
    converted = []
    for axis, k in enumerate(keys):
        if isinstance(k, slice):
            converted.append(k)
            continue
        size, k = shape[axis], int(k)
        if not -size <= k < size:
            raise IndexError(f"index {k} is out of bounds for axis {axis} with size {size}")
        k %= size
        converted.append(slice(k, k + 1))
    return tuple(converted)


def _from_autograd(module_name):
    return module_name == "autograd" or module_name.startswith("autograd.")


# not mutated by tools/mutate.py: it reads its caller's frame, which mutmut's wrapper would be
def singa_getitem(tensor, key):  # pragma: no mutate block
    """``Tensor.__getitem__`` while the hook is installed: SINGA's meaning (:func:`singa_key`)
    for a caller outside the autograd package, NumPy's for autograd's own code."""
    if _from_autograd(sys._getframe(1).f_globals.get("__name__", "")):
        return _numpy_getitem(tensor, key)
    return _numpy_getitem(tensor, singa_key(key, tensor.shape))


def install_indexing():
    Tensor.__getitem__ = singa_getitem


def uninstall_indexing():
    if _own_getitem is None:
        if "__getitem__" in Tensor.__dict__:
            del Tensor.__getitem__
    else:
        Tensor.__getitem__ = _own_getitem
