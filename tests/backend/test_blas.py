"""The BLAS routines of autograd/backend/blas.py against NumPy formulas, through each library
they can call: NumPy's own OpenBLAS (ctypes) where found, SciPy's wrappers otherwise (forced
here by hiding NumPy's), and neither (every routine declines)."""
import numpy as np
import pytest

from autograd.backend import blas


@pytest.fixture(params=["found", "scipy", "none"])
def library(request, monkeypatch):
    monkeypatch.setattr(blas, "_routines", None)
    if request.param == "scipy":
        pytest.importorskip("scipy")
        monkeypatch.setattr(blas, "_numpy_openblas", lambda: None)
    elif request.param == "none":
        monkeypatch.setattr(blas, "_routines", {})
    yield request.param
    monkeypatch.setattr(blas, "_routines", None)


def _tolerance(dtype):
    return 1e-5 if dtype == np.float32 else 1e-12


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(30, 50), (300, 50)])     # below and above blas._SMALL
def test_axpy(library, dtype, shape):
    rng = np.random.default_rng(1)
    x, y0 = (rng.standard_normal(shape).astype(dtype) for _ in range(2))
    y = y0.copy()
    done = blas.axpy(-0.75, x, y)
    assert done == (library != "none")
    expected = y0 - 0.75 * x.astype(np.float64) if done else y0
    np.testing.assert_allclose(y, expected, rtol=_tolerance(dtype), atol=_tolerance(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layouts", [("c", "c"), ("f", "f"), ("c", "f"), ("strided", "c")])
def test_gemm_adds_the_product_to_c(library, dtype, layouts):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((33, 17)).astype(dtype)
    b = rng.standard_normal((17, 45)).astype(dtype)
    c0 = rng.standard_normal((33, 45)).astype(dtype)

    def stored(array, how):
        if how == "f":
            return np.asfortranarray(array)
        if how == "strided":
            return np.repeat(array, 2, axis=1)[:, ::2]
        return array

    c = c0.copy()
    done = blas.gemm(stored(a, layouts[0]), stored(b, layouts[1]), c)
    assert done == (library != "none")
    expected = a.astype(np.float64) @ b + c0 if done else c0
    np.testing.assert_allclose(c, expected, rtol=_tolerance(dtype) * 10,
                               atol=_tolerance(dtype) * 10)


def test_other_dtypes_decline(library):
    y = np.ones(300, np.float16)
    assert not blas.axpy(1.0, np.ones(300, np.float16), y)
    assert not blas.gemm(np.ones((2, 2), np.float16), np.ones((2, 2), np.float16),
                         np.ones((2, 2), np.float16))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("inner", [1, 7])
def test_gemm_with_beta_zero_ignores_what_c_held(library, dtype, inner):
    """beta = 0 writes a @ b over c without reading it: c full of NaN (an uninitialised buffer
    may hold anything) comes back as the product alone; inner 1 is the outer product
    matmul.py asks for, each element a[i] * b[j] rounded once."""
    rng = np.random.default_rng(4)
    a = rng.standard_normal((40, inner)).astype(dtype)
    b = rng.standard_normal((inner, 60)).astype(dtype)
    c = np.full((40, 60), np.nan, dtype)
    done = blas.gemm(a, b, c, beta=0.0)
    assert done == (library != "none")
    if not done:
        assert np.isnan(c).all()
    elif inner == 1:
        np.testing.assert_array_equal(c, a * b)
    else:
        np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=_tolerance(dtype),
                                   atol=_tolerance(dtype))
