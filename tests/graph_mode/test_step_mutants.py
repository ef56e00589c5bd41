"""CapturedStep where the mutation run of graph_mode/ found the suite blind (docs/testing.md):
``source()``, which no test called, and the recapture=False message for an array input.
References: the program worked out by hand from program.py's naming (one counter for the
``k`` constants and ``r`` registers, in the order the recorder asks for them) and messages
checked word for word."""
import re

import numpy as np
import pytest

import autograd
from autograd import Tensor
from autograd.backend import native


def exactly(message):
    return f"^{re.escape(message)}$"


def weight():
    return Tensor(data=np.array([[1.0], [2.0]], np.float32), stores_grad=True)


def test_source_before_any_capture_is_an_error():
    step = autograd.capture(lambda x: x)
    with pytest.raises(autograd.CaptureError, match=exactly("capture: nothing has been "
                                                            "captured yet")):
        step.source()


def test_source_is_the_replay_program_of_the_capture_used_last():
    w = weight()

    def step(x, twice):
        y = autograd.matmul(x, w)
        if twice:
            y = y + y
        return autograd.sum(y)

    captured = autograd.capture(step)
    three, four = Tensor(data=np.ones((3, 2), np.float32)), Tensor(data=np.ones((4, 2),
                                                                        np.float32))
    # k0 the input buffer, k1 the weight, r2 matmul's output (k3 its forward), r4 the sum
    # (k5); with twice=True, r4 = r2 + r2 (k5 add's forward) and the sum is r6 (k7)
    once = ("def replay():\n"
            "    r2 = k3(k0, k1)\n"
            "    r4 = k5(r2)\n"
            "    del r2\n"
            "    return (r4, )\n")
    doubled = ("def replay():\n"
               "    r2 = k3(k0, k1)\n"
               "    r4 = k5(r2, r2)\n"
               "    del r2\n"
               "    r6 = k7(r4)\n"
               "    del r4\n"
               "    return (r6, )\n")
    for _ in range(2):
        captured(three, False)
    assert captured.source() == once
    for _ in range(2):
        captured(four, True)
    assert captured.source() == doubled
    assert float(captured(three, False).to_numpy()) == 3 * (1.0 + 2.0)      # a replay
    assert captured.replays == 1
    assert captured.source() == once             # the most recently used, not the newest


def test_recapture_false_describes_an_array_input_by_shape_and_dtype():
    w = weight()

    def step(x):
        return autograd.sum(autograd.matmul(Tensor(data=x), w))

    captured = autograd.capture(step, recapture=False)
    for _ in range(2):
        captured(np.ones((3, 2), np.float32))
    kernels = f"compiled kernels={native.enabled()}"
    message = (f"capture: the step was captured for training=True, recording=True, {kernels}, "
               f"inputs (array (3, 2) float32) and now gets training=True, recording=True, "
               f"{kernels}, inputs (array (3, 2) float64); recapture=False forbids a new "
               "capture")
    with pytest.raises(autograd.CaptureError, match=exactly(message)):
        captured(np.ones((3, 2), np.float64))
