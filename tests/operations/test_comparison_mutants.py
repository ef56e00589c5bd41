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
