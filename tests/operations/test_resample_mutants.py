"""upsample, depth_to_space and space_to_depth where the whole mutation run of chunk 4 found
the suite blind (docs/testing.md): the default mode, float32 gradients, exact messages. Each
against an index formula written here."""
import re

import numpy as np
import pytest

import autograd
from autograd import Tensor


def test_upsample_defaults_to_nearest():
    # a default mode other than "nearest" would refuse a call that names only the scales
    x = np.arange(6.0).reshape(1, 1, 2, 3)
    y = autograd.upsample(Tensor(data=x), scales=[1, 1, 2, 1]).to_numpy()
    np.testing.assert_array_equal(y, x.repeat(2, axis=2))


def test_upsample_keeps_float32_in_its_gradient():
    # UpsampleNearest.backward building dx without dy's dtype gives a float64 gradient
    x = Tensor(data=np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2), stores_grad=True)
    y = autograd.upsample(x, "nearest", [1, 1, 2, 3])
    dy = np.arange(24, dtype=np.float32).reshape(1, 1, 4, 6)
    grad = autograd.gradients(y, dy)[x].to_numpy()
    assert grad.dtype == np.float32
    expected = dy.reshape(1, 1, 2, 2, 2, 3).sum(axis=(3, 5))   # each input's 2 x 3 copies
    np.testing.assert_array_equal(grad, expected)


def test_upsample_messages_are_exact():
    x = Tensor(data=np.zeros((2, 2)))
    with pytest.raises(ValueError, match=r"^upsample: scales must be >= 1, got \[1, 0\.5\]$"):
        autograd.upsample(x, "nearest", (1, 0.5))
    with pytest.raises(ValueError, match=r"^upsample: expected 2 scales \(one per axis of "
                                         r"\(2, 2\)\), got \[2\]$"):
        autograd.upsample(x, "nearest", [2])
    with pytest.raises(ValueError, match=r"^upsample: expected 2 scales \(one per axis of "
                                         r"\(2, 2\)\), got None$"):
        autograd.upsample(x, "nearest")
    with pytest.raises(ValueError, match=r"^upsample: only mode='nearest' is supported, "
                                         r"got 'linear'$"):
        autograd.upsample(x, "linear", [1, 2])


def test_space_to_depth_messages_name_it_exactly():
    with pytest.raises(ValueError, match=r"^space_to_depth: expected a 4-d \(N, C, H, W\) "
                                         r"tensor, got shape \(1, 4, 4\)$"):
        autograd.space_to_depth(Tensor(shape=(1, 4, 4)), 2)
    with pytest.raises(ValueError, match=r"^space_to_depth: height and width \(3, 4\) must be "
                                         r"divisible by blocksize 2$"):
        autograd.space_to_depth(Tensor(shape=(1, 1, 3, 4)), 2)
    with pytest.raises(ValueError, match=r"^space_to_depth: height and width \(4, 3\) must be "
                                         r"divisible by blocksize 2$"):
        autograd.space_to_depth(Tensor(shape=(1, 1, 4, 3)), 2)


def test_depth_to_space_messages_name_it_exactly():
    with pytest.raises(ValueError, match=r"^depth_to_space: expected a 4-d \(N, C, H, W\) "
                                         r"tensor, got shape \(1, 4, 2\)$"):
        autograd.depth_to_space(Tensor(shape=(1, 4, 2)), 2)
    # blocksize 3: blocksize^2 is 9 (not 3 * 3 written as 3 / 3 or 3 + 3)
    with pytest.raises(ValueError, match=r"^depth_to_space: channels \(12\) must be divisible "
                                         r"by blocksize\^2 \(9\)$"):
        autograd.depth_to_space(Tensor(shape=(1, 12, 2, 2)), 3)
    with pytest.raises(ValueError, match=r"^depth_to_space: mode must be 'DCR' or 'CRD', "
                                         r"got 'RCD'$"):
        autograd.depth_to_space(Tensor(shape=(1, 4, 2, 2)), 2, "RCD")


@pytest.mark.parametrize("mode", [None, 1])
def test_a_mode_that_is_no_string_is_refused_by_value(mode):
    # _mode upper-casing whatever it gets would raise AttributeError instead
    with pytest.raises(ValueError, match=rf"^depth_to_space: mode must be 'DCR' or 'CRD', "
                                         rf"got {mode!r}$"):
        autograd.depth_to_space(Tensor(shape=(1, 4, 2, 2)), 2, mode)
