"""The Optimizer base's messages where the first mutation run of opt/base.py found the suite
blind (docs/testing.md): a non-Tensor parameter, a gradient that is no array, an unknown
option in a loaded state; each names the optimizer, what it expected and what it got."""
import copy
import re

import numpy as np
import pytest

from autograd import Tensor, opt


def exactly(message):
    return f"^{re.escape(message)}$"


def test_a_parameter_that_is_no_tensor_is_named():
    with pytest.raises(TypeError, match=exactly("SGD: expected a parameter Tensor, got ndarray")):
        opt.SGD(lr=0.1).update(np.ones(2), np.ones(2))


def test_a_gradient_that_is_no_array_is_named():
    w = Tensor(data=np.ones(2, np.float32), stores_grad=True)
    message = ("SGD: the gradient of unnamed parameter of shape (2,) must be a Tensor or an "
               "array, got str")
    with pytest.raises(TypeError, match=exactly(message)):
        opt.SGD(lr=0.1).update(w, "ab")
    np.testing.assert_array_equal(w.to_numpy(), [1.0, 1.0])


def test_an_unknown_option_in_a_state_is_refused_by_name():
    sgd = opt.SGD(lr=0.1)
    state = copy.deepcopy(sgd.state_dict())
    state["options"]["bogus"] = 1
    with pytest.raises(ValueError, match=exactly("SGD.load_state_dict: unknown options "
                                                 "['bogus']")):
        sgd.load_state_dict(state)
