"""The comparisons where the sampled mutation run found the suite blind (docs/testing.md): which
right-hand sides count as scalars (``scalar_value``), converting a non-Tensor y onto x's device,
and the exact messages, which name the function, what it expected and what it got."""
import re
from fractions import Fraction

import numpy as np
import pytest

import autograd
from autograd import Tensor
from tests.foreign_device import FOREIGN_DEVICE, tensor_on_a_foreign_device

X = np.array([0.25, 0.5, 1.0], np.float32)


def test_a_number_that_is_no_python_or_numpy_scalar_compares_by_its_value():
    # a Fraction is a numbers.Number but not a NumPy scalar: it goes the array way
    got = autograd.greater(Tensor(data=X), Fraction(1, 2)).to_numpy()
    np.testing.assert_array_equal(got, (X > 0.5).astype(np.float32))


def test_a_numpy_string_scalar_is_refused_by_name():
    message = "greater: expected a Tensor, an array or a number, got str_"
    with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
        autograd.greater(Tensor(data=X), np.str_("a"))
    with pytest.raises(TypeError, match="^less: expected a Tensor, an array or a number, got "
                                        "str$"):
        autograd.less(Tensor(data=X), "a")


def test_a_list_on_the_right_is_converted_onto_the_device_of_x():
    x = tensor_on_a_foreign_device(X)
    y = autograd.less(x, [0.5, 0.5, 0.5])
    assert y.device is FOREIGN_DEVICE
    np.testing.assert_array_equal(np.asarray(y.data), (X < 0.5).astype(np.float32))


def test_tensors_on_two_devices_are_refused_naming_both():
    message = "greater: inputs are on different devices (cpu and gpu:7)"
    with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
        autograd.greater(Tensor(data=X), tensor_on_a_foreign_device(X))


# chunk 5 of issue 22's whole run of operations/ (docs/testing.md): each function's own name
# in its messages, a non-Tensor first argument, scalar right-hand sides with ties, and the
# dtype of the result for integer and float16 inputs

NAMES = ["greater", "less", "equal", "greater_equal", "less_equal", "not_equal", "_and", "_or",
         "_xor"]
REFERENCE = {
    "greater": np.greater, "less": np.less, "equal": np.equal,
    "greater_equal": np.greater_equal, "less_equal": np.less_equal, "not_equal": np.not_equal,
    "_and": lambda a, b: np.logical_and(a != 0, b != 0),
    "_or": lambda a, b: np.logical_or(a != 0, b != 0),
    "_xor": lambda a, b: np.logical_xor(a != 0, b != 0),
}


def function(name):
    from autograd.operations import comparison
    return getattr(comparison, name)


@pytest.mark.parametrize("name", NAMES)
def test_each_message_names_its_own_function(name):
    with pytest.raises(TypeError, match=f"^{re.escape(name)}: expected a Tensor, an array or a "
                                        f"number, got str$"):
        function(name)(Tensor(data=X), "a")
    with pytest.raises(TypeError, match=f"^{re.escape(name)}: expected a Tensor first, got "
                                        f"list$"):
        function(name)([1.0, 2.0], Tensor(data=X))
    with pytest.raises(ValueError, match=f"^{re.escape(name)}: cannot broadcast shapes \\(3,\\) "
                                         f"and \\(2,\\)$"):
        function(name)(Tensor(data=X), Tensor(data=[1.0, 2.0]))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("scalar", [0, 1, 0.5, np.float32(1.0), np.int64(-1), True])
def test_a_scalar_right_hand_side_with_ties(name, scalar):
    x = np.array([-1.0, 0.0, 0.5, 1.0, 2.0], np.float16)
    got = function(name)(Tensor(data=x), scalar)
    assert got.dtype == np.float16 and got.creator is None
    np.testing.assert_array_equal(got.to_numpy(),
                                  REFERENCE[name](x, float(scalar)).astype(np.float16))


@pytest.mark.parametrize("name", NAMES)
def test_an_integer_tensor_gives_float32(name):
    x, y = np.array([-1, 0, 1, 2]), np.array([0, 0, 2, 2])
    for right in (Tensor(data=y), y, [0, 0, 2, 2], 1):
        got = function(name)(Tensor(data=x), right)
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got.to_numpy(),
                                      REFERENCE[name](x, np.asarray(right)).astype(np.float32))


def test_not_of_floats_keeps_the_dtype():
    from autograd.operations import comparison
    got = comparison._not(Tensor(data=np.array([0.0, -0.0, 2.0, np.nan])))
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got.to_numpy(), [1.0, 1.0, 0.0, 0.0])
