"""clip_grad_norm's input checks and its result's device and dtype (mutation testing found
each of these unchecked; docs/testing.md)."""
import types

import numpy as np
import pytest

import autograd
from autograd import Tensor
from autograd.opt import clip_grad_norm


def _param():
    return Tensor(data=[1.0, 2.0], stores_grad=True)


@pytest.mark.parametrize("item,kind", [((1, 2, 3), "tuple"), ([_param()], "list"), (5, "int")])
def test_an_item_that_is_not_a_pair_is_refused(item, kind):
    with pytest.raises(TypeError, match=f"clip_grad_norm: expected \\(param, grad\\) pairs, "
                                        f"item 1 is {kind}$"):
        clip_grad_norm([(_param(), np.ones(2, np.float32)), item], max_norm=1.0)


@pytest.mark.parametrize("grad,kind", [
    (np.array([1, 2]), "ndarray"),                                  # integer gradient
    (types.SimpleNamespace(shape=(2,)), "SimpleNamespace"),         # no dtype
    ([1.0, 2.0], "list")])
def test_a_gradient_that_is_not_a_floating_array_is_refused(grad, kind):
    with pytest.raises(TypeError, match=f"clip_grad_norm: the gradient of pair 0 must be a "
                                        f"floating Tensor or array, got {kind}$"):
        clip_grad_norm([(_param(), grad)], max_norm=1.0)


def test_no_pairs_give_a_float32_zero_norm_on_the_cpu():
    pairs, norm = clip_grad_norm(iter([]), max_norm=1.0)
    assert pairs == [] and norm.shape == () and norm.dtype == np.float32
    assert norm.device is autograd.device.cpu() and norm.item() == 0.0


@pytest.mark.parametrize("as_tensor", [True, False], ids=["tensor", "array"])
def test_one_pair_norm_is_a_tensor_on_the_gradients_device(as_tensor):
    grad = np.array([3.0, 4.0], np.float64)
    pairs, norm = clip_grad_norm([(_param(), Tensor(data=grad) if as_tensor else grad)],
                                 max_norm=1.0)
    assert isinstance(norm, Tensor) and norm.device is autograd.device.cpu()
    assert norm.dtype == np.float64 and norm.item() == 5.0
    clipped = pairs[0][1]
    assert isinstance(clipped, Tensor) is as_tensor
    np.testing.assert_allclose(np.asarray(clipped.to_numpy() if as_tensor else clipped),
                               grad / (5.0 + 1e-6), rtol=1e-12)
