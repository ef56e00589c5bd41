"""dropout: inverted scaling, drop fraction, eval identity, repeatability, gradient = mask."""
import numpy as np
import pytest

import autograd
from autograd import Tensor


@pytest.mark.parametrize("ratio", [0.1, 0.5, 0.8])
def test_training_drops_about_ratio_and_preserves_the_mean(ratio):
    autograd.manual_seed(1)
    x = Tensor(data=np.full((400, 500), 3.0, np.float32))
    y = autograd.dropout(x, ratio, training=True).to_numpy()
    assert y.dtype == np.float32
    kept = y != 0
    # 200000 Bernoulli draws: the standard error of the fraction is below 0.0012.
    assert abs(1 - kept.mean() - ratio) < 0.006
    np.testing.assert_allclose(y[kept], 3.0 / (1 - ratio), rtol=1e-6)
    assert abs(y.mean() - 3.0) < 3.0 * 0.03


def test_gradient_is_the_same_scaled_mask():
    autograd.manual_seed(2)
    x = Tensor(data=np.random.default_rng(0).uniform(1, 2, (50, 40)).astype(np.float32),
               stores_grad=True)
    y = autograd.dropout(x, 0.3, training=True)
    dy = np.random.default_rng(1).standard_normal(y.shape).astype(np.float32)
    grad = autograd.gradients(y, dy)[x].to_numpy()
    scale = y.to_numpy() / x.to_numpy()           # the mask the forward pass used
    dropped = scale == 0
    np.testing.assert_allclose(scale[~dropped], 1 / 0.7, rtol=1e-6)
    assert 0 < dropped.sum() < dropped.size
    np.testing.assert_allclose(grad, dy * scale, rtol=1e-6)
    assert grad.dtype == np.float32


def test_gradcheck_with_a_fixed_seed():
    def fn(t):
        autograd.manual_seed(3)     # the same mask on every finite-difference evaluation
        return autograd.dropout(t, 0.4, training=True)
    autograd.gradcheck(fn, [np.random.default_rng(0).standard_normal((4, 5))])


def test_manual_seed_makes_runs_repeat_and_different_seeds_differ():
    x = Tensor(data=np.ones((64, 64), np.float32))
    runs = []
    for seed in (0, 0, 1):
        autograd.manual_seed(seed)
        runs.append(autograd.dropout(x, 0.5, training=True).to_numpy())
    np.testing.assert_array_equal(runs[0], runs[1])
    assert not np.array_equal(runs[0], runs[2])


def test_eval_mode_is_the_identity():
    x = Tensor(data=np.arange(5, dtype=np.float32))
    assert autograd.dropout(x, 0.5, training=False) is x
    autograd.training = False
    try:
        assert autograd.dropout(x, 0.5) is x
    finally:
        autograd.training = True
    np.testing.assert_array_equal(autograd.dropout(x, 0.0, training=True).to_numpy(), x.to_numpy())


@pytest.mark.parametrize("ratio", [-0.1, 1.0, 1.5, "0.5"])
def test_ratio_outside_unit_interval_is_an_error(ratio):
    with pytest.raises(ValueError, match=r"dropout: ratio must be in \[0, 1\)"):
        autograd.dropout(Tensor(shape=(3,)), ratio)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dropout_mask_is_drawn_in_the_inputs_dtype(dtype):
    from autograd.device import cpu
    x = np.linspace(-1.0, 1.0, 1000).astype(dtype)
    autograd.manual_seed(11)
    y = autograd.dropout(Tensor(data=x), 0.3, training=True).to_numpy()
    autograd.manual_seed(11)
    kept = cpu().random.random((1000,), dtype=dtype) >= 0.3     # the same stream, this dtype
    np.testing.assert_allclose(y, np.where(kept, x / dtype(0.7), 0.0), rtol=1e-6)
