"""Initializers: each one's variance formula over a large tensor, in place, repeatable."""
import numpy as np
import pytest

import autograd
from autograd import Tensor, initializer

SHAPES = [(600, 400), (64, 32, 3, 3)]


def fans(shape):
    if len(shape) == 2:
        return shape
    k = np.prod(shape[2:])
    return shape[1] * k, shape[0] * k


VARIANCE = {
    "lecun_uniform": lambda i, o: 1 / i, "lecun_normal": lambda i, o: 1 / i,
    "glorot_uniform": lambda i, o: 2 / (i + o), "glorot_normal": lambda i, o: 2 / (i + o),
    "he_uniform": lambda i, o: 2 / i, "he_normal": lambda i, o: 2 / i,
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", sorted(VARIANCE))
def test_variance_scaling_initializers(name, shape):
    t = Tensor(shape=shape)
    assert getattr(initializer, name)(t) is t
    values = t.to_numpy()
    expected = VARIANCE[name](*fans(shape))
    assert abs(values.mean()) < 4 * np.sqrt(expected / values.size)
    np.testing.assert_allclose(values.var(), expected, rtol=0.05)
    if name.endswith("uniform"):
        assert np.abs(values).max() <= np.sqrt(3 * expected) * (1 + 1e-6)


@pytest.mark.parametrize("fan_in, fan_out", [(300, 200), (300, 0), (0, 500)])
def test_singa_legacy_uniform_and_gaussian(fan_in, fan_out):
    average = 2 if fan_in * fan_out else 1
    u = initializer.uniform(Tensor(shape=(500, 400)), fan_in, fan_out).to_numpy()
    np.testing.assert_allclose(u.var(), average / (fan_in + fan_out), rtol=0.05)
    g = initializer.gaussian(Tensor(shape=(500, 400)), fan_in, fan_out).to_numpy()
    np.testing.assert_allclose(g.var(), 2 * average / (fan_in + fan_out), rtol=0.05)
    with pytest.raises(ValueError, match="fan_in and fan_out cannot both be 0"):
        initializer.uniform(Tensor(shape=(2, 2)))


def test_singa_xavier_glorot_msra():
    rows, cols = 500, 300
    np.testing.assert_allclose(initializer.xavier(Tensor(shape=(rows, cols))).to_numpy().var(),
                               6 / (rows + cols) / 3, rtol=0.05)
    np.testing.assert_allclose(initializer.glorot(Tensor(shape=(rows, cols))).to_numpy().var(),
                               2 / (rows + cols), rtol=0.05)
    np.testing.assert_allclose(initializer.msra(Tensor(shape=(rows, cols))).to_numpy().var(),
                               2 / rows, rtol=0.05)


@pytest.mark.parametrize("shape", [(5, 5), (3, 7), (7, 3), (4, 2, 3)])
def test_orthogonal_rows_or_columns_are_orthonormal(shape):
    w = initializer.orthogonal(Tensor(shape=shape), gain=2.0).to_numpy().reshape(shape[0], -1)
    small = min(w.shape)
    gram = w @ w.T if w.shape[0] == small else w.T @ w
    np.testing.assert_allclose(gram, 4.0 * np.eye(small), atol=1e-5)


def test_eye_and_dtype_kept():
    w = initializer.eye(Tensor(shape=(2, 3), dtype=np.float64))
    np.testing.assert_array_equal(w.to_numpy(), np.eye(2, 3))
    assert w.dtype == np.float64
    assert initializer.he_normal(Tensor(shape=(4, 4))).dtype == np.float32


def test_repeatable_with_manual_seed():
    autograd.manual_seed(7)
    a = initializer.glorot_uniform(Tensor(shape=(3, 4))).to_numpy()
    autograd.manual_seed(7)
    b = initializer.glorot_uniform(Tensor(shape=(3, 4))).to_numpy()
    np.testing.assert_array_equal(a, b)


def test_vectors_have_no_fans():
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        initializer.he_normal(Tensor(shape=(5,)))
