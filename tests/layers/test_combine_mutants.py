"""Tests written from the surviving mutants of autograd/layers/combine.py (issue 22): Add with a
plain number, Reshape's argument checks, its repr, and its -1 inference checked directly and
through error messages word for word."""
import re

import numpy as np
import pytest

import autograd
from autograd import Add, Cat, Reshape, Tensor


def _exact(message):
    return f"^{re.escape(message)}$"


@pytest.mark.parametrize("left_is_tensor", [True, False])
def test_add_takes_a_plain_number_on_either_side(left_is_tensor):
    """`hasattr(a, "shape") or hasattr(b, "shape")` would ask a float for its shape."""
    data = np.array([1.0, -2.0, 0.5])
    x = Tensor(data=data)
    y = Add()(x, 2.0) if left_is_tensor else Add()(2.0, x)
    np.testing.assert_array_equal(y.to_numpy(), data + 2.0)


def test_reshape_takes_a_single_int_as_the_shape():
    """`(shape,) if isinstance(shape, int) and False`: tuple(6) is a TypeError."""
    data = np.arange(6.0).reshape(2, 3)
    layer = Reshape(6)
    assert layer.shape == (6,)
    np.testing.assert_array_equal(layer(Tensor(data=data)).to_numpy(), data.reshape(6))
    assert Reshape()(Tensor(data=data), np.int64(6)).shape == (6,)


@pytest.mark.parametrize("shape", [(2.0, 3), (True, 6), (-2, 3), (3, -3)])
def test_reshape_refuses_floats_bools_and_negative_sizes_other_than_minus_one(shape):
    """The `and`s of the element check turned into `or`, and `n >= -1` into `n >= -2`."""
    with pytest.raises(ValueError, match=_exact(
            f"Reshape: shape must be ints >= 0 with at most one -1, got {shape}")):
        Reshape(shape)


def test_reshape_repr_shows_a_fixed_shape_and_nothing_without_one():
    """extra_repr's `shape is None or True` would hide the fixed shape."""
    assert repr(Reshape((2, -1))) == "Reshape(shape=(2, -1))"
    assert repr(Reshape()) == "Reshape()"


def test_reshape_output_shape_resolves_the_minus_one():
    """`size // known if n == -1 and False` would leave -1 in the inferred shape (the op would
    still infer it, so only output_shape shows it)."""
    shape = Reshape((6, -1)).output_shape((2, 3, 4))
    assert shape == (6, 4) and all(type(n) is int for n in shape)    # not 4.0 (`size / known`)
    assert Reshape((-1,)).output_shape((2, 3)) == (6,)
    assert Reshape((0, -1)).output_shape((5, 2, 2)) == (5, 4)


@pytest.mark.parametrize("source, shape, message", [
    ((2, 3), (4, -1), "Reshape(): cannot reshape (2, 3) (6 elements) into (4, -1)"),
    ((2, 3), (-1, 4), "Reshape(): cannot reshape (2, 3) (6 elements) into (-1, 4)"),
    ((2, 0, 3), (2, 0, -1), "Reshape(): cannot reshape (2, 0, 3) (0 elements) into (2, 0, -1)"),
    ((2, 3), (7,), "Reshape(): cannot reshape (2, 3) (6 elements) into (7,)"),
])
def test_reshape_refuses_a_minus_one_that_does_not_divide(source, shape, message):
    """The -1 branch's `-1 in target`, `known == 0 or size % known` mutated (+1, -2, not in,
    and, known == 1): the layer must refuse before the op, with its own message."""
    with pytest.raises(ValueError, match=_exact(message)):
        Reshape()(Tensor(shape=source), shape)


def test_reshape_infers_the_minus_one_next_to_a_one():
    """`known == 1 or ...` would refuse (1, -1), whose known product is 1."""
    data = np.arange(6.0).reshape(2, 3)
    y = Reshape()(Tensor(data=data), (1, -1))
    np.testing.assert_array_equal(y.to_numpy(), data.reshape(1, 6))


def test_cat_given_one_tensor_says_how_to_call_it():
    with pytest.raises(TypeError, match=_exact(
            "Cat(axis=1): expected a list of tensors, got one Tensor (write Cat()([a, b]))")):
        Cat(axis=1)(Tensor(shape=(2, 3)))


def test_cat_takes_the_most_negative_axis():
    """`-ndim < axis` would refuse axis=-ndim."""
    parts = [np.ones((1, 3)), np.zeros((2, 3))]
    y = Cat(axis=-2)([Tensor(data=p) for p in parts])
    np.testing.assert_array_equal(y.to_numpy(), np.concatenate(parts, axis=0))
    with pytest.raises(ValueError, match=_exact(
            "Cat(axis=-3): axis -3 is out of range for inputs of shape (1, 3)")):
        Cat(axis=-3).output_shape([(1, 3), (2, 3)])


def test_cat_output_shape_with_an_unknown_size_along_the_axis():
    """An unknown (None) size along the joined axis makes the joined size unknown
    (`... and False` would add None to ints)."""
    assert Cat(axis=0).output_shape([(None, 3), (2, 3)]) == (None, 3)
    assert Cat(axis=1).output_shape([(None, 3), (None, 4)]) == (None, 7)
