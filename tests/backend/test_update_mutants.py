"""Where the backend's mutation run found autograd/backend/update.py's tests blind
(docs/testing.md): the exact alphas the NumPy path special-cases (-1, 1, and 2 or -2 that
must not be taken for them), a weight decay of exactly 1, a large Adam epsilon, x and y of
different dtypes, and which arrays take BLAS's axpy (its fused multiply-add rounds differently
from the NumPy expression in the last bit, so the choice is pinned by recording the calls).
Values against the optimizers' formulas in float64 NumPy."""
import numpy as np
import pytest

from autograd.backend import numpy_kernels, update


@pytest.mark.parametrize("alpha", [-2.0, -1.0, 1.0, 2.0])
@pytest.mark.parametrize("size", [7, 1000])                   # the NumPy path and BLAS's
def test_axpy_with_whole_alphas_is_y_plus_alpha_x(alpha, size):
    """``alpha == -1`` / ``== 1`` select ``y -= x`` / ``y += x``: a mutant that tests against
    -2 or 2 would subtract or add x once for alpha = -2 or 2."""
    rng = np.random.default_rng(size)
    x, y0 = rng.standard_normal(size), rng.standard_normal(size)
    y = y0.copy()
    numpy_kernels.axpy(alpha, x, y)
    np.testing.assert_array_equal(y, y0 + alpha * x)           # exact: alpha * x is exact


@pytest.mark.parametrize("dtypes", [(np.float64, np.float32), (np.float32, np.float64)])
def test_axpy_of_a_gradient_of_another_dtype_is_still_the_formula(dtypes):
    """x and y of different dtypes must not reach BLAS, whose ctypes call (above blas._SMALL
    elements) reads x's memory as y's dtype."""
    x_dtype, y_dtype = dtypes
    rng = np.random.default_rng(2)
    x = rng.standard_normal(10000).astype(x_dtype)
    y0 = rng.standard_normal(10000).astype(y_dtype)
    y = y0.copy()
    numpy_kernels.axpy(-0.3, x, y)
    assert y.dtype == y_dtype
    np.testing.assert_allclose(y, y0 - 0.3 * x.astype(np.float64), rtol=1e-6, atol=1e-6)


@pytest.fixture
def blas_calls(monkeypatch):
    """Every call update.axpy makes into blas.axpy, passed through."""
    calls = []
    real = update.blas.axpy

    def recorded(alpha, x, y):
        calls.append((alpha, x.shape, y.dtype))
        return real(alpha, x, y)
    monkeypatch.setattr(update.blas, "axpy", recorded)
    return calls


def test_blas_takes_contiguous_same_dtype_updates_from_256_elements(blas_calls):
    """The documented split: BLAS for C-contiguous, writeable float arrays of one dtype with
    at least update._BLAS_MIN_SIZE elements, the NumPy expression for the rest (float64 here:
    float32 ones go to the compiled kernel first where it is built, test_native_update.py)."""
    size = update._BLAS_MIN_SIZE
    assert size == 256
    x, y = np.ones(size), np.zeros(size)
    numpy_kernels.axpy(0.5, x, y)
    assert blas_calls == [(0.5, (size,), np.float64)] and (y == 0.5).all()
    blas_calls.clear()
    small_y = np.zeros(size - 1)
    numpy_kernels.axpy(0.5, np.ones(size - 1), small_y)
    strided_y = np.zeros(2 * size)[::2]
    numpy_kernels.axpy(0.5, x, strided_y)
    numpy_kernels.axpy(0.5, np.ones(2 * size)[::2], y)
    numpy_kernels.axpy(0.5, x.astype(np.float32), y)
    assert blas_calls == []
    assert (small_y == 0.5).all() and (strided_y == 0.5).all() and (y == 1.5).all()


def test_axpy_into_an_ndarray_subclass_takes_the_numpy_expression(blas_calls):
    """Only NumPy's own array type goes to BLAS (a subclass, like CuPy's arrays, takes the
    expression of its own module)."""
    class Subclass(np.ndarray):
        pass
    y = np.zeros(300).view(Subclass)
    numpy_kernels.axpy(2.0, np.ones(300), y)
    x = np.ones(300).view(Subclass)
    y_plain = np.zeros(300)
    numpy_kernels.axpy(2.0, x, y_plain)
    assert blas_calls == []
    assert (y == 2).all() and (y_plain == 2).all()


@pytest.mark.parametrize("nesterov", [False, True])
def test_sgd_with_a_weight_decay_of_one(nesterov):
    """``weight_decay == 0`` returns the gradient itself; a test against 1 would drop a decay
    of exactly 1 (and a decay of 0 returns the caller's array, not a copy)."""
    rng = np.random.default_rng(3)
    p0, g = rng.standard_normal(300), rng.standard_normal(300)
    p, state = p0.copy(), {}
    numpy_kernels.sgd_update(p, g, state, 0.1, 0.0, 0.0, 1.0, False)
    np.testing.assert_allclose(p, p0 - 0.1 * (g + p0), rtol=1e-13, atol=1e-13)
    assert update.with_weight_decay(g, p0, 0) is g
    np.testing.assert_array_equal(update.with_weight_decay(g, p0, 1.0), g + p0)


def _adam_reference(p, g, lr, beta_1, beta_2, epsilon, weight_decay, decoupled):
    """One Adam / AdamW step from zero moments, in float64."""
    if not decoupled:
        g = g + weight_decay * p
    m, v = (1 - beta_1) * g, (1 - beta_2) * g * g
    if decoupled:
        p = p * (1 - lr * weight_decay)
    return p - lr * (m / (1 - beta_1)) / (np.sqrt(v / (1 - beta_2)) + epsilon)


@pytest.mark.parametrize("decoupled", [False, True])
def test_adam_with_a_weight_decay_of_one_and_a_large_epsilon(decoupled):
    """AdamW's ``weight_decay != 0`` test (a decay of exactly 1 must still shrink p) and the
    epsilon added, not subtracted, to sqrt(v_hat): with epsilon 0.5 a sign error is large."""
    rng = np.random.default_rng(4)
    p0, g = rng.standard_normal(300), rng.standard_normal(300)
    for weight_decay, epsilon in ((1.0, 1e-8), (0.0, 0.5)):
        p, state = p0.copy(), {}
        numpy_kernels.adam_update(p, g, state, 0.01, 0.9, 0.999, epsilon, weight_decay,
                                  decoupled)
        expected = _adam_reference(p0, g, 0.01, 0.9, 0.999, epsilon, weight_decay, decoupled)
        np.testing.assert_allclose(p, expected, rtol=1e-12, atol=1e-12)
