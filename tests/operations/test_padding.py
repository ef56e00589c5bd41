"""pad: forward against np.pad for every mode, float64 gradcheck, accumulating backward,
argument errors."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import autograd
from autograd import Tensor
from tests.opcase import OpCase, floats, check_case

def reflect_reference(x, pads):
    """SINGA's reflect, axis by axis: a side whose pad is shorter than the axis gets the mirror
    image without the edge (np.pad's), a side whose pad equals the axis length a copy of the
    axis."""
    for axis in range(x.ndim):
        begin, end, n = pads[axis], pads[x.ndim + axis], x.shape[axis]
        index = np.arange(n)
        before = index if begin == n else index[1:begin + 1][::-1]
        after = index if end == n else index[::-1][1:end + 1]
        x = np.take(x, np.concatenate([before, index, after]), axis=axis)
    return x


CASES = [
    OpCase(lambda x: autograd.pad(x, "constant", [1, 0, 2, 3], 1.5),
           lambda x: np.pad(x, ((1, 2), (0, 3)), constant_values=1.5), [floats()],
           shape=(2, 3), name="pad_constant"),
    OpCase(lambda x: autograd.pad(x, pads=[2] * (2 * x.ndim)),
           lambda x: np.pad(x, 2), [floats()], name="pad_default_mode"),
    OpCase(lambda x: autograd.pad(x, "reflect", [1, 2, 2, 1]),
           lambda x: np.pad(x, ((1, 2), (2, 1)), mode="reflect"), [floats()], shape=(3, 4),
           name="pad_reflect"),
    OpCase(lambda x: autograd.pad(x, "reflect", [1] * (2 * x.ndim)),
           lambda x: np.pad(x, 1, mode="reflect"), [floats()], min_side=2, name="pad_reflect_nd"),
    # a reflect pad equal to the axis length (SINGA's rule): a copy of the axis
    OpCase(lambda x: autograd.pad(x, "reflect", [3, 1, 2, 4]),
           lambda x: reflect_reference(x, [3, 1, 2, 4]), [floats()], shape=(3, 4),
           name="pad_reflect_axis_length"),
    OpCase(lambda x: autograd.pad(x, "reflect", list(x.shape) * 2),
           lambda x: reflect_reference(x, list(x.shape) * 2), [floats()],
           name="pad_reflect_axis_length_nd"),
    OpCase(lambda x: autograd.pad(x, "edge", [0, 3, 2, 1]),
           lambda x: np.pad(x, ((0, 2), (3, 1)), mode="edge"), [floats()], shape=(2, 3),
           name="pad_edge"),
    OpCase(lambda x: autograd.pad(x, "edge", [2] * (2 * x.ndim)),
           lambda x: np.pad(x, 2, mode="edge"), [floats()], name="pad_edge_nd"),
    OpCase(lambda x: autograd.pad(x, "constant", [0, 0, 1, 2, 0, 0, 2, 1]),
           lambda x: np.pad(x, ((0, 0), (0, 0), (1, 2), (2, 1))), [floats()], shape=(2, 2, 3, 2),
           name="pad_images"),
]


@pytest.mark.parametrize("case", CASES, ids=str)
@given(data=st.data())
def test_op(case, data):
    check_case(case, data)



@pytest.mark.parametrize("mode, counts", [
    ("edge", [3.0, 1.0, 2.0]),        # out = x0 x0 | x0 x1 x2 | x2
    ("reflect", [1.0, 3.0, 2.0]),     # out = x2 x1 | x0 x1 x2 | x1
    ("constant", [1.0, 1.0, 1.0]),
])
def test_pad_gradient_accumulates_on_the_source_entries(mode, counts):
    x = Tensor(data=[1.0, 2.0, 3.0], stores_grad=True)
    y = autograd.pad(x, mode, [2, 1])
    grad = autograd.gradients(autograd.sum(y))[x]
    np.testing.assert_array_equal(grad.to_numpy(), counts)


def test_pad_reflect_with_pads_up_to_length_minus_one():
    data = np.arange(12.0).reshape(3, 4)
    x = Tensor(data=data, stores_grad=True)
    fn = lambda t: autograd.pad(t, "reflect", [2, 3, 2, 3])
    np.testing.assert_array_equal(fn(x).to_numpy(), np.pad(data, ((2, 2), (3, 3)), "reflect"))
    assert autograd.gradcheck(fn, [x])


def test_pad_reflect_equal_to_the_axis_matches_singas_test():
    # SINGA's test_operation.py pad_helper: shape (3, 2), pads [0, 2, 0, 0], its expected Y2
    x = Tensor(data=np.array([[1.0, 1.2], [2.3, 3.4], [4.5, 5.7]]), stores_grad=True)
    y = autograd.pad(x, "reflect", [0, 2, 0, 0])
    np.testing.assert_array_equal(y.to_numpy(), [[1.0, 1.2, 1.0, 1.2], [2.3, 3.4, 2.3, 3.4],
                                                 [4.5, 5.7, 4.5, 5.7]])
    # each entry appears twice, so its gradient is the sum of its two dy entries
    dy = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(autograd.gradients(y, dy)[x].to_numpy(),
                                  dy[:, :2] + dy[:, 2:])


def test_pad_reflect_equal_to_the_axis_differs_from_numpy_past_length_two():
    y = autograd.pad(Tensor(data=[1.0, 2.0, 3.0]), "reflect", [3, 3]).to_numpy()
    np.testing.assert_array_equal(y, [1, 2, 3, 1, 2, 3, 1, 2, 3])
    assert not np.array_equal(y, np.pad([1.0, 2.0, 3.0], 3, mode="reflect"))


@pytest.mark.parametrize("call, error, message", [
    (lambda x: autograd.pad(x, "wrap", [1, 1, 1, 1]), ValueError, r"pad: mode must be"),
    (lambda x: autograd.pad(x, "constant", [1, 1]), ValueError,
     r"pad: pads needs 4 values \(begins then ends\) for shape \(2, 3\), got \[1, 1\]"),
    (lambda x: autograd.pad(x, "constant", [0, -1, 0, 0]), ValueError,
     r"pad: pads must be non-negative"),
    (lambda x: autograd.pad(x, "reflect", [3, 0, 0, 0]), ValueError,
     r"pad: reflect needs pads no longer than the axis; axis 0 of shape \(2, 3\) has length 2"),
    (lambda x: autograd.pad(Tensor(shape=(0, 3)), "reflect", [1, 0, 0, 0]), ValueError,
     r"pad: reflect needs pads no longer than the axis; axis 0 of shape \(0, 3\) has length 0"),
    (lambda x: autograd.pad(Tensor(shape=(0, 3)), "edge", [1, 0, 0, 0]), ValueError,
     r"pad: edge cannot pad the empty axis 0"),
])
def test_bad_arguments_raise_clear_errors(call, error, message):
    with pytest.raises(error, match=message):
        call(Tensor(shape=(2, 3)))
