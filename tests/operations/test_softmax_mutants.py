"""softmax's and log_softmax's axis argument, where the whole mutation run of softmax.py
(docs/testing.md) found the suite blind: a NumPy integer axis (what `np.argmax` and shape
arithmetic hand back) must be taken like an int, and a wrong kind named in the message."""
import re

import numpy as np
import pytest

import autograd
from autograd import Tensor

FUNCTIONS = [autograd.softmax, autograd.log_softmax]


def reference(x, axis, log):
    shifted = x - x.max(axis=axis, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))
    return log_p if log else np.exp(log_p)


@pytest.mark.parametrize("function", FUNCTIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("axis", [np.int64(0), np.int32(-1), np.intp(1)])
def test_a_numpy_integer_axis_is_an_axis(function, axis):
    x = np.random.default_rng(4).standard_normal((3, 4))
    y = function(Tensor(data=x), axis=axis)
    np.testing.assert_allclose(y.to_numpy(), reference(x, int(axis),
                                                       function is autograd.log_softmax),
                               rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("function", FUNCTIONS, ids=lambda f: f.__name__)
def test_an_axis_of_another_kind_is_refused_naming_its_type(function):
    name = function.__name__
    with pytest.raises(TypeError, match=re.escape(f"{name}: axis must be an int, got float")):
        function(Tensor(data=np.ones((2, 3))), axis=1.0)
