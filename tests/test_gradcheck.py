"""gradcheck: finite differences in float64 against backward, with a random upstream gradient."""
import re

import numpy as np
import pytest

import autograd
from autograd import Tensor, Operation, GradcheckError


class Scaled(Operation):
    """y = x^2 with the gradient multiplied by ``factor`` (1.0 is correct)."""

    def __init__(self, factor=1.0):
        super().__init__()
        self.factor = factor

    def forward(self, x):
        self.save_for_backward(x)
        return x * x

    def backward(self, dy):
        (x,) = self.saved
        return self.factor * 2 * x * dy


class Softmax(Operation):
    """y = softmax(x) over the last axis; ``wrong=True`` returns zeros, which a check with
    dy = ones could not tell from the truth (softmax sums to 1, so d sum(y) / dx = 0)."""

    def __init__(self, wrong=False):
        super().__init__()
        self.wrong = wrong

    def forward(self, x):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        y = e / e.sum(axis=-1, keepdims=True)
        self.save_for_backward(y)
        return y

    def backward(self, dy):
        (y,) = self.saved
        if self.wrong:
            return np.zeros_like(dy)
        return y * (dy - (dy * y).sum(axis=-1, keepdims=True))


class Recorder(Operation):
    """y = a * b; remembers the dtypes forward saw."""

    def forward(self, a, b):
        self.dtypes = a.dtype, b.dtype
        self.save_for_backward(a, b)
        return a * b

    def backward(self, dy):
        a, b = self.saved
        return dy * b, dy * a


def test_returns_true_for_a_correct_op():
    assert autograd.gradcheck(lambda t: Scaled()(t), [np.array([[0.5, -1.0], [2.0, 1.5]])]) \
        is True


@pytest.mark.parametrize("factor", [1.01, 0.99])
def test_one_percent_off_raises_naming_input_element_and_values(factor):
    x = np.array([[0.5, -1.0, 2.0], [1.5, -0.7, 1.2]])
    with pytest.raises(GradcheckError) as info:
        autograd.gradcheck(lambda a, b: a * Scaled(factor)(b), [np.ones((2, 3)), x])
    assert isinstance(info.value, AssertionError)
    message = str(info.value)
    match = re.search(r"input 1, element \((\d+), (\d+)\): numeric (\S+), analytic (\S+)",
                      message)
    assert match, message
    numeric, analytic = float(match.group(3)), float(match.group(4))
    assert analytic == pytest.approx(factor * numeric, rel=1e-6)
    # the numeric value is the true derivative 2 x dy for some dy drawn by gradcheck
    i, j = int(match.group(1)), int(match.group(2))
    assert abs(numeric) > 0 and abs(numeric / (2 * x[i, j])) < 10


def test_random_upstream_catches_a_backward_right_only_for_ones():
    x = np.array([[0.1, 0.5, -0.3], [1.0, -1.0, 0.0]])
    assert autograd.gradcheck(lambda t: Softmax()(t), [x])
    # the wrong backward passes with dy = ones, but gradcheck draws dy at random
    (g,) = autograd.gradients(autograd.sum(Softmax(wrong=True)(
        Tensor(data=x, stores_grad=True)))).values()
    np.testing.assert_allclose(g.data, 0.0)
    with pytest.raises(GradcheckError):
        autograd.gradcheck(lambda t: Softmax(wrong=True)(t), [x])


def test_several_inputs_are_all_checked():
    rng = np.random.default_rng(0)
    a, b, c = rng.standard_normal((2, 3)), rng.standard_normal((3, 4)), rng.standard_normal(4)
    assert autograd.gradcheck(lambda p, q, r: autograd.tanh(p @ q) * r, [a, b, c])

    class WrongSecond(Recorder):
        def backward(self, dy):
            a, b = self.saved
            return dy * b, dy * a * 1.02

    with pytest.raises(GradcheckError, match="input 1"):
        autograd.gradcheck(lambda p, q: WrongSecond()(p, q), [a, a.copy() + 1.0])


def test_multiple_output_fn():
    def two_outputs(x, y):
        return x * y, autograd.exp(x) - y

    rng = np.random.default_rng(1)
    inputs = [rng.standard_normal((2, 2)), rng.standard_normal((2, 2))]
    assert autograd.gradcheck(two_outputs, inputs)

    def one_wrong(x, y):
        return x * y, Scaled(1.05)(x)

    with pytest.raises(GradcheckError, match="input 0"):
        autograd.gradcheck(one_wrong, inputs)


def test_integer_inputs_pass_through_unchanged():
    seen = []

    def pick(x, index):
        seen.append(index)
        return x[index.data] * 2.0

    index = Tensor(data=np.array([2, 0, 2]))
    assert autograd.gradcheck(pick, [np.array([1.0, -2.0, 3.0]), index])
    assert all(t is index for t in seen) and index.dtype == np.int64
    labels = np.array([1, 0])
    assert autograd.gradcheck(lambda x, t: x[np.arange(2), t.data], [np.ones((2, 3)), labels])


def test_float32_inputs_are_checked_in_float64_and_left_untouched():
    x32 = Tensor(data=np.array([0.5, 1.0, -2.0], np.float32), stores_grad=True)
    y32 = Tensor(data=np.array([1.5, -1.0, 0.25], np.float32))
    before = x32.to_numpy().copy()
    op_dtypes = []

    def fn(a, b):
        op = Recorder()
        out = op(a, b)
        op_dtypes.append(op.dtypes)
        return out

    assert autograd.gradcheck(fn, [x32, y32])
    assert set(op_dtypes) == {(np.dtype(np.float64), np.dtype(np.float64))}
    assert x32.dtype == np.float32 and y32.dtype == np.float32
    np.testing.assert_array_equal(x32.to_numpy(), before)


def test_input_arrays_are_not_modified():
    x = np.array([0.5, 1.0, 2.0])
    copy = x.copy()
    autograd.gradcheck(lambda t: Scaled()(t), [x])
    np.testing.assert_array_equal(x, copy)


def test_constants_that_require_no_gradient_are_not_checked():
    class WrongForB(Recorder):
        def backward(self, dy):
            a, b = self.saved
            return dy * b, dy * a * 2.0

    a, b = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    constant = Tensor(data=b, requires_grad=False)
    assert autograd.gradcheck(lambda p, q: WrongForB()(p, q), [a, constant])
    with pytest.raises(GradcheckError, match="input 1"):
        autograd.gradcheck(lambda p, q: WrongForB()(p, q), [a, b])


def test_input_that_the_output_ignores_has_zero_gradient():
    assert autograd.gradcheck(lambda p, q: p * 2.0, [np.ones(2), np.ones(3)])


def test_no_floating_input_needing_a_gradient_is_value_error():
    with pytest.raises(ValueError, match="nothing to check"):
        autograd.gradcheck(lambda t: t, [np.array([1, 2])])


def test_fn_that_downcasts_is_type_error():
    with pytest.raises(TypeError, match="float32"):
        autograd.gradcheck(lambda t: t.as_type(np.float32) * 2.0, [np.ones(2)])
