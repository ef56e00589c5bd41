"""Elementwise ops: forward against NumPy, float64 gradcheck, float32 kept (tests/opcase.py)."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import autograd
from autograd import Tensor
from tests.opcase import OpCase, floats, check_case

positive = floats(0.2, 3.0)
CASES = [
    OpCase(autograd.add, np.add, [floats(), floats(broadcast=True)]),
    OpCase(autograd.add, np.add, [floats(broadcast=True), floats()], name="add_broadcast_left"),
    OpCase(autograd.sub, np.subtract, [floats(), floats(broadcast=True)]),
    OpCase(autograd.mul, np.multiply, [floats(), floats(broadcast=True)]),
    OpCase(autograd.div, np.divide, [floats(), floats(0.5, 2.0, broadcast=True)]),
    OpCase(autograd.pow, np.power, [positive, floats(-2, 2, broadcast=True)]),
    OpCase(autograd.maximum, np.maximum, [floats(), floats(broadcast=True)]),
    OpCase(autograd.minimum, np.minimum, [floats(), floats(broadcast=True)]),
    OpCase(autograd.add, np.add, [floats(), floats(shape=(1, 3, 1, 1))], shape=(2, 3, 2, 2),
           name="add_channel_bias_images"),
    OpCase(lambda x: x + 1.5, lambda x: x + 1.5, [floats()], name="add_scalar"),
    OpCase(lambda x: 2.0 - x, lambda x: 2.0 - x, [floats()], name="rsub_scalar"),
    OpCase(lambda x: x * np.float64(3.0), lambda x: x * 3.0, [floats()], name="mul_np_scalar"),
    OpCase(lambda x: x / 4, lambda x: x / 4, [floats()], name="div_scalar"),
    OpCase(lambda x: 2.0 / x, lambda x: 2.0 / x, [floats(0.5, 2.0)], name="rdiv_scalar"),
    OpCase(lambda x: x ** 2, lambda x: x ** 2, [floats()], name="square"),
    OpCase(lambda x: x ** 3.5, lambda x: x ** 3.5, [positive], name="pow_scalar"),
    OpCase(lambda x: 2.0 ** x, lambda x: 2.0 ** x, [floats()], name="rpow_scalar"),
]


@pytest.mark.parametrize("case", CASES, ids=str)
@given(data=st.data())
def test_op(case, data):
    check_case(case, data)


def test_operators_are_recorded_like_functions():
    a = Tensor(data=[1.0, 2.0], stores_grad=True)
    b = Tensor(data=[3.0, 5.0], stores_grad=True)
    y = autograd.sum(-(a * b + a / b - b ** 2) + 1.0 / a - 2.0 * b)
    grads = autograd.gradients(y)
    a_, b_ = a.to_numpy(), b.to_numpy()
    np.testing.assert_allclose(grads[a].to_numpy(), -(b_ + 1 / b_) - 1 / a_ ** 2, rtol=1e-6)
    np.testing.assert_allclose(grads[b].to_numpy(), -(a_ - a_ / b_ ** 2 - 2 * b_) - 2.0, rtol=1e-6)


def test_numpy_array_on_the_left_defers_to_the_tensor():
    x = Tensor(data=[1.0, 2.0], stores_grad=True)
    y = np.array([3.0, 4.0], np.float32) * x
    assert isinstance(y, Tensor) and y.creator is not None
    np.testing.assert_array_equal(y.to_numpy(), [3.0, 8.0])


def test_scalars_take_the_tensor_dtype():
    x = Tensor(data=[1.0, 2.0])
    for y in (x * np.float64(2.0), x + 1, 3.0 - x, x / np.float64(3), x ** 2.0, 2 ** x):
        assert y.dtype == np.float32


def test_float64_mixed_with_float32_is_a_type_error_naming_both():
    a = Tensor(data=np.ones(3, np.float32))
    b = Tensor(data=np.ones(3, np.float64))
    with pytest.raises(TypeError, match=r"Add.*float32.*float64"):
        autograd.add(a, b)


def test_broadcast_mismatch_names_op_and_shapes():
    with pytest.raises(ValueError, match=r"mul: cannot broadcast shapes \(2, 3\) and \(4,\)"):
        autograd.mul(Tensor(shape=(2, 3)), Tensor(shape=(4,)))


def test_integer_tensor_takes_the_float_dtype():
    x = Tensor(data=[1.0, 2.0])
    n = Tensor(data=np.array([1, 2]))
    assert (x + n).dtype == np.float32 and (n * x).dtype == np.float32


def test_maximum_ties_share_the_gradient():
    a = Tensor(data=[1.0, 2.0], stores_grad=True)
    b = Tensor(data=[1.0, 3.0], stores_grad=True)
    g = autograd.gradients(autograd.sum(autograd.maximum(a, b)))
    np.testing.assert_array_equal(g[a].to_numpy(), [0.5, 0.0])
    np.testing.assert_array_equal(g[b].to_numpy(), [0.5, 1.0])


def test_minimum_names_itself_for_a_bad_operand():
    with pytest.raises(TypeError, match=r"^minimum: expected a Tensor, an array or a number, "
                                        r"got str$"):
        autograd.minimum(Tensor(data=[1.0]), "a")


def test_a_numpy_scalar_on_the_left_of_sub_and_pow():
    x = np.array([1.0, 2.0], np.float32)
    t = Tensor(data=x, stores_grad=True)
    for y, expected, slope in [(np.float64(2.0) - t, 2.0 - x, -np.ones(2)),
                               (np.float32(2.0) ** t, 2.0 ** x, np.log(2.0) * 2.0 ** x)]:
        assert y.dtype == np.float32
        np.testing.assert_allclose(y.to_numpy(), expected, rtol=1e-6)
        (grad,) = autograd.gradients(autograd.sum(y)).values()
        np.testing.assert_allclose(grad.to_numpy(), slope, rtol=1e-6)


@pytest.mark.parametrize("name", ["add", "div", "pow"])
def test_binary_ops_name_themselves_for_a_bad_operand(name):
    with pytest.raises(TypeError, match=f"^{name}: expected a Tensor, an array or a number, "
                                        "got str$"):
        getattr(autograd, name)(Tensor(data=[1.0]), "a")


def test_an_integer_tensor_times_a_float_is_float32():
    y = Tensor(data=np.array([1, 2], np.int32)) * 2.5
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y.to_numpy(), [2.5, 5.0])
