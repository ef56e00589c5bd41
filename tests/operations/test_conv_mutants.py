"""conv2d's message for a kernel wider than the padded input, with the padded size computed
in the message (the sampled mutation run changed its arithmetic unseen: docs/testing.md); the
argument checks and results of conv2d's cached plans."""
import re

import numpy as np
import pytest

import autograd
from autograd import Tensor
from autograd.operations import conv as conv_module
from autograd.operations.conv import conv2d
from tests.backend.test_convolution_mutants import direct_conv


@pytest.mark.parametrize("padding,padded", [(1, 5), ((2, 0), 7)])
def test_a_kernel_longer_than_the_padded_input_names_the_padded_size(padding, padded):
    x = Tensor(data=np.zeros((1, 1, 3, 3), np.float32))
    W = Tensor(data=np.zeros((1, 1, 9, 1), np.float32))
    pads = (padding, padding) if isinstance(padding, int) else (padding[0], padding[0])
    message = (f"conv2d: kernel (9, 1) with dilation (1, 1) spans 9 pixels, more than the "
               f"padded input height {padded} (x (1, 1, 3, 3), padding {pads})")
    assert padded == 3 + 2 * pads[0]          # the reference: size + before + after
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        autograd.conv2d(x, W, padding=padding)


def test_a_kernel_wider_than_the_padded_input_names_the_width():
    # the second axis of the check is named "width" (the run of chunk 4 changed the name
    # unseen: every test's kernel was too tall, not too wide)
    x = Tensor(data=np.zeros((1, 1, 3, 3), np.float32))
    W = Tensor(data=np.zeros((1, 1, 1, 6), np.float32))
    message = ("conv2d: kernel (1, 6) with dilation (1, 2) spans 11 pixels, more than the "
               "padded input width 7 (x (1, 1, 3, 3), padding (2, 2))")
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        autograd.conv2d(x, W, padding=2, dilation=(1, 2))


@pytest.mark.parametrize("groups", [True, 2.0, "2"])
def test_groups_that_are_no_int_are_refused_by_value(groups):
    # a bool or a float 2.0 is no group count, though `True >= 1` and `int(2.0) == 2`
    message = f"conv2d: groups must be a positive int, got {groups!r}"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        autograd.conv2d(Tensor(shape=(1, 4, 5, 5)), Tensor(shape=(4, 2, 3, 3)), groups=groups)


def test_a_numpy_integer_group_count_is_accepted():
    rng = np.random.default_rng(50)
    x, W = rng.standard_normal((1, 4, 4, 4)), rng.standard_normal((2, 2, 3, 3))
    y = autograd.conv2d(Tensor(data=x), Tensor(data=W), groups=np.int64(2)).to_numpy()
    for o in range(2):       # output o sees input channels 2o, 2o + 1 (one group each)
        for i in range(2):
            for j in range(2):
                assert y[0, o, i, j] == pytest.approx(
                    (x[0, 2 * o:2 * o + 2, i:i + 3, j:j + 3] * W[o]).sum(), rel=1e-12)


@pytest.mark.parametrize("op, x_shape, W_shape, axes", [
    (autograd.conv2d, (1, 3, 5, 5), (4, 2, 3, 3), "H, W"),
    (autograd.conv1d, (1, 3, 5), (4, 2, 3), "L"),
])
def test_a_grouped_channel_mismatch_names_W_and_groups(op, x_shape, W_shape, axes):
    name = op.__name__
    message = (f"{name}: expected x of shape (N, 4, {axes}), got {x_shape} "
               f"(W {W_shape} with groups=2)")
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        op(Tensor(shape=x_shape), Tensor(shape=W_shape), groups=2)
    # without groups the suffix is left out
    with pytest.raises(ValueError, match=rf"^{name}: expected x of shape \(N, 2, {axes}\), got "
                                         rf"{re.escape(str(x_shape))}$"):
        op(Tensor(shape=x_shape), Tensor(shape=W_shape))


@pytest.fixture
def no_plans(monkeypatch):
    """conv2d's plan cache (operations/conv.py) empty for the test, and its own."""
    plans = {}
    monkeypatch.setattr(conv_module, "_plans", plans)
    return plans


@pytest.mark.parametrize("arguments, error", [
    (dict(groups=True), ValueError), (dict(stride=True), TypeError),
    (dict(stride=(1, True)), TypeError), (dict(padding=True), TypeError),
    (dict(padding=(True, 1)), TypeError), (dict(dilation=0), ValueError)])
def test_a_cached_plan_never_skips_the_checks_of_another_call(no_plans, arguments, error):
    """After a valid call with the same shapes is cached, a bool where an int belongs (equal
    to 1 as a key) or another invalid value still meets the argument checks."""
    x = Tensor(data=np.ones((1, 2, 5, 5), np.float32))
    W = Tensor(data=np.ones((3, 2, 3, 3), np.float32))
    valid = {name: (tuple(int(v) for v in value) if isinstance(value, tuple) else 1)
             for name, value in arguments.items()}       # True -> 1, in the same form
    conv2d(x, W, **{**dict(stride=1, padding=1, dilation=1, groups=1), **valid})
    assert len(no_plans) == 1
    with pytest.raises(error, match="conv2d: "):
        conv2d(x, W, **{**dict(stride=1, padding=1, dilation=1, groups=1), **arguments})


def test_a_cached_plan_gives_the_uncached_result_and_shapes_still_meet_the_checks(no_plans):
    rng = np.random.default_rng(3)
    x = Tensor(data=rng.standard_normal((2, 4, 7, 6)).astype(np.float32))
    W = Tensor(data=rng.standard_normal((6, 2, 3, 3)).astype(np.float32))
    b = Tensor(data=rng.standard_normal(6).astype(np.float32))
    first = conv2d(x, W, b, stride=(2, 1), padding="same", groups=2).to_numpy()
    again = conv2d(x, W, b, stride=(2, 1), padding="same", groups=2).to_numpy()
    assert len(no_plans) == 1
    np.testing.assert_array_equal(first, again)
    np.testing.assert_allclose(again, direct_conv(x.to_numpy(), W.to_numpy(), b.to_numpy(),
                                                  (2, 1), (1, 1), ((1, 1), (1, 1)), 2),
                               rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="conv2d: expected x of shape"):
        conv2d(Tensor(data=np.ones((2, 3, 7, 6), np.float32)), W, b, stride=(2, 1),
               padding="same", groups=2)
    with pytest.raises(ValueError, match="conv2d: expected b of shape"):
        conv2d(x, W, Tensor(data=np.ones(5, np.float32)), stride=(2, 1), padding="same",
               groups=2)
    conv2d(x, W, b, stride=np.int64(2), padding=1, groups=2)        # not plain: not cached
    assert len(no_plans) == 1


def test_the_plans_kept_are_bounded(no_plans, monkeypatch):
    monkeypatch.setattr(conv_module, "_PLANS_LIMIT", 2)
    W = Tensor(data=np.ones((1, 1, 1, 1), np.float32))
    for size in (2, 3, 4, 5):
        conv2d(Tensor(data=np.ones((1, 1, size, size), np.float32)), W)
    assert len(no_plans) == 2


@pytest.mark.parametrize("argument", ["stride", "padding", "dilation"])
def test_a_bool_argument_is_refused_after_the_same_call_with_ints_was_kept(argument):
    """conv2d keeps the checked geometry of calls with plain ints; True == 1, so a call with
    True where an int 1 passed before must still meet the checks, not find the kept plan."""
    x = Tensor(data=np.zeros((1, 2, 5, 5), np.float32))
    W = Tensor(data=np.zeros((3, 2, 3, 3), np.float32))
    autograd.conv2d(x, W, **{argument: 1})
    with pytest.raises(TypeError, match=f"conv2d: {argument} must be"):
        autograd.conv2d(x, W, **{argument: True})
