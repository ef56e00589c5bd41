"""token_cross_entropy where the mutation run of issue 22 (docs/testing.md, chunk 5) found the
suite blind: an upstream gradient other than 1 in each reduction, targets given as a Tensor or
a list, the default ignore_index, the dtypes of the result, and every message word for word."""
import re

import numpy as np
import pytest

import autograd
from autograd import Tensor

# the compiled kernels and the portable code they stand in for: both tested
pytestmark = pytest.mark.usefixtures("compiled_and_portable")

name = "token_cross_entropy"


def exactly(message):
    return f"^{re.escape(message)}$"


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def reference(x, t, ignore_index=-100):
    """(losses per position, d losses / d x per position) in NumPy, 0 where ignored."""
    kept = t != ignore_index
    safe = np.where(kept, t, 0)
    p = softmax(x)
    picked = np.take_along_axis(p, safe[..., None], axis=-1)[..., 0]
    losses = np.where(kept, -np.log(picked), 0.0)
    grad = (p - np.eye(x.shape[-1])[safe]) * kept[..., None]
    return losses, grad


X = np.random.default_rng(5).standard_normal((2, 3, 4))
T = np.array([[0, 3, -100], [2, -100, 1]])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_mean_with_an_upstream_gradient(dtype):
    logits = Tensor(data=X.astype(dtype), stores_grad=True)
    loss = autograd.token_cross_entropy(logits, T)
    assert loss.dtype == dtype and loss.shape == ()
    losses, grad = reference(X, T)
    assert loss.item() == pytest.approx(losses.sum() / 4, rel=1e-6)
    got = autograd.gradients(loss, Tensor(data=np.array(0.5, dtype)))[logits].to_numpy()
    assert got.dtype == dtype
    np.testing.assert_allclose(got, grad * 0.5 / 4, rtol=1e-5, atol=1e-7)


def test_sum_with_an_upstream_gradient():
    logits = Tensor(data=X.astype(np.float32), stores_grad=True)
    loss = autograd.token_cross_entropy(logits, T, reduction="sum")
    assert loss.dtype == np.float32 and loss.shape == ()
    losses, grad = reference(X, T)
    assert loss.item() == pytest.approx(losses.sum(), rel=1e-6)
    got = autograd.gradients(loss, Tensor(data=np.array(-2.0, np.float32)))[logits].to_numpy()
    np.testing.assert_allclose(got, grad * -2.0, rtol=1e-5, atol=1e-6)


def test_none_with_an_upstream_gradient_per_position():
    logits = Tensor(data=X, stores_grad=True)
    loss = autograd.token_cross_entropy(logits, T, reduction="none")
    losses, grad = reference(X, T)
    assert loss.shape == (2, 3) and loss.dtype == np.float64
    np.testing.assert_allclose(loss.to_numpy(), losses, rtol=1e-12)
    dy = np.arange(1.0, 7.0).reshape(2, 3)
    got = autograd.gradients(loss, Tensor(data=dy))[logits].to_numpy()
    np.testing.assert_allclose(got, grad * dy[..., None], rtol=1e-12, atol=1e-12)


def test_targets_as_a_tensor_or_a_list_and_the_default_ignore_index():
    logits = Tensor(data=X[0], stores_grad=True)
    t = [1, -100, 2]
    expected = reference(X[0], np.array(t))[0].sum() / 2
    for targets in (t, Tensor(data=np.array(t)), np.array(t, np.int32)):
        got = autograd.token_cross_entropy(logits, targets)
        assert got.item() == pytest.approx(expected, rel=1e-12)


def test_ignore_index_is_read_in_the_op_not_only_in_the_check():
    # -100 is an ordinary out-of-range target once another ignore_index is given
    x = Tensor(data=np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match=exactly(
            f"{name}: target -100 is outside [0, 3) (ignore_index 1 aside)")):
        autograd.token_cross_entropy(x, [-100, 1], ignore_index=1)
    got = autograd.token_cross_entropy(Tensor(data=X[0]), [1, 0, 0], ignore_index=0)
    assert got.item() == pytest.approx(reference(X[0], np.array([1, 0, 0]), 0)[0].sum(),
                                       rel=1e-12)


def test_unsigned_targets_and_a_target_at_each_bound():
    x = Tensor(data=X[0], stores_grad=True)
    got = autograd.token_cross_entropy(x, np.array([0, 3, 3], np.uint8), reduction="sum")
    assert got.item() == pytest.approx(reference(X[0], np.array([0, 3, 3]))[0].sum(), rel=1e-12)


@pytest.mark.parametrize("logits, targets, error, message", [
    (np.zeros((2, 3)), [0, 1], TypeError, f"{name}: expected a Tensor, got ndarray"),
    (Tensor(data=np.zeros((2, 3), np.int64)), [0, 1], TypeError,
     f"{name}: expected floating logits, got int64"),
    (Tensor(data=np.zeros(())), np.array(0), ValueError,
     f"{name}: expected logits of shape (..., V) with V > 0, got ()"),
    (Tensor(data=np.zeros((2, 0), np.float32)), [0, 1], ValueError,
     f"{name}: expected logits of shape (..., V) with V > 0, got (2, 0)"),
    (Tensor(data=np.zeros((2, 3), np.float32)), [0.0, 1.0], TypeError,
     f"{name}: expected integer targets, got float64"),
    (Tensor(data=np.zeros((2, 3), np.float32)), [[0, 1]], ValueError,
     f"{name}: expected targets of shape (2,) for logits (2, 3), got (1, 2)"),
    (Tensor(data=np.zeros((2, 3), np.float32)), [0, 3], ValueError,
     f"{name}: target 3 is outside [0, 3) (ignore_index -100 aside)"),
    (Tensor(data=np.zeros((2, 3), np.float32)), [-1, 0], ValueError,
     f"{name}: target -1 is outside [0, 3) (ignore_index -100 aside)"),
])
def test_messages_are_exact(logits, targets, error, message):
    with pytest.raises(error, match=exactly(message)):
        autograd.token_cross_entropy(logits, targets)


def test_reduction_message_is_exact():
    with pytest.raises(ValueError, match=exactly(
            f"{name}: reduction must be 'mean', 'sum' or 'none', got 'avg'")):
        autograd.token_cross_entropy(Tensor(data=np.zeros((2, 3))), [0, 1], reduction="avg")


def test_one_class_with_an_ignored_position():
    """An ignored position reads class 0 (any valid class would do; class 1 does not exist)."""
    x = Tensor(data=np.array([[0.5], [-2.0], [3.0]], np.float32), stores_grad=True)
    loss = autograd.token_cross_entropy(x, [0, -100, 0])
    assert loss.item() == 0.0                         # log-softmax of one class is 0
    np.testing.assert_array_equal(autograd.gradients(loss)[x].to_numpy(), np.zeros((3, 1)))
    none = autograd.token_cross_entropy(x, [-100, 0, -100], reduction="none")
    np.testing.assert_array_equal(none.to_numpy(), np.zeros(3, np.float32))


def test_one_dimensional_logits_take_a_scalar_target():
    """(V,) logits are one position: "(..., V)" includes no leading axes."""
    x = np.array([0.5, -1.0, 2.0])
    logits = Tensor(data=x, stores_grad=True)
    loss = autograd.token_cross_entropy(logits, np.array(1))
    losses, grad = reference(x, np.array(1))
    assert loss.shape == () and loss.item() == pytest.approx(float(losses), rel=1e-12)
    np.testing.assert_allclose(autograd.gradients(loss)[logits].to_numpy(), grad, rtol=1e-12)
    with pytest.raises(ValueError, match=exactly(
            f"{name}: expected logits of shape (..., V) with V > 0, got (0,)")):
        autograd.token_cross_entropy(Tensor(data=np.zeros(0)), np.array(0))
