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


LN = "LayerNorm: normalized_shape must be a positive int or a tuple of them, got"


@pytest.mark.parametrize("make, message", [
    (lambda: autograd.layers.LayerNorm(0), f"{LN} 0"),
    (lambda: autograd.layers.LayerNorm(()), f"{LN} ()"),
    (lambda: autograd.layers.LayerNorm((2, "a")), f"{LN} (2, 'a')"),
    (lambda: autograd.layers.LayerNorm((2, 0)), f"{LN} (2, 0)"),
    (lambda: autograd.layers.LayerNorm((2, 3)).output_shape((2, 3)),
     "LayerNorm((2, 3)): expected input (N, ..., 2, 3), got (2, 3)"),
    (lambda: autograd.layers.LayerNorm((2, 3)).output_shape((4, 3, 2)),
     "LayerNorm((2, 3)): expected input (N, ..., 2, 3), got (4, 3, 2)"),
    (lambda: autograd.layers.LayerNorm(3)(Tensor(shape=(2, 4))),
     "LayerNorm((3,)): expected input (N, ..., 3), got (2, 4)"),
    (lambda: autograd.layers.BatchNorm2d(3).output_shape((2, 4, 5, 5)),
     "BatchNorm2d(3): expected input (N, 3, H, W), got (2, 4, 5, 5)"),
    (lambda: autograd.layers.BatchNorm1d(3).output_shape((2, 3, 5)),
     "BatchNorm1d(3): expected input (N, 3), got (2, 3, 5)"),
    (lambda: autograd.layers.BatchNorm2d(3, eps=0), "BatchNorm2d: eps must be positive, got 0"),
    (lambda: autograd.layers.BatchNorm2d(3, momentum=-0.1),
     "BatchNorm2d: momentum must be in [0, 1], got -0.1"),
    (lambda: autograd.layers.BatchNorm2d(3)(Tensor(shape=(1, 3, 1, 1))),
     "BatchNorm2d(3): training needs more than one value per channel, got input (1, 3, 1, 1)"),
])
def test_normalization_messages_word_for_word(make, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        make()


@pytest.mark.parametrize("shape, affine", [(3, True), ((2, 3), True), ((2, 3), False)])
def test_layernorm_parameters_and_formula_over_the_trailing_axes(shape, affine):
    """scale ones and bias zeros of normalized_shape, float32, or none without affine; the
    output normalises over exactly the trailing axes with the default eps 1e-5."""
    layer = autograd.layers.LayerNorm(shape, elementwise_affine=affine)
    dims = (shape,) if isinstance(shape, int) else shape
    assert layer.normalized_shape == dims
    if affine:
        assert sorted(layer.get_params()) == ["bias", "scale"]
        np.testing.assert_array_equal(layer.scale.to_numpy(), np.ones(dims, np.float32))
        np.testing.assert_array_equal(layer.bias.to_numpy(), np.zeros(dims, np.float32))
        assert layer.scale.dtype == layer.bias.dtype == np.float32
        layer.scale.data = np.full(dims, 2.0, np.float32)
        layer.bias.data = np.full(dims, 0.5, np.float32)
    else:
        assert layer.scale is None and layer.bias is None and layer.get_params() == {}
    x = np.random.default_rng(14).standard_normal((4,) + dims).astype(np.float32) * 1e-2
    axes = tuple(range(-len(dims), 0))
    mean, var = x.mean(axes, keepdims=True), x.var(axes, keepdims=True)
    expected = (x - mean) / np.sqrt(var + 1e-5) * (2.0 if affine else 1.0) + (
        0.5 if affine else 0.0)
    np.testing.assert_allclose(layer(Tensor(data=x)).to_numpy(), expected, rtol=1e-4,
                               atol=1e-5)


def test_layernorm_over_one_feature_gives_its_bias():
    """normalized_shape 1 is allowed (mutants `<= 1`, `< 2`): each value is its own mean, so the
    output is the bias."""
    layer = autograd.layers.LayerNorm(1)
    layer.bias.data = np.full(1, 0.25, np.float32)
    y = layer(Tensor(data=np.array([[3.0], [-2.0]], np.float32))).to_numpy()
    np.testing.assert_allclose(y, [[0.25], [0.25]], rtol=1e-6)
