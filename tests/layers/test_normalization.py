"""Tests for autograd/layers/normalization.py: BatchNorm2d/1d and LayerNorm against formulas."""
import numpy as np
import pytest

import autograd
from autograd import BatchNorm1d, BatchNorm2d, LayerNorm, Tensor


def _batch(seed, shape):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * 3 + 1).astype(np.float32)


def _set_affine(layer, seed):
    rng = np.random.default_rng(seed)
    layer.scale.data[...] = rng.uniform(0.5, 2.0, layer.scale.shape)
    layer.bias.data[...] = rng.standard_normal(layer.bias.shape)


def test_batchnorm2d_parameters_and_buffers_start_as_documented():
    bn = BatchNorm2d(4)
    states = bn.state_dict()
    assert list(states) == ["scale", "bias", "running_mean", "running_var"]
    for name, value in zip(states, [1, 0, 0, 1]):
        np.testing.assert_array_equal(states[name], np.full(4, value, np.float32))
    assert [p.shape for p in bn.parameters()] == [(4,), (4,)]
    assert not bn.running_mean.stores_grad


def test_batchnorm2d_training_uses_batch_statistics_and_updates_running_ones():
    bn = BatchNorm2d(3, momentum=0.8)
    _set_affine(bn, 0)
    x = _batch(1, (4, 3, 5, 6))
    y = bn(Tensor(data=x)).to_numpy()
    mean = x.mean(axis=(0, 2, 3), dtype=np.float64)
    var = x.var(axis=(0, 2, 3), dtype=np.float64)
    shape = (1, 3, 1, 1)
    expected = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + 1e-5)
    expected = expected * bn.scale.to_numpy().reshape(shape) + bn.bias.to_numpy().reshape(shape)
    np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-4)
    count = x.size // 3
    # SINGA's momentum: running = momentum * running + (1 - momentum) * batch (unbiased var).
    np.testing.assert_allclose(bn.running_mean.to_numpy(), 0.2 * mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(bn.running_var.to_numpy(),
                               0.8 * 1 + 0.2 * var * count / (count - 1), rtol=1e-5)


def test_batchnorm2d_eval_uses_running_statistics_and_changes_nothing():
    bn = BatchNorm2d(2)
    _set_affine(bn, 2)
    bn.running_mean.data[...] = [0.5, -1.0]
    bn.running_var.data[...] = [2.0, 0.25]
    x = _batch(3, (3, 2, 4, 4))
    shape = (1, 2, 1, 1)
    expected = (x - np.array([0.5, -1.0]).reshape(shape)) / np.sqrt(
        np.array([2.0, 0.25]).reshape(shape) + 1e-5)
    expected = expected * bn.scale.to_numpy().reshape(shape) + bn.bias.to_numpy().reshape(shape)
    before = bn.state_dict()
    np.testing.assert_allclose(bn.eval()(Tensor(data=x)).to_numpy(), expected, rtol=1e-5,
                               atol=1e-5)
    bn.train()
    try:
        autograd.training = False           # the global switch alone also means evaluation
        np.testing.assert_allclose(bn(Tensor(data=x)).to_numpy(), expected, rtol=1e-5, atol=1e-5)
    finally:
        autograd.training = True
    for name, value in bn.state_dict().items():
        np.testing.assert_array_equal(value, before[name])


def test_batchnorm2d_rejects_a_wrong_input_without_touching_its_statistics():
    bn = BatchNorm2d(32)
    before = bn.state_dict()
    with pytest.raises(ValueError) as info:
        bn(Tensor(shape=(4, 16, 5, 5)))
    assert str(info.value) == "BatchNorm2d(32): expected input (N, 32, H, W), got (4, 16, 5, 5)"
    with pytest.raises(ValueError, match="more than one value per channel"):
        bn(Tensor(shape=(1, 32, 1, 1)))
    for name, value in bn.state_dict().items():
        np.testing.assert_array_equal(value, before[name])
    with pytest.raises(ValueError, match="momentum must be in"):
        BatchNorm2d(3, momentum=1.5)


def test_batchnorm_gradients_pass_gradcheck():
    bn = BatchNorm1d(3)
    rng = np.random.default_rng(4)

    def through_layer(scale, bias, x):
        bn.scale, bn.bias = scale, bias
        return bn(x)

    assert autograd.gradcheck(through_layer, [rng.uniform(0.5, 2, 3), rng.standard_normal(3),
                                              rng.standard_normal((5, 3))])
    with pytest.raises(ValueError, match=r"BatchNorm1d\(3\): expected input \(N, 3\)"):
        bn(Tensor(shape=(5, 3, 2, 2)))


def test_layernorm_matches_the_formula():
    ln = LayerNorm((4, 5))
    _set_affine(ln, 5)
    x = _batch(6, (2, 3, 4, 5))
    mean = x.mean(axis=(2, 3), keepdims=True, dtype=np.float64)
    var = x.var(axis=(2, 3), keepdims=True, dtype=np.float64)
    expected = (x - mean) / np.sqrt(var + 1e-5) * ln.scale.to_numpy() + ln.bias.to_numpy()
    np.testing.assert_allclose(ln(Tensor(data=x)).to_numpy(), expected, rtol=1e-4, atol=1e-4)
    assert [n for n, _ in ln.named_parameters()] == ["scale", "bias"]
    assert LayerNorm(5, elementwise_affine=False).parameters() == []
    with pytest.raises(ValueError, match=r"LayerNorm\(\(4, 5\)\): expected input "
                                         r"\(N, \.\.\., 4, 5\), got \(2, 5, 4\)"):
        ln(Tensor(shape=(2, 5, 4)))


def test_layernorm_describes_itself_with_and_without_affine():
    assert LayerNorm(4).describe() == "LayerNorm((4,))"
    assert LayerNorm(4, elementwise_affine=False).describe() == (
        "LayerNorm((4,), elementwise_affine=False)")


def test_batchnorm2d_eps_must_be_positive_and_its_statistics_need_no_gradient():
    with pytest.raises(ValueError, match=r"^BatchNorm2d: eps must be positive, got 0$"):
        BatchNorm2d(3, eps=0)
    layer = BatchNorm2d(3)
    assert not layer.running_mean.requires_grad and not layer.running_var.requires_grad


def test_batchnorm2d_trains_on_two_values_per_channel():
    x = np.array([[1.0, -2.0, 0.5], [3.0, 4.0, -0.5]], np.float32).reshape(2, 3, 1, 1)
    y = BatchNorm2d(3)(Tensor(data=x)).to_numpy()
    mean, var = x.mean(axis=0), x.var(axis=0)
    np.testing.assert_allclose(y, (x - mean) / np.sqrt(var + 1e-5), rtol=1e-4, atol=1e-4)
