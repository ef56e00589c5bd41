"""The BLAS routines NumPy does not expose: ``axpy`` (y += a x) and ``gemm`` with ``beta``
(C = A B + beta C), for contiguous float32/float64 NumPy arrays.

They are called in NumPy's own OpenBLAS through ctypes where it is found (NumPy's wheels export
``scipy_cblas_*64_``), so that they share its thread pool, its thread count and the short spin
that ``autograd.runtime.shorten_blas_spin`` gives that pool: a second OpenBLAS (SciPy's) would
keep its own threads spinning for ~0.1 s after each call, on the cores the next GEMM needs.
Elsewhere SciPy's wrappers of its BLAS are used (SciPy is a dependency), and for small axpy
calls everywhere (see ``_SMALL``); with neither, every function returns False and the caller
takes its NumPy expression. Nothing is loaded before the
first call.

>>> import numpy as np
>>> y = np.ones(4, np.float32)
>>> axpy(-0.5, np.full(4, 2.0, np.float32), y) and y.tolist()
[0.0, 0.0, 0.0, 0.0]
"""
import ctypes
import os

import numpy as np

__all__ = []     # used by update.py and matmul.py

_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112
_routines = None      # {(name, dtype): callable} once loaded


def _numpy_openblas():
    """NumPy's bundled OpenBLAS (a ctypes library) if it is loaded and exports the 64-bit-index
    CBLAS names; else None."""
    numpy_root = os.path.dirname(os.path.dirname(os.path.abspath(np.__file__)))
    try:
        with open("/proc/self/maps") as maps:
            paths = sorted({line.split()[-1] for line in maps
                            if "openblas" in line.lower() and ".so" in line.split()[-1]})
    except OSError:
        return None
    for path in paths:
        inside = os.path.relpath(path, numpy_root)
        if not inside.startswith("numpy"):          # numpy.libs/ or numpy/.libs/
            continue
        try:
            library = ctypes.CDLL(path)
        except OSError:
            continue
        if all(hasattr(library, f"scipy_cblas_{p}{n}64_") for p in "sd"
               for n in ("axpy", "gemm")):
            return library
    return None


def _load():
    global _routines
    routines = {}
    library = _numpy_openblas()
    index, pointer = ctypes.c_int64, ctypes.c_void_p
    if library is not None:
        for prefix, dtype, scalar in (("s", np.float32, ctypes.c_float),
                                      ("d", np.float64, ctypes.c_double)):
            dtype = np.dtype(dtype)
            axpy_ = getattr(library, f"scipy_cblas_{prefix}axpy64_")
            axpy_.argtypes = [index, scalar, pointer, index, pointer, index]
            axpy_.restype = None
            gemm_ = getattr(library, f"scipy_cblas_{prefix}gemm64_")
            gemm_.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, index, index, index,
                              scalar, pointer, index, pointer, index, scalar, pointer, index]
            gemm_.restype = None
            routines["axpy", dtype] = axpy_
            routines["gemm", dtype] = gemm_
        routines["kind"] = "numpy"
    try:
        from scipy.linalg import blas
    except ImportError:
        blas = None
    if blas is not None and library is not None:
        for prefix, dtype in (("s", np.float32), ("d", np.float64)):
            routines["small axpy", np.dtype(dtype)] = getattr(blas, prefix + "axpy")
    elif blas is not None:
        for prefix, dtype in (("s", np.float32), ("d", np.float64)):
            dtype = np.dtype(dtype)
            for name in ("axpy", "gemm"):
                routines[name, dtype] = getattr(blas, prefix + name)
        routines["kind"] = "scipy"
    _routines = routines
    return routines


def library_kind():
    """Which BLAS these routines call: "numpy" (NumPy's OpenBLAS), "scipy" or None."""
    return (_routines if _routines is not None else _load()).get("kind")


# A ctypes call costs ~2-5 us of argument conversion, SciPy's wrapper ~0.5 us: below this many
# elements (where OpenBLAS runs axpy on one thread, so SciPy's copy of OpenBLAS starts no thread
# of its own) axpy goes through SciPy when NumPy's OpenBLAS serves the rest
_SMALL = 8192


def _address(array):
    return array.__array_interface__["data"][0]


def axpy(alpha, x, y):
    """y += alpha * x in place for C-contiguous x and y of one size and float dtype; False
    (nothing written) where no BLAS routine applies."""
    routines = _routines if _routines is not None else _load()
    if y.size < _SMALL:
        function = routines.get(("small axpy", y.dtype))
        if function is not None:
            function(x.reshape(-1), y.reshape(-1), a=alpha)   # SciPy writes y in place
            return True
    function = routines.get(("axpy", y.dtype))
    if function is None:
        return False
    if routines["kind"] == "numpy":
        function(y.size, alpha, _address(x), 1, _address(y), 1)
    else:
        function(x.reshape(-1), y.reshape(-1), a=alpha)       # SciPy writes y in place
    return True


def gemm(a, b, c, beta=1.0):
    """c = a @ b + beta * c for 2-D a (m, k), b (k, n) and a C-contiguous c (m, n), all of one
    float dtype; False where no BLAS routine applies. With beta = 0, c's old values are not
    read (BLAS's rule), so c may be an uninitialised buffer."""
    routines = _routines if _routines is not None else _load()
    function = routines.get(("gemm", c.dtype))
    if function is None:
        return False
    if routines["kind"] == "numpy":
        operands = []
        for operand in (a, b):
            if operand.flags.c_contiguous:
                operands.append((operand, _NO_TRANS, operand.shape[1]))
            elif operand.flags.f_contiguous:
                operands.append((operand, _TRANS, operand.shape[0]))
            else:
                operand = np.ascontiguousarray(operand)
                operands.append((operand, _NO_TRANS, operand.shape[1]))
        (a, trans_a, lda), (b, trans_b, ldb) = operands
        m, k = a.shape
        n = b.shape[1]
        function(_ROW_MAJOR, trans_a, trans_b, m, n, k, 1.0, _address(a), max(lda, 1),
                 _address(b), max(ldb, 1), beta, _address(c), max(n, 1))
        return True
    # c^T = b^T a^T + c^T: c^T is Fortran-ordered, so BLAS writes c in place
    result = function(1.0, b.T, a.T, beta=beta, c=c.T, overwrite_c=1)
    if _address(result) != _address(c):
        np.copyto(c.T, result)
    return True
