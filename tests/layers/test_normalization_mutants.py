"""BatchNorm2d's running statistics as buffers: float32 like every parameter and PyTorch's,
starting at 0 and 1, never asking for a gradient, and updated in float32 by a training step
(the full mutation run of layers/ let float64 buffers and gradient-seeking buffers through:
docs/testing.md)."""
import re

import numpy as np
import pytest

import autograd
from autograd import Tensor


def test_running_statistics_are_float32_buffers_without_gradient():
    layer = autograd.layers.BatchNorm2d(3)
    np.testing.assert_array_equal(layer.running_mean.to_numpy(), np.zeros(3, np.float32))
    np.testing.assert_array_equal(layer.running_var.to_numpy(), np.ones(3, np.float32))
    for buffer in (layer.running_mean, layer.running_var):
        assert buffer.dtype == np.float32
        assert buffer.requires_grad is False and buffer.stores_grad is False
    assert sorted(layer.get_params()) == ["bias", "scale"]


def test_a_training_step_updates_the_float32_statistics_by_the_singa_formula():
    layer = autograd.layers.BatchNorm2d(2, momentum=0.9)
    x = np.random.default_rng(4).standard_normal((4, 2, 3, 3)).astype(np.float32)
    layer(Tensor(data=x))
    mean = x.mean(axis=(0, 2, 3))
    var = x.var(axis=(0, 2, 3), ddof=1)
    running_mean, running_var = layer.running_mean.to_numpy(), layer.running_var.to_numpy()
    assert running_mean.dtype == np.float32 and running_var.dtype == np.float32
    np.testing.assert_allclose(running_mean, 0.1 * mean, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(running_var, 0.9 + 0.1 * var, rtol=1e-5, atol=1e-7)


# From the mutation run of issue 22's layersB session: the constructor's checks at their
# bounds, its messages word for word, and the description of momentum and eps.

def test_batchnorm_takes_one_feature_and_a_momentum_of_exactly_one():
    """The bounds are inclusive: num_features=1 (mutants `<= 1`, `< 2`), momentum=1.0 (mutant
    `< 1.0`), which keeps the running statistics as they are."""
    layer = autograd.layers.BatchNorm1d(1, momentum=1.0)
    x = np.random.default_rng(6).standard_normal((5, 1)).astype(np.float32)
    y = layer(Tensor(data=x)).to_numpy()
    np.testing.assert_allclose(y, (x - x.mean()) / np.sqrt(x.var() + 1e-5), rtol=1e-4,
                               atol=1e-5)
    np.testing.assert_array_equal(layer.running_mean.to_numpy(), [0.0])
    np.testing.assert_array_equal(layer.running_var.to_numpy(), [1.0])


@pytest.mark.parametrize("value", [True, 2.0, 0, -1, "3"])
def test_batchnorm_refuses_num_features_that_is_not_a_positive_int_by_name(value):
    """A bool or a float is refused like zero (mutants: `and` for either `or`), with the
    message word for word (mutant: ValueError(None))."""
    with pytest.raises(ValueError, match=re.escape(
            f"BatchNorm2d: num_features must be a positive int, got {value!r}") + "$"):
        autograd.layers.BatchNorm2d(value)


@pytest.mark.parametrize("make, text", [
    (lambda: autograd.layers.BatchNorm2d(2), "BatchNorm2d(2)"),
    (lambda: autograd.layers.BatchNorm2d(2, momentum=0.5), "BatchNorm2d(2, momentum=0.5)"),
    (lambda: autograd.layers.BatchNorm2d(2, eps=1e-3), "BatchNorm2d(2, eps=0.001)"),
    (lambda: autograd.layers.BatchNorm1d(2, momentum=0.5, eps=1e-3),
     "BatchNorm1d(2, momentum=0.5, eps=0.001)"),
])
def test_batchnorm_describes_momentum_and_eps_when_not_the_defaults(make, text):
    assert make().describe() == text
