"""Activations: forward against NumPy formulas, float64 gradcheck, float32 kept (tests/opcase.py),
plus stability for large |x|, SINGA's defaults and argument errors."""
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st

import autograd
from autograd import Tensor
from tests.opcase import OpCase, floats, check_case, value_and_grad

# the compiled kernels and the portable code they stand in for: both tested
pytestmark = pytest.mark.usefixtures("compiled_and_portable")

erf_reference = np.vectorize(math.erf)


def sigmoid_reference(x):
    return 1 / (1 + np.exp(-x))


def elu_reference(x, alpha=1.0):
    return np.where(x > 0, x, alpha * (np.exp(x) - 1))


def gelu_reference(x, approximate="none"):
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))
    return x * 0.5 * (1 + erf_reference(x / np.sqrt(2)))


def prelu_reference(x, slope):
    return np.where(x > 0, x, slope * x)


CASES = [
    OpCase(autograd.tanh, np.tanh, [floats()]),
    OpCase(autograd.sigmoid, sigmoid_reference, [floats(-6, 6)]),
    OpCase(autograd.relu, lambda x: np.maximum(x, 0), [floats(avoid=[0.0])]),
    # (N, C, H, W) images, which the harness also stores batch-last (as conv2d returns them)
    OpCase(autograd.relu, lambda x: np.maximum(x, 0), [floats(avoid=[0.0])], shape=(2, 3, 2, 2),
           name="relu_images"),
    OpCase(autograd.leakyrelu, lambda x: np.where(x > 0, x, 0.01 * x), [floats(avoid=[0.0])]),
    OpCase(autograd.leakyrelu, lambda x, a: np.where(x > 0, x, a * x), [floats(avoid=[0.0])],
           kwargs=dict(a=0.3), name="leakyrelu_a"),
    OpCase(autograd.elu, elu_reference, [floats(-4, 2)]),
    OpCase(autograd.elu, elu_reference, [floats(-4, 2, avoid=[0.0])], kwargs=dict(alpha=2.5),
           name="elu_alpha"),
    OpCase(autograd.selu, lambda x: 1.0507 * elu_reference(x, 1.67326),
           [floats(-4, 2, avoid=[0.0])]),
    OpCase(autograd.selu, lambda x, alpha, gamma: gamma * elu_reference(x, alpha),
           [floats(avoid=[0.0])], kwargs=dict(alpha=0.5, gamma=2.0), name="selu_alpha_gamma"),
    OpCase(autograd.gelu, gelu_reference, [floats(-4, 4)]),
    OpCase(autograd.gelu, gelu_reference, [floats(-4, 4)], kwargs=dict(approximate="tanh"),
           name="gelu_tanh"),
    OpCase(autograd.softplus, lambda x: np.log(1 + np.exp(x)), [floats(-6, 6)]),
    OpCase(autograd.softsign, lambda x: x / (1 + np.abs(x)), [floats(-4, 4)]),
    OpCase(autograd.hardsigmoid, lambda x: np.clip(0.2 * x + 0.5, 0, 1),
           [floats(-4, 4, avoid=[-2.5, 2.5])]),
    OpCase(autograd.hardsigmoid, lambda x, alpha, gamma: np.clip(alpha * x + gamma, 0, 1),
           [floats(avoid=[-0.5, 1.5])], kwargs=dict(alpha=0.5, gamma=0.25),
           name="hardsigmoid_alpha_gamma"),
    OpCase(autograd.erf, erf_reference, [floats()]),
    # slope shapes that broadcast to x: drawn variants, per-feature (C,), per-channel NCHW
    OpCase(autograd.prelu, prelu_reference, [floats(avoid=[0.0]), floats(-1, 1, broadcast=True)]),
    OpCase(autograd.prelu, prelu_reference, [floats(avoid=[0.0]), floats(-1, 1, shape=(3,))],
           shape=(4, 3), name="prelu_per_feature"),
    OpCase(autograd.prelu, prelu_reference,
           [floats(avoid=[0.0]), floats(-1, 1, shape=(1, 3, 1, 1))], shape=(2, 3, 2, 2),
           name="prelu_per_channel"),
    OpCase(autograd.prelu, prelu_reference,
           [floats(avoid=[0.0]), floats(-1, 1, requires_grad=False)], name="prelu_constant_slope"),
    # SINGA broadcasts both ways: x smaller than slope, slope with more axes, both stretched
    OpCase(autograd.prelu, prelu_reference, [floats(avoid=[0.0], broadcast=True), floats(-1, 1)],
           name="prelu_x_broadcast"),
    OpCase(autograd.prelu, prelu_reference,
           [floats(avoid=[0.0], shape=(3,)), floats(-1, 1, shape=(2, 4, 3))],
           name="prelu_slope_more_axes"),
    OpCase(autograd.prelu, prelu_reference,
           [floats(avoid=[0.0], shape=(3, 1)), floats(-1, 1, shape=(1, 4))],
           name="prelu_both_stretched"),
]


@pytest.mark.parametrize("case", CASES, ids=str)
@given(data=st.data())
def test_op(case, data):
    check_case(case, data)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fn", [autograd.sigmoid, autograd.softplus, autograd.elu,
                                autograd.selu, autograd.tanh, autograd.gelu, autograd.erf,
                                autograd.softsign],
                         ids=lambda f: f.__name__)
def test_large_inputs_give_finite_values_and_gradients_without_warnings(fn, dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(over="raise", invalid="raise", divide="raise"):
            y, grad = value_and_grad(fn, [-1000.0, -30.0, 0.0, 30.0, 1000.0], dtype)
    assert np.isfinite(y).all() and np.isfinite(grad).all(), (y, grad)
    assert y.dtype == dtype and grad.dtype == dtype


def test_sigmoid_and_softplus_at_the_extremes():
    y, grad = value_and_grad(autograd.sigmoid, [-1000.0, -50.0, 50.0, 1000.0])
    np.testing.assert_allclose(y, [0.0, np.exp(-50.0), 1.0, 1.0], rtol=1e-12, atol=0)
    np.testing.assert_allclose(grad, 0.5 * y * (1 - y), rtol=1e-12, atol=0)
    y, grad = value_and_grad(autograd.softplus, [-1000.0, -50.0, 50.0, 1000.0])
    np.testing.assert_allclose(y, [0.0, np.exp(-50.0), 50.0, 1000.0], rtol=1e-12, atol=0)
    np.testing.assert_allclose(grad, [0.0, 0.5 * np.exp(-50.0), 0.5, 0.5], rtol=1e-12, atol=0)


def test_relu_gradient_is_zero_at_zero_and_keeps_dy_elsewhere():
    x = Tensor(data=[-1.0, 0.0, 2.0], stores_grad=True)
    dy = np.array([3.0, 5.0, 7.0], np.float32)
    (grad,) = [g for _, g in autograd.backward(autograd.relu(x), dy)]
    np.testing.assert_array_equal(grad.to_numpy(), [0.0, 0.0, 7.0])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("size", [511, 512, 513, 3 * 512 + 7, (1 << 14) - 1, 1 << 14,
                                  (1 << 14) + 513, 300_001])
def test_relu_over_zero_rows_matches_where_on_every_size_and_strides(size, dtype):
    # sizes around the broadcast zero row's length and the size from which it is taken
    # (ZERO_ROW_MIN_SIZE), one large enough to split over threads
    rng = np.random.default_rng(size)
    data = rng.standard_normal(size).astype(dtype)
    data[::97] = np.nan
    data[1::89] = 0.0
    reference = np.where(np.isnan(data), data, np.where(data > 0, data, 0))
    np.testing.assert_array_equal(autograd.relu(Tensor(data=data)).to_numpy(), reference)
    strided = data[::2]
    np.testing.assert_array_equal(autograd.relu(Tensor(data=strided)).to_numpy(),
                                  reference[::2])


def test_singa_defaults():
    x = Tensor(data=np.array([-1.0, 2.0]))
    np.testing.assert_allclose(autograd.selu(x).to_numpy(),
                               [1.0507 * 1.67326 * (np.exp(-1.0) - 1), 1.0507 * 2.0], rtol=1e-12)
    np.testing.assert_allclose(autograd.hardsigmoid(x).to_numpy(), [0.3, 0.9], rtol=1e-12)
    np.testing.assert_allclose(autograd.leakyrelu(x).to_numpy(), [-0.01, 2.0], rtol=1e-12)
    np.testing.assert_allclose(autograd.elu(x).to_numpy(), [np.exp(-1.0) - 1, 2.0], rtol=1e-12)


def test_numpy_float64_parameters_keep_float32():
    x = Tensor(data=[-1.0, 2.0])
    for y in (autograd.leakyrelu(x, np.float64(0.2)), autograd.elu(x, np.float64(2.0)),
              autograd.hardsigmoid(x, np.float64(0.3), np.float64(0.4))):
        assert y.dtype == np.float32


def test_gelu_rejects_an_unknown_approximation():
    with pytest.raises(ValueError, match="gelu: approximate must be 'none' or 'tanh', got 'erf'"):
        autograd.gelu(Tensor(data=[1.0]), approximate="erf")


# ---------------------------------------------------------------- prelu

def test_prelu_slope_gradient_sums_dy_times_x_over_the_negative_elements():
    x_values = np.array([[-2.0, 3.0], [-1.0, -4.0], [5.0, -0.5]])
    x = Tensor(data=x_values, stores_grad=True)
    slope = Tensor(data=np.array([0.5, 0.25]), stores_grad=True)
    dy = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    y = autograd.prelu(x, slope)
    np.testing.assert_allclose(y.to_numpy(), [[-1.0, 3.0], [-0.5, -1.0], [5.0, -0.125]])
    grads = autograd.gradients(y, dy)
    # column 0: x <= 0 at rows 0, 1 -> 1*-2 + 3*-1; column 1: rows 1, 2 -> 4*-4 + 6*-0.5
    np.testing.assert_allclose(grads[slope].to_numpy(), [-5.0, -19.0])
    np.testing.assert_allclose(grads[x].to_numpy(), [[0.5, 2.0], [1.5, 1.0], [5.0, 1.5]])


def test_prelu_keeps_float32_with_a_python_number_slope():
    y = autograd.prelu(Tensor(data=[-2.0, 1.0]), 0.25)
    assert y.dtype == np.float32
    np.testing.assert_allclose(y.to_numpy(), [-0.5, 1.0])


def test_prelu_slope_that_does_not_broadcast_to_x_is_an_error():
    x = Tensor(shape=(2, 4))
    with pytest.raises(ValueError, match=r"prelu: cannot broadcast shapes \(2, 4\) and \(3,\)"):
        autograd.prelu(x, Tensor(shape=(3,)))
    with pytest.raises(TypeError, match="prelu: expected a Tensor, got ndarray"):
        autograd.prelu(np.ones(3), Tensor(shape=(3,)))


def test_prelu_x_smaller_than_slope_gets_its_gradient_summed_back():
    x = Tensor(data=np.array([-2.0, 4.0]), stores_grad=True)
    slope = Tensor(data=np.array([[0.5], [1.0]]), stores_grad=True)
    y = autograd.prelu(x, slope)
    np.testing.assert_allclose(y.to_numpy(), [[-1.0, 4.0], [-2.0, 4.0]])
    grads = autograd.gradients(y, np.ones((2, 2)))
    # dx: column 0 is negative, so slope 0.5 + 1.0; column 1 positive in both rows: 1 + 1
    np.testing.assert_allclose(grads[x].to_numpy(), [1.5, 2.0])
    # dslope: each row sees x = -2 once where x <= 0
    np.testing.assert_allclose(grads[slope].to_numpy(), [[-2.0], [-2.0]])
