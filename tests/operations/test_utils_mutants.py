"""The shared helpers of autograd/operations/utils.py, called directly: the mutation run of
issue 22 (docs/testing.md, chunk 5) found the ops' tests blind to several of their branches and
to their exact messages (which name the op, what it expected and what it got). Each test
compares with a NumPy formula, a hand-derived value or the message word for word."""
import re
import warnings
from fractions import Fraction

import numpy as np
import pytest

from autograd import Tensor
from autograd.operations import utils
from autograd.operations.utils import (as_tensor_like, check_broadcast, check_tensor,
                                       ignore_float_warnings, normalize_axes, normalize_axis,
                                       out_of_range, scalar_operand, scalar_value, scatter_add,
                                       unbroadcast)
from tests.foreign_device import ForeignArray, tensor_on_a_foreign_device


def exactly(message):
    return f"^{re.escape(message)}$"


@pytest.mark.parametrize("grad_shape, shape", [
    ((2, 3, 4), (3, 4)), ((2, 3, 4), (1, 4)), ((2, 3, 4), (3, 1)), ((2, 3, 4), (2, 1, 4)),
    ((5, 1, 4), (1, 1, 4)), ((2, 3), ()), ((4, 3), (1,)), ((1, 3), (1, 3)), ((2, 1), (1,)),
])
def test_unbroadcast_sums_the_added_and_stretched_axes(grad_shape, shape):
    grad = np.random.default_rng(0).standard_normal(grad_shape)
    expected = grad
    while expected.ndim > len(shape):                 # a NumPy loop reference
        expected = expected.sum(axis=0)
    for axis, n in enumerate(shape):
        if n == 1:
            expected = expected.sum(axis=axis, keepdims=True)
    got = unbroadcast(grad, shape)
    assert got.shape == shape
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", ["c", "transposed"])
def test_unbroadcast_of_a_bias_sums_the_leading_axes(dtype, layout):
    """A bias's gradient (the leading axes summed: the backend's sum_rows on a contiguous
    gradient, NumPy's sum otherwise) against a float64 loop."""
    grad = np.random.default_rng(1).standard_normal((6, 5, 4)).astype(dtype)
    if layout == "transposed":
        grad = np.ascontiguousarray(grad.transpose(2, 1, 0)).transpose(2, 1, 0)
    for shape, leading in (((4,), 2), ((5, 4), 1), ((1, 5, 4), 1), ((1, 1, 4), 2)):
        expected = np.zeros(grad.shape[leading:])
        for index in np.ndindex(*grad.shape[:leading]):
            expected += grad[index].astype(np.float64)
        got = unbroadcast(grad, shape)
        assert got.shape == shape and got.dtype == dtype
        tolerance = 1e-5 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(got, expected.reshape(shape), rtol=tolerance, atol=tolerance)


def test_unbroadcast_of_a_matching_shape_is_the_gradient_itself():
    grad = np.ones((2, 3))
    assert unbroadcast(grad, (2, 3)) is grad


def test_check_broadcast_names_the_op_and_both_shapes():
    with pytest.raises(ValueError, match=exactly("add: cannot broadcast shapes (2, 3) and (4,)")):
        check_broadcast("add", np.zeros((2, 3)), np.zeros(4))
    check_broadcast("add", np.zeros((2, 3)), np.zeros(3))      # broadcastable: no error
    check_broadcast("add", np.zeros((2, 3)), np.zeros((2, 3)))


@pytest.mark.parametrize("value, expected, kind", [
    (2.5, 2.5, float), (3, 3, int), (np.float32(0.5), 0.5, float), (np.float64(1.5), 1.5, float),
    (np.int64(-4), -4, int), (np.uint8(7), 7, int), (True, True, bool),
])
def test_scalar_value_gives_a_python_number(value, expected, kind):
    got = scalar_value(value)
    assert type(got) is kind and got == expected


@pytest.mark.parametrize("value", [None, "1", b"1", np.str_("1"), [1.0], np.array(1.0),
                                   Fraction(1, 2), np.bool_(True), 1j])
def test_scalar_value_of_anything_else_is_none(value):
    assert scalar_value(value) is None


def test_scalar_operand_is_a_cached_read_only_array_of_the_dtype():
    utils._scalar_operands.clear()     # built here, not left by an earlier test
    for dtype in (np.float32, np.float64, np.float16):
        x = np.ones(3, dtype)
        operand = scalar_operand(0.375, x)
        assert type(operand) is np.ndarray and operand.shape == () and operand.dtype == dtype
        assert operand == 0.375 and not operand.flags.writeable
        assert scalar_operand(0.375, x) is operand               # the cached one
    assert scalar_operand(0.375, np.ones(3, np.float32)).dtype == np.float32   # keyed by dtype


@pytest.mark.parametrize("c, x", [
    (2, np.ones(3, np.int64)),                   # not floating: the number
    (0.25, np.float32(1.0)),                     # not an ndarray
    (0.25, [1.0, 2.0]),
    (0.0, np.ones(3, np.float32)),               # a zero keeps its sign as a number
    (-0.0, np.ones(3, np.float32)),
    (float("nan"), np.ones(3, np.float32)),
])
def test_scalar_operand_leaves_these_as_numbers(c, x):
    assert scalar_operand(c, x) is c


def test_scalar_operand_cache_stays_bounded():
    utils._scalar_operands.clear()
    x = np.ones(2, np.float32)
    for k in range(utils._MAX_SCALAR_OPERANDS):
        scalar_operand(k + 0.5, x)
    assert len(utils._scalar_operands) == 256
    scalar_operand(1e6 + 0.5, x)                 # the 257th clears the cache first
    assert len(utils._scalar_operands) == 1
    assert scalar_operand(1e6 + 0.5, x) == np.float32(1e6 + 0.5)


def test_as_tensor_like_passes_a_tensor_through_and_refuses_none_and_text():
    like = Tensor(data=[1.0, 2.0])
    other = Tensor(data=[3.0, 4.0])
    assert as_tensor_like(other, like, "add") is other
    for value, kind in [(None, "NoneType"), ("ab", "str"), (b"ab", "bytes")]:
        with pytest.raises(TypeError, match=exactly(
                f"add: expected a Tensor, an array or a number, got {kind}")):
            as_tensor_like(value, like, "add")


@pytest.mark.parametrize("like_dtype", [np.float32, np.float64])
def test_as_tensor_like_gives_non_floating_values_the_floating_dtype_of_like(like_dtype):
    like = Tensor(data=np.zeros(2, like_dtype))
    for value in ([1, 2], np.array([1, 2], np.int32), 3):
        got = as_tensor_like(value, like, "add")
        assert got.dtype == like_dtype and got.creator is None and not got.requires_grad
        assert got.device is like.device
        np.testing.assert_array_equal(got.to_numpy(), np.asarray(value, like_dtype))


def test_as_tensor_like_keeps_a_floating_arrays_dtype_and_an_int_like_keeps_int():
    like = Tensor(data=np.zeros(2, np.float32))
    assert as_tensor_like(np.ones(2, np.float64), like, "add").dtype == np.float64
    int_like = Tensor(data=np.zeros(2, np.int64))
    got = as_tensor_like([1, 2], int_like, "add")
    assert got.dtype == np.int64 and type(got) is Tensor


def test_as_tensor_like_refuses_an_array_of_another_device_naming_both():
    with pytest.raises(TypeError, match=exactly(
            "add: a tests.foreign_device.ForeignArray cannot be combined with a Tensor on cpu "
            "(the array is on cpu); move it first")):
        as_tensor_like(np.ones(2, np.float32).view(ForeignArray), Tensor(data=[1.0, 2.0]),
                       "add")
    with pytest.raises(TypeError, match=exactly(
            "mul: a numpy.ndarray cannot be combined with a Tensor on gpu:7 (the array is on "
            "cpu); move it first")):
        as_tensor_like(np.ones(2, np.float32), tensor_on_a_foreign_device([1.0, 2.0]), "mul")


def test_as_tensor_like_converts_a_list_onto_the_device_of_like():
    like = tensor_on_a_foreign_device([1.0, 2.0])
    got = as_tensor_like([1, 2], like, "mul")
    assert got.device is like.device and got.dtype == np.float32


@pytest.mark.parametrize("axis, ndim, expected", [
    (None, 3, (0, 1, 2)), (None, 0, ()), (1, 3, (1,)), (-1, 3, (2,)), ((2, 0), 3, (0, 2)),
    ([-1, -3], 3, (0, 2)), (np.int64(1), 2, (1,)), (0, 0, (0,)), (0, 1, (0,)), (-1, 1, (0,)),
])
def test_normalize_axes_sorts_and_wraps(axis, ndim, expected):
    got = normalize_axes(axis, ndim, "sum")
    assert got == expected and all(type(a) is int for a in got)


@pytest.mark.parametrize("axis, ndim, message", [
    (3, 3, "sum: axis 3 is out of range for a 3-d tensor"),
    (-4, 3, "sum: axis -4 is out of range for a 3-d tensor"),
    ((0, 5), 2, "sum: axis 5 is out of range for a 2-d tensor"),
    (1, 0, "sum: axis 1 is out of range for a 0-d tensor"),
    (-1, 0, "sum: axis -1 is out of range for a 0-d tensor"),
    (1, 1, "sum: axis 1 is out of range for a 1-d tensor"),
    ((0, -2), 2, "sum: repeated axis in (0, -2)"),
    ([1, 1], 3, "sum: repeated axis in [1, 1]"),
])
def test_normalize_axes_messages(axis, ndim, message):
    with pytest.raises(ValueError, match=exactly(message)):
        normalize_axes(axis, ndim, "sum")


@pytest.mark.parametrize("axis, ndim, expected", [(0, 1, 0), (-1, 2, 1), (np.int32(-2), 2, 0),
                                                  (2, 3, 2)])
def test_normalize_axis_wraps(axis, ndim, expected):
    got = normalize_axis(axis, ndim, "cat")
    assert got == expected and type(got) is int


@pytest.mark.parametrize("axis, ndim", [(2, 2), (-3, 2), (0, 0), (-1, 0), (1.0, 2), (None, 2),
                                        ("0", 2)])
def test_normalize_axis_message(axis, ndim):
    with pytest.raises(ValueError, match=exactly(
            f"cat: axis {axis} is out of range for a {ndim}-d tensor")):
        normalize_axis(axis, ndim, "cat")


def test_out_of_range_finds_the_first_value_outside_low_inclusive_high_exclusive():
    assert out_of_range(np.array([], np.int64), 0, 3) is None
    assert out_of_range(np.zeros((0, 4), np.int64), 0, 3) is None
    assert out_of_range(np.array([0, 1, 2]), 0, 3) is None
    assert out_of_range(np.array([-2, -1, 0, 1]), -2, 2) is None
    got = out_of_range(np.array([[0, 3], [5, -1]]), 0, 3)
    assert got == 3 and type(got) is int
    assert out_of_range(np.array([1, 2, -1, 7]), 0, 3) == -1
    assert out_of_range(np.array([2, -3]), -2, 2) == 2
    assert out_of_range(np.array([0, -3]), -2, 2) == -3


def test_check_tensor_names_the_op_and_the_type():
    check_tensor(Tensor(data=[1.0]), "shape")
    with pytest.raises(TypeError, match=exactly("shape: expected a Tensor, got list")):
        check_tensor([1.0], "shape")
    with pytest.raises(TypeError, match=exactly("shape: expected a Tensor, got ndarray")):
        check_tensor(np.ones(1), "shape")


def test_ignore_float_warnings_silences_divide_and_invalid_with_numpy():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with ignore_float_warnings(np):
            assert np.isneginf(np.log(np.zeros(1)))[0]                    # divide
            assert np.isnan(np.zeros(1) / np.zeros(1))[0]                 # invalid
            assert np.isinf(np.ones(1) / np.zeros(1))[0]                  # divide
        with pytest.raises(RuntimeWarning):                               # restored after
            np.log(np.zeros(1))


def test_ignore_float_warnings_without_errstate_is_a_null_context():
    class NoErrstate:
        pass
    with ignore_float_warnings(NoErrstate()) as entered:
        assert entered is None


def test_scatter_add_adds_every_value_of_a_repeated_index():
    target = np.zeros((3, 2))
    scatter_add(target, np.array([1, 1, 0, 1]), np.arange(8.0).reshape(4, 2))
    np.testing.assert_array_equal(target, [[4.0, 5.0], [8.0, 11.0], [0.0, 0.0]])


def test_as_tensor_like_keeps_a_float_list_floating_for_an_integer_like():
    # like's dtype is taken only when it is floating: an int64 like must not truncate 1.5
    got = as_tensor_like([1.5, 2.5], Tensor(data=np.zeros(2, np.int64)), "add")
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got.to_numpy(), [1.5, 2.5])
