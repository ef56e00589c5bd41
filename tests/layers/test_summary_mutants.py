"""Tests written from the surviving mutants of autograd/layers/summary.py (issue 22): the table
word for word (the doctest's is not among the tests mutmut runs), its messages, and the traced
pass's corner cases: a model with one parameter, a layer no attribute holds, a model without
sub-layers."""
import re

import numpy as np
import pytest

import autograd
from autograd import Layer, Linear, Sequential, Tensor


def _exact(message):
    return f"^{re.escape(message)}$"


def test_summary_of_a_sequential_is_the_documented_table():
    printed = []
    text = autograd.summary(Sequential(Linear(784, 10), autograd.Softmax()), (32, 784),
                            print_fn=printed.append)
    assert printed == [text]
    assert text == ("Layer  Type     Output shape  Params\n"
                    "------------------------------------\n"
                    "0      Linear   (32, 10)        7850\n"
                    "1      Softmax  (32, 10)           0\n"
                    "====================================\n"
                    "Total params: 7,850")


def test_summary_refuses_what_is_not_a_layer_by_its_type_name():
    with pytest.raises(TypeError, match=_exact("summary: expected a Layer, got function")):
        autograd.summary(lambda x: x, (2, 3), print_fn=None)


class OneWeight(Layer):
    """A single parameter (no bias) and a ReLU that no attribute holds."""

    def __init__(self):
        super().__init__()
        self.fc = Linear(3, 2, bias=False)

    def forward(self, x):
        return FREE_RELU(self.fc(x))


FREE_RELU = autograd.ReLU()


def test_summary_traces_a_model_with_one_parameter_and_an_unheld_layer():
    """The traced input's device comes from parameters[0] (a model with one parameter has no
    parameters[1]); a layer called in forward that no attribute holds is named "?"."""
    text = autograd.summary(OneWeight(), (4, 3), print_fn=None)
    assert text == ("Layer  Type    Output shape  Params\n"
                    "-----------------------------------\n"
                    "fc     Linear  (4, 2)             6\n"
                    "?      ReLU    (4, 2)             0\n"
                    "===================================\n"
                    "Total params: 6")


def test_summary_of_a_model_without_sub_layers_is_one_row_for_the_model():
    """No leaf layer was called: the table falls back to one row naming the model."""
    class Scale(Layer):
        def __init__(self):
            super().__init__()
            self.w = Tensor(data=np.ones(3, np.float32), stores_grad=True)

        def forward(self, x):
            return x * self.w

    text = autograd.summary(Scale(), (2, 3), print_fn=None)
    assert text == ("Layer  Type   Output shape  Params\n"
                    "----------------------------------\n"
                    "Scale  Scale  (2, 3)             3\n"
                    "==================================\n"
                    "Total params: 3")


def test_summary_asks_a_traced_model_for_a_concrete_shape_by_its_name():
    with pytest.raises(ValueError, match=_exact(
            "summary: OneWeight has its own forward, so summary runs it and needs a concrete "
            "input shape, got (None, 3)")):
        autograd.summary(OneWeight(), (None, 3), print_fn=None)
