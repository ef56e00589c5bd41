"""The float32 erf (a rational approximation in cache-sized chunks) against SciPy in float64,
on every range the approximation has pieces for, and GELU on arrays large enough to use it."""
import numpy as np
import pytest
import scipy.special

import autograd
from autograd.backend.elementwise import ERF_CHUNK
from autograd.operations import special


@pytest.mark.parametrize("shape", [(40000,), (3, 7001), (130, 257), (3 * ERF_CHUNK + 7,)])
def test_float32_erf_is_within_7e_7_of_the_exact_values(shape):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 3).astype(np.float32)
    x.reshape(-1)[:6] = [0.0, -0.0, np.inf, -np.inf, 30.0, -1e-30]
    y = special.erf(x)
    assert y.dtype == np.float32 and y.shape == x.shape
    np.testing.assert_allclose(y, scipy.special.erf(x.astype(np.float64)), rtol=0, atol=7e-7)
    assert np.isnan(special.erf(np.full(20000, np.nan, np.float32))).all()


def test_non_contiguous_input():
    x = np.linspace(-4, 4, 80000, dtype=np.float32).reshape(400, 200).T
    np.testing.assert_allclose(special.erf(x), scipy.special.erf(x.astype(np.float64)),
                               atol=7e-7)


@pytest.mark.parametrize("shape", [(96, 512), (3, ERF_CHUNK + 11)])    # one chunk, several
def test_gelu_on_a_large_float32_array_matches_the_float64_formula(shape):
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32) * 4
    t = autograd.Tensor(data=x, stores_grad=True)
    y = autograd.gelu(t)
    grad = autograd.gradients(autograd.sum(y))[t].to_numpy()
    x64 = x.astype(np.float64)
    cdf = 0.5 * (1 + scipy.special.erf(x64 / np.sqrt(2)))
    np.testing.assert_allclose(y.to_numpy(), x64 * cdf, rtol=1e-5, atol=3e-6)
    np.testing.assert_allclose(grad, cdf + x64 * np.exp(-x64 ** 2 / 2) / np.sqrt(2 * np.pi),
                               rtol=1e-5, atol=3e-6)
