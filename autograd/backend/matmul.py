"""Matrix products with the kernel chosen by shape: the degenerate 2-D shapes of small batches
do not go through a general GEMM.

- An inner dimension of 1, (m, 1) @ (1, n), is an outer product: the weight gradient
  ``x^T @ dy`` of a batch of one row. For 784 x 512 float32 NumPy's ``@`` took 1.1-1.4 ms
  and its broadcast multiply 0.28-0.34 ms. Large ones are one BLAS GEMM of
  inner dimension 1 with ``beta = 0`` into the uninitialised buffer, which writes each
  product ``a[i] * b[j]`` rounded once: 0.19 ms, against 0.22 ms for the zero fill and
  rank-1 update (``ger``) that it replaced (512 x 256: 0.05 against 0.09 ms).
- One row times a matrix, (1, k) @ (k, n), is a matrix-vector product (GEMV): a GEMM packs the
  whole (k, n) matrix into its buffers first, a GEMV reads it once.
- Everything else (and every batched product) is NumPy's ``@``.
``repeated_operand(b, rows, uses)`` prepares the right operand of many products with one small
left operand (a recurrent layer's ``dh = da @ W_hh^T`` at every step): OpenBLAS multiplies a
few rows by a row-major matrix 20-45% faster than by a transposed view (32 x 1024 by
1024 x 256: 0.30 against 0.38 ms; 8 rows: 0.13 against 0.23 ms), so a transposed b is copied
once (about 0.5 ms for 1 MB) when its products save more than that.
``sum_rows(x)`` sums a matrix's rows (a bias gradient) as the product ``ones @ x``: a GEMV
that BLAS splits over its threads, where NumPy's ``x.sum(axis=0)`` runs on one.
``matmul_add(a, b, c)`` is ``a @ b + c`` (c a bias row or a full matrix) in one GEMM with
``beta = 1`` on a buffer that holds c, as PyTorch's ``addmm``: a linear head's bias costs no
pass of its own over the (N, V) logits.
Large results come from the buffer cache (buffer_cache.py), as the other kernels' outputs do,
so that a step does not zero-fill fresh pages for each weight gradient.

>>> import numpy as np
>>> matmul(np.array([[1.0], [2.0]]), np.array([[3.0, 4.0]]))
array([[3., 4.],
       [6., 8.]])
"""
import numpy as np

from . import blas, buffer_cache, native, threads

__all__ = []     # reached through numpy_kernels.matmul / cupy_kernels.matmul


def matmul(a, b):
    """a @ b with NumPy's rules (batched, broadcast batch dimensions, 1-D operands)."""
    if a.ndim != 2 or b.ndim != 2 or a.dtype != b.dtype:
        return a @ b
    out = buffer_cache.empty(np, (a.shape[0], b.shape[1]), a.dtype)
    if native.product(a, b, out):
        return out
    return _blas_product_into(a, b, out)


def _blas_product_into(a, b, out):
    """out = a @ b for 2-D a, b and out of one dtype where the compiled products do not apply:
    NumPy's BLAS, or the outer product as a GEMM or a broadcast multiply."""
    rows, inner = a.shape
    if inner == 1:
        if out.size < _OUTER_BY_BLAS_MIN_SIZE or not _outer_by_gemm(a, b, out):
            np.multiply(a, b, out=out)               # (m, 1) * (1, n): the outer product
    elif rows == 1:
        np.matmul(a[0], b, out=out[0])               # (k,) @ (k, n): a GEMV
    elif _SWAPPED_ROWS[0] <= rows <= _SWAPPED_ROWS[1] and _transposed_is_faster(a, b, out):
        # (b^T @ a^T)^T: OpenBLAS splits and packs a few rows times a transposed matrix
        # poorly; the product with the roles swapped, then one transposing copy, took 0.5-0.9x
        # its time at 17-48 rows (a language model's dh = dlogits W^T at batch 1: 35 rows)
        swapped = buffer_cache.empty(np, out.shape[::-1], out.dtype)
        np.matmul(b.T, a.T, out=swapped)
        np.copyto(out, swapped.T)
    else:
        np.matmul(a, b, out=out)
    return out


# a @ b^T-shaped products (b a transposed C-contiguous matrix) of this many rows, and at least
# this many multiply-adds, are computed with the roles swapped (benchmarks/NOTES.md,
# nineteenth session: 0.5-0.9x at 17-48 rows from 2^20 multiply-adds; from 64 rows mixed)
_SWAPPED_ROWS = (17, 48)
_SWAPPED_MIN_WORK = 1 << 20


def _transposed_is_faster(a, b, out):
    """Whether a (rows in _SWAPPED_ROWS) @ b is one to compute with the roles swapped."""
    rows, inner = a.shape
    return (rows * inner * b.shape[1] >= _SWAPPED_MIN_WORK
            and b.flags.f_contiguous and not b.flags.c_contiguous
            and a.flags.c_contiguous and out.flags.c_contiguous and a.dtype.kind == "f")


_OUTER_BY_BLAS_MIN_SIZE = 1 << 14


def repeated_operand(b, rows, uses):
    """b (k, n), laid out for ``uses`` products ``a @ b`` with a (rows, k): a C-contiguous copy
    of an F-contiguous (transposed) b when the products gain more than the copy costs."""
    if (type(b) is np.ndarray and b.ndim == 2 and b.flags.f_contiguous
            and not b.flags.c_contiguous and rows >= _REPEATED_MIN_ROWS
            and uses >= _REPEATED_MIN_USES):
        copy = buffer_cache.empty(np, b.shape, b.dtype)
        # by blocks of 8 columns: NumPy's copy of the whole transposed matrix walked rows 4 KB
        # apart (an LSTM's (1024, 256) W_hh^T: 0.74 against 0.18 ms; (4096, 1024) 3.0 / 0.75)
        for start in range(0, b.shape[1], _COPY_COLUMNS):
            np.copyto(copy[:, start:start + _COPY_COLUMNS], b[:, start:start + _COPY_COLUMNS])
        return copy
    return b


_COPY_COLUMNS = 8


# One row is a GEMV, as fast on a transposed matrix; the copy costs about 15 small products.
_REPEATED_MIN_ROWS = 4
_REPEATED_MIN_USES = 16


def _outer_by_gemm(a, b, out):
    """out = a @ b for a (m, 1), b (1, n) by a GEMM with beta = 0 on a C-order ``out``; False
    where it does not apply."""
    if not out.flags.c_contiguous or out.dtype.kind != "f":
        return False
    return blas.gemm(a, b, out, beta=0.0)


def _fill(out, c):
    """out[...] = c (a bias row, or a matrix of out's shape), split over the threads by rows
    when out is large: a language model's (1120, 10000) logits took 8.4 ms a step to fill on
    one thread and 4.4 ms on two; a GPT's (768, 512) ones were slower split (the threads'
    handoff costs as much as the copy)."""
    if out.size < _FILL_SPLIT_MIN_SIZE:
        np.copyto(out, c)
        return
    whole = c.ndim == 2 and c.shape[0] == out.shape[0]

    def part(start, stop):
        np.copyto(out[start:stop], c[start:stop] if whole else c)

    threads.parallel_for(part, out.shape[0], out)


_FILL_SPLIT_MIN_SIZE = 1 << 20


def sum_rows(x):
    """x (r, c) summed over its rows: (c,). A float32/float64 NumPy matrix takes a GEMV by a
    vector of ones (BLAS's threads: a (768, 128) float32 gradient 14 against 56 us for
    ``x.sum(axis=0)``, (1120, 10000) 1.9 against 5.2 ms at 2 threads); anything else NumPy's
    sum.

    >>> sum_rows(np.array([[1.0, 2.0], [3.0, 4.0]]))
    array([4., 6.])
    """
    if (type(x) is np.ndarray and x.ndim == 2 and x.shape[0] > 1
            and (x.dtype == np.float32 or x.dtype == np.float64)):
        out = np.empty(x.shape[1], x.dtype)
        np.matmul(ones(x.shape[0], x.dtype), x, out=out)
        return out
    return x.sum(axis=0)


_ones_of = {}      # dtype -> a read-only vector of ones, grown to the longest asked for


def ones(count, dtype):
    """A read-only vector of ``count`` ones (a GEMV by it sums rows: sum_rows, the pooling's
    spatial_mean), kept per dtype."""
    vector = _ones_of.get(dtype)
    if vector is None or vector.shape[0] < count:
        vector = np.ones(max(count, 1024), dtype)
        vector.flags.writeable = False
        _ones_of[dtype] = vector
    return vector[:count]


# results at least this large take the fused GEMM; smaller ones the product and an add
FUSED_ADD_MIN_SIZE = 1 << 14


def matmul_add(a, b, c):
    """a @ b + c for 2-D a (m, k), b (k, n) and c broadcasting to (m, n)."""
    if not (type(a) is np.ndarray and type(b) is np.ndarray and type(c) is np.ndarray
            and a.ndim == 2 and b.ndim == 2 and a.dtype == b.dtype == c.dtype):
        out = matmul(a, b)
        out += c
        return out
    rows, columns = a.shape[0], b.shape[1]
    bias_row = c.size == columns and (c.ndim == 1 or c.ndim == 2 and c.shape[0] == 1)
    if bias_row and native.takes_many_rows(a, b):
        # many rows by a wide b on cache lines: the compiled product, which adds the bias as it
        # stores (the fused GEMM first writes c into the whole result)
        out = buffer_cache.empty(np, (rows, columns), a.dtype)
        if native.product(a, b, out, c.reshape(-1)):
            return out
    if rows * columns >= FUSED_ADD_MIN_SIZE and a.dtype.kind == "f" and a.shape[1] > 1:
        out = buffer_cache.empty(np, (rows, columns), a.dtype)
        _fill(out, c)
        if blas.gemm(a, b, out):
            return out
    if bias_row:
        # a bias row: added by the compiled product where each thread stores its sums (a pass
        # of its own after a product split over threads reads half of it from the other core)
        out = buffer_cache.empty(np, (rows, columns), a.dtype)
        if native.product(a, b, out, c if c.ndim == 1 else c.reshape(-1)):
            return out
        # refused: the product is not one the kernels take (or, rarely, c is a strided row)
        out = _blas_product_into(a, b, out)
    else:
        out = matmul(a, b)
    out += c
    return out
