"""Paths of the normalization layers that the main tests leave alone: a non-default ``eps``,
channels of more than 16,384 values per row (BatchNorm broadcasts its per-channel factors
differently there), an input that needs no gradient, and Model.compile's shape pass.

Each test compares with the formula written here in NumPy (float64)."""
import numpy as np
import pytest

import autograd
from autograd import BatchNorm2d, LayerNorm, Model, Tensor


@pytest.fixture(autouse=True)
def restore_training_flag():
    yield
    autograd.training = True


def _channels_apart(shape, seed):
    """float32 data whose channels have clearly different means and spreads, so that a
    per-channel factor applied to the wrong channel changes the result."""
    rng = np.random.default_rng(seed)
    channels = shape[1]
    offsets = np.arange(channels).reshape((1, channels) + (1,) * (len(shape) - 2))
    return (rng.standard_normal(shape) * (1 + offsets) + 3.0 * offsets).astype(np.float32)


def _affine(bn, seed):
    rng = np.random.default_rng(seed)
    bn.scale.data[...] = rng.uniform(0.5, 2.0, bn.scale.shape)
    bn.bias.data[...] = rng.standard_normal(bn.bias.shape)
    return bn.scale.to_numpy().astype(np.float64), bn.bias.to_numpy().astype(np.float64)


def _per_channel(v, ndim):
    return v.reshape((1, -1) + (1,) * (ndim - 2))


def _batch_norm_train_reference(x, scale, bias, eps, dy):
    """y, dx, dscale, dbias of training-mode batch norm, float64 NumPy."""
    x = x.astype(np.float64)
    axes = (0,) + tuple(range(2, x.ndim))
    count = x.size // x.shape[1]
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    xhat = (x - mean) / np.sqrt(var + eps)
    y = xhat * _per_channel(scale, x.ndim) + _per_channel(bias, x.ndim)
    g = dy * _per_channel(scale, x.ndim)
    dx = (g - g.sum(axis=axes, keepdims=True) / count
          - xhat * (g * xhat).sum(axis=axes, keepdims=True) / count) / np.sqrt(var + eps)
    return y, dx, (dy * xhat).sum(axis=axes), dy.sum(axis=axes)


def _run(layer, x, dy, stores_input_grad=True):
    xt = Tensor(data=x, stores_grad=stores_input_grad, requires_grad=stores_input_grad)
    y = layer(xt)
    grads = autograd.gradients(y, dy.astype(np.float32))
    return y.to_numpy(), {id(t): g.to_numpy() for t, g in grads.items()}, xt


def test_batchnorm2d_uses_its_own_eps_in_training_and_eval():
    eps = 0.5                          # large next to the variance below: it must show
    bn = BatchNorm2d(3, momentum=0.0, eps=eps)
    scale, bias = _affine(bn, 0)
    x = (_channels_apart((4, 3, 2, 2), 1) * 0.3).astype(np.float32)
    dy = np.random.default_rng(2).standard_normal(x.shape)
    y, grads, xt = _run(bn, x, dy)
    ref_y, ref_dx, ref_dscale, ref_dbias = _batch_norm_train_reference(x, scale, bias, eps, dy)
    np.testing.assert_allclose(y, ref_y, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(grads[id(xt)], ref_dx, rtol=1e-3, atol=1e-5)
    np.testing.assert_allclose(grads[id(bn.scale)], ref_dscale, rtol=1e-4, atol=1e-4)

    bn.eval()                          # momentum 0: running stats are the batch's (unbiased var)
    x64 = x.astype(np.float64)
    running_var = x64.var(axis=(0, 2, 3), ddof=1)
    np.testing.assert_allclose(bn.running_var.to_numpy(), running_var, rtol=1e-5)
    expected = ((x64 - _per_channel(x64.mean(axis=(0, 2, 3)), 4))
                / np.sqrt(_per_channel(running_var, 4) + eps)
                * _per_channel(scale, 4) + _per_channel(bias, 4))
    np.testing.assert_allclose(bn(Tensor(data=x)).to_numpy(), expected, rtol=1e-4, atol=1e-5)


def test_layernorm_uses_its_own_eps():
    eps = 0.25
    ln = LayerNorm(5, eps=eps)
    rng = np.random.default_rng(3)
    ln.scale.data[...] = rng.uniform(0.5, 2.0, 5)
    ln.bias.data[...] = rng.standard_normal(5)
    x = (rng.standard_normal((4, 5)) * 0.4).astype(np.float32)
    x64 = x.astype(np.float64)
    xhat = (x64 - x64.mean(-1, keepdims=True)) / np.sqrt(x64.var(-1, keepdims=True) + eps)
    expected = xhat * ln.scale.to_numpy() + ln.bias.to_numpy()
    np.testing.assert_allclose(ln(Tensor(data=x)).to_numpy(), expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("shape", [(2, 3, 129, 130), (1, 2, 16385)],
                         ids=["nchw_rows_of_16770", "nc_l_row_of_16385"])
def test_batchnorm_channels_longer_than_16384_values_match_the_formula(shape):
    """Rows longer than 2**14 values take the broadcast branch of the per-channel factors."""
    layer = BatchNorm2d(shape[1], momentum=0.5) if len(shape) == 4 else None
    if layer is None:       # (N, C, L): a 1-D image, normalised per channel by batch_norm
        x = _channels_apart(shape, 4)
        scale = Tensor(data=np.array([0.7, 1.6], np.float32), stores_grad=True)
        bias = Tensor(data=np.array([0.3, -1.2], np.float32), stores_grad=True)
        x4 = x.reshape(shape + (1,))
        xt = Tensor(data=x4, stores_grad=True)
        y = autograd.batch_norm(xt, scale, bias, None, None, training=True)
        dy = np.random.default_rng(5).standard_normal(x4.shape)
        grads = autograd.gradients(y, dy.astype(np.float32))
        ref = _batch_norm_train_reference(x4, scale.to_numpy().astype(np.float64),
                                          bias.to_numpy().astype(np.float64), 1e-5, dy)
        got = (y.to_numpy(), grads[xt].to_numpy(), grads[scale].to_numpy(),
               grads[bias].to_numpy())
    else:
        x = _channels_apart(shape, 6)
        scale, bias = _affine(layer, 7)
        dy = np.random.default_rng(8).standard_normal(shape)
        y, grads, xt = _run(layer, x, dy)
        ref = _batch_norm_train_reference(x, scale, bias, 1e-5, dy)
        got = (y, grads[id(xt)], grads[id(layer.scale)], grads[id(layer.bias)])
        x64 = x.astype(np.float64)
        np.testing.assert_allclose(layer.running_mean.to_numpy(),
                                   0.5 * x64.mean(axis=(0, 2, 3)), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(layer.running_var.to_numpy(),
                                   0.5 + 0.5 * x64.var(axis=(0, 2, 3), ddof=1), rtol=1e-4)
        layer.eval()              # eval mode takes the same branch with the running statistics
        mean, var = layer.running_mean.to_numpy(), layer.running_var.to_numpy()
        expected = ((x64 - _per_channel(mean, 4)) / np.sqrt(_per_channel(var, 4) + 1e-5)
                    * _per_channel(scale, 4) + _per_channel(bias, 4))
        np.testing.assert_allclose(layer(Tensor(data=x)).to_numpy(), expected,
                                   rtol=1e-4, atol=1e-4)
    for name, value, reference in zip(["y", "dx", "dscale", "dbias"], got, ref):
        np.testing.assert_allclose(value, reference, rtol=2e-3, atol=2e-3, err_msg=name)


@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
def test_batchnorm2d_input_without_gradient_still_gives_scale_and_bias_gradients(training):
    bn = BatchNorm2d(3, momentum=0.0)
    scale, bias = _affine(bn, 9)
    x = _channels_apart((4, 3, 3, 3), 10)
    if not training:
        bn(Tensor(data=x, requires_grad=False))       # running stats = this batch's
        bn.eval()
    dy = np.random.default_rng(11).standard_normal(x.shape)
    y, grads, xt = _run(bn, x, dy, stores_input_grad=False)
    assert id(xt) not in grads
    x64 = x.astype(np.float64)
    if training:
        ref_y, _, ref_dscale, ref_dbias = _batch_norm_train_reference(x, scale, bias, 1e-5, dy)
    else:
        xhat = ((x64 - _per_channel(bn.running_mean.to_numpy(), 4))
                / np.sqrt(_per_channel(bn.running_var.to_numpy(), 4) + 1e-5))
        ref_y = xhat * _per_channel(scale, 4) + _per_channel(bias, 4)
        ref_dscale, ref_dbias = (dy * xhat).sum(axis=(0, 2, 3)), dy.sum(axis=(0, 2, 3))
    np.testing.assert_allclose(y, ref_y, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(grads[id(bn.scale)], ref_dscale, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(grads[id(bn.bias)], ref_dbias, rtol=1e-4, atol=1e-4)


class _ConvBN(Model):
    def __init__(self):
        super().__init__()
        self.conv = autograd.Conv2d(4, 3, padding=1)      # lazy: compile sizes it
        self.bn = BatchNorm2d(4)

    def forward(self, x):
        return self.bn(self.conv(x))


@pytest.mark.parametrize("is_train", [True, False])
def test_model_compile_shape_pass_leaves_batchnorm_statistics_alone(is_train):
    model = _ConvBN()
    x = Tensor(data=_channels_apart((2, 3, 5, 5), 12), requires_grad=False)
    model.compile([x], is_train=is_train)
    np.testing.assert_array_equal(model.bn.running_mean.to_numpy(), np.zeros(4, np.float32))
    np.testing.assert_array_equal(model.bn.running_var.to_numpy(), np.ones(4, np.float32))
    assert model.training is is_train and autograd.training is is_train
    assert model.conv.W.shape == (4, 3, 3, 3)
