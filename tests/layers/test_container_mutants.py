"""Tests written from the surviving mutants of autograd/layers/container.py (issue 22):
Sequential.append's naming rules and its messages word for word."""
import re

import pytest

import autograd
from autograd import Linear, Sequential


def _exact(message):
    return f"^{re.escape(message)}$"


def test_append_names_a_layer_by_its_position():
    """`str(name)` for name=None (or `str(None)`) would name it "None"."""
    model = Sequential(Linear(2, 3))
    model.append(autograd.ReLU()).append(Linear(3, 1))
    assert [n for n, _ in model.named_layers()] == ["0", "1", "2"]
    assert list(model.state_dict()) == ["0.W", "0.b", "2.W", "2.b"]


@pytest.mark.parametrize("name", ["a.b", ".", ""])
def test_append_refuses_an_empty_name_or_one_with_a_dot(name):
    """`not name and "." in name` or "XX.XX" would take them (a dot breaks the dotted names of
    the state)."""
    model = Sequential()
    with pytest.raises(ValueError, match=_exact(
            f"Sequential: a layer name must be non-empty without '.', got {name!r}")):
        model.append(Linear(2, 2), name)
    assert len(model) == 0


def test_append_names_what_is_not_a_layer_by_its_type():
    with pytest.raises(TypeError, match=_exact("Sequential: expected a Layer, got function")):
        Sequential().append(lambda x: x)
    with pytest.raises(TypeError, match=_exact("Sequential: expected a Layer, got int")):
        Sequential(Linear(2, 2), 3)
