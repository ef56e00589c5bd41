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


def test_summary_shows_shapes_given_as_numpy_ints_like_tuples():
    """_table's `shape_text(shape) if isinstance(shape, tuple)`: str() of a tuple of NumPy ints
    reads "(np.int64(3), 2)"; the table writes "(3, 2)"."""
    text = autograd.summary(Sequential(Linear(4, 2)), np.array([3, 4]), print_fn=None)
    assert text.splitlines()[2] == "0      Linear  (3, 2)            10"


def test_summary_of_a_single_layer_names_the_row_by_its_type():
    """_inferred_rows names the model's own row by its type when it has no dotted name."""
    text = autograd.summary(Linear(4, 2), (3, 4), print_fn=None)
    assert text.splitlines()[2] == "Linear  Linear  (3, 2)            10"


def test_summary_passes_the_shape_over_an_empty_sequential():
    """An empty Sequential inside gives no rows; the next layer gets the shape from before it
    (`child_rows[-1][2] if child_rows or True` would index an empty list)."""
    text = autograd.summary(Sequential(Linear(4, 3), Sequential(), autograd.ReLU()), (2, 4),
                            print_fn=None)
    assert text.splitlines()[2:4] == ["0      Linear  (2, 3)            15",
                                      "2      ReLU    (2, 3)             0"]
