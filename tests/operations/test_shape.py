"""Shape ops: forward against NumPy, float64 gradcheck, float32 kept (tests/opcase.py), plus
SINGA's reshape 0 entry and the error messages (cat and split: test_joining.py; pad:
test_padding.py)."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import autograd
from autograd import Tensor
from tests.opcase import OpCase, floats, check_case


def _tile_reference(x, repeats):
    return np.tile(x, repeats)


def _flatten_reference(x, axis=1):
    axis = axis + x.ndim if axis < 0 else axis
    return x.reshape(int(np.prod(x.shape[:axis])), int(np.prod(x.shape[axis:])))


CASES = [
    OpCase(lambda x: autograd.reshape(x, (-1,)), lambda x: x.reshape(-1), [floats()],
           name="reshape_to_1d"),
    OpCase(lambda x: autograd.reshape(x, (4, -1, 2)), lambda x: x.reshape(4, -1, 2),
           [floats()], shape=(2, 3, 4), name="reshape_infer"),
    OpCase(lambda x: x.reshape(x.size, 1), lambda x: x.reshape(x.size, 1), [floats()],
           name="tensor_reshape_method"),
    OpCase(autograd.flatten, _flatten_reference, [floats()], min_dims=1, name="flatten"),
    OpCase(autograd.flatten, _flatten_reference, [floats()], kwargs=dict(axis=0),
           name="flatten_axis0"),
    OpCase(autograd.flatten, _flatten_reference, [floats()], kwargs=dict(axis=-1), min_dims=1,
           name="flatten_axis_negative"),
    OpCase(autograd.flatten, _flatten_reference, [floats()], kwargs=dict(axis=3), shape=(2, 1, 3),
           name="flatten_axis_ndim"),
    OpCase(autograd.transpose, np.transpose, [floats()], name="transpose_reversed"),
    OpCase(autograd.transpose, np.transpose, [floats()], kwargs=dict(axes=(1, -1, 0)),
           shape=(2, 3, 4), name="transpose_axes"),
    OpCase(lambda x: x.T, lambda x: x.T, [floats()], name="T"),
    OpCase(autograd.squeeze, np.squeeze, [floats()], shape=(1, 3, 1, 2), name="squeeze_all"),
    OpCase(autograd.squeeze, lambda x, axis: np.squeeze(x, tuple(axis)), [floats()],
           kwargs=dict(axis=[0, -2]), shape=(1, 3, 1, 2), name="squeeze_list"),
    OpCase(autograd.squeeze, np.squeeze, [floats()], kwargs=dict(axis=2), shape=(1, 3, 1, 2),
           name="squeeze_int"),
    OpCase(autograd.squeeze, lambda x, axis: np.squeeze(x), [floats()], kwargs=dict(axis=[]),
           name="squeeze_empty_list_is_all"),
    OpCase(autograd.unsqueeze, lambda x, axis: np.expand_dims(x, tuple(axis)), [floats()],
           kwargs=dict(axis=[0, -1]), name="unsqueeze_list"),
    OpCase(autograd.unsqueeze, np.expand_dims, [floats()], kwargs=dict(axis=1), min_dims=1,
           name="unsqueeze_int"),
    OpCase(autograd.unsqueeze, lambda x: x[..., None], [floats()], name="unsqueeze_default"),
    OpCase(autograd.expand, lambda x, shape: np.broadcast_to(x, (2, 3, 4)), [floats()],
           kwargs=dict(shape=(2, 1, 4)), shape=(3, 1), name="expand_both_directions"),
    OpCase(lambda x: autograd.broadcast_to(x, (2,) + x.shape),
           lambda x: np.broadcast_to(x, (2,) + x.shape), [floats()], name="broadcast_to"),
    OpCase(autograd.broadcast_to, np.broadcast_to, [floats()], kwargs=dict(shape=(2, 3, 4)),
           shape=(3, 1), name="broadcast_to_stretch"),
    OpCase(autograd.tile, _tile_reference, [floats()], kwargs=dict(repeats=(2, 1, 3, 2)),
           name="tile_more_repeats_than_dims"),
    OpCase(autograd.tile, _tile_reference, [floats()], kwargs=dict(repeats=2), name="tile_int"),
    OpCase(autograd.tile, _tile_reference, [floats()], kwargs=dict(repeats=(3, 2)),
           shape=(2, 1, 2), name="tile_fewer_repeats"),
]


@pytest.mark.parametrize("case", CASES, ids=str)
@given(data=st.data())
def test_op(case, data):
    check_case(case, data)


# ------------------------------------------------------------------ other behaviour

def test_flatten_of_zero_d_and_of_empty_tensors():
    assert autograd.flatten(Tensor(data=2.0), 0).shape == (1, 1)
    assert autograd.flatten(Tensor(shape=(0, 3, 2)), 2).shape == (0, 2)
    assert autograd.flatten(Tensor(shape=(0, 3, 2)), 1).shape == (0, 6)


def test_expand_and_tile_gradients_sum_over_the_copies():
    x = Tensor(data=[[1.0], [2.0]], stores_grad=True)
    g = autograd.gradients(autograd.sum(autograd.expand(x, (3, 1, 4))))[x]
    np.testing.assert_array_equal(g.to_numpy(), [[12.0], [12.0]])
    g = autograd.gradients(autograd.sum(autograd.tile(x, (2, 3, 5))))[x]
    np.testing.assert_array_equal(g.to_numpy(), [[30.0], [30.0]])


def test_tile_with_zero_repeats_gives_an_empty_tensor_and_zero_gradient():
    x = Tensor(data=[1.0, 2.0], stores_grad=True)
    y = autograd.tile(x, (2, 0))
    assert y.shape == (2, 0)
    g = autograd.gradients(y, np.zeros((2, 0), np.float32))[x]
    np.testing.assert_array_equal(g.to_numpy(), [0.0, 0.0])


def test_shape_ops_record_and_skip_recording_like_other_ops():
    x = Tensor(data=np.ones((2, 3)), stores_grad=True)
    assert autograd.unsqueeze(x, 0).creator is not None
    with autograd.no_grad():
        assert autograd.squeeze(autograd.unsqueeze(x, 0)).creator is None


# ------------------------------------------------------------------ errors

@pytest.mark.parametrize("call, error, message", [
    (lambda x: autograd.reshape(x, (4, 2)), ValueError,
     r"reshape: cannot reshape \(2, 3\) \(6 elements\) into \(4, 2\)"),
    (lambda x: autograd.reshape(x, (-1, -1)), ValueError, r"reshape: .*into \(-1, -1\)"),
    (lambda x: autograd.reshape(x, (4, -1)), ValueError, r"reshape: .*into \(4, -1\)"),
    (lambda x: autograd.transpose(x, (0, 0)), ValueError,
     r"transpose: axes \(0, 0\) are not a permutation .* \(2, 3\)"),
    (lambda x: autograd.transpose(x, (0, 1, 2)), ValueError, r"transpose: axes"),
    (lambda x: autograd.flatten(x, 3), ValueError, r"flatten: axis 3 is out of range \[-2, 2\]"),
    (lambda x: autograd.squeeze(x, 1), ValueError,
     r"squeeze: axis 1 of shape \(2, 3\) has size 3, not 1"),
    (lambda x: autograd.squeeze(x, 2), ValueError, r"squeeze: axis 2 is out of range"),
    (lambda x: autograd.unsqueeze(x, 3), ValueError, r"unsqueeze: axis 3 is out of range"),
    (lambda x: autograd.unsqueeze(x, [0, 0]), ValueError, r"unsqueeze: repeated axis"),
    (lambda x: autograd.expand(x, (4, 1)), ValueError,
     r"expand: cannot broadcast \(2, 3\) to \(4, 1\)"),
    (lambda x: autograd.broadcast_to(x, (3,)), ValueError,
     r"broadcast_to: cannot broadcast \(2, 3\) to \(3,\)"),
    (lambda x: autograd.broadcast_to(x, (2, 1)), ValueError, r"broadcast_to: cannot"),
    (lambda x: autograd.tile(x, (2, -1)), ValueError, r"tile: repeats must be non-negative"),
    (lambda x: autograd.cat([x, Tensor(shape=(2, 4))]), ValueError,
     r"cat: cannot join \(2, 3\) and \(2, 4\) along axis 0"),
    (lambda x: autograd.cat([x, Tensor(shape=(2, 3, 1))], axis=1), ValueError,
     r"cat: cannot join \(2, 3\) and \(2, 3, 1\) along axis 1"),
    (lambda x: autograd.cat([x, x], axis=2), ValueError, r"cat: axis 2 is out of range"),
    (lambda x: autograd.cat([]), ValueError, r"cat: expected at least one tensor"),
    (lambda x: autograd.cat([x, np.ones((2, 3))]), TypeError, r"cat: expected Tensors"),
    (lambda x: autograd.cat([x, Tensor(shape=(2, 3), dtype=np.float64)]), TypeError,
     r"cat: cannot join float32 and float64"),
    (lambda x: autograd.split(x, 1, [1, 1]), ValueError,
     r"split: sizes \[1, 1\] must be non-negative and sum to the length 3 of axis 1"),
    (lambda x: autograd.split(x, 1, [4, -1]), ValueError, r"split: sizes \[4, -1\]"),
    (lambda x: autograd.split(x, 1, 2), ValueError,
     r"split: cannot split axis 1 of length 3 \(shape \(2, 3\)\) into 2 equal parts"),
    (lambda x: autograd.split(x, 2, [1]), ValueError, r"split: axis 2 is out of range"),
])
def test_bad_arguments_raise_clear_errors(call, error, message):
    with pytest.raises(error, match=message):
        call(Tensor(shape=(2, 3)))


def test_reshape_zero_copies_the_input_size_as_singa_and_onnx_do():
    x = Tensor(data=np.arange(24.0).reshape(2, 3, 4), stores_grad=True)
    y = autograd.reshape(x, (0, -1))
    np.testing.assert_array_equal(y.to_numpy(), np.arange(24.0).reshape(2, 12))
    assert autograd.reshape(x, (0, 0, 2, 2)).shape == (2, 3, 2, 2)
    with pytest.raises(ValueError, match="has only 3 dimensions"):
        autograd.reshape(x, (2, 12, 1, 0))


def test_reshape_to_a_size_that_divides_but_differs_is_named():
    with pytest.raises(ValueError, match=r"^reshape: cannot reshape \(6,\) \(6 elements\) into "
                                         r"\(3,\)$"):
        autograd.reshape(Tensor(data=np.arange(6.0)), (3,))
