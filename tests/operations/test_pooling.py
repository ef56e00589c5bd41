"""Pooling against direct-loop references (ceil_mode, count_include_pad, ties), gradcheck."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import autograd
from autograd import Tensor
from autograd.backend.layout import is_batch_last
from tests.layouts import stored_batch_last


def _out_size(size, kernel, stride, pad, ceil_mode):
    room = size + 2 * pad - kernel
    if not ceil_mode:
        return room // stride + 1
    out = -(-room // stride) + 1
    return out - 1 if (out - 1) * stride >= size + pad else out


def reference_pool(x, kernel, stride, pad, ceil_mode, mode, count_include_pad=True):
    """Loops over n, c, oh, ow with explicit window bounds, as PyTorch's CPU kernels do.
    For max mode also returns the gradient of sum(y * dy) with dy = 1 + index (first max)."""
    n, c, h, w = x.shape
    out_h = _out_size(h, kernel[0], stride[0], pad[0], ceil_mode)
    out_w = _out_size(w, kernel[1], stride[1], pad[1], ceil_mode)
    y = np.zeros((n, c, out_h, out_w))
    dy = 1.0 + np.arange(y.size, dtype=float).reshape(y.shape)
    dx = np.zeros_like(x)
    for a in range(n):
        for b in range(c):
            for oh in range(out_h):
                for ow in range(out_w):
                    top, left = oh * stride[0] - pad[0], ow * stride[1] - pad[1]
                    bottom = min(top + kernel[0], h + pad[0])
                    right = min(left + kernel[1], w + pad[1])
                    padded_count = (bottom - top) * (right - left)
                    top_in, left_in = max(top, 0), max(left, 0)
                    bottom_in, right_in = min(bottom, h), min(right, w)
                    window = x[a, b, top_in:bottom_in, left_in:right_in]
                    if mode == "max":
                        y[a, b, oh, ow] = window.max()
                        r, s = np.unravel_index(np.argmax(window), window.shape)
                        dx[a, b, top_in + r, left_in + s] += dy[a, b, oh, ow]
                    else:
                        divisor = padded_count if count_include_pad else window.size
                        y[a, b, oh, ow] = window.sum() / divisor
    return y, dy, dx


@st.composite
def pool_settings(draw):
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    pad = (draw(st.integers(0, kernel[0] // 2)), draw(st.integers(0, kernel[1] // 2)))
    h = draw(st.integers(max(1, kernel[0] - 2 * pad[0]), 6))
    w = draw(st.integers(max(1, kernel[1] - 2 * pad[1]), 6))
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 2)), h, w)
    return dict(shape=shape, kernel=kernel, stride=stride, pad=pad,
                ceil_mode=draw(st.booleans()), count_include_pad=draw(st.booleans()),
                seed=draw(st.integers(0, 2 ** 32 - 1)))


def _distinct(shape, seed):
    """Values at least 0.05 apart, so finite differences never swap a window's maximum."""
    rng = np.random.default_rng(seed)
    size = int(np.prod(shape))
    return (rng.permutation(size) * 0.05 - 1.0).reshape(shape)


# Each example is cheap (tiny shapes): draw more of them than the profile's default.
more_examples = settings(max_examples=max(40, settings.default.max_examples))


@more_examples
@given(pool_settings())
def test_max_pool_matches_loops_and_gradcheck(s):
    x = _distinct(s["shape"], s["seed"])
    args = dict(kernel_size=s["kernel"], stride=s["stride"], padding=s["pad"],
                ceil_mode=s["ceil_mode"])
    expected, dy, dx = reference_pool(x, s["kernel"], s["stride"], s["pad"], s["ceil_mode"], "max")
    xt = Tensor(data=x, stores_grad=True, dtype=np.float64)
    y = autograd.max_pool2d(xt, **args)
    np.testing.assert_array_equal(y.to_numpy(), expected)
    np.testing.assert_array_equal(autograd.gradients(y, dy)[xt].to_numpy(), dx)
    autograd.gradcheck(lambda t: autograd.max_pool2d(t, **args), [x])
    x32 = Tensor(data=x.astype(np.float32), stores_grad=True)
    y32 = autograd.max_pool2d(x32, **args)
    assert y32.dtype == np.float32
    assert autograd.gradients(y32, dy.astype(np.float32))[x32].dtype == np.float32


@more_examples
@given(pool_settings())
def test_avg_pool_matches_loops_and_gradcheck(s):
    x = np.random.default_rng(s["seed"]).uniform(-1, 1, s["shape"])
    args = dict(kernel_size=s["kernel"], stride=s["stride"], padding=s["pad"],
                ceil_mode=s["ceil_mode"], count_include_pad=s["count_include_pad"])
    expected, _, _ = reference_pool(x, s["kernel"], s["stride"], s["pad"], s["ceil_mode"], "avg",
                                    s["count_include_pad"])
    y = autograd.avg_pool2d(Tensor(data=x, dtype=np.float64), **args)
    np.testing.assert_allclose(y.to_numpy(), expected, rtol=1e-12, atol=1e-12)
    autograd.gradcheck(lambda t: autograd.avg_pool2d(t, **args), [x])
    x32 = Tensor(data=x.astype(np.float32), stores_grad=True)
    y32 = autograd.avg_pool2d(x32, **args)
    assert y32.dtype == np.float32
    grad = autograd.gradients(y32, np.ones(y32.shape, np.float32))[x32]
    assert grad.dtype == np.float32


@more_examples
@given(pool_settings())
def test_batch_last_input_keeps_its_layout_and_matches_loops(s):
    """Pooling keeps a batch-last x's layout (conv2d returns it: operations/layout.py), with dy
    in either layout (gradcheck's is C order, the loop reference's is batch-last)."""
    x = stored_batch_last(_distinct(s["shape"], s["seed"]))
    pools = {"max": dict(kernel_size=s["kernel"], stride=s["stride"], padding=s["pad"],
                         ceil_mode=s["ceil_mode"])}
    pools["avg"] = dict(pools["max"], count_include_pad=s["count_include_pad"])
    for mode, args in pools.items():
        pool = autograd.max_pool2d if mode == "max" else autograd.avg_pool2d
        expected, dy, dx = reference_pool(x, s["kernel"], s["stride"], s["pad"], s["ceil_mode"],
                                          mode, s["count_include_pad"])
        xt = Tensor(data=x, stores_grad=True)
        y = pool(xt, **args)
        assert is_batch_last(y.data) or x.flags.c_contiguous    # (N or C*H*W of 1: both)
        np.testing.assert_allclose(y.to_numpy(), expected, rtol=1e-12, atol=1e-12)
        if mode == "max":
            dy = stored_batch_last(dy)
            grad = autograd.gradients(y, dy)[xt]
            np.testing.assert_array_equal(grad.to_numpy(), dx)
        autograd.gradcheck(lambda t: pool(t, **args), [xt])


def test_max_pool_ties_give_the_gradient_once_to_the_first_maximum():
    x = Tensor(data=np.array([[[[1.0, 1.0, 0.0],
                                [1.0, 1.0, 0.0],
                                [0.0, 0.0, 0.0]]]], np.float32), stores_grad=True)
    y = autograd.max_pool2d(x, 2, 1)
    grad = autograd.gradients(y, np.ones(y.shape, np.float32))[x].to_numpy()[0, 0]
    # Window (0, 0) holds four equal maxima: only the first, (0, 0), gets its gradient (a split
    # would give 0.25 each). Windows (0, 1), (1, 0), (1, 1) find their first 1 at (0, 1),
    # (1, 0), (1, 1).
    np.testing.assert_array_equal(grad, [[1, 1, 0], [1, 1, 0], [0, 0, 0]])
    assert grad.sum() == y.size


def test_max_pool_padding_never_wins_against_negative_inputs():
    x = Tensor(data=-np.ones((1, 1, 2, 2), np.float32) * 5)
    y = autograd.max_pool2d(x, 3, 1, padding=1)
    np.testing.assert_array_equal(y.to_numpy(), -5 * np.ones((1, 1, 2, 2)))


def test_global_avg_pool():
    x = np.random.default_rng(1).standard_normal((2, 3, 4, 5))
    y = autograd.global_avg_pool2d(Tensor(data=x, dtype=np.float64))
    np.testing.assert_allclose(y.to_numpy(), x.mean(axis=(2, 3), keepdims=True), rtol=1e-12)
    autograd.gradcheck(autograd.global_avg_pool2d, [x])
    assert autograd.global_avg_pool2d(Tensor(data=x.astype(np.float32))).dtype == np.float32


@pytest.mark.parametrize("call,message", [
    (lambda: autograd.max_pool2d(Tensor(shape=(3, 4, 4)), 2),
     r"max_pool2d: expected x of shape \(N, C, H, W\), got \(3, 4, 4\)"),
    (lambda: autograd.avg_pool2d(Tensor(shape=(1, 1, 4, 4)), 3, padding=2),
     r"avg_pool2d: padding must be between 0 and half the kernel size \(3, 3\), got \(2, 2\)"),
    (lambda: autograd.max_pool2d(Tensor(shape=(1, 1, 2, 2)), 3),
     r"max_pool2d: kernel \(3, 3\) is larger than the padded input \(2, 2\)"),
    (lambda: autograd.max_pool2d(Tensor(shape=(1, 1, 4, 4)), 2, stride=0),
     r"max_pool2d: stride must be positive, got 0"),
    (lambda: autograd.global_avg_pool2d(Tensor(shape=(2, 3))),
     r"global_avg_pool2d: expected x of shape \(N, C, H, W\), got \(2, 3\)"),
])
def test_bad_arguments_are_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()
