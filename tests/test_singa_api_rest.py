"""The rest of SINGA's API, with SINGA's semantics: onehot's array depth, copy_data_to_from,
an integer Tensor with a Python float gives float32."""
import numpy as np
import pytest

import autograd
from autograd import Tensor, tensor


@pytest.mark.parametrize("depth", [3, np.array([3]), np.array(3), Tensor(data=np.array([3])),
                                   np.array([3.0])])
def test_onehot_takes_its_depth_as_a_number_or_a_one_element_array(depth):
    labels = np.array([[0, 2], [1, -1]])
    got = autograd.onehot(-1, Tensor(data=labels), depth).to_numpy()
    np.testing.assert_array_equal(got, np.eye(3, dtype=np.float32)[labels % 3])


@pytest.mark.parametrize("depth, message", [(np.array([3, 4]), "hold one number"),
                                            (0, "positive integer"), (2.5, "positive integer")])
def test_onehot_refuses_a_bad_depth(depth, message):
    with pytest.raises(ValueError, match=f"onehot: depth must .*{message}"):
        autograd.onehot(-1, Tensor(data=np.array([0, 1])), depth)


@pytest.mark.parametrize("layout", ["C", "transposed"])
def test_copy_data_to_from_copies_a_flat_range_in_place(layout):
    base = np.zeros((3, 4), np.float32)
    dst = Tensor(data=base)
    if layout == "transposed":            # an array that is not C-contiguous (batch-last views)
        dst.data = np.zeros((4, 3), np.float32).T
    source = np.arange(10, dtype=np.float32)
    before = dst.data
    tensor.copy_data_to_from(dst, Tensor(data=source), 5, dst_offset=4, src_offset=2)
    expected = np.zeros(12, np.float32)
    expected[4:9] = source[2:7]
    assert dst.data is before                              # in place
    np.testing.assert_array_equal(dst.to_numpy(), expected.reshape(3, 4))


@pytest.mark.parametrize("kwargs, kind, message", [
    ({"size": 20}, ValueError, "cannot copy 20 elements"),
    ({"size": -1}, ValueError, "size must be a non-negative int"),
    ({"size": 2, "src": Tensor(data=np.zeros(4))}, TypeError, "dst is float32 but src is float64"),
])
def test_copy_data_to_from_checks_before_writing(kwargs, kind, message):
    dst = Tensor(data=np.ones(6, np.float32))
    kwargs = dict(kwargs)             # the parameter is shared: a second run must see "src" too
    src = kwargs.pop("src", Tensor(data=np.zeros(8, np.float32)))
    with pytest.raises(kind, match=f"copy_data_to_from: {message}"):
        tensor.copy_data_to_from(dst, src, **kwargs)
    np.testing.assert_array_equal(dst.to_numpy(), np.ones(6))


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, bool])
@pytest.mark.parametrize("operation, reference", [
    (lambda t: t + 0.5, lambda a: a + 0.5), (lambda t: 0.5 + t, lambda a: 0.5 + a),
    (lambda t: t - 0.5, lambda a: a - 0.5), (lambda t: 1.5 - t, lambda a: 1.5 - a),
    (lambda t: t * 0.5, lambda a: a * 0.5), (lambda t: t / 2.0, lambda a: a / 2.0),
    (lambda t: 2.0 / (t + 1.0), lambda a: 2.0 / (a + 1.0)),
    (lambda t: t ** 2.0, lambda a: a ** 2.0), (lambda t: 2.0 ** t, lambda a: 2.0 ** a),
])
def test_an_integer_tensor_with_a_python_float_gives_float32(dtype, operation, reference):
    data = np.array([0, 1, 3], dtype=dtype)
    result = operation(Tensor(data=data))
    assert result.dtype == np.float32                      # NumPy would give float64
    np.testing.assert_allclose(result.to_numpy(), reference(data.astype(np.float64)),
                               rtol=1e-6)


def test_an_integer_tensor_with_an_int_keeps_numpys_integer_result():
    assert (Tensor(data=np.array([1, 2])) + 1).dtype == np.int64


def test_shape_is_recorded_as_an_op_and_passes_no_gradient():
    from autograd.operations.conversion import Shape
    x = Tensor(data=np.ones((2, 3), np.float32), stores_grad=True)
    s = autograd.shape(x)
    assert type(s.creator) is Shape and s.dtype == np.int64
    np.testing.assert_array_equal(s.to_numpy(), [2, 3])
    # a graph that reads the shape still differentiates through x alone: d sum(x + 0) = 1
    y = autograd.sum(autograd.constant_of_shape(s, 0.0) + x * 3.0)
    (param, grad), = autograd.backward(y)
    assert param is x
    np.testing.assert_array_equal(grad.to_numpy(), np.full((2, 3), 3.0))
