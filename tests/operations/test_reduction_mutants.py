"""The reductions' argument messages where the sampled mutation run found the suite blind
(docs/testing.md): an axis past the end of a 1-d tensor, and mean's own name in the
several-tensor form's messages."""
import re

import numpy as np
import pytest

import autograd
from autograd import Tensor

X = Tensor(data=np.array([0.25, 0.5, 1.0], np.float32))


@pytest.mark.parametrize("reduce", [autograd.sum, autograd.mean])
def test_axis_one_of_a_one_d_tensor_is_out_of_range(reduce):
    name = reduce.__name__
    with pytest.raises(ValueError, match=f"^{name}: axis 1 is out of range for a 1-d tensor$"):
        reduce(X, axis=1)
    # the last axis, counted from the end, is the only one
    np.testing.assert_allclose(reduce(X, axis=-1).to_numpy(),
                               getattr(np, name)(X.to_numpy(), axis=-1), rtol=1e-6)


def test_mean_of_several_tensors_names_itself():
    message = "mean: axis applies to one tensor; got 2 tensors and axis=0"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        autograd.mean(X, X, axis=0)
    with pytest.raises(TypeError, match="^mean: expected at least one tensor$"):
        autograd.mean()


@pytest.mark.parametrize("reduce", [autograd.sum, autograd.mean, autograd.max, autograd.min])
def test_several_tensors_refuse_an_axis_naming_the_reduction(reduce):
    """`_no_axis(name, xs, None)` in _extremum survived (the whole-run mutation of this
    session): max(a, b, axis=0) must be refused, not silently reduce elementwise."""
    name = reduce.__name__
    with pytest.raises(ValueError, match=re.escape(
            f"{name}: axis applies to one tensor; got 2 tensors and axis=0")):
        reduce(X, X, axis=0)


@pytest.mark.parametrize("reduce", [autograd.sum, autograd.mean, autograd.max, autograd.min])
def test_several_non_tensors_are_refused_naming_their_types(reduce):
    name = reduce.__name__
    with pytest.raises(TypeError, match=re.escape(
            f"{name}: expected Tensors, got ['list', 'float']")):
        reduce([1.0], 2.0)


@pytest.mark.parametrize("reduce, formula", [
    (autograd.sum, lambda a, b: a + b), (autograd.max, np.maximum), (autograd.min, np.minimum)])
def test_several_integer_tensors_combine_as_integers(reduce, formula):
    """With no floating operand the first Tensor sets the dtype (mutants: `next(..., None)`)."""
    a = np.array([3, -1, 4], np.int64)
    b = np.array([[1], [5]], np.int32)
    y = reduce(Tensor(data=a, requires_grad=False), Tensor(data=b, requires_grad=False))
    expected = formula(a, b.astype(np.int64))
    assert y.dtype == np.int64
    np.testing.assert_array_equal(y.to_numpy(), expected)
