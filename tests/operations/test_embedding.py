"""embedding: lookup against NumPy indexing, accumulation of repeated ids, gradcheck, errors."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import autograd
from autograd import Tensor

# the compiled kernels and the portable code they stand in for: both tested
pytestmark = pytest.mark.usefixtures("compiled_and_portable")


@given(ids_shape=st.lists(st.integers(1, 4), min_size=0, max_size=3).map(tuple),
       vocabulary=st.integers(1, 5), dim=st.integers(1, 3), seed=st.integers(0, 2 ** 32 - 1),
       as_tensor=st.booleans())
def test_lookup_and_gradients(ids_shape, vocabulary, dim, seed, as_tensor):
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, vocabulary, ids_shape)
    W = rng.standard_normal((vocabulary, dim))
    given_ids = Tensor(data=ids) if as_tensor else ids
    y = autograd.embedding(given_ids, Tensor(data=W, dtype=np.float64))
    assert y.shape == ids_shape + (dim,)
    np.testing.assert_array_equal(y.to_numpy(), W[ids])

    dy = rng.standard_normal(ids_shape + (dim,))
    expected = np.zeros_like(W)
    for position in np.ndindex(*ids_shape):          # loop reference of the scatter-add
        expected[ids[position]] += dy[position]
    table = Tensor(data=W, dtype=np.float64, stores_grad=True)
    grad = autograd.gradients(autograd.embedding(given_ids, table), dy)[table].to_numpy()
    np.testing.assert_allclose(grad, expected, rtol=1e-12, atol=1e-12)

    autograd.gradcheck(lambda t: autograd.embedding(given_ids, t), [W])
    W32 = Tensor(data=W.astype(np.float32), stores_grad=True)
    y32 = autograd.embedding(given_ids, W32)
    assert y32.dtype == np.float32
    assert autograd.gradients(y32, dy.astype(np.float32))[W32].dtype == np.float32


def test_repeated_ids_accumulate():
    W = Tensor(data=np.zeros((3, 2), np.float32), stores_grad=True)
    y = autograd.embedding(np.array([1, 1, 1, 2]), W)
    grad = autograd.gradients(autograd.sum(y))[W].to_numpy()
    np.testing.assert_array_equal(grad, [[0, 0], [3, 3], [1, 1]])


@pytest.mark.parametrize("ids,error,message", [
    (np.array([0, -1]), ValueError, r"embedding: ids must be in \[0, 4\) for W of shape \(4, 2\), "
                                    r"got -1"),
    (np.array([[4]]), ValueError, r"got 4"),
    (np.array([0.0, 1.0]), TypeError, r"embedding: ids must be integers, got float64"),
])
def test_bad_ids_are_named(ids, error, message):
    with pytest.raises(error, match=message):
        autograd.embedding(ids, Tensor(shape=(4, 2)))


def test_table_must_be_two_dimensional():
    with pytest.raises(ValueError, match=r"embedding: expected W of shape \(num_embeddings, "
                                         r"dim\), got \(4,\)"):
        autograd.embedding(np.array([0]), Tensor(shape=(4,)))


def test_embedding_takes_ids_as_a_nested_list():
    table = np.arange(6.0).reshape(3, 2)
    y = autograd.embedding([[0, 2], [1, 1]], Tensor(data=table))
    np.testing.assert_array_equal(y.to_numpy(), table[[[0, 2], [1, 1]]])
