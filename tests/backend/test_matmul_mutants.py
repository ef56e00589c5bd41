"""Where the backend's mutation run found autograd/backend/matmul.py's tests blind
(docs/testing.md): large outer products of integers (ger does not apply, so out must still be
written) and of a broadcast (stride 0) column, and matmul_add where the fused GEMM does not
apply (integers, no BLAS). Against the NumPy formulas a * b and a @ b + c."""
import numpy as np
import pytest

from autograd.backend import blas, matmul, numpy_kernels


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.complex128])
def test_a_large_outer_product_of_non_floats_is_written(dtype):
    """(m, 1) @ (1, n) over matmul._OUTER_BY_BLAS_MIN_SIZE products: BLAS has no integer or complex
    GEMM, so _outer_by_gemm declines and the broadcast multiply must write out (the
    cached buffer it would otherwise return holds old values)."""
    rng = np.random.default_rng(1)
    a = rng.integers(-50, 50, (300, 1)).astype(dtype)
    b = rng.integers(-50, 50, (1, 400)).astype(dtype)
    assert a.shape[0] * b.shape[1] >= matmul._OUTER_BY_BLAS_MIN_SIZE
    for _ in range(2):
        dirty = numpy_kernels.matmul(np.full((300, 1), 3, dtype), np.full((1, 400), 7, dtype))
        del dirty
        y = numpy_kernels.matmul(a, b)
        assert y.dtype == dtype
        np.testing.assert_array_equal(y, a * b)


@pytest.mark.parametrize("which", ["a", "b"])
def test_a_large_outer_product_of_a_broadcast_operand(which):
    """A stride-0 column or row (np.broadcast_to): ger must not be handed increment 0."""
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((300, 1)), rng.standard_normal((1, 400))
    if which == "a":
        a = np.broadcast_to(np.array([[1.5]]), (300, 1))
    else:
        b = np.broadcast_to(np.array([[-0.25]]), (1, 400))
    np.testing.assert_array_equal(numpy_kernels.matmul(a, b), np.asarray(a) * np.asarray(b))


@pytest.mark.parametrize("dtype", [np.int64, np.float32])
def test_matmul_add_where_the_fused_gemm_does_not_apply(monkeypatch, dtype):
    """Integers (no BLAS routine) and floats with no BLAS at all: a @ b + c all the same."""
    if dtype == np.float32:
        monkeypatch.setattr(blas, "_routines", {})
    rng = np.random.default_rng(3)
    a = rng.integers(-5, 5, (200, 70)).astype(dtype)
    b = rng.integers(-5, 5, (70, 300)).astype(dtype)
    c = rng.integers(-5, 5, (300,)).astype(dtype)
    y = numpy_kernels.matmul_add(a, b, c)
    assert y.shape == (200, 300) and y.dtype == dtype
    np.testing.assert_array_equal(y, a.astype(np.int64) @ b.astype(np.int64) + c)


@pytest.fixture
def gemm_calls(monkeypatch):
    """The shapes of every fused GEMM matmul_add asks blas.gemm for, passed through."""
    calls = []
    real = blas.gemm

    def recorded(a, b, c, beta=1.0):
        if beta == 1.0:                # matmul's outer products ask for beta = 0
            calls.append((a.shape, b.shape))
        return real(a, b, c, beta)
    monkeypatch.setattr(matmul.blas, "gemm", recorded)
    return calls


def test_the_fused_gemm_takes_float_products_from_the_size_floor(gemm_calls):
    """The documented split (PyTorch's addmm: a @ b + c in one GEMM with beta = 1, whose
    accumulation into c rounds differently from the product and an add): NumPy float arrays of
    one dtype, at least matmul.FUSED_ADD_MIN_SIZE results, an inner dimension over 1. The
    values are a @ b + c on every path."""
    floor = matmul.FUSED_ADD_MIN_SIZE
    assert floor == 1 << 14
    rng = np.random.default_rng(4)

    def run(m, k, n, dtype=np.float64, c_dtype=None, kind=np.ndarray):
        a = rng.standard_normal((m, k)).astype(dtype).view(kind)
        b = rng.standard_normal((k, n)).astype(dtype)
        c = rng.standard_normal(n).astype(c_dtype or dtype)
        y = numpy_kernels.matmul_add(a, b, c)
        expected = np.asarray(a, np.float64) @ b.astype(np.float64) + c
        np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)
        fused = bool(gemm_calls)
        gemm_calls.clear()
        return fused

    class Subclass(np.ndarray):
        pass

    assert run(128, 3, 128)                      # exactly the floor
    assert run(64, 2, 256, np.float32)           # m * n counts, not k * n
    assert not run(127, 3, 128)                  # one row under it
    assert not run(128, 1, 128)                  # an outer product: no GEMM
    assert not run(128, 3, 128, np.float32, np.float64)     # c of another dtype
    assert not run(128, 3, 128, kind=Subclass)
    assert not run(512, 40, 32, np.int64)        # integers: no BLAS routine


@pytest.mark.parametrize("which", ["a", "b"])
def test_matmul_add_of_an_ndarray_subclass_operand_takes_the_plain_path(gemm_calls, which):
    class Subclass(np.ndarray):
        pass
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((128, 3)), rng.standard_normal((3, 128))
    c = rng.standard_normal(128)
    a_in = a.view(Subclass) if which == "a" else a
    b_in = b.view(Subclass) if which == "b" else b
    y = numpy_kernels.matmul_add(a_in, b_in, c)
    assert gemm_calls == []
    np.testing.assert_allclose(y, a @ b + c, rtol=1e-12, atol=1e-12)
