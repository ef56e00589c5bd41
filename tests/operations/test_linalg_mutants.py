"""Linear algebra paths the mutation run of issue 22 found unchecked
(autograd/operations/linalg.py): einsum's and tensordot's messages word for word, tensordot's
default and int-pair axes, its letters past 26 axes, einsum's implicit output with capitals,
and a gradient past an operand that needs none; each against NumPy or a hand-derived value."""
import re

import numpy as np
import pytest

import autograd
from autograd import Tensor

rng = np.random.default_rng(22)


@pytest.mark.parametrize("call, message", [
    (lambda: autograd.einsum("...i->i", Tensor(shape=(2, 3))),
     "einsum: ellipsis ('...') is not supported; name every axis"),
    (lambda: autograd.einsum("ii->i", Tensor(shape=(2, 2))),
     "einsum: repeated letters within one operand ('ii', a diagonal or trace) are not "
     "supported"),
    (lambda: autograd.einsum("ij,jk->ik", Tensor(shape=(2, 3)), Tensor(shape=(3,))),
     "einsum: operand 'jk' has 2 letters but the tensor has shape (3,)"),
    (lambda: autograd.einsum("ij,jk->ik", Tensor(shape=(2, 3))),
     "einsum: 'ij,jk->ik' names 2 operand(s), got 1"),
    # b's axes are checked under tensordot's name too
    (lambda: autograd.tensordot(Tensor(shape=(2, 3)), Tensor(shape=(3, 4)), ([1], [5])),
     "tensordot: axis 5 is out of range for a 2-d tensor"),
    (lambda: autograd.tensordot(Tensor(shape=(2, 3)), Tensor(shape=(3, 4)), ([1, 0], [0])),
     "tensordot: 2 axes of a against 1 of b"),
])
def test_einsum_and_tensordot_messages_are_exact(call, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        call()


def test_tensordot_default_contracts_two_axes():
    """axes defaults to 2, as NumPy's (a default of 3 survived)."""
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((3, 4, 5))
    out = autograd.tensordot(Tensor(data=a), Tensor(data=b))
    np.testing.assert_allclose(out.to_numpy(), np.tensordot(a, b), rtol=1e-12)


@pytest.mark.parametrize("axes", [(1, 0), ([1], 0), (1, [0])])
def test_tensordot_takes_a_pair_of_ints(axes):
    """axes=(1, 0): axis 1 of a against axis 0 of b (the int branches dropped or reading the
    other entry survived)."""
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    out = autograd.tensordot(Tensor(data=a), Tensor(data=b), axes)
    np.testing.assert_allclose(out.to_numpy(), np.tensordot(a, b, axes), rtol=1e-12)


def test_tensordot_of_more_than_26_axes_in_all():
    """a and b together have 28 axes: b's letters run into the capitals, never repeating a's
    (one alphabet twice survived)."""
    a = rng.standard_normal((1,) * 12 + (2, 3))
    b = rng.standard_normal((3,) + (1,) * 11 + (2, 2))
    out = autograd.tensordot(Tensor(data=a), Tensor(data=b), 1)
    np.testing.assert_allclose(out.to_numpy(), np.tensordot(a, b, 1), rtol=1e-12)


def test_einsum_implicit_output_keeps_capital_letters():
    """'Xj,jY' means 'Xj,jY->XY' as in NumPy (the letters joined with a separator that is
    itself a capital letter survived)."""
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    out = autograd.einsum("Xj,jY", Tensor(data=a), Tensor(data=b))
    np.testing.assert_allclose(out.to_numpy(), np.einsum("Xj,jY", a, b), rtol=1e-12)


def test_einsum_gradients_after_an_operand_that_needs_none():
    """The operands after a constant still get their gradients (`break` for `continue`
    survived): d/db of sum(dy * a b c) = a^T dy c^T, d/dc = (a b)^T dy."""
    a, b, c = (rng.standard_normal(s) for s in [(2, 3), (3, 4), (4, 2)])
    dy = rng.standard_normal((2, 2))
    tb, tc = Tensor(data=b, stores_grad=True), Tensor(data=c, stores_grad=True)
    y = autograd.einsum("ij,jk,kl->il", Tensor(data=a, requires_grad=False), tb, tc)
    grads = autograd.gradients(y, dy)
    np.testing.assert_allclose(grads[tb].to_numpy(), a.T @ dy @ c.T, rtol=1e-12)
    np.testing.assert_allclose(grads[tc].to_numpy(), (a @ b).T @ dy, rtol=1e-12)


@pytest.mark.parametrize("alpha, beta", [(2.0, 1.0), (1.0, 2.0)])
def test_gemm_with_one_coefficient_two_scales_its_term(alpha, beta):
    """Only alpha == beta == 1 may take the fused matmul_add (which has neither): the fused test
    on `alpha == 2` or `beta == 2`, and `beta != 2` for adding C unscaled, survived. Against
    the formula, gradients by gradcheck."""
    A, B, C = rng.standard_normal((3, 4)), rng.standard_normal((4, 2)), rng.standard_normal(2)
    out = autograd.gemm(Tensor(data=A), Tensor(data=B), Tensor(data=C), alpha=alpha, beta=beta)
    np.testing.assert_allclose(out.to_numpy(), alpha * A @ B + beta * C, rtol=1e-12)
    assert autograd.gradcheck(lambda a, b, c: autograd.gemm(a, b, c, alpha=alpha, beta=beta),
                              [Tensor(data=A), Tensor(data=B), Tensor(data=C)])


@pytest.mark.parametrize("constant", [0, 1])
def test_gemm_gradient_of_one_operand_when_the_other_is_a_constant(constant):
    """dA = alpha dy B'^T (transposed back) with B a constant, dB = alpha A'^T dy with A one
    (dA computed on B's flag, `needs[1]`, survived)."""
    A, B, dy = rng.standard_normal((4, 3)), rng.standard_normal((2, 4)), rng.standard_normal((3, 2))
    tensors = [Tensor(data=A, stores_grad=True), Tensor(data=B, stores_grad=True)]
    tensors[constant] = Tensor(data=(A, B)[constant], requires_grad=False)
    y = autograd.gemm(*tensors, alpha=1.5, transA=True, transB=True)
    grads = autograd.gradients(y, dy)
    assert list(grads) == [tensors[1 - constant]]
    expected = (1.5 * (dy @ B).T) if constant == 1 else (1.5 * (A @ dy).T)
    np.testing.assert_allclose(grads[tensors[1 - constant]].to_numpy(), expected, rtol=1e-12)


def test_matmul_gemm_and_add_bias_of_integer_tensors_stay_integer():
    """With no floating operand nothing is converted (`next(...)` without its None default
    raised StopIteration here): the exact integer results NumPy gives."""
    a, b = np.arange(6).reshape(2, 3), np.arange(12).reshape(3, 4)
    for y, expected in ((autograd.matmul(Tensor(data=a), Tensor(data=b)), a @ b),
                        (autograd.gemm(Tensor(data=a), Tensor(data=b)), a @ b),
                        (autograd.add_bias(Tensor(data=a), Tensor(data=np.arange(3))),
                         a + np.arange(3))):
        assert y.dtype == np.int64
        np.testing.assert_array_equal(y.to_numpy(), expected)


def test_gemms_checks_are_kept_per_shapes_and_transpositions():
    """Shapes that passed the checks once with a transposition, or a C that broadcast once,
    are checked again with another: each refusal names gemm every time."""
    A = Tensor(data=np.ones((3, 2), np.float32))
    B = Tensor(data=np.ones((3, 4), np.float32))
    for _ in range(2):
        assert autograd.gemm(A, B, transA=True).shape == (2, 4)
        with pytest.raises(ValueError, match=r"gemm: cannot multiply \(3, 2\) by \(3, 4\)"):
            autograd.gemm(A, B)
        assert autograd.gemm(A, B, Tensor(data=np.ones(4, np.float32)), transA=True).shape == (2, 4)
        with pytest.raises(ValueError, match=r"gemm: C of shape \(3,\) does not broadcast"):
            autograd.gemm(A, B, Tensor(data=np.ones(3, np.float32)), transA=True)
        with pytest.raises(ValueError, match=r"gemm: A and B must be 2-D"):
            autograd.gemm(Tensor(data=np.ones((3, 2, 1), np.float32)), B)
