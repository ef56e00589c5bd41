"""erf and expit on the arrays that go to SciPy, where the mutation run of issue 22
(docs/testing.md, chunk 5) found the suite blind: test_special.py checks only large float32
arrays (the fast approximation), so a float64 array sent to the float32 approximation, or SciPy
called on the wrong argument, went unnoticed. SciPy's own float64 functions are the reference:
the SciPy path must match them exactly, the float32 approximation within its 7e-7."""
import numpy as np
import pytest
import scipy.special

from autograd.backend.elementwise import ERF_CHUNK as CHUNK
from autograd.operations import special


@pytest.mark.parametrize("size", [5, CHUNK, 3 * CHUNK + 7])
def test_erf_of_float64_is_scipys_to_the_last_bit(size):
    x = np.random.default_rng(size).standard_normal(size) * 3
    y = special.erf(x)
    assert y.dtype == np.float64
    np.testing.assert_array_equal(y, scipy.special.erf(x))


def test_erf_of_a_small_float32_array_is_scipys_float32_loop():
    x = np.linspace(-3, 3, 101).astype(np.float32).reshape(101, 1)
    y = special.erf(x)
    assert y.dtype == np.float32 and y.shape == (101, 1)
    np.testing.assert_allclose(y, scipy.special.erf(x.astype(np.float64)), rtol=0, atol=7e-7)


def test_erf_float32_of_a_zero_d_and_a_three_d_array():
    x = np.array(0.75, np.float32)
    y = special.erf_float32(x)
    assert y.shape == () and y.dtype == np.float32
    assert abs(float(y) - scipy.special.erf(0.75)) < 7e-7
    cube = np.linspace(-4, 4, 2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_allclose(special.erf_float32(cube),
                               scipy.special.erf(cube.astype(np.float64)), rtol=0, atol=7e-7)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_expit_is_the_logistic_function_without_overflow(dtype):
    x = np.array([-1000.0, -30.0, -1.0, 0.0, 0.5, 30.0, 1000.0], dtype)
    with np.errstate(over="raise"):
        y = special.expit(x)
    assert y.dtype == dtype
    x64 = x.astype(np.float64)
    expected = np.where(x64 >= 0, 1 / (1 + np.exp(-np.abs(x64))),
                        np.exp(-np.abs(x64)) / (1 + np.exp(-np.abs(x64))))
    np.testing.assert_allclose(y, expected, rtol=1e-6 if dtype == np.float32 else 1e-15)


def test_the_first_call_in_a_process_finds_scipy_for_numpy_arrays(monkeypatch):
    """With the per-backend cache empty (as at the first use in a process; an earlier test
    has filled it here), NumPy arrays go to scipy.special, not cupyx."""
    monkeypatch.setattr(special, "_modules", {})
    x = np.array([-0.5, 0.25, 2.0])
    np.testing.assert_array_equal(special.erf(x), scipy.special.erf(x))
    monkeypatch.setattr(special, "_modules", {})
    np.testing.assert_array_equal(special.expit(x), scipy.special.expit(x))
