"""cat and split (autograd/operations/joining.py): forward against NumPy, float64 gradcheck,
float32 kept (tests/opcase.py); split's several outputs and their gradients, cat's gradients
only where needed, and split's backward joining the pieces of one array without a copy."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import autograd
from autograd import Tensor
from tests.opcase import OpCase, floats, check_case


CASES = [
    OpCase(lambda a, b: autograd.cat([a, b], axis=-1),
           lambda a, b: np.concatenate([a, b], axis=-1), [floats(), floats()], min_dims=1,
           name="cat_last_axis"),
    OpCase(lambda a, b, c: autograd.cat((a, b, c)),
           lambda a, b, c: np.concatenate([a, b, c]),
           [floats(shape=(2, 3)), floats(shape=(1, 3)), floats(shape=(3, 3))], name="cat_default"),
    OpCase(lambda a, b: autograd.concat([a, b], 1), lambda a, b: np.concatenate([a, b], 1),
           [floats(shape=(2, 3, 2)), floats(shape=(2, 1, 2))], name="concat_alias"),
    OpCase(lambda x: autograd.split(x, 0, [1, 2])[1], lambda x: x[1:], [floats(shape=(3, 2))],
           name="split_unused_piece_gets_zeros"),
]


@pytest.mark.parametrize("case", CASES, ids=str)
@given(data=st.data())
def test_op(case, data):
    check_case(case, data)


# ------------------------------------------------------------------ split (several outputs)

@given(sizes=st.lists(st.integers(0, 3), min_size=1, max_size=4), seed=st.integers(0, 99))
def test_split_pieces_and_gradients_match_numpy(sizes, seed):
    rng = np.random.default_rng(seed)
    data = rng.standard_normal((2, sum(sizes), 3))
    x = Tensor(data=data, stores_grad=True)
    pieces = autograd.split(x, 1, sizes)
    assert isinstance(pieces, tuple) and len(pieces) == len(sizes)
    for piece, expected in zip(pieces, np.split(data, np.cumsum(sizes)[:-1], axis=1)):
        np.testing.assert_array_equal(piece.to_numpy(), expected)
    if sum(sizes):
        assert autograd.gradcheck(lambda t: autograd.split(t, -2, sizes), [x])


def test_split_into_equal_parts_and_singa_num_output():
    x = Tensor(data=np.arange(12.0).reshape(6, 2))
    assert [p.shape for p in autograd.split(x, 0, 3)] == [(2, 2)] * 3
    assert [p.shape for p in autograd.split(x, 0, None, num_output=2)] == [(3, 2)] * 2
    assert [p.shape for p in autograd.split(x, 1, 2)] == [(6, 1)] * 2


def test_split_backward_takes_one_dy_per_output_and_zeros_for_unused():
    data = np.arange(10.0).reshape(5, 2)
    x = Tensor(data=data, stores_grad=True)
    a, b, c = autograd.split(x, 0, [1, 3, 1])
    loss = autograd.sum(a * 2.0) + autograd.sum(c * c)      # b is not used
    grad = autograd.gradients(loss)[x].to_numpy()
    expected = np.zeros_like(data)
    expected[0] = 2.0
    expected[4] = 2 * data[4]
    np.testing.assert_array_equal(grad, expected)


def test_cat_takes_gradients_only_where_needed():
    a = Tensor(data=[[1.0, 2.0]], stores_grad=True)
    b = Tensor(data=[[3.0, 4.0]], requires_grad=False)
    y = autograd.cat([a, b, a], axis=0)
    dy = np.array([[1, 2], [3, 4], [5, 6]], np.float32)
    g = autograd.gradients(y, dy)
    assert list(g) == [a]
    np.testing.assert_array_equal(g[a].to_numpy(), [[6.0, 8.0]])


def test_cat_of_one_tensor_is_a_copy_of_it():
    """cat([x]) must work (the array module taken from xs[1] would raise an IndexError)."""
    x = Tensor(data=[[1.0, 2.0], [3.0, 4.0]], stores_grad=True)
    y = autograd.cat([x], axis=1)
    np.testing.assert_array_equal(y.to_numpy(), [[1.0, 2.0], [3.0, 4.0]])
    g = autograd.gradients(y, np.array([[1.0, 2.0], [3.0, 4.0]], np.float32))[x]
    np.testing.assert_array_equal(g.to_numpy(), [[1.0, 2.0], [3.0, 4.0]])


def test_split_into_one_part_is_the_whole_tensor():
    """parts=1 is a valid count (`parts <= 1` would refuse it)."""
    data = np.arange(6.0).reshape(2, 3)
    (piece,) = autograd.split(Tensor(data=data), 1, 1)
    np.testing.assert_array_equal(piece.to_numpy(), data)


@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), data=st.data())
def test_split_joins_the_pieces_of_one_array_without_a_copy(shape, data):
    """Split's backward: gradients that are consecutive pieces of one array along the axis come
    back as that array (a view, no copy); pieces of separate arrays, out of order, with a gap,
    or strided so that the joined view would not be contiguous, are concatenated. Either way
    the values are NumPy's concatenation."""
    from autograd.operations.joining import Split
    axis = data.draw(st.integers(0, len(shape) - 1))
    whole = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    cuts = sorted(data.draw(st.lists(st.integers(0, shape[axis]), max_size=3)))
    bounds = [0, *cuts, shape[axis]]
    sizes = [b - a for a, b in zip(bounds, bounds[1:])]
    pieces = [whole[(slice(None),) * axis + (slice(a, b),)] for a, b in zip(bounds, bounds[1:])]
    op = Split(axis, sizes)
    joined = op.backward(*pieces)
    np.testing.assert_array_equal(joined, whole)
    assert np.shares_memory(joined, whole)
    copies = [piece.copy() for piece in pieces]
    separate = op.backward(*copies)
    np.testing.assert_array_equal(separate, whole)
    assert len(pieces) == 1 or not np.shares_memory(separate, copies[0])
    if len(pieces) > 1 and sizes[0] > 0 and sizes[1] > 0:
        swapped = op.backward(pieces[1], pieces[0], *pieces[2:])
        np.testing.assert_array_equal(
            swapped, np.concatenate([pieces[1], pieces[0], *pieces[2:]], axis))
        assert not np.shares_memory(swapped, whole)


def test_split_does_not_join_pieces_with_a_gap_or_a_strided_view():
    from autograd.operations.joining import Split
    whole = np.arange(24, dtype=np.float32).reshape(4, 6)
    gap = Split(1, [2, 2]).backward(whole[:, 0:2], whole[:, 3:5])
    np.testing.assert_array_equal(gap, np.concatenate([whole[:, 0:2], whole[:, 3:5]], 1))
    assert not np.shares_memory(gap, whole)
    # side by side in memory but held by two objects: a view joining them would keep only
    # the first alive
    flat = np.arange(8, dtype=np.float32)
    other_owner = np.asarray(memoryview(flat[4:]))
    assert other_owner.base is not flat and np.shares_memory(other_owner, flat)
    apart = Split(0, [4, 4]).backward(flat[:4], other_owner)
    np.testing.assert_array_equal(apart, flat)
    assert not np.shares_memory(apart, flat)
    frozen = np.arange(8, dtype=np.float32)
    frozen.flags.writeable = False     # a gradient downstream may be written in place
    copied = Split(0, [4, 4]).backward(frozen[:4], frozen[4:])
    assert copied.flags.writeable and not np.shares_memory(copied, frozen)
    strided = whole[::2]          # rows 0 and 2: joined along axis 1 it is not contiguous
    result = Split(1, [3, 3]).backward(strided[:, :3], strided[:, 3:])
    np.testing.assert_array_equal(result, strided)
    assert not np.shares_memory(result, whole)
