"""cossim at a norm exactly equal to eps, where the sampled mutation run found ``>`` and ``>=``
indistinguishable to the suite (docs/testing.md). A norm at eps is not clamped (max(eps, eps)
is the norm itself), so the gradient is the unclamped formula, as PyTorch's clamp_min passes
the gradient at equality."""
import re

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


# chunk 5 of issue 22's whole run of operations/ (docs/testing.md): the messages word for word
# (each names the op and the argument), the defaults (eps 1e-8, margin 0.2), the hinge at
# exactly zero, and each input's gradient alone with an upstream gradient other than 1


def exactly(message):
    return f"^{re.escape(message)}$"


def ranking_reference(pos, neg, margin):
    """(loss, d/dpos, d/dneg) of mean(max(0, margin - pos + neg)) with the step [hinge > 0]."""
    hinge = margin - pos + neg
    active = (hinge > 0).astype(float)
    return np.where(hinge > 0, hinge, 0).mean(), -active / pos.size, active / pos.size


@pytest.mark.parametrize("call, error, message", [
    (lambda: autograd.cossim(np.zeros((2, 3)), Tensor(data=np.zeros((2, 3)))), TypeError,
     "cossim: expected a as a Tensor, got ndarray"),
    (lambda: autograd.cossim(Tensor(data=np.zeros((2, 3))), np.zeros((2, 3))), TypeError,
     "cossim: expected b as a Tensor, got ndarray"),
    (lambda: autograd.cossim(Tensor(data=np.zeros((2, 3))), Tensor(data=np.zeros((2, 3), int))),
     TypeError, "cossim: expected floating b, got dtype int64"),
    (lambda: autograd.cossim(Tensor(data=np.zeros((2, 3))), Tensor(data=np.zeros((3, 3)))),
     ValueError, "cossim: a has shape (2, 3) but b has shape (3, 3); they must match"),
    (lambda: autograd.cossim(Tensor(data=np.zeros(3)), Tensor(data=np.zeros(3))), ValueError,
     "cossim: expected a and b of shape (N, D), got (3,)"),
    (lambda: autograd.ranking_loss(np.zeros(3), Tensor(data=np.zeros(3))), TypeError,
     "ranking_loss: expected pos as a Tensor, got ndarray"),
    (lambda: autograd.ranking_loss(Tensor(data=np.zeros(3, int)), Tensor(data=np.zeros(3))),
     TypeError, "ranking_loss: expected floating pos, got dtype int64"),
    (lambda: autograd.ranking_loss(Tensor(data=np.zeros(3)), np.zeros(3)), TypeError,
     "ranking_loss: expected neg as a Tensor, got ndarray"),
    (lambda: autograd.ranking_loss(Tensor(data=np.zeros(3)), Tensor(data=np.zeros((3, 1)))),
     ValueError, "ranking_loss: pos has shape (3,) but neg has shape (3, 1); they must match"),
    (lambda: autograd.ranking_loss(Tensor(data=np.zeros(0)), Tensor(data=np.zeros(0))),
     ValueError, "ranking_loss: expected non-empty scores, got shape (0,)"),
    (lambda: autograd.ranking_loss(Tensor(data=np.zeros(3)), Tensor(data=np.zeros(3)), M=None),
     TypeError, "ranking_loss: M must be a number, got NoneType"),
])
def test_messages_are_exact(call, error, message):
    with pytest.raises(error, match=exactly(message)):
        call()


def test_cossim_default_eps_is_1e_8():
    # |a_0| = 5e-9 < 1e-8 is clamped (y = 0.5 * <a, b> / 1e-8); |a_1| = 2e-8 is not
    a = np.array([[3e-9, 4e-9], [0.0, 2e-8]])
    b = np.array([[1.0, 0.0], [0.0, 1.0]])
    y = autograd.cossim(Tensor(data=a), Tensor(data=b)).to_numpy()
    np.testing.assert_allclose(y, [3e-9 / 1e-8, 1.0], rtol=1e-12)


@pytest.mark.parametrize("which", [0, 1])
def test_cossim_gradient_of_each_input_alone_with_an_upstream_gradient(which):
    rng = np.random.default_rng(which)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    ta, tb = Tensor(data=a, stores_grad=which == 0), Tensor(data=b, stores_grad=which == 1)
    dy = np.array([0.5, -2.0, 3.0])
    grads = autograd.gradients(autograd.cossim(ta, tb), Tensor(data=dy))
    expected = cossim_gradients(a, b)[which] * dy[:, None]
    assert list(grads) == [(ta, tb)[which]]
    np.testing.assert_allclose(grads[(ta, tb)[which]].to_numpy(), expected, rtol=1e-10)


def test_ranking_loss_default_margin_and_a_hinge_of_exactly_zero():
    pos = np.array([1.0, 0.25, 2.0, 0.0])
    neg = np.array([0.75, 0.5, 0.0, 0.0])      # hinge 0 (exactly), 0.45, -1.8, 0.2 at M=0.2
    tp, tn = Tensor(data=pos, stores_grad=True), Tensor(data=neg, stores_grad=True)
    loss = autograd.ranking_loss(tp, tn)
    expected, dpos, dneg = ranking_reference(pos, neg, 0.2)
    assert loss.item() == pytest.approx(expected, rel=1e-12)
    tie = autograd.ranking_loss(Tensor(data=pos[:1]), Tensor(data=neg[:1]), M=0.25)
    assert tie.item() == 0.0
    tp1 = Tensor(data=pos[:1], stores_grad=True)
    grads = autograd.gradients(autograd.ranking_loss(tp1, Tensor(data=neg[:1]), M=0.25))
    assert grads[tp1].to_numpy()[0] == 0.0             # [hinge > 0] is 0 at the tie


@pytest.mark.parametrize("which", [0, 1])
def test_ranking_loss_gradient_of_each_input_alone_with_an_upstream_gradient(which):
    pos = np.array([[1.0], [0.1], [0.5]], np.float32)
    neg = np.array([[0.5], [0.4], [0.9]], np.float32)
    tensors = (Tensor(data=pos, stores_grad=which == 0), Tensor(data=neg, stores_grad=which == 1))
    loss = autograd.ranking_loss(*tensors, M=np.float32(0.75))
    expected, dpos, dneg = ranking_reference(pos.astype(float), neg.astype(float), 0.75)
    assert loss.dtype == np.float32 and loss.item() == pytest.approx(expected, rel=1e-6)
    grads = autograd.gradients(loss, Tensor(data=np.array(-3.0, np.float32)))
    assert list(grads) == [tensors[which]]
    got = grads[tensors[which]].to_numpy()
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, -3.0 * (dpos, dneg)[which], rtol=1e-6)


def test_cossim_gradient_where_a_nonzero_norm_is_clamped():
    """Below eps a norm is the constant eps, so its derivative term drops out; a nonzero row
    shows it (a zero row hides it, its term being 0 anyway). Central differences (the clamp
    is flat there) and the hand-derived da = dy * b / (eps |b|) of the first row."""
    eps = 0.5
    a = np.array([[0.25, 0.0], [3.0, 4.0]])        # |a_0| = 0.25 < eps
    b = np.array([[1.0, 1.0], [0.1, 0.2]])         # |b_1| < eps
    ta, tb = Tensor(data=a, stores_grad=True), Tensor(data=b, stores_grad=True)
    dy = np.array([2.0, -1.5])
    grads = autograd.gradients(autograd.cossim(ta, tb, eps=eps), Tensor(data=dy))

    def f(a, b):
        na = np.maximum(np.linalg.norm(a, axis=1), eps)
        nb = np.maximum(np.linalg.norm(b, axis=1), eps)
        return float((dy * (a * b).sum(axis=1) / (na * nb)).sum())
    for which, tensor in ((0, ta), (1, tb)):
        arrays = [a, b]
        expected = np.zeros_like(arrays[which])
        for index in np.ndindex(*expected.shape):
            moved = [x.copy() for x in arrays], [x.copy() for x in arrays]
            moved[0][which][index] += 1e-6
            moved[1][which][index] -= 1e-6
            expected[index] = (f(*moved[0]) - f(*moved[1])) / 2e-6
        np.testing.assert_allclose(grads[tensor].to_numpy(), expected, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(grads[ta].to_numpy()[0], 2.0 * b[0] / (eps * np.sqrt(2.0)),
                               rtol=1e-12)
