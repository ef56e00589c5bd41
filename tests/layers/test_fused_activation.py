"""SINGA's activation= layer argument (autograd/layers/fused_activation.py) on Conv2d."""
import numpy as np
import pytest

import autograd
from autograd import Tensor


def test_relu_is_applied_after_the_convolution():
    rng = np.random.default_rng(0)
    x = Tensor(data=rng.standard_normal((2, 3, 6, 6)).astype(np.float32))
    plain = autograd.Conv2d(3, 4, 3, padding=1)
    fused = autograd.Conv2d(3, 4, 3, padding=1, activation="RELU")
    fused.load_state_dict(plain.state_dict())
    expected = np.maximum(plain(x).to_numpy(), 0.0)
    assert (expected == 0).any() and (expected > 0).any()
    np.testing.assert_array_equal(fused(x).to_numpy(), expected)
    assert "activation='RELU'" in repr(fused)


def test_gradient_flows_through_the_fused_relu():
    rng = np.random.default_rng(1)
    conv = autograd.Conv2d(2, 3, 3, activation="RELU")
    x = Tensor(data=rng.standard_normal((1, 2, 5, 5)).astype(np.float32))
    grads = autograd.gradients(autograd.sum(conv(x)))
    # d sum(relu(conv)) / d b_k = number of positive outputs of channel k
    positive = (conv(x).to_numpy() > 0).sum(axis=(0, 2, 3))
    np.testing.assert_allclose(grads[conv.b].to_numpy(), positive)


def test_notset_and_lazy_form():
    conv = autograd.Conv2d(4, 3, activation="NOTSET")        # SINGA's Conv2d(out, kernel)
    x = Tensor(data=-np.ones((1, 2, 3, 3), np.float32))
    y = conv(x)
    assert y.shape == (1, 4, 1, 1) and conv.activation == "NOTSET"
    assert autograd.Conv2d(2, 4, 3, activation=None).activation == "NOTSET"


def test_unknown_activation_names_the_layer():
    with pytest.raises(ValueError, match=r"Conv2d: activation must be one of \['NOTSET', "
                                         r"'RELU'\] or None, got 'GELU'"):
        autograd.Conv2d(2, 4, 3, activation="GELU")
