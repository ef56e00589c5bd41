"""embedding where the mutation run of issue 22 (docs/testing.md, chunk 5) found the suite
blind: ids as an int Tensor on another device, unsigned and bool ids, ids at each bound of the
vocabulary, the gradient with ids given as a Tensor, and every message word for word."""
import re

import numpy as np
import pytest

import autograd
from autograd import Tensor
from tests.foreign_device import tensor_on_a_foreign_device

# the compiled kernels and the portable code they stand in for: both tested
pytestmark = pytest.mark.usefixtures("compiled_and_portable")


def exactly(message):
    return f"^{re.escape(message)}$"


W = np.arange(8.0).reshape(4, 2)


def test_ids_on_another_device_are_refused_naming_both():
    ids = tensor_on_a_foreign_device([0, 1], np.int64)
    with pytest.raises(TypeError, match=exactly(
            "embedding: ids are on gpu:7 but W is on cpu; move one with to_device()")):
        autograd.embedding(ids, Tensor(data=W))


@pytest.mark.parametrize("ids, shown", [([0.5], "float64"), (np.array([True]), "bool"),
                                        (Tensor(data=np.array([1.0, 2.0])), "float64")])
def test_non_integer_ids_are_named(ids, shown):
    with pytest.raises(TypeError, match=exactly(f"embedding: ids must be integers, got {shown}")):
        autograd.embedding(ids, Tensor(data=W))


@pytest.mark.parametrize("ids, bad", [([0, 4], 4), ([[3], [-1]], -1), (np.array([9, 4]), 9)])
def test_ids_outside_the_vocabulary_are_named(ids, bad):
    with pytest.raises(ValueError, match=exactly(
            f"embedding: ids must be in [0, 4) for W of shape (4, 2), got {bad}")):
        autograd.embedding(ids, Tensor(data=W))


def test_the_table_shape_message_is_exact():
    with pytest.raises(ValueError, match=exactly(
            "embedding: expected W of shape (num_embeddings, dim), got (2, 2, 2)")):
        autograd.embedding([0], Tensor(data=W.reshape(2, 2, 2)))


def test_ids_at_both_ends_of_the_vocabulary_and_unsigned_ids():
    for ids in ([0, 3, 3], np.array([0, 3, 3], np.uint8), Tensor(data=np.array([0, 3, 3]))):
        np.testing.assert_array_equal(autograd.embedding(ids, Tensor(data=W)).to_numpy(),
                                      W[[0, 3, 3]])


def test_gradient_with_ids_given_as_a_tensor_has_no_gradient_for_the_ids():
    ids = Tensor(data=np.array([[2, 0], [2, 2]]))
    table = Tensor(data=W, stores_grad=True)
    y = autograd.embedding(ids, table)
    assert y.shape == (2, 2, 2)
    dy = np.arange(8.0).reshape(2, 2, 2)
    grads = autograd.gradients(y, Tensor(data=dy))
    assert list(grads) == [table]
    expected = np.zeros_like(W)
    expected[0] = dy[0, 1]
    expected[2] = dy[0, 0] + dy[1, 0] + dy[1, 1]
    np.testing.assert_array_equal(grads[table].to_numpy(), expected)


def test_empty_ids_give_an_empty_lookup_and_a_zero_gradient():
    table = Tensor(data=W, stores_grad=True)
    y = autograd.embedding(np.zeros((0, 3), np.int64), table)
    assert y.shape == (0, 3, 2)
    grad = autograd.gradients(autograd.sum(y))[table].to_numpy()
    np.testing.assert_array_equal(grad, np.zeros_like(W))
