"""conv2d against a direct-loop NumPy reference, float64 gradcheck, float32 kept, errors."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import autograd
from autograd import Tensor
from autograd.backend.layout import is_batch_last
from tests.layouts import stored_batch_last


def reference_conv2d(x, W, b, stride, pads_h, pads_w, dilation, groups):
    """Direct loops over n, c_out, oh, ow: the definition of a grouped, dilated convolution."""
    n, c, h, w = x.shape
    out_channels, group_channels, kh, kw = W.shape
    padded = np.zeros((n, c, h + sum(pads_h), w + sum(pads_w)))
    padded[:, :, pads_h[0]:pads_h[0] + h, pads_w[0]:pads_w[0] + w] = x
    out_h = (padded.shape[2] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    out_w = (padded.shape[3] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    y = np.zeros((n, out_channels, out_h, out_w))
    group_out = out_channels // groups
    for i in range(n):
        for o in range(out_channels):
            first = (o // group_out) * group_channels
            for oh in range(out_h):
                for ow in range(out_w):
                    top, left = oh * stride[0], ow * stride[1]
                    window = padded[i, first:first + group_channels,
                                    top:top + dilation[0] * (kh - 1) + 1:dilation[0],
                                    left:left + dilation[1] * (kw - 1) + 1:dilation[1]]
                    y[i, o, oh, ow] = (window * W[o]).sum() + (b[o] if b is not None else 0)
    return y


@st.composite
def conv_settings(draw):
    groups = draw(st.sampled_from([1, 1, 2, 3]))
    group_channels = draw(st.integers(1, 2))
    out_channels = groups * draw(st.integers(1, 2))
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    padding = (draw(st.integers(0, 2)), draw(st.integers(0, 2)))
    h = draw(st.integers(max(1, dilation[0] * (kh - 1) + 1 - 2 * padding[0]), 6))
    w = draw(st.integers(max(1, dilation[1] * (kw - 1) + 1 - 2 * padding[1]), 6))
    n = draw(st.integers(1, 2))
    bias = draw(st.booleans())
    seed = draw(st.integers(0, 2 ** 32 - 1))
    return dict(x_shape=(n, groups * group_channels, h, w),
                w_shape=(out_channels, group_channels, kh, kw), bias=bias, stride=stride,
                dilation=dilation, padding=padding, groups=groups, seed=seed)


def _arrays(s):
    rng = np.random.default_rng(s["seed"])
    x = rng.uniform(-1, 1, s["x_shape"])
    W = rng.uniform(-1, 1, s["w_shape"])
    b = rng.uniform(-1, 1, s["w_shape"][0]) if s["bias"] else None
    return x, W, b


def _kwargs(s):
    return dict(stride=s["stride"], padding=s["padding"], dilation=s["dilation"],
                groups=s["groups"])


# Each example is cheap (tiny shapes): draw more of them than the profile's default.
more_examples = settings(max_examples=max(40, settings.default.max_examples))


@more_examples
@given(conv_settings())
def test_forward_matches_direct_loops_and_float32_is_kept(s):
    x, W, b = _arrays(s)
    ph, pw = s["padding"]
    expected = reference_conv2d(x, W, b, s["stride"], (ph, ph), (pw, pw), s["dilation"],
                                s["groups"])
    tensors = [Tensor(data=a, dtype=np.float64) for a in (x, W, b) if a is not None]
    y = autograd.conv2d(*tensors[:2], *tensors[2:], **_kwargs(s))
    np.testing.assert_allclose(y.to_numpy(), expected, rtol=1e-10, atol=1e-12)

    params = [Tensor(data=a.astype(np.float32), stores_grad=True)
              for a in (x, W, b) if a is not None]
    y32 = autograd.conv2d(*params[:2], *params[2:], **_kwargs(s))
    assert y32.dtype == np.float32
    np.testing.assert_allclose(y32.to_numpy(), expected, rtol=1e-4, atol=1e-5)
    grads = autograd.gradients(y32, np.ones(y32.shape, np.float32))
    assert all(grads[p].dtype == np.float32 and grads[p].shape == p.shape for p in params)


@more_examples
@given(conv_settings())
def test_gradients_match_finite_differences(s):
    x, W, b = _arrays(s)
    inputs = [a for a in (x, W, b) if a is not None]
    autograd.gradcheck(lambda *t: autograd.conv2d(*t, **_kwargs(s)), inputs)


@more_examples
@given(conv_settings())
def test_batch_last_input_matches_direct_loops_and_gradcheck(s):
    """conv2d computes batch-last and returns that layout (operations/layout.py); it takes it
    as input too, with dy in either layout (gradcheck's dy is C order)."""
    x, W, b = _arrays(s)
    x = stored_batch_last(x)
    ph, pw = s["padding"]
    expected = reference_conv2d(x, W, b, s["stride"], (ph, ph), (pw, pw), s["dilation"],
                                s["groups"])
    y = autograd.conv2d(*[Tensor(data=a) for a in (x, W, b) if a is not None], **_kwargs(s))
    np.testing.assert_allclose(y.to_numpy(), expected, rtol=1e-10, atol=1e-12)
    assert is_batch_last(y.data)
    inputs = [Tensor(data=a, stores_grad=True) for a in (x, W, b) if a is not None]
    assert is_batch_last(inputs[0].data)
    autograd.gradcheck(lambda *t: autograd.conv2d(*t, **_kwargs(s)), inputs)
    # a batch-last dy: conv2d's own output gradient, through a second convolution
    second = Tensor(data=np.random.default_rng(s["seed"]).uniform(-1, 1, (2,) + y.shape[1:2]
                                                                   + (1, 1)), stores_grad=True)
    autograd.gradcheck(lambda *t: autograd.conv2d(autograd.conv2d(*t[:-1], **_kwargs(s)), t[-1]),
                       inputs + [second])


def test_input_gradient_is_skipped_for_a_data_batch():
    x = Tensor(data=np.ones((1, 2, 4, 4)), requires_grad=False)
    W = Tensor(data=np.ones((3, 2, 3, 3)), stores_grad=True)
    y = autograd.conv2d(x, W, padding=1)
    assert y.creator.needs_input_grad == (False, True)
    assert y.creator.saved[0].saved[1] is None        # W is kept only to compute dx
    grads = autograd.gradients(autograd.sum(y))
    # dW[o, c, i, j] = number of output positions whose window offset (i, j) is inside x
    expected = np.outer([3, 4, 3], [3, 4, 3]).astype(np.float32)
    np.testing.assert_array_equal(grads[W].to_numpy(), np.broadcast_to(expected, (3, 2, 3, 3)))


def test_large_convolutions_with_a_retained_graph_match_image_by_image():
    # Column matrices and outputs this large come from reused host buffers (memory.py): two
    # stacked ops must keep their own, also over a second backward of a retained graph.
    rng = np.random.default_rng(5)
    x_data = rng.standard_normal((2, 16, 64, 64)).astype(np.float32)
    W1, W2 = (Tensor(data=rng.standard_normal((16, 16, 3, 3)).astype(np.float32) * 0.1,
                     stores_grad=True) for _ in range(2))

    def run(x_batch, retain_graph=False):
        x = Tensor(data=x_batch, stores_grad=True)
        y = autograd.conv2d(autograd.conv2d(x, W1, padding=1), W2, padding=1)
        grads = autograd.gradients(autograd.sum(y * y), retain_graph=retain_graph)
        return y.to_numpy(), [grads[t].to_numpy() for t in (x, W1, W2)]

    y, (dx, dW1, dW2) = run(x_data)
    images = [run(x_data[i:i + 1]) for i in range(2)]
    np.testing.assert_allclose(y, np.concatenate([y_i for y_i, _ in images]), rtol=1e-5,
                               atol=1e-5)
    np.testing.assert_allclose(dx, np.concatenate([g[0] for _, g in images]), rtol=1e-4,
                               atol=1e-4)
    for k, dW in ((1, dW1), (2, dW2)):
        np.testing.assert_allclose(dW, images[0][1][k] + images[1][1][k], rtol=1e-4, atol=1e-3)
    x = Tensor(data=x_data, stores_grad=True)
    loss = autograd.sum(autograd.conv2d(autograd.conv2d(x, W1, padding=1), W2, padding=1))
    first = [g.to_numpy() for _, g in autograd.backward(loss, retain_graph=True)]
    second = [g.to_numpy() for _, g in autograd.backward(loss)]
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("channels", [3, 48])     # bias column in the GEMM, Winograd's add
def test_bias_is_added_to_every_channel(channels):
    rng = np.random.default_rng(channels)
    x = Tensor(data=rng.standard_normal((4, channels, 32, 32)).astype(np.float32))
    W = Tensor(data=rng.standard_normal((channels, channels, 3, 3)).astype(np.float32),
               stores_grad=True)
    b = Tensor(data=rng.standard_normal(channels).astype(np.float32))
    without = autograd.conv2d(x, W, padding=1)
    with_bias = autograd.conv2d(x, W, b, padding=1)
    assert with_bias.creator.saved[0].winograd == (channels == 48)
    np.testing.assert_allclose(with_bias.to_numpy(),
                               without.to_numpy() + b.to_numpy()[None, :, None, None],
                               rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("groups", [1, 2])
@pytest.mark.parametrize("weight_gradient", [True, False])   # db from dW's GEMM, or a sum
def test_bias_gradient_is_dy_summed_per_channel(weight_gradient, groups):
    rng = np.random.default_rng(7)
    x = Tensor(data=rng.standard_normal((3, 4, 6, 5)), requires_grad=False)
    W = Tensor(data=rng.standard_normal((6, 4 // groups, 3, 2)), requires_grad=weight_gradient,
               stores_grad=weight_gradient)
    b = Tensor(data=rng.standard_normal(6), stores_grad=True)
    y = autograd.conv2d(x, W, b, padding=1, stride=(2, 1), groups=groups)
    dy = rng.standard_normal(y.shape)
    grads = autograd.gradients(y, dy)
    np.testing.assert_allclose(grads[b].to_numpy(), dy.sum(axis=(0, 2, 3)), rtol=1e-12)
    assert (W in grads) == weight_gradient


def test_non_contiguous_input_and_numpy_int_arguments():
    rng = np.random.default_rng(3)
    source = rng.standard_normal((5, 4, 2, 6))
    x = source.transpose(2, 1, 3, 0)
    view = autograd.transpose(Tensor(data=source), (2, 1, 3, 0))      # (2, 4, 6, 5), strided
    assert not view.data.flags["C_CONTIGUOUS"]
    W = rng.standard_normal((4, 2, 2, 3))
    y = autograd.conv2d(view, Tensor(data=W), stride=np.int64(1),
                        groups=np.int64(2), padding=(np.int64(1), 0))
    expected = reference_conv2d(x, W, None, (1, 1), (1, 1), (0, 0), (1, 1), 2)
    np.testing.assert_allclose(y.to_numpy(), expected, rtol=1e-10)
    unpadded = autograd.conv2d(view, Tensor(data=W), groups=2)      # the view itself is read
    np.testing.assert_allclose(unpadded.to_numpy(),
                               reference_conv2d(x, W, None, (1, 1), (0, 0), (0, 0), (1, 1), 2),
                               rtol=1e-10)


@pytest.mark.parametrize("size,stride", [(7, 1), (8, 1), (7, 2), (8, 2), (9, 3)])
def test_same_padding_keeps_ceil_of_size_over_stride(size, stride):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 2, size, size))
    W = rng.standard_normal((2, 2, 4, 3))
    for mode, lower in (("SAME_UPPER", False), ("SAME_LOWER", True)):
        y = autograd.conv2d(Tensor(data=x), Tensor(data=W), stride=stride, pad_mode=mode)
        out = -(-size // stride)
        assert y.shape == (1, 2, out, out)
        pads = []
        for k in (4, 3):
            total = max((out - 1) * stride + k - size, 0)
            small, large = total // 2, total - total // 2
            pads.append((large, small) if lower else (small, large))
        expected = reference_conv2d(x, W, None, (stride, stride), pads[0], pads[1], (1, 1), 1)
        np.testing.assert_allclose(y.to_numpy(), expected, rtol=1e-5, atol=1e-5)
    same = autograd.conv2d(Tensor(data=x), Tensor(data=W), stride=stride, padding="same")
    upper = autograd.conv2d(Tensor(data=x), Tensor(data=W), stride=stride, pad_mode="SAME_UPPER")
    np.testing.assert_array_equal(same.to_numpy(), upper.to_numpy())
    valid = autograd.conv2d(Tensor(data=x), Tensor(data=W), stride=stride, padding=3,
                            pad_mode="VALID")
    autograd.gradcheck(lambda a, b: autograd.conv2d(a, b, stride=stride, pad_mode="SAME_LOWER"),
                       [x[:, :, :5, :5], W])
    assert valid.shape == (1, 2, (size - 4) // stride + 1, (size - 3) // stride + 1)


@pytest.mark.parametrize("call,message", [
    (lambda: autograd.conv2d(Tensor(shape=(8, 4, 5, 5)), Tensor(shape=(2, 3, 3, 3))),
     r"conv2d: expected x of shape \(N, 3, H, W\), got \(8, 4, 5, 5\)"),
    (lambda: autograd.conv2d(Tensor(shape=(1, 3, 2, 2)), Tensor(shape=(2, 3, 3, 3))),
     r"conv2d: kernel \(3, 3\).*spans 3 pixels, more than the padded input height 2"),
    (lambda: autograd.conv2d(Tensor(shape=(1, 4, 5, 5)), Tensor(shape=(3, 2, 3, 3)), groups=2),
     r"conv2d: groups=2 must divide out_channels=3"),
    (lambda: autograd.conv2d(Tensor(shape=(1, 4, 5, 5)), Tensor(shape=(4, 2, 3, 3)), groups=0),
     r"conv2d: groups must be a positive int, got 0"),
    (lambda: autograd.conv2d(Tensor(shape=(1, 3, 5, 5)), Tensor(shape=(2, 3, 3))),
     r"conv2d: expected W of shape \(out_channels, in_channels / groups, kh, kw\), got"),
    (lambda: autograd.conv2d(Tensor(shape=(1, 3, 5, 5)), Tensor(shape=(2, 3, 3, 3)),
                             Tensor(shape=(3,))),
     r"conv2d: expected b of shape \(2,\), got \(3,\)"),
    (lambda: autograd.conv2d(Tensor(shape=(1, 3, 5, 5)), Tensor(shape=(2, 3, 3, 3)),
                             padding="full"),
     r"conv2d: padding must be an int, a pair, 'same' or 'valid', got 'full'"),
    (lambda: autograd.conv2d(Tensor(shape=(1, 3, 5, 5)), Tensor(shape=(2, 3, 3, 3)),
                             pad_mode="SAME"),
     r"conv2d: pad_mode must be one of"),
    (lambda: autograd.conv2d(Tensor(shape=(1, 3, 5, 5)), Tensor(shape=(2, 3, 3, 3)), stride=0),
     r"conv2d: stride must be positive, got 0"),
])
def test_bad_arguments_are_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()
