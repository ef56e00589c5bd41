"""binary_cross_entropy at probabilities so close to 0 or 1 that its clamps decide the result:
logs clamped at -100 and the gradient's denominator p (1 - p) at 1e-12, as PyTorch does."""
import numpy as np
import pytest

import autograd
from autograd import Tensor

# p (1 - p) below 1e-12 for the first four, above it for the last two
P = np.array([1e-300, 1e-15, 1e-13, 1.0 - 1e-14, 1e-6, 0.3])
T = np.array([0.0, 1.0, 0.25, 0.0, 1.0, 0.6])


def _reference(p, t):
    log_p = np.maximum(np.log(p), -100)
    log_not_p = np.maximum(np.log1p(-p), -100)
    loss = -np.mean(t * log_p + (1 - t) * log_not_p)
    dp = (p - t) / np.maximum(p * (1 - p), 1e-12) / p.size
    dt = (log_not_p - log_p) / p.size
    return loss, dp, dt


def test_clamped_loss_and_gradients_match_the_formula():
    p = Tensor(data=P.copy(), stores_grad=True)
    t = Tensor(data=T.copy(), stores_grad=True)
    loss = autograd.binary_cross_entropy(p, t)
    grads = autograd.gradients(loss)
    ref_loss, ref_dp, ref_dt = _reference(P, T)
    np.testing.assert_allclose(loss.item(), ref_loss, rtol=1e-12)
    np.testing.assert_allclose(grads[p].to_numpy(), ref_dp, rtol=1e-12)
    np.testing.assert_allclose(grads[t].to_numpy(), ref_dt, rtol=1e-12)


def test_clamped_gradient_matches_pytorch():
    torch = pytest.importorskip("torch")
    tp = torch.tensor(P, requires_grad=True)
    tt = torch.tensor(T)
    loss = torch.nn.functional.binary_cross_entropy(tp, tt)
    loss.backward()
    p = Tensor(data=P.copy(), stores_grad=True)
    ours = autograd.binary_cross_entropy(p, Tensor(data=T.copy(), requires_grad=False))
    np.testing.assert_allclose(ours.item(), loss.item(), rtol=1e-9)
    np.testing.assert_allclose(autograd.gradients(ours)[p].to_numpy(), tp.grad.numpy(),
                               rtol=1e-7)
