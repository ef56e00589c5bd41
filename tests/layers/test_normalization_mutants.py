"""BatchNorm2d's running statistics as buffers: float32 like every parameter and PyTorch's,
starting at 0 and 1, never asking for a gradient, and updated in float32 by a training step
(the full mutation run of layers/ let float64 buffers and gradient-seeking buffers through:
docs/testing.md)."""
import numpy as np

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
