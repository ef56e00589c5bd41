"""Matrix products with the kernel chosen by shape: the degenerate 2-D shapes of small batches
do not go through a general GEMM.

- An inner dimension of 1, (m, 1) @ (1, n), is an outer product: the weight gradient
  ``x^T @ dy`` of a batch of one row. OpenBLAS's GEMM packs both operands and runs its blocked
  kernel for it, about 4x the time of the broadcast multiply that writes the m * n products
  (784 x 512 float32, one thread: 2.2 ms against 0.3-1.0 ms on the loaded 2-core machine).
- One row times a matrix, (1, k) @ (k, n), is a matrix-vector product (GEMV): a GEMM packs the
  whole (k, n) matrix into its buffers first, a GEMV reads it once.
- Everything else (and every batched product) is NumPy's ``@``.
Large results come from the buffer cache (buffer_cache.py), as the other kernels' outputs do,
so that a step does not zero-fill fresh pages for each weight gradient.

>>> import numpy as np
>>> matmul(np.array([[1.0], [2.0]]), np.array([[3.0, 4.0]]))
array([[3., 4.],
       [6., 8.]])
"""
import numpy as np

from . import buffer_cache

__all__ = []     # reached through numpy_kernels.matmul / cupy_kernels.matmul


def matmul(a, b):
    """a @ b with NumPy's rules (batched, broadcast batch dimensions, 1-D operands)."""
    if a.ndim != 2 or b.ndim != 2 or a.dtype != b.dtype:
        return a @ b
    rows, inner = a.shape
    out = buffer_cache.empty(np, (rows, b.shape[1]), a.dtype)
    if inner == 1:
        np.multiply(a, b, out=out)                   # (m, 1) * (1, n): the outer product
    elif rows == 1:
        np.matmul(a[0], b, out=out[0])               # (k,) @ (k, n): a GEMV
    else:
        np.matmul(a, b, out=out)
    return out
