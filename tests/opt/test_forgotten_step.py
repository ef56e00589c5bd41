"""A schedule that never moves because ``step()`` is never called warns once."""
import warnings

import numpy as np
import pytest

import autograd
from autograd import opt


def _loop(optimizer, iterations, call_step):
    w = autograd.Tensor(data=np.ones(3, np.float32), stores_grad=True)
    b = autograd.Tensor(data=np.ones(1, np.float32), stores_grad=True)
    for _ in range(iterations):
        loss = autograd.sum(w * w) + autograd.sum(b * b)
        for param, grad in autograd.backward(loss):      # the README's loop
            optimizer.update(param, grad)
        if call_step:
            optimizer.step()


def test_a_forgotten_step_with_a_schedule_warns_once_naming_the_fix():
    sgd = opt.SGD(lr=opt.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5))
    with pytest.warns(UserWarning, match=r"SGD: 200 updates since step_counter last advanced "
                                         r"\(it is 0\), so the schedule of lr has not moved; "
                                         r"call sgd.step\(\)") as record:
        _loop(sgd, 300, call_step=False)
    assert len([w for w in record if "step_counter" in str(w.message)]) == 1
    assert record[0].filename == __file__           # points at the user's update() call


@pytest.mark.parametrize("make, call_step", [
    (lambda: opt.SGD(lr=opt.ExponentialDecay(0.1, 10, 0.5)), True),     # step() called
    (lambda: opt.SGD(lr=0.1, momentum=0.9), False),     # constant: nothing to move
    (lambda: opt.Adam(lr=0.01), False),                  # Adam counts steps per parameter
])
def test_no_warning_when_nothing_is_stuck(make, call_step):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _loop(make(), 300, call_step=call_step)


def test_fewer_updates_than_the_threshold_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _loop(opt.SGD(lr=opt.ExponentialDecay(0.1, 10, 0.5)), 99, call_step=False)
