"""cossim and ranking_loss: forward against NumPy, float64 gradcheck, clamped norms, inactive
hinges, errors."""
import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st

import autograd
from autograd import Tensor
from tests.opcase import OpCase, floats, check_case


def cossim_reference(a, b):
    return (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def ranking_reference(pos, neg, M=0.2):
    return np.mean(np.maximum(0, M - pos + neg))


CASES = [
    # values kept away from 0 so no row norm is near the clamp
    OpCase(autograd.cossim, cossim_reference,
           [floats(avoid=[0.0], margin=0.2), floats(avoid=[0.0], margin=0.2)],
           min_dims=2, max_dims=2, max_side=5),
    OpCase(autograd.cossim, cossim_reference,
           [floats(avoid=[0.0], margin=0.2), floats(avoid=[0.0], margin=0.2,
                                                    requires_grad=False)],
           min_dims=2, max_dims=2, name="cossim_constant_b"),
    OpCase(autograd.ranking_loss, ranking_reference, [floats(-1, 1), floats(-1, 1)]),
    OpCase(autograd.ranking_loss, ranking_reference, [floats(-1, 1), floats(-1, 1)],
           kwargs=dict(M=0.7), name="ranking_loss_M"),
    OpCase(autograd.ranking_loss, ranking_reference,
           [floats(-1, 1), floats(-1, 1, requires_grad=False)], kwargs=dict(M=0.0),
           name="ranking_loss_constant_neg"),
]


@pytest.mark.parametrize("case", CASES, ids=str)
@given(data=st.data())
def test_op(case, data):
    check_case(case, data)


def test_cossim_of_parallel_orthogonal_and_opposite_rows_and_its_gradient():
    a_values = np.array([[1.0, 0.0], [3.0, 4.0], [1.0, 1.0]])
    b_values = np.array([[0.0, 2.0], [6.0, 8.0], [-2.0, -2.0]])
    a = Tensor(data=a_values, stores_grad=True)
    b = Tensor(data=b_values, stores_grad=True)
    y = autograd.cossim(a, b)
    np.testing.assert_allclose(y.to_numpy(), [0.0, 1.0, -1.0], atol=1e-12)
    dy = np.array([1.0, 2.0, 3.0])
    grads = autograd.gradients(y, dy)
    # d cos / da = b / (|a||b|) - cos * a / |a|^2, written out per row
    norm_a = np.linalg.norm(a_values, axis=1, keepdims=True)
    norm_b = np.linalg.norm(b_values, axis=1, keepdims=True)
    cos = np.array([[0.0], [1.0], [-1.0]])
    expected_a = dy[:, None] * (b_values / (norm_a * norm_b) - cos * a_values / norm_a ** 2)
    expected_b = dy[:, None] * (a_values / (norm_a * norm_b) - cos * b_values / norm_b ** 2)
    np.testing.assert_allclose(grads[a].to_numpy(), expected_a, atol=1e-12)
    np.testing.assert_allclose(grads[b].to_numpy(), expected_b, atol=1e-12)
    # a row parallel to its partner sits at the maximum: its gradient vanishes
    np.testing.assert_allclose(grads[a].to_numpy()[1:], 0.0, atol=1e-12)


def test_cossim_of_a_zero_row_is_zero_with_finite_gradients():
    a = Tensor(data=np.array([[0.0, 0.0], [1.0, 2.0]], np.float32), stores_grad=True)
    b = Tensor(data=np.array([[1.0, 1.0], [2.0, 4.0]], np.float32), stores_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = autograd.cossim(a, b)
        grads = autograd.gradients(y, np.ones(2, np.float32))
    np.testing.assert_allclose(y.to_numpy(), [0.0, 1.0], atol=1e-6)
    assert all(np.isfinite(g.to_numpy()).all() and g.dtype == np.float32
               for g in grads.values())


def test_ranking_loss_gradient_is_zero_where_the_hinge_is_inactive():
    pos = Tensor(data=np.array([1.0, 0.5, 0.1, 0.3]), stores_grad=True)
    neg = Tensor(data=np.array([0.0, 0.6, 0.0, 0.9]), stores_grad=True)
    loss = autograd.ranking_loss(pos, neg)          # hinges: -0.8, 0.3, 0.1, 0.8
    np.testing.assert_allclose(loss.item(), (0.3 + 0.1 + 0.8) / 4, rtol=1e-12)
    grads = autograd.gradients(loss, np.array(2.0))
    np.testing.assert_allclose(grads[pos].to_numpy(), [0.0, -0.5, -0.5, -0.5])
    np.testing.assert_allclose(grads[neg].to_numpy(), [0.0, 0.5, 0.5, 0.5])
    # every pair beaten by the margin: zero loss and zero gradient
    far = Tensor(data=np.array([2.0, 3.0]), stores_grad=True)
    loss = autograd.ranking_loss(far, Tensor(data=np.array([0.0, 1.0])), M=0.5)
    assert loss.item() == 0.0
    np.testing.assert_array_equal(autograd.gradients(loss)[far].to_numpy(), [0.0, 0.0])


def test_ranking_loss_keeps_float32_with_a_numpy_margin():
    loss = autograd.ranking_loss(Tensor(data=[0.0, 1.0]), Tensor(data=[1.0, 0.0]),
                                 M=np.float64(0.5))
    assert loss.dtype == np.float32
    np.testing.assert_allclose(loss.item(), 0.75, rtol=1e-6)


def test_cossim_and_ranking_loss_errors_name_the_op_and_shapes():
    with pytest.raises(ValueError, match=r"cossim: a has shape \(2, 3\) but b has shape "
                                         r"\(2, 4\); they must match"):
        autograd.cossim(Tensor(shape=(2, 3)), Tensor(shape=(2, 4)))
    with pytest.raises(ValueError, match=r"cossim: expected a and b of shape \(N, D\), got "
                                         r"\(2, 3, 4\)"):
        autograd.cossim(Tensor(shape=(2, 3, 4)), Tensor(shape=(2, 3, 4)))
    with pytest.raises(TypeError, match="cossim: expected b as a Tensor, got ndarray"):
        autograd.cossim(Tensor(shape=(2, 3)), np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"ranking_loss: pos has shape \(3,\) but neg has "
                                         r"shape \(3, 1\)"):
        autograd.ranking_loss(Tensor(shape=(3,)), Tensor(shape=(3, 1)))
    with pytest.raises(ValueError, match=r"ranking_loss: expected non-empty scores"):
        autograd.ranking_loss(Tensor(shape=(0,)), Tensor(shape=(0,)))
    with pytest.raises(TypeError, match="ranking_loss: M must be a number, got str"):
        autograd.ranking_loss(Tensor(shape=(3,)), Tensor(shape=(3,)), M="0.2")
