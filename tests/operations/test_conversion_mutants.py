"""shape, constant_of_shape, cast, onehot and nonzero where the mutation run of issue 22
(docs/testing.md, chunk 5) found the suite blind: defaults, SINGA's type code 0, a bool passed
as a type code, the gradient's dtype through a cast, float indices that hold integers, and the
exact messages (they name the function, what it expected and what it got)."""
import re

import numpy as np
import pytest

import autograd
from autograd import Tensor


def exactly(message):
    return f"^{re.escape(message)}$"


def test_shape_is_an_int64_op_output_with_no_gradient():
    x = Tensor(data=np.ones((2, 5), np.float32), stores_grad=True)
    s = autograd.shape(x)
    assert s.dtype == np.int64 and type(s.creator).__name__ == "Shape"
    np.testing.assert_array_equal(s.to_numpy(), [2, 5])
    assert s.creator.backward(np.ones(2)) is None
    with pytest.raises(TypeError, match=exactly("shape: expected a Tensor, got ndarray")):
        autograd.shape(np.ones(3))


def test_constant_of_shape_defaults_to_float32_zeros_and_names_a_negative_size():
    filled = autograd.constant_of_shape(Tensor(data=np.array([2, 3], np.int64)))
    assert filled.dtype == np.float32 and filled.creator is None
    np.testing.assert_array_equal(filled.to_numpy(), np.zeros((2, 3), np.float32))
    empty = autograd.constant_of_shape(Tensor(data=np.array([0, 2], np.int64)), 7.0)
    assert empty.shape == (0, 2)
    with pytest.raises(ValueError, match=exactly(
            "constant_of_shape: dimensions must be >= 0, got (2, -1)")):
        autograd.constant_of_shape(Tensor(data=np.array([2, -1], np.int64)), 1.0)


def test_cast_singa_code_zero_is_float32_and_stays_in_the_graph():
    x = Tensor(data=np.array([1.25, -2.5]), stores_grad=True)       # float64
    y = autograd.cast(x, 0)
    assert y.dtype == np.float32 and type(y.creator).__name__ == "Cast"
    grad = autograd.gradients(autograd.sum(y * y))[x].to_numpy()
    assert grad.dtype == np.float64                                   # back to the input's
    np.testing.assert_array_equal(grad, [2.5, -5.0])


@pytest.mark.parametrize("to", ["float16", np.float16, 1])
def test_cast_to_float16_by_name_type_or_code(to):
    y = autograd.cast(Tensor(data=np.array([0.5, 3.0], np.float32), stores_grad=True), to)
    assert y.dtype == np.float16 and y.creator is not None
    np.testing.assert_array_equal(y.to_numpy(), np.array([0.5, 3.0], np.float16))


def test_cast_of_an_integer_tensor_to_float_leaves_the_graph():
    y = autograd.cast(Tensor(data=np.array([1, -2], np.int64)), np.float32)
    assert y.dtype == np.float32 and y.creator is None
    np.testing.assert_array_equal(y.to_numpy(), [1.0, -2.0])


def test_cast_messages_are_exact_and_a_bool_is_no_type_code():
    x = Tensor(data=[1.5, -2.5])
    with pytest.raises(TypeError, match=exactly(
            "cast: unknown SINGA type code 7; use 0 (float32), 1 (float16), 2 (int32) or a "
            "NumPy dtype")):
        autograd.cast(x, 7)
    for to, shown in [(True, "True"), ("nope", "'nope'"), (3.5, "3.5")]:
        with pytest.raises(TypeError, match=exactly(
                f"cast: expected a dtype, a dtype name or a SINGA type code, got {shown}")):
            autograd.cast(x, to)


def test_onehot_default_values_and_float_indices_holding_integers():
    out = autograd.onehot(0, Tensor(data=np.array([2.0, 0.0, -1.0], np.float32)), 3)
    assert out.dtype == np.float32 and out.creator is None
    np.testing.assert_array_equal(out.to_numpy(), np.eye(3, dtype=np.float32)[[2, 0, 2]].T)


def test_onehot_of_uint_and_empty_indices():
    out = autograd.onehot(-1, Tensor(data=np.array([[1], [0]], np.uint8)), 2).to_numpy()
    np.testing.assert_array_equal(out, [[[0.0, 1.0]], [[1.0, 0.0]]])
    assert autograd.onehot(0, Tensor(data=np.array([], np.int64)), 3).shape == (3, 0)


def test_onehot_bounds_are_inclusive_below_and_exclusive_above():
    x = Tensor(data=np.array([-3, 2]))
    np.testing.assert_array_equal(autograd.onehot(-1, x, 3).to_numpy(), [[1, 0, 0], [0, 0, 1]])
    with pytest.raises(ValueError, match=exactly(
            "onehot: indices must lie in [-3, 3), got values from -4 to 1")):
        autograd.onehot(-1, Tensor(data=np.array([-4, 1])), 3)
    with pytest.raises(ValueError, match=exactly(
            "onehot: indices must lie in [-2, 2), got values from 0 to 2")):
        autograd.onehot(-1, Tensor(data=np.array([0, 2])), 2)


def test_onehot_messages_are_exact():
    with pytest.raises(TypeError, match=exactly(
            "onehot: indices must be a Tensor (wrap an array with Tensor(data=...)), got "
            "ndarray")):
        autograd.onehot(0, np.array([0, 1]), 3)
    with pytest.raises(TypeError, match=exactly("onehot: indices must be integers, got float64")):
        autograd.onehot(0, Tensor(data=np.array([0.5, 1.0])), 3)
    with pytest.raises(TypeError, match=exactly("onehot: indices must be integers, got bool")):
        autograd.onehot(0, Tensor(data=np.array([True, False])), 3)
    with pytest.raises(ValueError, match=exactly("onehot: axis 2 is out of range for a 2-d "
                                                 "result")):
        autograd.onehot(2, Tensor(data=np.array([0, 1])), 3)
    with pytest.raises(ValueError, match=exactly("onehot: axis -3 is out of range for a 2-d "
                                                 "result")):
        autograd.onehot(-3, Tensor(data=np.array([0, 1])), 3)
    np.testing.assert_array_equal(                                 # -2 is the first axis
        autograd.onehot(-2, Tensor(data=np.array([0, 1])), 2).to_numpy(), np.eye(2))


def test_onehot_depth_as_a_float_or_string_array_is_named():
    x = Tensor(data=np.array([0, 1]))
    np.testing.assert_array_equal(autograd.onehot(-1, x, 2.0).to_numpy(), np.eye(2))
    with pytest.raises(ValueError, match=exactly(
            "onehot: depth must be an int or hold one number, got an array of shape (1,)")):
        autograd.onehot(-1, x, np.array(["2"]))
    with pytest.raises(ValueError, match=exactly(
            "onehot: depth must be a positive integer, got -1")):
        autograd.onehot(-1, x, -1)


def test_nonzero_is_int64_outside_the_graph():
    x = Tensor(data=np.array([[0.0, 2.0], [3.0, 0.0]], np.float32), stores_grad=True)
    got = autograd.nonzero(x)
    assert got.dtype == np.int64 and got.creator is None
    np.testing.assert_array_equal(got.to_numpy(), [[0, 1], [1, 0]])


W = Tensor(data=np.array([1.0, 0.0, 2.0]), stores_grad=True)


def step(x):
    return autograd.nonzero(x * W)


def test_nonzero_refuses_to_be_captured_with_its_reason():
    captured = autograd.capture(step)
    with pytest.raises(autograd.CaptureError, match=exactly(
            "graph mode: nonzero's result has as many columns as x has nonzero values; a "
            "replay would keep the captured shape (this call ran eagerly to its end; step "
            "cannot be replayed)")):
        captured(Tensor(data=np.array([1.0, 2.0, 3.0])))
