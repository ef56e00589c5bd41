"""Initializer survivors of the full mutation run: messages word for word, orthogonal's default
gain, and SINGA's legacy fans at exactly one."""
import re

import numpy as np
import pytest

import autograd
from autograd import Tensor, initializer


def test_eye_of_a_vector_is_refused_word_for_word():
    with pytest.raises(ValueError, match=r"^eye: expected a 2-D tensor, got shape \(4,\)$"):
        initializer.eye(Tensor(shape=(4,)))


def test_orthogonal_of_a_vector_is_refused_word_for_word():
    with pytest.raises(ValueError, match=r"^orthogonal: expected at least 2 dimensions, "
                                         r"got shape \(4,\)$"):
        initializer.orthogonal(Tensor(shape=(4,)))


@pytest.mark.parametrize("shape", [(6, 6), (4, 9)])
def test_orthogonal_gain_defaults_to_one(shape):
    # catches gain=2.0 as the default: the rows are then orthogonal with norm 2, not 1
    w = initializer.orthogonal(Tensor(shape=shape, dtype=np.float64)).to_numpy()
    np.testing.assert_allclose(w @ w.T, np.eye(shape[0]), atol=1e-12)


@pytest.mark.parametrize("name", ["uniform", "gaussian"])
def test_both_fans_zero_is_refused_naming_the_initializer(name):
    # gaussian's defaults are (0, 0) as uniform's: called bare, both refuse
    expected = f"{name}: fan_in and fan_out cannot both be 0"
    with pytest.raises(ValueError, match=f"^{re.escape(expected)}$"):
        getattr(initializer, name)(Tensor(shape=(2, 2)))
    with pytest.raises(ValueError, match=f"^{re.escape(expected)}$"):
        getattr(initializer, name)(Tensor(shape=(2, 2)), 0, 0)


@pytest.mark.parametrize("fan_in, fan_out", [(1, 0), (0, 1)])
def test_a_single_fan_of_one_is_a_fan(fan_in, fan_out):
    # one fan of exactly 1 and the other 0: variance 1 / (fan_in + fan_out) = 1 (uniform) and
    # 2 (gaussian); catches the refusal's test `fan <= 1` for `fan <= 0`
    autograd.manual_seed(3)
    u = initializer.uniform(Tensor(shape=(500, 400)), fan_in, fan_out).to_numpy()
    np.testing.assert_allclose(u.var(), 1.0, rtol=0.05)
    assert np.abs(u).max() <= np.sqrt(3.0) * (1 + 1e-6)
    g = initializer.gaussian(Tensor(shape=(500, 400)), fan_in, fan_out).to_numpy()
    np.testing.assert_allclose(g.var(), 2.0, rtol=0.05)
