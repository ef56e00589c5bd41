"""Functions that build index or constant arrays before their op runs make the tensor's device
current while they do (issue 23): on a GPU other than the current one, CuPy would otherwise put
those arrays on the wrong GPU. Checked on the CPU with a stand-in device (tests/foreign_device)
that records which device was made current; the values must equal the same call on the CPU."""
import numpy as np
import pytest

import autograd
from autograd import Tensor, initializer
from tests.foreign_device import CurrentDevice, tensor_on_a_foreign_device

X = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.0
CASES = {
    "gather": lambda x, i: autograd.gather(x, 1, [2, 0]),
    "scatter_elements": lambda x, i: autograd.scatter_elements(
        x, np.array([[1, 0, 1]]), x[0:1] * 2.0),
    "where": lambda x, i: autograd.where(condition=[[True, False, True]] * 2, x=x, y=x * 3.0),
    "getitem with an index array": lambda x, i: x[np.array([1, 0])],
    "onehot": lambda x, i: autograd.onehot(-1, i, 4),
    "shape": lambda x, i: autograd.shape(x),
    "nonzero": lambda x, i: autograd.nonzero(x),
    "softmax_cross_entropy with list labels": lambda x, i: autograd.softmax_cross_entropy(
        x, [0, 2]),
}


@pytest.mark.parametrize("name", CASES)
def test_arrays_made_by_a_function_are_made_on_its_tensors_device(name):
    fn = CASES[name]
    expected = fn(Tensor(data=X), Tensor(data=np.array([[0, 3], [-1, 2]])))
    CurrentDevice.entered.clear()
    got = fn(tensor_on_a_foreign_device(X), tensor_on_a_foreign_device([[0, 3], [-1, 2]],
                                                                      np.int64))
    assert 7 in CurrentDevice.entered, f"{name} never made gpu:7 current"
    assert str(got.device) == "gpu:7"
    np.testing.assert_array_equal(np.asarray(got.data), expected.to_numpy())


@pytest.mark.parametrize("init", [initializer.eye, initializer.orthogonal])
def test_initializers_fill_on_the_tensors_device(init):
    t = tensor_on_a_foreign_device(np.zeros((3, 4)))
    CurrentDevice.entered.clear()
    init(t)
    assert CurrentDevice.entered == [7]
    q = np.asarray(t.data)
    np.testing.assert_allclose(q @ q.T, np.eye(3), atol=1e-5)       # orthonormal rows
