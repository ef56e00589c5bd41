"""Tests for autograd/layers/conv.py: Conv2d and the pooling layers against direct-loop NumPy
references (tests/operations' definitions of a convolution and of pooling windows), shape
inference against the shapes they produce, and the input checks."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import autograd
from autograd import AvgPool2d, Conv2d, MaxPool2d, Tensor
from tests.operations.test_conv import reference_conv2d
from tests.operations.test_conv1d import reference_same_pads
from tests.operations.test_pooling import reference_pool


def expected_pads(padding, pad_mode, sizes, kernels, strides, dilations):
    """(before, after) per spatial axis, by ONNX's rules: pad_mode other than NOTSET wins,
    'same' is SAME_UPPER, 'valid' no padding, an int pads every side, a tuple one per axis."""
    mode = pad_mode
    if mode == "NOTSET" and isinstance(padding, str):
        mode = {"same": "SAME_UPPER", "valid": "VALID"}[padding]
    if mode == "VALID":
        return [(0, 0)] * len(sizes)
    if mode in ("SAME_UPPER", "SAME_LOWER"):
        return [reference_same_pads(n, k, s, d, mode == "SAME_LOWER")
                for n, k, s, d in zip(sizes, kernels, strides, dilations)]
    per_axis = (padding,) * len(sizes) if isinstance(padding, int) else padding
    return [(p, p) for p in per_axis]


def _images(rng, *shape, dtype=np.float32):
    return Tensor(data=rng.standard_normal(shape).astype(dtype), requires_grad=False)


@given(st.data())
def test_conv2d_layer_matches_direct_loops_and_its_shape_inference(data):
    groups = data.draw(st.sampled_from([1, 2]), label="groups")
    in_channels = groups * data.draw(st.integers(1, 2), label="per group in")
    out_channels = groups * data.draw(st.integers(1, 2), label="per group out")
    kernel = (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)))
    stride = (data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2)))
    dilation = (data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2)))
    padding = data.draw(st.sampled_from([0, 1, (1, 0), "same", "valid"]), label="padding")
    pad_mode = data.draw(st.sampled_from(["NOTSET", "NOTSET", "SAME_UPPER", "SAME_LOWER",
                                          "VALID"]), label="pad_mode")
    height, width = data.draw(st.integers(5, 7)), data.draw(st.integers(5, 7))
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 31)))
    layer = Conv2d(in_channels, out_channels, kernel, stride=stride, padding=padding,
                   dilation=dilation, groups=groups, pad_mode=pad_mode)
    layer.b.data[...] = rng.standard_normal(out_channels)
    x = _images(rng, 2, in_channels, height, width)
    y = layer(x)
    pads = expected_pads(padding, pad_mode, (height, width), kernel, stride, dilation)
    expected = reference_conv2d(x.to_numpy().astype(np.float64), layer.W.to_numpy(),
                                layer.b.to_numpy(), stride, pads[0], pads[1], dilation, groups)
    np.testing.assert_allclose(y.to_numpy(), expected, rtol=1e-5, atol=1e-5)
    assert layer.output_shape(x.shape) == y.shape
    assert layer.output_shape((None, in_channels, height, width)) == (None,) + y.shape[1:]


@pytest.mark.parametrize("mode, before", [("SAME_UPPER", False), ("SAME_LOWER", True)])
def test_same_pad_modes_pad_the_odd_pixel_on_the_side_singa_says(mode, before):
    rng = np.random.default_rng(0)
    layer = Conv2d(1, 2, 2, stride=2, pad_mode=mode, bias=False)
    x = rng.standard_normal((1, 1, 5, 5)).astype(np.float32)
    # ceil(5 / 2) = 3 outputs need 1 pixel of padding: after for SAME_UPPER, before for LOWER.
    side = ((0, 0), (0, 0), (1, 0), (1, 0)) if before else ((0, 0), (0, 0), (0, 1), (0, 1))
    W = layer.W.to_numpy()
    padded = np.pad(x, side)
    expected = np.einsum("nchw,ochw->no", np.lib.stride_tricks.sliding_window_view(
        padded, (2, 2), axis=(2, 3))[:, :, ::2, ::2].transpose(0, 2, 3, 1, 4, 5).reshape(
        9, 1, 2, 2), W).reshape(3, 3, 2).transpose(2, 0, 1)[None]
    y = layer(Tensor(data=x))
    assert y.shape == layer.output_shape(x.shape) == (1, 2, 3, 3)
    np.testing.assert_allclose(y.to_numpy(), expected, rtol=1e-5, atol=1e-6)


def test_conv2d_parameters_follow_the_layout():
    layer = Conv2d(4, 6, (3, 2), groups=2)
    assert [(n, p.shape) for n, p in layer.named_parameters()] == [("W", (6, 2, 3, 2)),
                                                                  ("b", (6,))]
    assert Conv2d(4, 6, 3, group=2).W.shape == (6, 2, 3, 3)                  # SINGA's spelling
    assert not np.any(layer.b.to_numpy()) and Conv2d(1, 2, 3, bias=False).b is None
    assert layer.count_parameters() == 6 * 2 * 3 * 2 + 6


def test_conv2d_gradients_pass_gradcheck():
    rng = np.random.default_rng(1)
    layer = Conv2d(2, 2, 3, stride=2, padding=1)

    def through_layer(W, b, x):
        layer.W, layer.b = W, b
        return layer(x)

    assert autograd.gradcheck(through_layer, [rng.standard_normal((2, 2, 3, 3)),
                                              rng.standard_normal(2),
                                              rng.standard_normal((1, 2, 4, 4))])


def test_lazy_conv2d_takes_its_channels_from_the_first_input():
    layer = Conv2d(8, 3, padding=1)                    # SINGA's Conv2d(out_channels, kernel)
    assert layer.W is None and layer.output_shape((2, 5, 6, 6)) == (2, 8, 6, 6)
    assert layer.count_parameters((2, 5, 6, 6)) == 8 * 5 * 9 + 8
    y = layer(_images(np.random.default_rng(0), 2, 5, 6, 6))
    assert y.shape == (2, 8, 6, 6) and layer.W.shape == (8, 5, 3, 3) and layer.in_channels == 5


def test_conv2d_input_checks_name_the_layer_and_both_shapes():
    layer = Conv2d(1, 32, 3)
    with pytest.raises(ValueError) as info:
        layer(Tensor(shape=(4, 3, 28, 28)))
    assert str(info.value) == ("Conv2d(1->32, kernel_size=(3, 3)): expected input (N, 1, H, W), "
                               "got (4, 3, 28, 28)")
    with pytest.raises(ValueError, match=r"expected input \(N, 1, H, W\) with H >= 3 "
                                         r"\(padding \(0, 0\)\), got \(4, 1, 2, 5\)"):
        layer.output_shape((4, 1, 2, 5))
    with pytest.raises(ValueError, match=r"got \(1, 28, 28\)"):
        layer.output_shape((1, 28, 28))


@pytest.mark.parametrize("arguments, message", [
    (dict(in_channels=3, out_channels=4, kernel_size=3, groups=2), "groups=2 must divide"),
    (dict(in_channels=3, out_channels=4, kernel_size=0), "kernel_size must be positive"),
    (dict(in_channels=3, out_channels=4, kernel_size=3, padding="full"), "padding must be"),
    (dict(in_channels=3, out_channels=4, kernel_size=3, pad_mode="SAME"), "pad_mode must be"),
    (dict(in_channels=3, out_channels=4, kernel_size=3, init="glorot"), "init must be"),
])
def test_conv2d_rejects_bad_arguments(arguments, message):
    with pytest.raises(ValueError, match=message):
        Conv2d(**arguments)


@given(st.data())
def test_pooling_layers_match_direct_loops_and_shape_inference(data):
    kernel = data.draw(st.integers(1, 3), label="kernel")
    stride = data.draw(st.sampled_from([None, 1, 2]), label="stride")
    padding = data.draw(st.integers(0, kernel // 2), label="padding")
    ceil_mode = data.draw(st.booleans(), label="ceil_mode")
    include = data.draw(st.booleans(), label="count_include_pad")
    size = data.draw(st.integers(kernel, 6), label="size")
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 31)))
    x = _images(rng, 2, 3, size, size + 1)
    steps = (stride or kernel,) * 2                      # no stride: the kernel's size
    for layer, mode in [(MaxPool2d(kernel, stride, padding, ceil_mode), "max"),
                        (AvgPool2d(kernel, stride, padding, ceil_mode, include), "avg")]:
        y = layer(x)
        expected, _, _ = reference_pool(x.to_numpy().astype(np.float64), (kernel, kernel), steps,
                                        (padding, padding), ceil_mode, mode, include)
        np.testing.assert_allclose(y.to_numpy(), expected, rtol=1e-5, atol=1e-6)
        assert layer.output_shape(x.shape) == y.shape


@given(st.data())
def test_pooling_layers_take_singas_pad_mode(data):
    """MaxPool2d/AvgPool2d(kernel, stride, padding, pad_mode): SINGA's Pooling2d, with the
    pad_mode also accepted in SINGA's fourth position."""
    kernel = data.draw(st.integers(1, 3), label="kernel")
    stride = data.draw(st.integers(1, 3), label="stride")
    mode = data.draw(st.sampled_from(["SAME_UPPER", "SAME_LOWER", "VALID"]), label="mode")
    include = data.draw(st.booleans(), label="count_include_pad")
    size = data.draw(st.integers(kernel, 6), label="size")
    x = _images(np.random.default_rng(data.draw(st.integers(0, 2 ** 31))), 2, 3, size, size + 1)
    for ours, singas in [
            (MaxPool2d(kernel, stride, pad_mode=mode), autograd.Pooling2d(kernel, stride,
                                                                          pad_mode=mode)),
            (MaxPool2d(kernel, stride, 0, mode), autograd.Pooling2d(kernel, stride,
                                                                    pad_mode=mode)),
            (AvgPool2d(kernel, stride, pad_mode=mode, count_include_pad=include),
             autograd.Pooling2d(kernel, stride, is_max=False, pad_mode=mode,
                                count_include_pad=include))]:
        y = ours(x)
        np.testing.assert_array_equal(y.to_numpy(), singas(x).to_numpy())
        assert ours.output_shape(x.shape) == y.shape
        assert f"pad_mode={mode!r}" in repr(ours)
        if mode != "VALID":
            assert y.shape[2:] == (-(-size // stride), -(-(size + 1) // stride))


def test_pooling_of_the_seed_example_keeps_the_size():
    x = _images(np.random.default_rng(2), 2, 4, 7, 7)
    assert MaxPool2d(3, 1, padding=1)(x).shape == (2, 4, 7, 7)
    y = AvgPool2d(3, 1, padding=1)(x)
    # The centre pixel's average is the plain 3x3 mean.
    np.testing.assert_allclose(y.to_numpy()[:, :, 3, 3],
                               x.to_numpy()[:, :, 2:5, 2:5].mean(axis=(2, 3)), rtol=1e-5)
    pooled = autograd.GlobalAvgPool2d()(x)
    # against the float64 mean: a plane's float32 mean near 0 (values of about 1 cancelling)
    # is only good to float32 rounding of the values' size, NumPy's own float32 mean too
    np.testing.assert_allclose(pooled.to_numpy()[:, :, 0, 0],
                               x.to_numpy().astype(np.float64).mean(axis=(2, 3)),
                               rtol=1e-5, atol=1e-6)


def test_pooling_input_checks():
    with pytest.raises(ValueError, match=r"MaxPool2d\(kernel_size=\(3, 3\), stride=\(3, 3\)\): "
                                         r"expected input \(N, C, H, W\), got \(4, 28, 28\)"):
        MaxPool2d(3)(Tensor(shape=(4, 28, 28)))
    with pytest.raises(ValueError, match=r"with W >= 3, got \(1, 1, 4, 2\)"):
        AvgPool2d(3).output_shape((1, 1, 4, 2))
    with pytest.raises(ValueError, match="padding must be between 0 and half"):
        MaxPool2d(3, padding=2)
    with pytest.raises(ValueError, match="AvgPool2d: pad_mode must be one of"):
        AvgPool2d(3, pad_mode="SAME")


def test_conv_and_pooling_describe_themselves_exactly():
    assert Conv2d(4, 3).describe() == "Conv2d(?->4, kernel_size=(3, 3))"     # lazy in_channels
    assert Conv2d(2, 4, 3).describe() == "Conv2d(2->4, kernel_size=(3, 3))"
    assert MaxPool2d(3, ceil_mode=True).describe() == (
        "MaxPool2d(kernel_size=(3, 3), stride=(3, 3), ceil_mode=True)")
    assert MaxPool2d(3).describe() == "MaxPool2d(kernel_size=(3, 3), stride=(3, 3))"
    assert AvgPool2d(3).count_include_pad is True          # PyTorch's default


def test_a_pair_argument_of_the_wrong_length_is_named_exactly():
    with pytest.raises(TypeError, match=r"^Conv2d: stride must be an int or 2 ints, got "
                                        r"\(1, 2, 3\)$"):
        Conv2d(1, 2, 3, stride=(1, 2, 3))


def test_conv_and_pool_argument_messages_are_exact():
    import re
    for make, error, message in [
            (lambda: Conv2d(2, 4, 3, groups=0), ValueError,
             "Conv2d: groups must be a positive int, got 0"),
            (lambda: Conv2d(2, 4, 3, dilation=0), ValueError,
             "Conv2d: dilation must be positive, got 0"),
            (lambda: Conv2d(4, 3, groups=2).output_shape((1, 3, 5, 5)), ValueError,
             "Conv2d(?->4, kernel_size=(3, 3), groups=2): expected input (N, C, H, W) with C "
             "divisible by groups=2, got (1, 3, 5, 5)"),
            (lambda: MaxPool2d(3, padding=(1, 2, 3)), TypeError,
             "MaxPool2d: padding must be an int or 2 ints, got (1, 2, 3)")]:
        with pytest.raises(error, match=f"^{re.escape(message)}$"):
            make()
