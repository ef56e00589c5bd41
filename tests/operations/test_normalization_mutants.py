"""batch_norm's checks of the running statistics, exactly, where the sampled mutation run
found the suite blind (docs/testing.md): each check rejects on either of its two conditions,
before any running statistic changes."""
import re

import numpy as np
import pytest

import autograd
from autograd import Tensor

X = np.ones((2, 3, 2, 2))


@pytest.mark.parametrize("running_var,error,message", [
    ([1.0, 1.0, 1.0], TypeError,
     "batch_norm: running_var must be an array on the device of x (cpu), got list"),
    (None, ValueError, "batch_norm: give both running_mean and running_var, or neither"),
    (np.ones(3, np.int64), ValueError,
     "batch_norm: expected running_var of shape (3,), floating, for x of shape (2, 3, 2, 2), "
     "got (3,) int64"),
    (np.ones(4), ValueError,
     "batch_norm: expected running_var of shape (3,), floating, for x of shape (2, 3, 2, 2), "
     "got (4,) float64"),
])
def test_running_statistics_are_checked_on_each_condition(running_var, error, message):
    running_mean = np.full(3, 7.0)
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        autograd.batch_norm(Tensor(data=X), Tensor(data=np.ones(3)), Tensor(data=np.zeros(3)),
                            running_mean, running_var, training=True)
    np.testing.assert_array_equal(running_mean, 7.0)


def test_eval_mode_without_running_statistics_is_refused():
    with pytest.raises(ValueError, match="^batch_norm: eval mode needs running_mean and "
                                         "running_var$"):
        autograd.batch_norm(Tensor(data=X), Tensor(data=np.ones(3)), Tensor(data=np.zeros(3)),
                            None, None, training=False)
    # training without them normalises with the batch statistics (here all ones: zeros out)
    y = autograd.batch_norm(Tensor(data=X), Tensor(data=np.ones(3)), Tensor(data=np.zeros(3)),
                            None, None, training=True)
    np.testing.assert_array_equal(y.to_numpy(), np.zeros_like(X))
