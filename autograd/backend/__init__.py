"""How the maths runs fast: the kernels operations call, one backend per kind of array.

An operation says what it computes and asks the backend of its inputs for the kernels that do
it: ``kernels_for(x).conv2d_forward(x, W, b, geometry, pads, needs)``. ``numpy_kernels`` (the
CPU) owns the speed machinery: intra-op threads, reused host buffers, batch-last image layouts,
im2col/col2im, Winograd, the bias in the GEMM and the elementwise fast paths. ``cupy_kernels``
(NVIDIA GPUs) has the same names over CuPy arrays. Every kernel is tested against a plain NumPy
reference of its own in tests/backend/. docs/architecture.md says what lives where.

>>> import numpy as np
>>> kernels_for(np.zeros(3)).name
'numpy'
"""
import numpy as np

from ..device import get_array_module
from . import numpy_kernels

__all__ = ["kernels_for"]

_ndarray = np.ndarray


def kernels_for(array):
    """The kernel module for ``array``'s kind: ``numpy_kernels`` for a NumPy array,
    ``cupy_kernels`` for a CuPy array."""
    if isinstance(array, _ndarray):
        return numpy_kernels
    if get_array_module(array) is not np:
        from . import cupy_kernels
        return cupy_kernels
    raise TypeError(f"kernels_for: expected a NumPy or CuPy array, got {type(array).__name__}")
