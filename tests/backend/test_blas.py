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
@pytest.mark.parametrize("strides", [(1, 1), (3, 2)])
def test_ger_adds_the_outer_product(library, dtype, strides):
    rng = np.random.default_rng(2)
    x = rng.standard_normal(40 * strides[0]).astype(dtype)[::strides[0]]
    y = rng.standard_normal(60 * strides[1]).astype(dtype)[::strides[1]]
    a0 = rng.standard_normal((40, 60)).astype(dtype)
    a = a0.copy()
    done = blas.ger(x, y, a)
    assert done == (library != "none")
    expected = a0 + np.outer(x, y).astype(np.float64) if done else a0
    np.testing.assert_allclose(a, expected, rtol=_tolerance(dtype), atol=_tolerance(dtype))


def test_ger_declines_a_reversed_vector_on_numpys_blas(library):
    x = np.arange(4.0)[::-1]
    a = np.zeros((4, 3))
    done = blas.ger(x, np.ones(3), a)
    if done:       # SciPy copies a reversed vector: then the result must still be right
        np.testing.assert_array_equal(a, np.outer(x, np.ones(3)))
    else:
        assert library in ("found", "none") and not a.any()


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
