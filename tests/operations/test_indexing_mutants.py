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
