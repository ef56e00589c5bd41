"""Indexing ops (getitem, gather, where): forward against NumPy, float64 gradcheck, float32 kept
(tests/opcase.py); repeated indices accumulate; errors."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import autograd
from autograd import Tensor
from tests.opcase import OpCase, floats, integers, check_case

BOX = (3, 4, 5)
MASK = np.array([True, False, True])
GETITEM_INDICES = {
    "int": 1,
    "negative_int": -1,
    "int_pair": (2, -3),
    "slice": slice(1, None),
    "slice_step": (slice(None), slice(0, 4, 2)),
    "negative_step": (slice(None, None, -1), slice(3, 0, -2)),
    "none": (None, 1, None),
    "ellipsis": (Ellipsis, 2),
    "ellipsis_none": (0, Ellipsis, None),
    "all_basic": (slice(1, 3), None, Ellipsis, -2),
    "int_array_repeats": np.array([0, 2, 0, 0]),
    "list_repeats": [1, 1, -1],
    "two_int_arrays": (np.array([0, 2, 2]), np.array([1, 1, 3])),
    "int_array_2d": np.array([[0, 1], [1, 1]]),
    "mixed_basic_and_array": (slice(None), np.array([3, 3, 0]), slice(None, None, 2)),
    "bool_mask": MASK,
    "bool_mask_full": np.arange(60).reshape(BOX) % 3 == 0,
    "bool_mask_after_slice": (slice(None), np.array([True, False, False, True])),
}


def _getitem_case(name, index):
    return OpCase(lambda x: x[index], lambda x: x[index], [floats()], shape=BOX,
                  name=f"getitem_{name}")


CASES = [_getitem_case(name, index) for name, index in GETITEM_INDICES.items()] + [
    OpCase(lambda x: autograd.getitem(x, (Tensor(data=np.array([2, 0, 2])), 1)),
           lambda x: x[[2, 0, 2], 1], [floats()], shape=BOX, name="getitem_int_tensor"),
    OpCase(lambda x: x[Tensor(data=MASK, dtype=bool)], lambda x: x[MASK], [floats()],
           shape=BOX, name="getitem_bool_tensor"),
    OpCase(lambda x: x[x.data > 0], lambda x: x[x > 0], [floats(avoid=[0.0])],
           name="getitem_mask_from_values"),
    OpCase(lambda x: autograd.gather(x, 0, [0, -1, 0]),
           lambda x: np.take(x, [0, -1, 0], axis=0), [floats()], min_dims=1, name="gather"),
    OpCase(lambda x: autograd.gather(x, -1, np.array([[0, 0], [-1, 0]])),
           lambda x: np.take(x, [[0, 0], [-1, 0]], axis=-1), [floats()], min_dims=1,
           name="gather_2d_indices"),
    OpCase(lambda x: autograd.gather(x, 1, 2), lambda x: np.take(x, 2, axis=1), [floats()],
           shape=BOX, name="gather_scalar_index"),
    OpCase(lambda x, i: autograd.gather(x, 1, i), lambda x, i: np.take(x, i, axis=1),
           [floats(), integers(0, 4, shape=(2, 3))], shape=BOX, name="gather_int_tensor"),
    OpCase(lambda c, x, y: autograd.where(x, y, c), np.where,
           [integers(0, 2), floats(), floats(broadcast=True)],
           name="where"),
    OpCase(lambda c, x, y: autograd.where(x, y, c), np.where,
           [integers(0, 2, shape=(2, 1, 1)), floats(shape=(3, 1)), floats(shape=(4,))],
           name="where_all_broadcast"),
    OpCase(lambda x: autograd.where(x, 0.5, x.data > 0), lambda x: np.where(x > 0, x, 0.5),
           [floats(avoid=[0.0])], name="where_scalar_y"),
    OpCase(lambda y: autograd.where(-1, y, y.data > 0), lambda y: np.where(y > 0, -1, y),
           [floats(avoid=[0.0])], name="where_scalar_x"),
]


@pytest.mark.parametrize("case", CASES, ids=str)
@given(data=st.data())
def test_op(case, data):
    check_case(case, data)


# ------------------------------------------------------------------ accumulation

@given(indices=st.lists(st.integers(-4, 3), min_size=1, max_size=8), seed=st.integers(0, 99))
def test_repeated_indices_accumulate_like_add_at(indices, seed):
    rng = np.random.default_rng(seed)
    data = rng.standard_normal((4, 3))
    dy = rng.standard_normal((len(indices), 3))
    expected = np.zeros_like(data)
    np.add.at(expected, np.array(indices), dy)
    for select in (lambda t: t[indices], lambda t: autograd.gather(t, 0, indices),
                   lambda t: t[Tensor(data=np.array(indices))]):
        x = Tensor(data=data, stores_grad=True)
        grad = autograd.gradients(select(x), dy)[x]
        np.testing.assert_allclose(grad.to_numpy(), expected, rtol=1e-12)


def test_gather_along_a_middle_axis_accumulates():
    x = Tensor(data=np.ones((2, 3, 2)), stores_grad=True)
    y = autograd.gather(x, 1, [[2, 2], [0, 2]])
    assert y.shape == (2, 2, 2, 2)
    grad = autograd.gradients(autograd.sum(y))[x].to_numpy()
    np.testing.assert_array_equal(grad[:, :, 0], [[1.0, 0.0, 3.0], [1.0, 0.0, 3.0]])


def test_where_splits_the_gradient_between_x_and_y():
    x = Tensor(data=[1.0, 2.0, 3.0], stores_grad=True)
    y = Tensor(data=[[10.0], [20.0]], stores_grad=True)
    out = autograd.where(x, y, np.array([1, 0, 1]))
    assert out.shape == (2, 3)
    g = autograd.gradients(out, np.arange(6, dtype=np.float32).reshape(2, 3))
    np.testing.assert_array_equal(g[x].to_numpy(), [3.0, 0.0, 7.0])
    np.testing.assert_array_equal(g[y].to_numpy(), [[1.0], [4.0]])


def test_where_takes_a_float_zero_one_condition_and_keeps_float32():
    out = autograd.where(Tensor(data=[1.0, 2.0]), 7, Tensor(data=[0.0, 1.0]))
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out.to_numpy(), [7.0, 2.0])


def test_getitem_of_an_empty_list_selects_nothing():
    x = Tensor(data=np.ones((3, 2)), stores_grad=True)
    y = x[[]]
    assert y.shape == (0, 2)
    g = autograd.gradients(y, np.zeros((0, 2)))[x]
    np.testing.assert_array_equal(g.to_numpy(), np.zeros((3, 2)))


def test_getitem_int_gives_a_zero_d_tensor_whose_gradient_flows():
    x = Tensor(data=[[1.0, 2.0], [3.0, 4.0]], stores_grad=True)
    y = x[1, 0]
    assert y.shape == ()
    np.testing.assert_array_equal(autograd.gradients(y * 3.0)[x].to_numpy(), [[0, 0], [3, 0]])


# ------------------------------------------------------------------ errors

@pytest.mark.parametrize("call, error, message", [
    (lambda x: x[2], IndexError, r"getitem: .*index 2 is out of bounds.*\(2, 3\)"),
    (lambda x: x[0, 0, 0], IndexError, r"getitem: .*too many indices.*\(2, 3\)"),
    (lambda x: x[np.array([True, False, True])], IndexError, r"getitem: .*boolean index"),
    (lambda x: x[Tensor(data=[0.0])], IndexError, r"getitem: .*integer"),
    (lambda x: autograd.gather(x, 2, [0]), ValueError, r"gather: axis 2 is out of range"),
    (lambda x: autograd.gather(x, 1, [0, 3]), IndexError,
     r"gather: index 3 is out of range for axis 1 of length 3 \(shape \(2, 3\)\)"),
    (lambda x: autograd.gather(x, 0, [-3]), IndexError, r"gather: index -3 is out of range"),
    (lambda x: autograd.gather(x, 0, [0.0]), TypeError, r"gather: indices must be integers"),
    (lambda x: autograd.where(x, 1.0, [True, False]), ValueError,
     r"where: cannot broadcast condition \(2,\), x \(2, 3\) and y \(\)"),
    (lambda x: autograd.where(x, Tensor(shape=(4,)), True), ValueError,
     r"where: cannot broadcast shapes \(2, 3\) and \(4,\)"),
    (lambda x: autograd.where(1.0, 2.0, True), TypeError, r"where: x or y must be a Tensor"),
    (lambda x: autograd.where(x, Tensor(shape=(3,), dtype=np.float64), True), TypeError,
     r"Where: cannot mix float32 and float64"),
])
def test_bad_arguments_raise_clear_errors(call, error, message):
    with pytest.raises(error, match=message):
        call(Tensor(shape=(2, 3)))


def _scatter_reference(x, indices, updates, axis):
    """ONNX's definition, one element at a time."""
    y = x.copy()
    for position in np.ndindex(*indices.shape):
        target = list(position)
        target[axis] = indices[position]
        y[tuple(target)] = updates[position]
    return y


@given(data=st.data())
def test_scatter_elements_against_the_onnx_loop(data):
    shape = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    rng = np.random.default_rng(data.draw(st.integers(0, 1000)))
    index_shape = tuple(rng.integers(1, n + 1) for n in shape)
    # distinct targets per line along the axis, so the scatter (and its gradient) is defined
    size = shape[axis]
    count = index_shape[axis]
    lines = np.moveaxis(np.zeros(index_shape, np.int64), axis, -1)
    for line in np.ndindex(*lines.shape[:-1]):
        lines[line] = rng.permutation(size)[:count] - rng.integers(0, 2) * size   # negatives too
    indices = np.moveaxis(lines, -1, axis)
    x, updates = rng.standard_normal(shape), rng.standard_normal(index_shape)
    out = autograd.scatter_elements(Tensor(data=x), indices, Tensor(data=updates), axis)
    np.testing.assert_array_equal(out.to_numpy(), _scatter_reference(x, indices % size, updates,
                                                                     axis % len(shape)))
    assert autograd.gradcheck(lambda a, u: autograd.scatter_elements(a, indices, u, axis),
                              [Tensor(data=x), Tensor(data=updates)])


def test_scatter_elements_errors_name_the_problem():
    x = Tensor(shape=(2, 3))
    with pytest.raises(ValueError, match=r"indices must lie in \[-2, 2\)"):
        autograd.scatter_elements(x, np.array([[2, 0, 0]]), Tensor(shape=(1, 3)))
    with pytest.raises(ValueError, match="must have one shape"):
        autograd.scatter_elements(x, np.array([[0, 1]]), Tensor(shape=(1, 3)))
    with pytest.raises(TypeError, match="indices must be integers"):
        autograd.scatter_elements(x, np.array([[0.0, 1.0, 0.0]]), Tensor(shape=(1, 3)))


@given(data=st.data())
def test_slice_matches_python_slicing_and_gradchecks(data):
    shape = data.draw(st.lists(st.integers(1, 5), min_size=1, max_size=3).map(tuple))
    count = data.draw(st.integers(1, len(shape)))
    axes = data.draw(st.permutations(range(len(shape))))[:count]
    bound = st.integers(-7, 7) | st.sampled_from([2 ** 63 - 1, -2 ** 63])
    starts = [data.draw(bound) for _ in axes]
    ends = [data.draw(bound) for _ in axes]
    steps = [data.draw(st.sampled_from([-2, -1, 1, 2, 3])) for _ in axes]
    x = np.random.default_rng(0).standard_normal(shape)
    index = [slice(None)] * len(shape)
    for start, end, axis, step in zip(starts, ends, axes, steps):
        index[axis] = slice(start, end, step)
    out = autograd.slice(Tensor(data=x), starts, ends, axes, steps)
    np.testing.assert_array_equal(out.to_numpy(), x[tuple(index)])
    if out.size:
        assert autograd.gradcheck(lambda t: autograd.slice(t, starts, ends, axes, steps),
                                  [Tensor(data=x)])


def test_slice_argument_errors():
    with pytest.raises(ValueError, match="must have one length"):
        autograd.slice(Tensor(shape=(3,)), [0], [1, 2])
    with pytest.raises(ValueError, match="step cannot be 0"):
        autograd.slice(Tensor(shape=(3,)), [0], [2], steps=[0])


def test_index_tensors_on_another_device_are_refused_naming_both():
    from tests.foreign_device import tensor_on_a_foreign_device
    x, updates = Tensor(shape=(2, 3)), Tensor(shape=(1, 3))
    ids = tensor_on_a_foreign_device([[1, 0, 1]], np.int64)
    with pytest.raises(TypeError, match=r"gather: indices are on gpu:7 but x is on cpu"):
        autograd.gather(x, 0, ids)
    with pytest.raises(TypeError, match=r"scatter_elements: indices are on gpu:7 but x is on cpu"):
        autograd.scatter_elements(x, ids, updates)
