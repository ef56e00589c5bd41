"""Tests written from the surviving mutants of autograd/layers/arguments.py (issue 22): the
shared argument checks called directly, each message word for word, and the padding string
lower-cased as the convolutions compare it."""
import re

import numpy as np
import pytest

import autograd
from autograd import Tensor
from autograd.layers.arguments import conv_padding, positive_int, positive_pair


def _exact(message):
    return f"^{re.escape(message)}$"


@pytest.mark.parametrize("spelling, expected", [("SAME", "same"), ("Valid", "valid"),
                                                ("same", "same")])
def test_conv_padding_strings_come_back_lower_case(spelling, expected):
    """`padding.upper()` instead of lower(): the convolutions compare with "same"/"valid"."""
    assert conv_padding(spelling, "Conv2d") == expected
    layer = autograd.Conv2d(1, 1, 3, padding=spelling)
    assert repr(layer) == f"Conv2d(1->1, kernel_size=(3, 3), padding='{expected}')"
    size = 5 if expected == "same" else 3
    assert layer(Tensor(shape=(1, 1, 5, 5))).shape == (1, 1, size, size)


@pytest.mark.parametrize("padding, error, message", [
    ("full", ValueError, "Conv2d: padding must be an int, a pair, 'same' or 'valid', got 'full'"),
    ((1, 2, 3), TypeError, "Conv2d: padding must be an int or 2 ints, got (1, 2, 3)"),
    (1.5, TypeError, "Conv2d: padding must be an int or 2 ints, got 1.5"),
    ((-1, 0), ValueError, "Conv2d: padding must be non-negative, got (-1, 0)"),
    (-2, ValueError, "Conv2d: padding must be non-negative, got -2"),
])
def test_conv_padding_messages_are_exact(padding, error, message):
    """The default `forms`, the layer and "padding" passed to pair(), and the non-negative
    message, each mutated."""
    with pytest.raises(error, match=_exact(message)):
        conv_padding(padding, "Conv2d")


def test_conv_padding_names_the_forms_a_layer_takes():
    with pytest.raises(ValueError, match=_exact(
            "Conv1d: padding must be an int, 'same' or 'valid', got 'x'")):
        conv_padding("x", "Conv1d", "an int", numbers=int)
    assert conv_padding(3, "Conv1d", "an int", numbers=lambda p: ("numbers", p)) == (
        "numbers", 3)
    assert conv_padding((0, 2), "Conv2d") == (0, 2) and conv_padding(1, "Conv2d") == (1, 1)


@pytest.mark.parametrize("value, message", [
    (0, "L: x must be a positive int, got 0"),
    (True, "L: x must be a positive int, got True"),
    (2.0, "L: x must be a positive int, got 2.0"),
    (np.int64(-1), "L: x must be a positive int, got np.int64(-1)"),
])
def test_positive_int_messages_are_exact(value, message):
    with pytest.raises(ValueError, match=_exact(message)):
        positive_int(value, "x", "L")


def test_positive_int_and_pair_return_python_ints():
    value = positive_int(np.int64(3), "x", "L")
    assert value == 3 and type(value) is int
    assert positive_int(1, "x", "L") == 1
    assert positive_pair(np.int64(2), "stride", "L") == (2, 2)
    assert positive_pair((1, 3), "stride", "L") == (1, 3)


@pytest.mark.parametrize("value, error, message", [
    (0, ValueError, "Conv2d: stride must be positive, got 0"),
    ((1, 0), ValueError, "Conv2d: stride must be positive, got (1, 0)"),
    ((1, 2, 3), TypeError, "Conv2d: stride must be an int or 2 ints, got (1, 2, 3)"),
])
def test_positive_pair_messages_are_exact(value, error, message):
    with pytest.raises(error, match=_exact(message)):
        positive_pair(value, "stride", "Conv2d")
