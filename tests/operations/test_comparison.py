"""Comparison and logic ops: forward against NumPy, float 0/1 results, outside the graph."""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import autograd
from autograd import Tensor

RELATIONS = {
    "greater": np.greater, "less": np.less, "equal": np.equal,
    "greater_equal": np.greater_equal, "less_equal": np.less_equal, "not_equal": np.not_equal,
    "_and": lambda a, b: np.logical_and(a != 0, b != 0),
    "_or": lambda a, b: np.logical_or(a != 0, b != 0),
    "_xor": lambda a, b: np.logical_xor(a != 0, b != 0),
}
small_ints = hnp.arrays(np.float64, hnp.array_shapes(max_dims=3, max_side=4),
                        elements=st.integers(-2, 2).map(float))


@pytest.mark.parametrize("name", sorted(RELATIONS))
@given(a=small_ints, data=st.data())
def test_relation_matches_numpy(name, a, data):
    b = data.draw(hnp.arrays(np.float64, a.shape, elements=st.integers(-2, 2).map(float)))
    out = getattr(autograd, name)(Tensor(data=a), Tensor(data=b))
    np.testing.assert_array_equal(out.to_numpy(), RELATIONS[name](a, b).astype(np.float64))
    assert out.dtype == np.float64 and out.creator is None and not out.requires_grad


def test_scalar_and_broadcast_operands():
    x = Tensor(data=[[1.0, 2.0, 3.0]])
    np.testing.assert_array_equal(autograd.greater(x, 2).to_numpy(), [[0, 0, 1]])
    column = Tensor(data=[[1.0], [3.0]])
    np.testing.assert_array_equal(autograd.less(x, column).to_numpy(),
                                  [[0, 0, 0], [1, 1, 0]])


def test_not_and_integer_input_give_float32():
    out = autograd._not(Tensor(data=np.array([0, 1, 2])))
    np.testing.assert_array_equal(out.to_numpy(), [1, 0, 0])
    assert out.dtype == np.float32


def test_backward_through_a_comparison_is_a_clear_error():
    x = Tensor(data=[1.0, 2.0], stores_grad=True)
    with pytest.raises(RuntimeError, match="not produced by a recorded operation"):
        list(autograd.backward(autograd.sum(autograd.greater(x, 1.5))))


def test_shape_mismatch_names_the_op():
    with pytest.raises(ValueError, match=r"equal: cannot broadcast shapes \(2,\) and \(3,\)"):
        autograd.equal(Tensor(shape=(2,)), Tensor(shape=(3,)))


def test_comparison_messages_name_the_function_exactly():
    from autograd.operations import comparison
    with pytest.raises(TypeError, match=r"^less_equal: expected a Tensor, an array or a number, "
                                        r"got str$"):
        autograd.less_equal(Tensor(data=[1.0]), "a")
    with pytest.raises(TypeError, match=r"^_not: expected a Tensor, got list$"):
        comparison._not([1.0])
