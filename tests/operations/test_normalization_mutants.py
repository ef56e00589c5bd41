"""batch_norm's checks of the running statistics, exactly, where the sampled mutation run
found the suite blind (docs/testing.md): each check rejects on either of its two conditions,
before any running statistic changes."""
import re

import numpy as np
import pytest

import autograd
from autograd import Tensor

X = np.ones((2, 3, 2, 2))


@pytest.mark.parametrize("running_var,error,message", [
    ([1.0, 1.0, 1.0], TypeError,
     "batch_norm: running_var must be an array on the device of x (cpu), got list"),
    (None, ValueError, "batch_norm: give both running_mean and running_var, or neither"),
    (np.ones(3, np.int64), ValueError,
     "batch_norm: expected running_var of shape (3,), floating, for x of shape (2, 3, 2, 2), "
     "got (3,) int64"),
    (np.ones(4), ValueError,
     "batch_norm: expected running_var of shape (3,), floating, for x of shape (2, 3, 2, 2), "
     "got (4,) float64"),
])
def test_running_statistics_are_checked_on_each_condition(running_var, error, message):
    running_mean = np.full(3, 7.0)
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        autograd.batch_norm(Tensor(data=X), Tensor(data=np.ones(3)), Tensor(data=np.zeros(3)),
                            running_mean, running_var, training=True)
    np.testing.assert_array_equal(running_mean, 7.0)


def test_eval_mode_without_running_statistics_is_refused():
    with pytest.raises(ValueError, match="^batch_norm: eval mode needs running_mean and "
                                         "running_var$"):
        autograd.batch_norm(Tensor(data=X), Tensor(data=np.ones(3)), Tensor(data=np.zeros(3)),
                            None, None, training=False)
    # training without them normalises with the batch statistics (here all ones: zeros out)
    y = autograd.batch_norm(Tensor(data=X), Tensor(data=np.ones(3)), Tensor(data=np.zeros(3)),
                            None, None, training=True)
    np.testing.assert_array_equal(y.to_numpy(), np.zeros_like(X))


# ---------------------------------------------------------------- chunk-2 survivors (issue 22)

X4x2 = np.array([[1.0, 10.0], [2.0, 30.0], [4.0, 20.0], [9.0, 60.0]])   # batch (4, 2)


def _ones_zeros(channels):
    return Tensor(data=np.ones(channels)), Tensor(data=np.zeros(channels))


def test_eval_mode_takes_running_statistics_given_as_tensors():
    """Running statistics may be Tensors (a layer's buffers): `_raw` must take their arrays
    (`hasattr(value, "creator") and False` survived: no test ran eval mode with Tensors)."""
    mean, var = np.array([1.0, 2.0]), np.array([4.0, 9.0])
    mean_t, var_t = (Tensor(data=a.copy(), requires_grad=False) for a in (mean, var))
    scale, bias = _ones_zeros(2)
    y = autograd.batch_norm(Tensor(data=X4x2), scale, bias, mean_t, var_t, training=False)
    np.testing.assert_allclose(y.to_numpy(), (X4x2 - mean) / np.sqrt(var + 1e-5), rtol=1e-12)
    np.testing.assert_array_equal(mean_t.to_numpy(), mean)
    np.testing.assert_array_equal(var_t.to_numpy(), var)


@pytest.mark.parametrize("momentum", [0.0, 1.0, 0.25])
def test_momentum_at_both_ends_of_its_range(momentum):
    """momentum 0 (running = the batch statistic) and 1 (running unchanged) are both allowed
    (`0.0 < momentum` and `momentum < 1.0` survived or only timed out); the variance that
    enters is the unbiased one, count / (count - 1) = 4 / 3 here."""
    running_mean, running_var = np.array([5.0, -5.0]), np.array([2.0, 3.0])
    expected_mean = momentum * running_mean + (1 - momentum) * X4x2.mean(axis=0)
    expected_var = momentum * running_var + (1 - momentum) * X4x2.var(axis=0) * 4 / 3
    scale, bias = _ones_zeros(2)
    autograd.batch_norm(Tensor(data=X4x2), scale, bias, running_mean, running_var,
                        momentum=momentum, training=True)
    np.testing.assert_allclose(running_mean, expected_mean, rtol=1e-12)
    np.testing.assert_allclose(running_var, expected_var, rtol=1e-12)


@pytest.mark.parametrize("bad", [-0.5, 1.0 + 1e-9, "0.9"])
def test_momentum_outside_its_range_is_refused_by_value(bad):
    running_mean = np.zeros(2)
    scale, bias = _ones_zeros(2)
    message = f"batch_norm: momentum must be in [0, 1], got {bad!r}"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        autograd.batch_norm(Tensor(data=X4x2), scale, bias, running_mean, np.ones(2),
                            momentum=bad, training=True)
    np.testing.assert_array_equal(running_mean, 0.0)


def test_bias_and_running_mean_messages_name_them():
    """The names in batch_norm's messages ("bias", "running_mean" mutated survived: the tests
    checked scale and running_var only)."""
    x = Tensor(data=X)
    scale, bias = _ones_zeros(3)
    with pytest.raises(ValueError, match="^" + re.escape(
            "batch_norm: expected bias of shape (3,) for x of shape (2, 3, 2, 2), got (2,)") + "$"):
        autograd.batch_norm(x, scale, Tensor(data=np.zeros(2)), None, None, training=True)
    with pytest.raises(TypeError, match="^" + re.escape(
            "batch_norm: running_mean must be an array on the device of x (cpu), got list") + "$"):
        autograd.batch_norm(x, scale, bias, [0.0, 0.0, 0.0], np.ones(3), training=True)
    with pytest.raises(ValueError, match="^" + re.escape(
            "batch_norm: expected running_mean of shape (3,), floating, for x of shape "
            "(2, 3, 2, 2), got (3, 1) float64") + "$"):
        autograd.batch_norm(x, scale, bias, np.zeros((3, 1)), np.ones(3), training=True)


# ---------------------------------------------------------------- layer_norm

def _layer_norm_reference(x, dims, scale, bias, eps):
    axes = tuple(range(x.ndim - dims, x.ndim))
    y = (x - x.mean(axis=axes, keepdims=True)) / np.sqrt(x.var(axis=axes, keepdims=True) + eps)
    return (y if scale is None else y * scale) + (0 if bias is None else bias)


@pytest.mark.parametrize("affine", ["both", "scale", "bias", "none"])
@pytest.mark.parametrize("normalized", [(4,), (3, 4)])
def test_layer_norm_with_its_own_eps_and_each_affine_part(affine, normalized):
    """eps = 0.5 (no other test sets one) with scale and bias present or not: the value and,
    by finite differences, the gradient of every input."""
    rng = np.random.default_rng(7)
    x = rng.normal(1.0, 0.5, (2, 3, 4))
    scale = rng.uniform(0.5, 2, normalized) if affine in ("both", "scale") else None
    bias = rng.uniform(-1, 1, normalized) if affine in ("both", "bias") else None
    names = [n for n, a in (("scale", scale), ("bias", bias)) if a is not None]

    def fn(xt, *rest):
        return autograd.layer_norm(xt, normalized, eps=0.5, **dict(zip(names, rest)))

    inputs = [x] + [a for a in (scale, bias) if a is not None]
    y = fn(*[Tensor(data=a, dtype=np.float64) for a in inputs])
    np.testing.assert_allclose(y.to_numpy(),
                               _layer_norm_reference(x, len(normalized), scale, bias, 0.5),
                               rtol=1e-12, atol=1e-12)
    autograd.gradcheck(fn, inputs)


@pytest.mark.parametrize("wanted", ["x", "scale", "bias"])
def test_layer_norm_gradient_of_one_input_alone(wanted):
    """Only one of x, scale, bias needs a gradient: it gets the same gradient as when all
    three do, and the others get none."""
    rng = np.random.default_rng(3)
    arrays = dict(x=rng.normal(size=(3, 4)), scale=rng.uniform(0.5, 2, 4),
                  bias=rng.uniform(-1, 1, 4))
    dy = rng.normal(size=(3, 4))
    every = {k: Tensor(data=v, stores_grad=True) for k, v in arrays.items()}
    full = autograd.gradients(autograd.layer_norm(every["x"], 4, every["scale"], every["bias"]),
                              dy)
    some = {k: Tensor(data=v, stores_grad=k == wanted, requires_grad=k == wanted)
            for k, v in arrays.items()}
    grads = autograd.gradients(autograd.layer_norm(some["x"], 4, some["scale"], some["bias"]),
                               dy)
    assert list(grads) == [some[wanted]]
    np.testing.assert_allclose(grads[some[wanted]].to_numpy(), full[every[wanted]].to_numpy(),
                               rtol=1e-12, atol=1e-15)


def test_layer_norm_takes_a_numpy_integer_as_normalized_shape():
    x = np.random.default_rng(1).normal(size=(2, 5))
    y = autograd.layer_norm(Tensor(data=x), np.int64(5))
    np.testing.assert_allclose(y.to_numpy(), _layer_norm_reference(x, 1, None, None, 1e-5),
                               rtol=1e-12)


@pytest.mark.parametrize("normalized,scale,bias,message", [
    ((), None, None, "layer_norm: expected x of shape (..., ) for normalized_shape (), got (2, 5)"),
    ((1, 2, 5), None, None,
     "layer_norm: expected x of shape (..., 1, 2, 5) for normalized_shape (1, 2, 5), got (2, 5)"),
    ((3, 5), None, None,
     "layer_norm: expected x of shape (..., 3, 5) for normalized_shape (3, 5), got (2, 5)"),
    (5, np.ones(5), np.zeros(4), "layer_norm: expected bias of shape (5,), got (4,)"),
    (5, np.ones((1, 5)), None, "layer_norm: expected scale of shape (5,), got (1, 5)"),
])
def test_layer_norm_messages_word_for_word(normalized, scale, bias, message):
    x = Tensor(data=np.zeros((2, 5)))
    scale = None if scale is None else Tensor(data=scale)
    bias = None if bias is None else Tensor(data=bias)
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        autograd.layer_norm(x, normalized, scale, bias)
