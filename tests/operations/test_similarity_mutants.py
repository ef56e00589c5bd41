"""cossim at a norm exactly equal to eps, where the sampled mutation run found ``>`` and ``>=``
indistinguishable to the suite (docs/testing.md). A norm at eps is not clamped (max(eps, eps)
is the norm itself), so the gradient is the unclamped formula, as PyTorch's clamp_min passes
the gradient at equality."""
import numpy as np
import pytest

import autograd
from autograd import Tensor


def cossim_gradients(a, b):
    """d/da and d/db of sum_i <a_i, b_i> / (|a_i| |b_i|), no clamping, in NumPy."""
    na = np.linalg.norm(a, axis=1, keepdims=True)
    nb = np.linalg.norm(b, axis=1, keepdims=True)
    y = (a * b).sum(axis=1, keepdims=True) / (na * nb)
    return b / (na * nb) - y * a / na ** 2, a / (na * nb) - y * b / nb ** 2


def test_a_norm_exactly_at_eps_takes_the_unclamped_gradient():
    a = np.array([[0.5, 0.0], [3.0, 4.0]])       # norms 0.5 (= eps) and 5, exact in binary
    b = np.array([[1.0, 1.0], [0.5, 0.0]])       # norms sqrt(2) and 0.5 (= eps)
    ta, tb = Tensor(data=a, stores_grad=True), Tensor(data=b, stores_grad=True)
    y = autograd.cossim(ta, tb, eps=0.5)
    grads = autograd.gradients(autograd.sum(y))
    expected_a, expected_b = cossim_gradients(a, b)
    np.testing.assert_allclose(grads[ta].to_numpy(), expected_a, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(grads[tb].to_numpy(), expected_b, rtol=1e-12, atol=1e-12)


def test_a_norm_at_eps_matches_pytorch():
    torch = pytest.importorskip("torch")
    a = np.array([[0.5, 0.0], [3.0, 4.0]])
    b = np.array([[1.0, 1.0], [0.5, 0.0]])
    ta, tb = Tensor(data=a, stores_grad=True), Tensor(data=b, stores_grad=True)
    grads = autograd.gradients(autograd.sum(autograd.cossim(ta, tb, eps=0.5)))
    pa, pb = (torch.tensor(v, requires_grad=True) for v in (a, b))
    torch.nn.functional.cosine_similarity(pa, pb, dim=1, eps=0.5).sum().backward()
    np.testing.assert_allclose(grads[ta].to_numpy(), pa.grad.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(grads[tb].to_numpy(), pb.grad.numpy(), rtol=1e-12, atol=1e-12)
