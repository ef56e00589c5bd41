"""softmax and log_softmax: forward against NumPy, float64 gradcheck over several axes, float32
kept, stability for huge logits, axis errors."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import autograd
from autograd import Tensor
from tests.opcase import OpCase, floats, check_case, value_and_grad


def softmax_reference(x, axis=-1):
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)


def log_softmax_reference(x, axis=-1):
    return x - np.log(np.exp(x).sum(axis=axis, keepdims=True))


CASES = [
    OpCase(autograd.softmax, softmax_reference, [floats()], min_dims=1),
    OpCase(autograd.softmax, softmax_reference, [floats()], kwargs=dict(axis=0), min_dims=1,
           name="softmax_axis0"),
    OpCase(autograd.softmax, softmax_reference, [floats()], kwargs=dict(axis=1), min_dims=2,
           name="softmax_axis1"),
    OpCase(autograd.softmax, softmax_reference, [floats()], kwargs=dict(axis=-2), min_dims=2,
           name="softmax_axis-2"),
    OpCase(autograd.log_softmax, log_softmax_reference, [floats()], min_dims=1),
    OpCase(autograd.log_softmax, log_softmax_reference, [floats()], kwargs=dict(axis=0),
           min_dims=1, name="log_softmax_axis0"),
    OpCase(autograd.log_softmax, log_softmax_reference, [floats()], kwargs=dict(axis=1),
           min_dims=2, name="log_softmax_axis1"),
]


@pytest.mark.parametrize("case", CASES, ids=str)
@given(data=st.data())
def test_op(case, data):
    check_case(case, data)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fn", [autograd.softmax, autograd.log_softmax], ids=lambda f: f.__name__)
def test_large_inputs_give_finite_values_and_gradients_without_warnings(fn, dtype):
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        y, grad = value_and_grad(fn, [-1000.0, -30.0, 0.0, 30.0, 1000.0], dtype)
    assert np.isfinite(y).all() and np.isfinite(grad).all(), (y, grad)
    assert y.dtype == dtype and grad.dtype == dtype


def test_softmax_and_log_softmax_of_huge_logits():
    x = [[1000.0, 1000.0, -1000.0], [0.0, 2000.0, 1.0]]
    y, _ = value_and_grad(autograd.softmax, x)
    np.testing.assert_allclose(y, [[0.5, 0.5, 0.0], [0.0, 1.0, 0.0]], atol=1e-300)
    y, grad = value_and_grad(autograd.log_softmax, x)
    np.testing.assert_allclose(y, [[-np.log(2), -np.log(2), -2000 - np.log(2)],
                                   [-2000.0, 0.0, -1999.0]], rtol=1e-12)
    # dx = dy - softmax * sum(dy) with dy = 0.5 everywhere
    np.testing.assert_allclose(grad, [[-0.25, -0.25, 0.5], [0.5, -1.0, 0.5]], atol=1e-12)


def test_softmax_rows_sum_to_one_along_the_chosen_axis():
    x = Tensor(data=np.random.default_rng(0).normal(size=(2, 3, 4)))
    for axis in (0, 1, 2, -1):
        y = autograd.softmax(x, axis=axis).to_numpy()
        np.testing.assert_allclose(y.sum(axis=axis), 1.0, rtol=1e-12)


@pytest.mark.parametrize("fn", [autograd.softmax, autograd.log_softmax], ids=lambda f: f.__name__)
def test_softmax_axis_errors_name_the_op(fn):
    name = fn.__name__
    with pytest.raises(ValueError, match=rf"{name}: axis 2 is out of range for a 2-d tensor"):
        fn(Tensor(shape=(2, 3)), axis=2)
    with pytest.raises(ValueError, match=rf"{name}: .*at least 1 dimension.*\(\)"):
        fn(Tensor(data=1.0))
    with pytest.raises(TypeError, match=rf"{name}: axis must be an int"):
        fn(Tensor(shape=(2, 3)), axis=(0, 1))


def test_softmax_of_a_non_tensor_is_a_type_error():
    with pytest.raises(TypeError, match="softmax: expected a Tensor, got ndarray"):
        autograd.softmax(np.ones(3))
