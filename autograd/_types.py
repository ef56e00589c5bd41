"""The names the public API's type hints use (for readers, mypy and the API reference).

An array is a NumPy or a CuPy array (CuPy is optional, so both are ``Any`` to the checker);
a ``Scalar`` is a Python or NumPy number. Importing this module imports nothing else of ours:
``Tensor`` is a forward reference, resolved by the checker only.
"""
from typing import TYPE_CHECKING, Any, Optional, Sequence, Tuple, Union

import numpy as np

if TYPE_CHECKING:     # for the checker only: tensor.py imports the operations, which use these
    from .tensor import Tensor

__all__ = ["Array", "Scalar", "Operand", "Axes", "Shape", "DTypeLike", "IntOrPair",
           "IntOrTuple", "Padding", "Indices"]

Array = Any                                    # numpy.ndarray or cupy.ndarray
Scalar = Union[int, float, np.number]
Operand = Union["Tensor", int, float, np.number, np.ndarray]    # a Tensor, or a constant
Axes = Optional[Union[int, Sequence[int]]]     # None: every axis
Shape = Union[int, Sequence[int]]
DTypeLike = Any                                # np.float32, "float64", np.dtype(...), ...
IntOrPair = Union[int, Tuple[int, int]]
IntOrTuple = Union[int, Sequence[int]]
Padding = Union[int, Sequence[int], str]       # per axis, SINGA's four values, or "same"/"valid"
Indices = Union["Tensor", int, Sequence[Any], np.ndarray]   # integer labels or positions
