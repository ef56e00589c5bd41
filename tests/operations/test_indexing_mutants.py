"""where's messages, exactly (the design: the op, what it expected, what it got); the sampled
mutation run emptied two of them unseen (docs/testing.md)."""
import re

import numpy as np
import pytest

import autograd
from autograd import Tensor
from tests.foreign_device import tensor_on_a_foreign_device

X = Tensor(data=np.array([0.25, 0.5, 1.0], np.float32))


@pytest.mark.parametrize("call,error,message", [
    (lambda: autograd.where(X, 0.0, tensor_on_a_foreign_device([True, False, True], bool)),
     TypeError, "where: condition is on gpu:7 but x and y are on cpu"),
    (lambda: autograd.where(X, 0.0, np.array(["a", "b", "c"])), TypeError,
     "where: condition must be bool or numbers, got <U1 (from ndarray)"),
    (lambda: autograd.where(X, 0.0, np.ones(2, bool)), ValueError,
     "where: cannot broadcast condition (2,), x (3,) and y ()"),
    (lambda: autograd.where([1.0], 0.0, np.ones(3, bool)), TypeError,
     "where: x or y must be a Tensor, got list and float"),
])
def test_where_messages_are_exact(call, error, message):
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        call()


# ---------------------------------------------- from the whole run of indexing.py (issue 22)

X23 = Tensor(shape=(2, 3))


@pytest.mark.parametrize("call, error, message", [
    # axis exactly ndim is out of range, not axis 0 (`axis <= x.ndim` survived)
    (lambda: autograd.scatter_elements(X23, np.array([[1, 0, 1]]), Tensor(shape=(1, 3)), 2),
     ValueError, "scatter_elements: axis 2 is out of range for shape (2, 3)"),
    (lambda: autograd.scatter_elements(X23, np.zeros((3, 3), np.int64), Tensor(shape=(3, 3))),
     ValueError, "scatter_elements: indices (3, 3) are larger than x (2, 3)"),
    (lambda: autograd.scatter_elements(X23, np.array([[1, 0, 1]]), np.ones((1, 3))),
     TypeError, "scatter_elements: updates must be a Tensor, got ndarray"),
    # the condition against y too, not only x (y dropped from the check survived)
    (lambda: autograd.where(Tensor(shape=(1,)), Tensor(shape=(3,)), np.ones(2, bool)),
     ValueError, "where: cannot broadcast condition (2,), x (1,) and y (3,)"),
    (lambda: autograd.gather(X23, 0, tensor_on_a_foreign_device([1], np.int64)), TypeError,
     "gather: indices are on gpu:7 but x is on cpu; move one with to_device()"),
    (lambda: autograd.slice(X23, [0], [1], axes=[2]), ValueError,
     "slice: axis 2 is out of range for shape (2, 3)"),
    (lambda: autograd.slice(X23, [0], [1], steps=[0]), ValueError, "slice: a step cannot be 0"),
    # steps of another length than starts (`steps is not None or ...` skipped the check)
    (lambda: autograd.slice(X23, [0], [1], steps=[1, 1]), ValueError,
     "slice: starts [0], ends [1], axes None and steps [1, 1] must have one length"),
])
def test_scatter_slice_where_and_gather_messages_are_exact(call, error, message):
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        call()


def test_slice_without_steps_steps_by_one_and_takes_axis_minus_ndim():
    """steps default to 1 (a default of 2, or `steps is not None` reading len(None), survived)
    and axis -ndim is the first axis (`-ndim < axis` would refuse it)."""
    data = np.arange(20.0).reshape(4, 5)
    out = autograd.slice(Tensor(data=data), [1, -4], [3, 5], axes=[-2, 1])
    np.testing.assert_array_equal(out.to_numpy(), data[1:3, 1:5])
    np.testing.assert_array_equal(autograd.slice(Tensor(data=data), [1], [4]).to_numpy(),
                                  data[1:4])


def test_scatter_elements_with_integer_tensor_indices():
    """Indices given as an int Tensor write where the same array would (ONNX's loop by hand)."""
    x = Tensor(data=np.zeros((2, 3), np.float32))
    ids = Tensor(data=np.array([[1, 0, 1]]))
    out = autograd.scatter_elements(x, ids, Tensor(data=[[5.0, 6.0, 7.0]]))
    np.testing.assert_array_equal(out.to_numpy(), [[0.0, 6.0, 0.0], [5.0, 0.0, 7.0]])


def test_scatter_elements_gradient_of_the_updates_alone():
    """x a constant: only the updates get a gradient, dy at the written positions."""
    x = Tensor(data=np.zeros((2, 3), np.float32), requires_grad=False)
    updates = Tensor(data=[[5.0, 6.0, 7.0]], stores_grad=True)
    out = autograd.scatter_elements(x, np.array([[1, 0, 1]]), updates)
    dy = np.arange(6, dtype=np.float32).reshape(2, 3)
    grads = autograd.gradients(out, dy)
    assert list(grads) == [updates]
    np.testing.assert_array_equal(grads[updates].to_numpy(), [[3.0, 1.0, 5.0]])


def test_getitem_with_a_tuple_index_on_another_device():
    """A tuple index holding an array is moved part by part to x's device (gpu:7 stand-in);
    its value must equal the same index on the CPU."""
    from tests.foreign_device import CurrentDevice
    data = np.arange(12.0).reshape(3, 4)
    index = (np.array([2, 0, 2]), slice(1, 3))
    CurrentDevice.entered.clear()
    y = tensor_on_a_foreign_device(data)[index]
    assert str(y.device) == "gpu:7" and 7 in CurrentDevice.entered
    np.testing.assert_array_equal(np.asarray(y.data), data[index])


@pytest.mark.parametrize("wrap", [lambda ids: ids, lambda ids: (ids, slice(None))],
                         ids=["array", "tuple"])
def test_getitem_replays_an_index_computed_in_the_step(wrap):
    """The index arrays are inputs of the op, so a replayed step reads the index it computed
    (left in the op's template, graph mode refuses the step; an integer index refused as a
    boolean mask, `dtype != bool`, also fails)."""
    data = np.arange(10, dtype=np.float32).reshape(5, 2) * 10
    x = Tensor(data=data, stores_grad=True)
    captured = autograd.capture(lambda ids: x[wrap(autograd.cat([ids, ids]))])
    for ids in ([0, 1], [2, 3], [4, 0], [1, 1]):
        out = captured(Tensor(data=np.array(ids), requires_grad=False))
        np.testing.assert_array_equal(out.to_numpy(), data[ids + ids])
    assert captured.replays == 2


def test_getitem_with_a_boolean_mask_is_refused_by_graph_mode_in_words():
    x = Tensor(data=np.arange(3, dtype=np.float32), stores_grad=True)
    captured = autograd.capture(lambda: x[np.array([True, False, True])])
    message = ("graph mode: getitem with a boolean mask has as many results as the mask has "
               "True values; a replay would keep the captured shape")
    with pytest.raises(autograd.CaptureError, match=f"^{re.escape(message)} "):
        for _ in range(3):
            captured()
