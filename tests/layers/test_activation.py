"""Tests for autograd/layers/activation.py: the activation layers against NumPy formulas and
Dropout's train/eval behaviour."""
import numpy as np
import pytest

import autograd
from autograd import Dropout, Tensor


def _values(seed=0, shape=(3, 4)):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("layer, reference", [
    (autograd.ReLU(), lambda x: np.maximum(x, 0)),
    (autograd.Sigmoid(), lambda x: 1 / (1 + np.exp(-x))),
    (autograd.Tanh(), np.tanh),
    (autograd.Softmax(), lambda x: np.exp(x) / np.exp(x).sum(axis=1, keepdims=True)),
    (autograd.Softmax(axis=0), lambda x: np.exp(x) / np.exp(x).sum(axis=0, keepdims=True)),
])
def test_activation_layers_match_numpy(layer, reference):
    x = _values()
    y = layer(Tensor(data=x))
    assert y.dtype == np.float32 and layer.output_shape(x.shape) == x.shape
    np.testing.assert_allclose(y.to_numpy(), reference(x.astype(np.float64)), rtol=1e-5,
                               atol=1e-6)
    assert layer.parameters() == []


def test_softmax_layer_checks_its_axis():
    with pytest.raises(ValueError, match=r"Softmax\(axis=2\): expected input with axis 2, "
                                         r"got \(3, 4\)"):
        autograd.Softmax(axis=2)(Tensor(data=_values()))


def test_dropout_scales_the_kept_elements_in_training():
    autograd.manual_seed(0)
    x = np.ones((200, 100), np.float32)
    y = Dropout(0.25)(Tensor(data=x)).to_numpy()
    kept = y != 0
    np.testing.assert_allclose(y[kept], 1 / 0.75, rtol=1e-6)
    assert abs(kept.mean() - 0.75) < 0.02


def test_dropout_masks_repeat_under_manual_seed():
    x = Tensor(data=_values(1, (10, 10)))
    autograd.manual_seed(3)
    first = Dropout()(x).to_numpy()
    autograd.manual_seed(3)
    np.testing.assert_array_equal(Dropout()(x).to_numpy(), first)


def test_dropout_is_the_identity_in_evaluation():
    x = Tensor(data=_values(2))
    layer = Dropout(0.5)
    np.testing.assert_array_equal(layer.eval()(x).to_numpy(), x.to_numpy())
    layer.train()
    try:
        autograd.training = False
        np.testing.assert_array_equal(layer(x).to_numpy(), x.to_numpy())
    finally:
        autograd.training = True
    with pytest.raises(ValueError, match=r"Dropout: ratio must be in \[0, 1\), got 1.0"):
        Dropout(1.0)
