"""token_cross_entropy: (N, T, V) logits against integer targets with ignore_index, against a
NumPy log-softmax formula; gradcheck; reductions; errors; PyTorch's cross_entropy if present."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import autograd
from autograd import Tensor
from tests.opcase import OpCase, floats, integers, check_case

# the compiled kernels and the portable code they stand in for: both tested
pytestmark = pytest.mark.usefixtures("compiled_and_portable")


def token_loss_reference(x, t, ignore_index=-100, reduction="mean"):
    shifted = x - x.max(axis=-1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    kept = t != ignore_index
    picked = np.take_along_axis(logp, np.where(kept, t, 0)[..., None], axis=-1)[..., 0]
    losses = np.where(kept, -picked, 0.0)
    if reduction == "none":
        return losses
    if reduction == "sum":
        return losses.sum()
    return losses.sum() / kept.sum()


CASES = [
    OpCase(autograd.token_cross_entropy, token_loss_reference,
           [floats(-3, 3, shape=(2, 3, 5)), integers(0, 5, shape=(2, 3))], shape=(),
           name="token_ce_ntv"),
    OpCase(autograd.token_cross_entropy, token_loss_reference,
           [floats(-3, 3, shape=(4, 3, 6)), integers(-1, 6, shape=(4, 3))], shape=(),
           kwargs=dict(ignore_index=-1), name="token_ce_ignore"),
    OpCase(autograd.token_cross_entropy, token_loss_reference,
           [floats(-3, 3, shape=(3, 4)), integers(0, 4, shape=(3,))], shape=(),
           kwargs=dict(reduction="sum"), name="token_ce_sum_2d"),
    OpCase(autograd.token_cross_entropy, token_loss_reference,
           [floats(-3, 3, shape=(2, 2, 3)), integers(0, 3, shape=(2, 2))], shape=(),
           kwargs=dict(reduction="none"), name="token_ce_none"),
]


@pytest.mark.parametrize("case", CASES, ids=str)
@given(data=st.data())
def test_op(case, data):
    check_case(case, data)


def test_huge_logits_stay_finite_and_ignored_positions_get_no_gradient():
    x = np.array([[[1000.0, -1000.0, 0.0], [5.0, 5.0, 5.0]]], np.float32)
    logits = Tensor(data=x, stores_grad=True)
    loss = autograd.token_cross_entropy(logits, np.array([[1, -100]]))
    assert loss.item() == pytest.approx(2000.0)
    grad = autograd.gradients(loss)[logits].to_numpy()
    np.testing.assert_allclose(grad, [[[1.0, -1.0, 0.0], [0.0, 0.0, 0.0]]], atol=1e-6)


def test_errors():
    x = Tensor(data=np.zeros((2, 3, 4), np.float32))
    with pytest.raises(ValueError, match=r"expected targets of shape \(2, 3\)"):
        autograd.token_cross_entropy(x, np.zeros((2, 4), np.int64))
    with pytest.raises(ValueError, match=r"target -1 is outside \[0, 4\)"):
        autograd.token_cross_entropy(x, -np.ones((2, 3), np.int64))
    with pytest.raises(TypeError, match="expected integer targets"):
        autograd.token_cross_entropy(x, np.zeros((2, 3)))
    with pytest.raises(ValueError, match="reduction must be"):
        autograd.token_cross_entropy(x, np.zeros((2, 3), np.int64), reduction="avg")


@settings(max_examples=10)
@given(seed=st.integers(0, 2 ** 32 - 1))
def test_matches_pytorch_cross_entropy(seed):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((3, 5, 7)).astype(np.float32) * 3
    t = rng.integers(-1, 7, (3, 5))
    t[0, 0] = 2                               # at least one kept position
    logits = Tensor(data=x, stores_grad=True)
    loss = autograd.token_cross_entropy(logits, t, ignore_index=-1)
    grad = autograd.gradients(loss)[logits].to_numpy()
    reference_x = torch.tensor(x, requires_grad=True)
    reference = torch.nn.functional.cross_entropy(reference_x.reshape(-1, 7),
                                                  torch.tensor(t).reshape(-1), ignore_index=-1)
    reference.backward()
    assert loss.item() == pytest.approx(reference.item(), rel=1e-5)
    np.testing.assert_allclose(grad, reference_x.grad.numpy(), rtol=1e-4, atol=1e-6)
