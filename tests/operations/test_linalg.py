"""Linear algebra ops: forward against NumPy, float64 gradcheck, float32 kept (tests/opcase.py),
plus the shape error messages."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import autograd
from autograd import Tensor
from tests.opcase import OpCase, floats, check_case


def _gemm_reference(A, B, C=None, alpha=1.0, beta=1.0, transA=False, transB=False):
    y = alpha * ((A.T if transA else A) @ (B.T if transB else B))
    return y if C is None else y + beta * C


def _matmul_case(shape_a, shape_b):
    return OpCase(autograd.matmul, np.matmul,
                  [floats(shape=shape_a), floats(shape=shape_b)],
                  name=f"matmul_{shape_a}_{shape_b}")


def _gemm_case(shape_a, shape_b, shape_c=None, **kwargs):
    inputs = [floats(shape=shape_a), floats(shape=shape_b)]
    if shape_c is not None:
        inputs.append(floats(shape=shape_c))
    return OpCase(autograd.gemm, _gemm_reference, inputs, kwargs=kwargs,
                  name=f"gemm_{shape_a}_{shape_b}_{shape_c}_{kwargs}")


CASES = [
    _matmul_case((3, 4), (4, 2)),
    _matmul_case((1, 1), (1, 1)),
    _matmul_case((2, 3, 4), (2, 4, 5)),                  # batched
    _matmul_case((2, 1, 3, 4), (3, 4, 2)),               # broadcast batch dimensions
    _matmul_case((3, 4), (2, 4, 5)),                     # a 2-D a against a batch
    _matmul_case((2, 3, 1, 4), (1, 4, 2)),
    _matmul_case((4,), (4, 3)),                          # 1-D operands as in NumPy
    _matmul_case((3, 4), (4,)),
    _matmul_case((4,), (4,)),
    _matmul_case((2, 3, 4), (4,)),
    _matmul_case((4,), (2, 4, 3)),
    OpCase(lambda a, b: a @ b, np.matmul, [floats(shape=(2, 3)), floats(shape=(3, 2))],
           name="matmul_operator"),
    OpCase(lambda a, b: autograd.matmul(a, b), np.matmul,
           [floats(shape=(3, 4)), floats(shape=(4, 2), requires_grad=False)],
           name="matmul_constant_weight"),
    OpCase(autograd.add_bias, lambda x, b: x + b.reshape(1, -1),
           [floats(shape=(3, 4)), floats(shape=(4,))], name="add_bias_axis0"),
    OpCase(autograd.add_bias, lambda x, b: x + b, [floats(shape=(3, 4)), floats(shape=(1, 4))],
           name="add_bias_axis0_row"),
    OpCase(lambda x, b: autograd.add_bias(x, b, axis=1), lambda x, b: x + b.reshape(-1, 1),
           [floats(shape=(3, 4)), floats(shape=(3,))], name="add_bias_axis1"),
    OpCase(lambda x, b: autograd.add_bias(x, b, 1), lambda x, b: x + b,
           [floats(shape=(3, 4)), floats(shape=(3, 1))], name="add_bias_axis1_column"),
    _gemm_case((3, 4), (4, 2)),
    _gemm_case((3, 4), (4, 2), (3, 2)),
    _gemm_case((4, 3), (4, 2), (2,), transA=True, alpha=0.5),
    _gemm_case((3, 4), (2, 4), (3, 1), transB=True, beta=-2.0),
    _gemm_case((4, 3), (2, 4), (1, 2), transA=True, transB=True, alpha=1.5, beta=0.25),
    _gemm_case((4, 3), (2, 4), (), transA=1, transB=1, alpha=-1.0, beta=3.0),
    # results of 16k and more: the bias in the GEMM (backend matmul_add, PyTorch's addmm)
    _gemm_case((130, 5), (5, 130), (130,)),
    _gemm_case((5, 130), (5, 130), (130, 1), transA=True),
    _gemm_case((1, 4), (4, 1), (1, 1), alpha=2.0, beta=0.0),
]


@pytest.mark.parametrize("case", CASES, ids=str)
@given(data=st.data())
def test_op(case, data):
    check_case(case, data)


@given(batch=st.lists(st.sampled_from([1, 2]), max_size=3), n=st.integers(1, 3),
       k=st.integers(1, 3), m=st.integers(1, 3), drop=st.integers(0, 3), seed=st.integers(0, 99))
def test_matmul_broadcasts_drawn_batch_dimensions(batch, n, k, m, drop, seed):
    rng = np.random.default_rng(seed)
    batch_b = [1 if rng.random() < 0.5 else d for d in batch][drop:]
    a = rng.standard_normal(tuple(batch) + (n, k))
    b = rng.standard_normal(tuple(batch_b) + (k, m))
    out = autograd.matmul(Tensor(data=a), Tensor(data=b))
    np.testing.assert_allclose(out.to_numpy(), a @ b, rtol=1e-12)
    assert autograd.gradcheck(autograd.matmul, [Tensor(data=a), Tensor(data=b)])


def test_matmul_needs_no_gradient_for_a_data_batch():
    x = Tensor(data=np.ones((2, 3)), requires_grad=False)
    w = Tensor(data=np.ones((3, 4)), stores_grad=True)
    y = autograd.matmul(x, w)
    assert y.creator.needs_input_grad == (False, True)
    np.testing.assert_array_equal(autograd.gradients(autograd.sum(y))[w].to_numpy(),
                                  np.full((3, 4), 2.0))


def test_gemm_with_numpy_float64_coefficients_keeps_float32_gradients():
    A = Tensor(data=np.ones((2, 3), np.float32), stores_grad=True)
    B = Tensor(data=np.ones((3, 4), np.float32), stores_grad=True)
    C = Tensor(data=np.ones((4,), np.float32), stores_grad=True)
    y = autograd.gemm(A, B, C, alpha=np.float64(2.0), beta=np.float64(0.5))
    assert y.dtype == np.float32
    grads = autograd.gradients(autograd.sum(y))
    for tensor, expected in ((A, np.full((2, 3), 8.0)), (B, np.full((3, 4), 4.0)),
                             (C, np.full((4,), 1.0))):
        assert grads[tensor].dtype == np.float32
        np.testing.assert_array_equal(grads[tensor].to_numpy(), expected)


@pytest.mark.parametrize("call, message", [
    (lambda: autograd.matmul(Tensor(shape=(3, 4)), Tensor(shape=(5, 6))),
     r"^matmul: cannot multiply \(3, 4\) by \(5, 6\)$"),
    (lambda: Tensor(shape=(3, 4)) @ Tensor(shape=(5, 6)),
     r"^matmul: cannot multiply \(3, 4\) by \(5, 6\)$"),
    (lambda: autograd.matmul(Tensor(shape=(4,)), Tensor(shape=(3,))),
     r"matmul: cannot multiply \(4,\) by \(3,\)"),
    (lambda: autograd.matmul(Tensor(shape=(2, 3, 4)), Tensor(shape=(3, 4, 5))),
     r"matmul: batch dimensions of \(2, 3, 4\) and \(3, 4, 5\) do not broadcast"),
    (lambda: autograd.matmul(Tensor(data=2.0), Tensor(shape=(3,))),
     r"matmul: operands must have at least 1 dimension, got \(\) and \(3,\)"),
    (lambda: autograd.add_bias(Tensor(shape=(2, 3, 4)), Tensor(shape=(4,))),
     r"add_bias: expected a 2-D x, got shape \(2, 3, 4\)"),
    (lambda: autograd.add_bias(Tensor(shape=(2, 3)), Tensor(shape=(3,)), axis=2),
     r"add_bias: axis must be 0 or 1, got 2"),
    (lambda: autograd.add_bias(Tensor(shape=(2, 3)), Tensor(shape=(2,))),
     r"add_bias: with axis=0 b needs 3 values for x of shape \(2, 3\), got shape \(2,\)"),
    (lambda: autograd.add_bias(Tensor(shape=(2, 3)), Tensor(shape=(3,)), axis=1),
     r"add_bias: with axis=1 b needs 2 values .* got shape \(3,\)"),
    (lambda: autograd.gemm(Tensor(shape=(2, 3)), Tensor(shape=(2, 3))),
     r"gemm: cannot multiply \(2, 3\) by \(2, 3\) \(A \(2, 3\), transA=False; "
     r"B \(2, 3\), transB=False\)"),
    (lambda: autograd.gemm(Tensor(shape=(2, 3)), Tensor(shape=(3, 4)), transA=True),
     r"gemm: cannot multiply \(3, 2\) by \(3, 4\)"),
    (lambda: autograd.gemm(Tensor(shape=(2, 3, 1)), Tensor(shape=(1, 3))),
     r"gemm: A and B must be 2-D, got \(2, 3, 1\) and \(1, 3\)"),
    (lambda: autograd.gemm(Tensor(shape=(2, 3)), Tensor(shape=(3, 4)), Tensor(shape=(3,))),
     r"gemm: C of shape \(3,\) does not broadcast to \(2, 4\)"),
    (lambda: autograd.gemm(Tensor(shape=(2, 3)), Tensor(shape=(3, 4)), Tensor(shape=(5, 2, 4))),
     r"gemm: C of shape \(5, 2, 4\) does not broadcast to \(2, 4\)"),
])
def test_shape_errors_name_the_op_and_the_shapes(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_mixing_float32_and_float64_is_a_type_error():
    with pytest.raises(TypeError, match=r"MatMul: cannot mix float32 and float64"):
        autograd.matmul(Tensor(shape=(2, 3)), Tensor(shape=(3, 2), dtype=np.float64))


X_INT = np.arange(6, dtype=np.int64).reshape(2, 3)
W = np.linspace(-1, 1, 6, dtype=np.float32).reshape(3, 2)


@pytest.mark.parametrize("call, reference", [
    (lambda x, w: autograd.matmul(x, w), X_INT @ W),
    (lambda x, w: autograd.matmul(w.T, x.T), W.T @ X_INT.T),
    (lambda x, w: autograd.gemm(x, w), X_INT @ W),
    (lambda x, w: autograd.gemm(w, x, transA=True, transB=True), W.T @ X_INT.T),
    (lambda x, w: autograd.gemm(x, w, Tensor(data=np.array([1, 2]))), X_INT @ W + [1, 2]),
    (lambda x, w: autograd.add_bias(x, w[:, 0]), X_INT + W[:, 0]),
    (lambda x, w: autograd.add_bias(w, Tensor(data=np.array([1, 2]))), W + [1, 2]),
], ids=["matmul", "matmul_right", "gemm", "gemm_trans", "gemm_int_C", "add_bias_int_x",
        "add_bias_int_b"])
def test_an_integer_operand_takes_the_float32_dtype(call, reference):
    w = Tensor(data=W, stores_grad=True)
    y = call(Tensor(data=X_INT), w)
    assert y.dtype == np.float32
    np.testing.assert_allclose(y.to_numpy(), reference, rtol=1e-6)
    assert autograd.gradients(autograd.sum(y))[w].dtype == np.float32


def test_einsum_subscripts_may_have_spaces():
    a, b = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)
    y = autograd.einsum("ij, jk -> ik", Tensor(data=a), Tensor(data=b))
    np.testing.assert_allclose(y.to_numpy(), a @ b)


@pytest.mark.parametrize("c_shape", [(), (4,), (1, 4), (3, 1), (3, 4), (1, 1), (1,), (2, 4),
                                     (3, 4, 1), (1, 3, 4), (4, 3), (5,), (3,)])
def test_gemm_takes_the_c_that_numpy_broadcasts_to_the_result(c_shape):
    """C is accepted exactly where NumPy broadcasts it to (M, N) unchanged, and then added."""
    rng = np.random.default_rng(0)
    A = rng.standard_normal((3, 2)).astype(np.float32)
    B = rng.standard_normal((2, 4)).astype(np.float32)
    C = rng.standard_normal(c_shape).astype(np.float32)
    try:
        fits = np.broadcast_shapes(c_shape, (3, 4)) == (3, 4)
    except ValueError:
        fits = False
    if fits:
        y = autograd.gemm(Tensor(data=A), Tensor(data=B), Tensor(data=C))
        np.testing.assert_allclose(y.to_numpy(), A @ B + C, rtol=1e-6)
    else:
        with pytest.raises(ValueError, match=r"gemm: C of shape .* does not broadcast to "
                                             r"\(3, 4\)"):
            autograd.gemm(Tensor(data=A), Tensor(data=B), Tensor(data=C))
