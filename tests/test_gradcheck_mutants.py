"""gradcheck survivors of the full mutation run: the mismatch message word for word (values
computed here with NumPy from the documented seed), the inclusive tolerance, a scalar-valued
fn, inputs given as Python lists of ints, integer arrays passed on as Tensors, and the messages
for a fn that returns no Tensor."""
import re

import numpy as np
import pytest

import autograd
from autograd import GradcheckError, Tensor
from tests.test_gradcheck import Scaled      # y = x^2, its gradient times a factor



def _expected_message(x, factor, seed, atol=1e-5, rtol=1e-3, eps=1e-6):
    """The message for the first element of a 1-element x, from the finite difference of
    sum(x^2 * dy) with dy drawn as documented: default_rng(seed).standard_normal(shape)."""
    dy = np.random.default_rng(seed).standard_normal(x.shape)
    above = float(((x + eps) * (x + eps) * dy).sum())
    below = float(((x - eps) * (x - eps) * dy).sum())
    numeric = (above - below) / (2 * eps)
    value = float((factor * 2 * x * dy)[0])
    return (f"gradcheck: input 0, element (0,): numeric {numeric:.8g}, analytic {value:.8g} "
            f"(difference {abs(value - numeric):.3g}, tolerance {atol + rtol * abs(numeric):.3g})")


@pytest.mark.parametrize("seed", [None, 5])
def test_the_mismatch_message_word_for_word_with_the_documented_upstream(seed):
    # catches seed's default changed or ignored (default_rng(None)), and the difference and
    # tolerance arithmetic of the message
    x = np.array([0.75])
    options = {} if seed is None else {"seed": seed}
    with pytest.raises(GradcheckError) as info:
        autograd.gradcheck(lambda t: Scaled(1.5)(t), [x], **options)
    assert str(info.value) == _expected_message(x, 1.5, 0 if seed is None else seed)


def test_a_gradient_exactly_at_the_tolerance_passes():
    # |analytic - numeric| <= tolerance is inclusive: with zero tolerances an exact gradient
    # (0 = 0 here: the output ignores both inputs) passes
    assert autograd.gradcheck(lambda p, q: p * 0.0 + 1.0, [np.ones(2), np.ones(3)],
                              atol=0.0, rtol=0.0)


def test_a_scalar_valued_fn_is_checked():
    # catches _as_tuple treating every output as a sequence (a 0-d Tensor cannot be iterated)
    x = np.array([[0.5, -1.0], [2.0, 1.5]])
    assert autograd.gradcheck(lambda t: autograd.sum(Scaled(1.0)(t)), [x])
    with pytest.raises(GradcheckError, match="input 0"):
        autograd.gradcheck(lambda t: autograd.sum(Scaled(1.05)(t)), [x])


def test_a_list_of_ints_is_an_input_checked_in_float64():
    # a list has no dtype: it is read as float64 (not int64, which would not be checked)
    seen = []

    def fn(t):
        seen.append(t.dtype)
        return Scaled(1.05)(t)
    with pytest.raises(GradcheckError, match=r"^gradcheck: input 0, element \(0,\)"):
        autograd.gradcheck(fn, [[1, 2, 3]])
    assert seen[0] == np.float64
    assert autograd.gradcheck(lambda t: Scaled(1.0)(t), [[1, 2, 3]])


def test_an_integer_array_reaches_fn_as_a_tensor_of_its_values():
    received = []

    def pick(x, index):
        received.append(index)
        return x[index.data] * 2.0
    assert autograd.gradcheck(pick, [np.array([1.0, -2.0, 3.0]), np.array([2, 0])])
    assert all(isinstance(t, Tensor) for t in received)
    np.testing.assert_array_equal(received[0].to_numpy(), [2, 0])


def test_no_input_to_check_is_refused_word_for_word():
    with pytest.raises(ValueError) as info:
        autograd.gradcheck(lambda t: t, [np.array([1, 2])])
    assert str(info.value) == ("gradcheck: no floating input requires a gradient; "
                               "nothing to check")


def test_a_fn_that_returns_an_array_is_named_word_for_word():
    with pytest.raises(TypeError) as info:
        autograd.gradcheck(lambda t: t.to_numpy(), [np.ones(2)])
    assert str(info.value) == "gradcheck: fn must return Tensors, got ndarray"


def test_a_fn_that_stops_returning_tensors_in_the_finite_differences_is_named():
    calls = []

    def fn(t):
        calls.append(1)
        return t * 2.0 if len(calls) == 1 else [float(t.to_numpy().sum())]
    with pytest.raises(TypeError) as info:
        autograd.gradcheck(fn, [np.ones(2)])
    assert str(info.value) == "gradcheck: fn must return Tensors, got float"
