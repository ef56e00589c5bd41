"""Tests for autograd/layers/init.py: each scheme's distribution over a large layer."""
import numpy as np
import pytest

import autograd
from autograd import Linear, Tensor
from autograd.layers.init import initialize

FAN_IN, FAN_OUT = 300, 500


@pytest.mark.parametrize("scheme, wscale, std, bound", [
    ("xavier", 1.0, np.sqrt(2 / (FAN_IN + FAN_OUT)), np.sqrt(6 / (FAN_IN + FAN_OUT))),
    ("xavier", 0.5, 0.5 * np.sqrt(2 / (FAN_IN + FAN_OUT)), 0.5 * np.sqrt(6 / (FAN_IN + FAN_OUT))),
    ("he", 1.0, np.sqrt(2 / FAN_IN), None),
    ("he", 3.0, 3.0 * np.sqrt(2 / FAN_IN), None),
    ("gaussian", 1.0, 0.01, None),
    ("gaussian", 2.0, 0.02, None),
    ("uniform", 1.0, 1 / np.sqrt(3 * FAN_IN), 1 / np.sqrt(FAN_IN)),
])
def test_linear_weight_variance_follows_the_scheme(scheme, wscale, std, bound):
    autograd.manual_seed(1)
    W = Linear(FAN_IN, FAN_OUT, init=scheme, wscale=wscale).W.to_numpy()
    assert W.dtype == np.float32
    # 150000 samples: the sample std is within 1% of the true one with overwhelming odds.
    assert abs(W.std() / std - 1) < 0.01
    assert abs(W.mean()) < 0.02 * std
    if bound is not None:                      # uniform: the range is [-bound, bound]
        assert np.abs(W).max() <= bound and np.abs(W).max() > 0.99 * bound


def test_none_leaves_zeros_and_biases_start_at_zero():
    layer = Linear(4, 3, init="none")
    assert not np.any(layer.W.to_numpy()) and not np.any(layer.b.to_numpy())
    assert not np.any(Linear(4, 3, init="he").b.to_numpy())


def test_manual_seed_makes_initialisation_repeatable():
    autograd.manual_seed(7)
    first = Linear(20, 10).W.to_numpy().copy()
    autograd.manual_seed(7)
    np.testing.assert_array_equal(Linear(20, 10).W.to_numpy(), first)
    assert not np.array_equal(Linear(20, 10).W.to_numpy(), first)


def test_a_callable_scheme_receives_the_fans():
    seen = []

    def constant(tensor, fan_in, fan_out, wscale):
        seen.append((fan_in, fan_out, wscale))
        return tensor.set_value(wscale)

    layer = Linear(4, 3, init=constant, wscale=0.25)
    assert seen == [(4, 3, 0.25)] and np.all(layer.W.to_numpy() == 0.25)


def test_unknown_scheme_is_an_error():
    with pytest.raises(ValueError, match=r"init must be one of \['gaussian', 'he', 'none', "
                                         r"'uniform', 'xavier'\] or a callable, got 'kaiming'"):
        initialize(Tensor(shape=(2, 2)), "kaiming", 2, 2)
