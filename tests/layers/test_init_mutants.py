"""Tests written from the surviving mutants of autograd/layers/init.py (issue 22): each scheme
called directly with its default wscale (1.0), against the formula of its docstring."""
import numpy as np
import pytest

import autograd
from autograd import Tensor
from autograd.layers import init

FAN_IN, FAN_OUT = 400, 300


@pytest.mark.parametrize("scheme, std", [
    (init.he, np.sqrt(2 / FAN_IN)),
    (init.gaussian, 0.01),
    (init.xavier, np.sqrt(2 / (FAN_IN + FAN_OUT))),
    (init.uniform, 1 / np.sqrt(3 * FAN_IN)),
])
def test_each_scheme_called_without_wscale_uses_one(scheme, std):
    """The default `wscale=1.0` changed to 2.0 doubles the spread."""
    autograd.manual_seed(2)
    tensor = Tensor(shape=(FAN_IN, FAN_OUT))
    assert scheme(tensor, FAN_IN, FAN_OUT) is tensor
    values = tensor.to_numpy()
    # 120000 draws: the sample std is within 1% of the true one with overwhelming odds
    assert abs(values.std() / std - 1) < 0.01


def test_uniform_called_without_wscale_fills_the_documented_range():
    autograd.manual_seed(3)
    values = init.uniform(Tensor(shape=(FAN_IN, FAN_OUT)), FAN_IN, FAN_OUT).to_numpy()
    bound = 1 / np.sqrt(FAN_IN)
    assert np.abs(values).max() <= bound and np.abs(values).max() > 0.99 * bound


def test_initialize_passes_a_default_wscale_of_one_and_the_fans_at_least_one():
    """initialize's own default `wscale=1.0`, and its `max(int(fan), 1)` for empty fans."""
    seen = []

    def record(tensor, fan_in, fan_out, wscale):
        seen.append((fan_in, fan_out, wscale))
        return tensor

    tensor = Tensor(shape=(2, 2))
    assert init.initialize(tensor, record, 3, 5) is tensor
    init.initialize(tensor, record, 0, 0.0, wscale=2)
    init.initialize(tensor, record, 4.7, 2)
    assert seen == [(3, 5, 1.0), (1, 1, 2.0), (4, 2, 1.0)]
    assert all(type(v) is int for fans in seen for v in fans[:2])
    assert all(type(fans[2]) is float for fans in seen)


def test_initialize_by_name_without_wscale_uses_one():
    autograd.manual_seed(4)
    values = init.initialize(Tensor(shape=(FAN_IN, FAN_OUT)), "he", FAN_IN, FAN_OUT).to_numpy()
    assert abs(values.std() / np.sqrt(2 / FAN_IN) - 1) < 0.01
