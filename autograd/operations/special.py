"""Special functions on raw arrays, dispatched to SciPy (NumPy arrays) or CuPy's copy of it.

These are helpers for operations, not operations: they take and return arrays and keep the
input's dtype (SciPy has float32 loops for both). SciPy and ``cupyx.scipy.special`` are imported
on first use, so ``import autograd`` does not pay for them.

>>> import numpy as np
>>> erf(np.array([0.0, 1.0], np.float32)).round(4)
array([0.    , 0.8427], dtype=float32)
"""
from ..device import get_array_module

__all__ = ["erf", "expit"]

_modules = {}      # array module -> its scipy.special (one import per backend)


def _special_for(array):
    xp = get_array_module(array)
    module = _modules.get(xp)
    if module is None:
        if xp.__name__ == "numpy":
            import scipy.special as module
        else:
            import cupyx.scipy.special as module
        _modules[xp] = module
    return module


def erf(array):
    """The error function of each element."""
    return _special_for(array).erf(array)


def expit(array):
    """The logistic sigmoid 1 / (1 + e^-x) of each element, without overflow for large |x|."""
    return _special_for(array).expit(array)
