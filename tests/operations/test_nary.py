"""SINGA's n-ary mean is one Operation with n inputs; checked against NumPy and gradcheck."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import autograd
from autograd import Tensor
from autograd.operations.nary import ElementwiseMean


@given(count=st.integers(2, 5), seed=st.integers(0, 2**16))
def test_mean_of_n_tensors_is_one_operation_matching_numpy(count, seed):
    rng = np.random.default_rng(seed)
    shapes = [(3, 4), (4,), (1, 4), (3, 1), (1,)]
    arrays = [rng.normal(size=shapes[i % len(shapes)]).astype(np.float32) for i in range(count)]
    xs = [Tensor(data=a, stores_grad=True) for a in arrays]
    y = autograd.mean(*xs)
    assert type(y.creator) is ElementwiseMean and y.dtype == np.float32
    expected = np.mean(np.broadcast_arrays(*arrays), axis=0)
    np.testing.assert_allclose(y.to_numpy(), expected, rtol=1e-6, atol=1e-6)
    # d/dxi of sum(dy * mean) is dy / n, summed over xi's broadcast axes
    dy = rng.normal(size=y.shape).astype(np.float32)
    grads = autograd.gradients(y, Tensor(data=dy))
    for x, a in zip(xs, arrays):
        expected_grad = np.broadcast_to(dy / count, y.shape)
        axes = tuple(range(y.ndim - a.ndim))
        expected_grad = expected_grad.sum(axis=axes)
        keep = tuple(i for i, size in enumerate(a.shape) if size == 1 and y.shape[i - a.ndim] != 1)
        expected_grad = expected_grad.sum(axis=keep, keepdims=True)
        np.testing.assert_allclose(grads[x].to_numpy(), expected_grad, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("count", [2, 3])
def test_mean_gradcheck(count):
    rng = np.random.default_rng(count)
    inputs = [Tensor(data=rng.normal(size=(2, 3))) for _ in range(count - 1)] + \
             [Tensor(data=rng.normal(size=(3,)))]
    assert autograd.gradcheck(lambda *xs: autograd.mean(*xs), inputs)


@pytest.mark.parametrize("combine, reference", [
    (autograd.sum, lambda xs: np.sum(xs, axis=0)),
    (autograd.max, lambda xs: np.max(xs, axis=0)),
    (autograd.min, lambda xs: np.min(xs, axis=0)),
    (autograd.mean, lambda xs: np.mean(xs, axis=0)),
])
def test_sum_max_min_mean_of_n_tensors_are_one_operation_with_n_inputs(combine, reference):
    rng = np.random.default_rng(3)
    arrays = [rng.normal(size=(2, 3)) for _ in range(4)]
    xs = [Tensor(data=a, stores_grad=True) for a in arrays]
    y = combine(*xs)
    assert len(y.creator.input_edges) == 4
    # each input itself, not a chain of binary ops
    assert all(edge[2] is x for edge, x in zip(y.creator.input_edges, xs))
    np.testing.assert_allclose(y.to_numpy(), reference(arrays), rtol=1e-12)
