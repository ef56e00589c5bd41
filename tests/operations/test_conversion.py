"""shape, constant_of_shape, cast, onehot, nonzero against NumPy."""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import autograd
from autograd import Tensor


@given(hnp.array_shapes(min_dims=0, max_dims=4, max_side=5))
def test_shape_and_constant_of_shape(shape):
    x = Tensor(shape=shape)
    s = autograd.shape(x)
    assert s.dtype == np.int64 and tuple(s.to_numpy()) == shape
    filled = autograd.constant_of_shape(s, 2.5)
    np.testing.assert_array_equal(filled.to_numpy(), np.full(shape, 2.5, np.float32))


def test_cast_between_floats_is_differentiable():
    x = Tensor(data=np.array([1.0, 2.0], np.float32), stores_grad=True)
    y = autograd.cast(x, np.float64)
    assert y.dtype == np.float64
    (param, grad), = autograd.backward(autograd.sum(y * y))
    assert grad.dtype == np.float32
    np.testing.assert_allclose(grad.to_numpy(), [2.0, 4.0])


def test_cast_to_int_leaves_the_graph():
    y = autograd.cast(Tensor(data=[1.7, -2.2], stores_grad=True), "int32")
    assert y.dtype == np.int32 and y.creator is None
    np.testing.assert_array_equal(y.to_numpy(), [1, -2])


@given(indices=hnp.arrays(np.int64, hnp.array_shapes(max_dims=3, max_side=4),
                          elements=st.integers(-4, 3)),
       axis=st.integers(-1, 0))
def test_onehot_matches_a_numpy_formula(indices, axis):
    out = autograd.onehot(axis, Tensor(data=indices), 4, values=(-1.0, 2.0)).to_numpy()
    wrapped = np.where(indices < 0, indices + 4, indices)
    expected = np.where(np.eye(4)[wrapped] == 1, 2.0, -1.0)
    np.testing.assert_array_equal(out, np.moveaxis(expected, -1, axis))


def test_onehot_out_of_range_is_an_error():
    with pytest.raises(ValueError, match=r"onehot: indices must lie in \[-3, 3\)"):
        autograd.onehot(-1, Tensor(data=np.array([0, 3])), 3)


@given(hnp.arrays(np.float32, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4),
                  elements=st.sampled_from([0.0, 1.0, -2.0])))
def test_nonzero_matches_numpy(x):
    np.testing.assert_array_equal(autograd.nonzero(Tensor(data=x)).to_numpy(),
                                  np.array(np.nonzero(x)).reshape(x.ndim, -1))


def test_cast_accepts_singa_type_codes_and_names_bad_ones():
    x = Tensor(data=[1.5, -2.5])
    assert autograd.cast(x, 2).dtype == np.int32
    assert autograd.cast(x, 1).dtype == np.float16
    with pytest.raises(TypeError, match="cast: unknown SINGA type code 7"):
        autograd.cast(x, 7)
    with pytest.raises(TypeError, match="cast: expected a dtype.*'nope'"):
        autograd.cast(x, "nope")


def test_onehot_depth_forms_and_their_messages():
    import re
    import warnings
    x = Tensor(data=np.array([0, 2, 1], np.int32))
    expected = np.eye(3)[[0, 2, 1]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")            # a 1-element array is read without NumPy's
        for depth in (3, Tensor(data=3.0), np.array([3]), np.array(3.0)):     # scalar warning
            np.testing.assert_array_equal(autograd.onehot(-1, x, depth).to_numpy(), expected)
    np.testing.assert_array_equal(
        autograd.onehot(-1, Tensor(data=np.array([0, 0], np.int32)), 1).to_numpy(), [[1], [1]])
    for depth, message in [
            (np.array([2.5]), "onehot: depth must be a positive integer, got np.float64(2.5)"),
            (True, "onehot: depth must be a positive integer, got True"),
            (0, "onehot: depth must be a positive integer, got 0"),
            (np.array([2, 3]), "onehot: depth must be an int or hold one number, got an array "
                               "of shape (2,)")]:
        with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
            autograd.onehot(-1, x, depth)


def test_onehot_values_may_be_a_tensor_and_nonzero_of_a_scalar_is_named():
    x = Tensor(data=np.array([0, 2, 1], np.int32))
    out = autograd.onehot(-1, x, 3, values=Tensor(data=[-1.0, 5.0])).to_numpy()
    np.testing.assert_array_equal(out, np.where(np.eye(3)[[0, 2, 1]] == 1, 5.0, -1.0))
    with pytest.raises(ValueError, match=r"^nonzero: expected a tensor of at least 1 dimension, "
                                         r"got a scalar$"):
        autograd.nonzero(Tensor(data=1.0))
