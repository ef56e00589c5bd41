"""conv1d, max_pool1d and avg_pool1d against direct-loop NumPy references, float64 gradcheck,
float32 kept, and errors that name the 1-D op."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import autograd
from autograd import Tensor
from tests.operations.test_conv import _arrays     # x, W, b drawn from a settings dict


def reference_conv1d(x, W, b, stride, pads, dilation, groups):
    """Direct loops over n, c_out, ol: the definition of a grouped, dilated 1-D convolution."""
    n, c, length = x.shape
    out_channels, group_channels, kernel = W.shape
    padded = np.zeros((n, c, length + pads[0] + pads[1]))
    padded[:, :, pads[0]:pads[0] + length] = x
    out_length = (padded.shape[2] - dilation * (kernel - 1) - 1) // stride + 1
    y = np.zeros((n, out_channels, out_length))
    group_out = out_channels // groups
    for i in range(n):
        for o in range(out_channels):
            first = (o // group_out) * group_channels
            for ol in range(out_length):
                start = ol * stride
                window = padded[i, first:first + group_channels,
                                start:start + dilation * (kernel - 1) + 1:dilation]
                y[i, o, ol] = (window * W[o]).sum() + (b[o] if b is not None else 0)
    return y


def reference_same_pads(length, kernel, stride, dilation, lower):
    """ONNX's SAME_*: ceil(L / stride) outputs, the odd element after (UPPER) or before."""
    out = -(-length // stride)
    total = max((out - 1) * stride + dilation * (kernel - 1) + 1 - length, 0)
    return (total - total // 2, total // 2) if lower else (total // 2, total - total // 2)


def reference_pool1d(x, kernel, stride, padding, ceil_mode, is_max, count_include_pad=True):
    """Direct loops over output positions, PyTorch's rule for the ceil-mode last window."""
    n, c, length = x.shape
    room = length + 2 * padding - kernel
    out = (-(-room // stride) if ceil_mode else room // stride) + 1
    if ceil_mode and (out - 1) * stride >= length + padding:
        out -= 1
    y = np.zeros((n, c, out))
    for ol in range(out):
        start = ol * stride - padding
        inside = x[:, :, max(start, 0):min(start + kernel, length)]
        if is_max:
            y[:, :, ol] = inside.max(axis=2)
        else:
            divisor = (min(start + kernel, length + padding) - start if count_include_pad
                       else min(start + kernel, length) - max(start, 0))
            y[:, :, ol] = inside.sum(axis=2) / divisor
    return y


@st.composite
def conv_settings(draw):
    groups = draw(st.sampled_from([1, 1, 2, 3]))
    group_channels = draw(st.integers(1, 2))
    out_channels = groups * draw(st.integers(1, 2))
    kernel = draw(st.integers(1, 4))
    stride, dilation = draw(st.integers(1, 3)), draw(st.integers(1, 2))
    padding = draw(st.sampled_from([0, 1, 2, "same", "valid"]))
    pad_mode = draw(st.sampled_from(["NOTSET", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"]))
    span = dilation * (kernel - 1) + 1
    smallest = span if padding == "valid" or pad_mode == "VALID" else span - 2 * padding \
        if isinstance(padding, int) and pad_mode == "NOTSET" else 1
    length = draw(st.integers(max(1, smallest), 8))
    return dict(x_shape=(draw(st.integers(1, 2)), groups * group_channels, length),
                w_shape=(out_channels, group_channels, kernel), bias=draw(st.booleans()),
                stride=stride, dilation=dilation, padding=padding, pad_mode=pad_mode,
                groups=groups, seed=draw(st.integers(0, 2 ** 32 - 1)))


def _pads(s):
    length, kernel = s["x_shape"][2], s["w_shape"][2]
    mode = s["pad_mode"]
    if mode == "NOTSET" and isinstance(s["padding"], str):
        mode = "SAME_UPPER" if s["padding"] == "same" else "VALID"
    if mode == "VALID":
        return (0, 0)
    if mode == "NOTSET":
        return (s["padding"], s["padding"])
    return reference_same_pads(length, kernel, s["stride"], s["dilation"], mode == "SAME_LOWER")


def _kwargs(s):
    return dict(stride=s["stride"], padding=s["padding"], dilation=s["dilation"],
                groups=s["groups"], pad_mode=s["pad_mode"])


more_examples = settings(max_examples=max(40, settings.default.max_examples))


@more_examples
@given(conv_settings())
def test_conv1d_matches_direct_loops_and_keeps_float32(s):
    x, W, b = _arrays(s)
    expected = reference_conv1d(x, W, b, s["stride"], _pads(s), s["dilation"], s["groups"])
    tensors = [Tensor(data=a, dtype=np.float64) for a in (x, W, b) if a is not None]
    y = autograd.conv1d(*tensors, **_kwargs(s))
    assert y.shape == expected.shape
    np.testing.assert_allclose(y.to_numpy(), expected, rtol=1e-10, atol=1e-12)
    y32 = autograd.conv1d(*[Tensor(data=a.astype(np.float32), stores_grad=True)
                            for a in (x, W, b) if a is not None], **_kwargs(s))
    assert y32.dtype == np.float32
    grads = autograd.gradients(y32, np.ones(y32.shape, np.float32))
    assert all(g.dtype == np.float32 for g in grads.values())


@settings(max_examples=8)
@given(conv_settings())
def test_conv1d_gradients_pass_gradcheck(s):
    x, W, b = _arrays(s)
    inputs = [a for a in (x, W, b) if a is not None]
    assert autograd.gradcheck(lambda *t: autograd.conv1d(*t, **_kwargs(s)), inputs)


def test_conv1d_skips_the_gradient_of_a_data_batch():
    rng = np.random.default_rng(0)
    x = Tensor(data=rng.standard_normal((2, 3, 6)), requires_grad=False)
    W = Tensor(data=rng.standard_normal((4, 3, 3)), stores_grad=True)
    grads = autograd.gradients(autograd.conv1d(x, W).sum())
    assert list(grads) == [W]
    # dW[o, c, j] = sum over n, l of x[n, c, l + j]: every output's gradient is 1.
    windows = np.lib.stride_tricks.sliding_window_view(x.to_numpy(), 3, axis=2)
    np.testing.assert_allclose(grads[W].to_numpy(),
                               np.broadcast_to(windows.sum(axis=(0, 2)), (4, 3, 3)))


@st.composite
def pool_settings(draw):
    kernel = draw(st.integers(1, 4))
    stride = draw(st.sampled_from([None, 1, 2, 3]))
    padding = draw(st.integers(0, kernel // 2))
    length = draw(st.integers(max(1, kernel - 2 * padding), 9))
    return dict(shape=(draw(st.integers(1, 2)), draw(st.integers(1, 3)), length),
                kernel=kernel, stride=stride, padding=padding, ceil_mode=draw(st.booleans()),
                count_include_pad=draw(st.booleans()), seed=draw(st.integers(0, 2 ** 32 - 1)))


@more_examples
@given(pool_settings())
def test_pooling_matches_direct_loops(s):
    x = np.random.default_rng(s["seed"]).uniform(-1, 1, s["shape"])
    stride = s["kernel"] if s["stride"] is None else s["stride"]
    args = (s["kernel"], s["stride"], s["padding"], s["ceil_mode"])
    y = autograd.max_pool1d(Tensor(data=x), *args)
    np.testing.assert_array_equal(y.to_numpy(), reference_pool1d(
        x, s["kernel"], stride, s["padding"], s["ceil_mode"], True))
    y = autograd.avg_pool1d(Tensor(data=x), *args, count_include_pad=s["count_include_pad"])
    np.testing.assert_allclose(y.to_numpy(), reference_pool1d(
        x, s["kernel"], stride, s["padding"], s["ceil_mode"], False, s["count_include_pad"]),
        rtol=1e-12)
    y32 = autograd.avg_pool1d(Tensor(data=x.astype(np.float32)), *args)
    assert y32.dtype == np.float32


@settings(max_examples=8)
@given(pool_settings())
def test_pooling_gradients_pass_gradcheck(s):
    x = np.random.default_rng(s["seed"]).uniform(-1, 1, s["shape"])
    args = (s["kernel"], s["stride"], s["padding"], s["ceil_mode"])
    assert autograd.gradcheck(lambda t: autograd.max_pool1d(t, *args), [x])
    assert autograd.gradcheck(
        lambda t: autograd.avg_pool1d(t, *args, count_include_pad=s["count_include_pad"]), [x])


def test_max_pool1d_routes_each_gradient_to_the_window_maximum():
    x = Tensor(data=np.array([[[1.0, 3.0, 2.0, 0.0, 5.0, 4.0]]]), stores_grad=True)
    y = autograd.max_pool1d(x, 2)
    np.testing.assert_array_equal(y.to_numpy(), [[[3.0, 2.0, 5.0]]])
    grads = autograd.gradients(y, np.array([[[10.0, 20.0, 30.0]]]))
    np.testing.assert_array_equal(grads[x].to_numpy(), [[[0, 10, 20, 0, 30, 0]]])


def test_pytorch_style_one_element_tuples_are_accepted():
    x = Tensor(data=np.arange(8.0).reshape(1, 1, 8))
    W = Tensor(data=np.ones((1, 1, 2)))
    np.testing.assert_array_equal(autograd.conv1d(x, W, stride=(2,), padding=(1,)).to_numpy(),
                                  autograd.conv1d(x, W, stride=2, padding=1).to_numpy())
    np.testing.assert_array_equal(autograd.max_pool1d(x, (3,), (2,)).to_numpy(),
                                  autograd.max_pool1d(x, 3, 2).to_numpy())


@pytest.mark.parametrize("call, message", [
    (lambda: autograd.conv1d(Tensor(shape=(2, 4, 5)), Tensor(shape=(2, 3, 3))),
     r"conv1d: expected x of shape \(N, 3, L\), got \(2, 4, 5\)"),
    (lambda: autograd.conv1d(Tensor(shape=(2, 3, 5, 5)), Tensor(shape=(2, 3, 3))),
     r"conv1d: expected x of shape \(N, 3, L\), got \(2, 3, 5, 5\)"),
    (lambda: autograd.conv1d(Tensor(shape=(2, 3, 5)), Tensor(shape=(2, 3, 3, 3))),
     r"conv1d: expected W of shape \(out_channels, in_channels / groups, k\), got "
     r"\(2, 3, 3, 3\)"),
    (lambda: autograd.conv1d(Tensor(shape=(2, 3, 5)), Tensor(shape=(2, 3, 3)),
                             Tensor(shape=(3,))),
     r"conv1d: expected b of shape \(2,\), got \(3,\)"),
    (lambda: autograd.conv1d(Tensor(shape=(2, 4, 5)), Tensor(shape=(3, 2, 3)), groups=2),
     r"conv1d: groups=2 must divide out_channels=3"),
    (lambda: autograd.conv1d(Tensor(shape=(2, 3, 4)), Tensor(shape=(2, 3, 3)), dilation=2),
     r"conv1d: kernel 3 with dilation 2 spans 5 elements, more than the padded input "
     r"length 4"),
    (lambda: autograd.conv1d(Tensor(shape=(2, 3, 5)), Tensor(shape=(2, 3, 3)), stride=0),
     r"conv1d: stride must be positive, got 0"),
    (lambda: autograd.conv1d(Tensor(shape=(2, 3, 5)), Tensor(shape=(2, 3, 3)), padding="full"),
     r"conv1d: padding must be an int, 'same' or 'valid', got 'full'"),
    (lambda: autograd.conv1d(Tensor(shape=(2, 3, 5)), Tensor(shape=(2, 3, 3)),
                             pad_mode="SAME"),
     r"conv1d: pad_mode must be one of"),
    (lambda: autograd.max_pool1d(Tensor(shape=(2, 3, 5, 5)), 2),
     r"max_pool1d: expected x of shape \(N, C, L\), got \(2, 3, 5, 5\)"),
    (lambda: autograd.avg_pool1d(Tensor(shape=(2, 3, 5)), 2, padding=2),
     r"avg_pool1d: padding must be between 0 and half the kernel size 2, got 2"),
    (lambda: autograd.max_pool1d(Tensor(shape=(2, 3, 2)), 5, padding=1),
     r"max_pool1d: kernel 5 is longer than the padded input length 4"),
    (lambda: autograd.avg_pool1d(Tensor(shape=(2, 3, 5)), 0),
     r"avg_pool1d: kernel_size must be positive, got 0"),
])
def test_errors_name_the_1d_op_and_the_shapes(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_non_integer_arguments_are_type_errors():
    with pytest.raises(TypeError, match=r"conv1d: stride must be an int, got 1.5"):
        autograd.conv1d(Tensor(shape=(1, 1, 5)), Tensor(shape=(1, 1, 2)), stride=1.5)
    with pytest.raises(TypeError, match=r"max_pool1d: kernel_size must be an int, got \(2, 2\)"):
        autograd.max_pool1d(Tensor(shape=(1, 1, 5)), (2, 2))


def test_max_pool1d_floors_by_default_and_conv1d_names_a_bad_padding():
    x = Tensor(data=np.arange(10.0).reshape(1, 2, 5))
    np.testing.assert_array_equal(autograd.max_pool1d(x, 2).to_numpy(),
                                  np.arange(10.0).reshape(1, 2, 5)[:, :, 1:4:2])
    with pytest.raises(TypeError, match=r"^conv1d: padding must be an int, got \(1, 2, 3\)$"):
        autograd.conv1d(x, Tensor(data=np.ones((2, 2, 1))), padding=(1, 2, 3))
