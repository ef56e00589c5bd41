"""Graph mode's refusals, word for word: what the user did, why a replay cannot repeat it and
what to do instead (the mutation run of graph_mode/ emptied and rewrote these unseen;
tests/graph_mode/test_refusals.py matches their first words)."""
import re

import numpy as np
import pytest

import autograd
from autograd import Tensor
from autograd.backend import native


def weight():
    return Tensor(data=np.array([[1.0], [2.0]], np.float32), stores_grad=True)


def ones(rows):
    return Tensor(data=np.ones((rows, 2), np.float32))


def refused_exactly(function, message):
    """``function`` captured and refused with ``message`` plus the ending naming it."""
    message += (f" (this call ran eagerly to its end; {function.__qualname__} cannot be "
                "replayed)")
    with pytest.raises(autograd.CaptureError, match=f"^{re.escape(message)}$"):
        autograd.capture(function)(ones(3))


def test_a_host_read_is_refused_naming_the_method_and_the_fix():
    w = weight()

    def read_on_host(x):
        y = autograd.sum(autograd.matmul(x, w))
        y.item()
        return y

    refused_exactly(read_on_host, (
        "graph mode: Tensor.item reads a value on the host inside the captured step, and a "
        "replay would not read it again (Python that branches on, prints or copies a value "
        "runs only at capture); return the Tensor from the step and read it after the call, "
        "or run this step eagerly"))


def test_an_in_place_write_is_refused_naming_the_method_and_the_fix():
    w = weight()

    def write_in_place(x):
        y = autograd.matmul(x, w)
        y.set_value(2.0)
        return autograd.sum(y)

    refused_exactly(write_in_place, (
        "graph mode: Tensor.set_value writes in place into a Tensor the step already used, "
        "outside any Operation, and a replay would not write it again; use an Operation, or "
        "do it outside the captured step"))


def test_recapture_false_names_both_input_signatures():
    w = weight()

    def step(x, scale):
        return autograd.sum(autograd.matmul(x, w))

    captured = autograd.capture(step, recapture=False)
    captured(ones(3), 2)
    captured(ones(3), 2)
    kernels = f"compiled kernels={native.enabled()}"
    message = (f"capture: the step was captured for training=True, recording=True, {kernels}, "
               "inputs (tensor (3, 2) float32, value 2) and now gets training=True, "
               f"recording=True, {kernels}, inputs (tensor (4, 2) float32, value 3); "
               "recapture=False forbids a new capture")
    with pytest.raises(autograd.CaptureError, match=f"^{re.escape(message)}$"):
        captured(ones(4), 3)
