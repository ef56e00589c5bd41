"""Tests written from the surviving mutants of autograd/layers/activation.py (issue 22): the
edges of Softmax's axis range and of Dropout's ratio range, and Dropout's repr."""
import re

import numpy as np
import pytest

import autograd
from autograd import Dropout, Softmax, Tensor


def test_softmax_takes_the_most_negative_axis():
    """`-len(shape) < axis` would refuse axis=-ndim, a valid NumPy axis."""
    x = np.random.default_rng(0).standard_normal((3, 4))
    y = Softmax(axis=-2)(Tensor(data=x)).to_numpy()
    np.testing.assert_allclose(y, np.exp(x) / np.exp(x).sum(axis=0, keepdims=True), rtol=1e-12)
    assert Softmax(axis=-2).output_shape((3, 4)) == (3, 4)
    with pytest.raises(ValueError, match=re.escape(
            "Softmax(axis=-3): expected input with axis -3, got (3, 4)")):
        Softmax(axis=-3).output_shape((3, 4))


def test_dropout_with_ratio_zero_keeps_everything_in_training():
    """`0.0 < ratio` would refuse ratio 0 (the range is [0, 1))."""
    x = np.random.default_rng(1).standard_normal((5, 6)).astype(np.float32)
    layer = Dropout(0.0)
    assert layer.ratio == 0.0 and layer.is_training
    np.testing.assert_array_equal(layer(Tensor(data=x)).to_numpy(), x)
    with pytest.raises(ValueError, match=r"^Dropout: ratio must be in \[0, 1\), got -0\.1$"):
        Dropout(-0.1)


def test_dropout_repr_shows_its_ratio():
    assert repr(Dropout(0.25)) == "Dropout(ratio=0.25)"
    assert repr(Dropout()) == "Dropout(ratio=0.5)"
