"""Tests for autograd/layers/singa.py: Gemm against its formula (lazy sizing, every transpose,
gradcheck through W and b), SeparableConv2d against depthwise-then-pointwise direct-loop
convolutions, Pooling2d against a direct-loop reference (even and SINGA's uneven pads), and
SoftMax as Softmax."""
import re

import numpy as np
import pytest
from hypothesis import given, strategies as st

import autograd
from autograd import Gemm, Pooling2d, SeparableConv2d, SoftMax, Softmax, Tensor
from tests.layers.test_conv import expected_pads
from tests.operations.test_conv import reference_conv2d


# ---------------------------------------------------------------- Gemm

@pytest.mark.parametrize("transA", [False, True])
@pytest.mark.parametrize("transB", [False, True])
def test_gemm_is_alpha_opx_at_opw_plus_beta_b_with_lazy_w(transA, transB):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 5) if transA else (5, 4)).astype(np.float32)
    layer = Gemm(3, alpha=0.5, beta=2.0, transA=transA, transB=transB)
    assert layer.W is None and layer.parameters() == []
    y = layer(Tensor(data=x))
    assert layer.W.shape == ((3, 4) if transB else (4, 3)) and layer.b.shape == (1, 3)
    assert layer.in_features == 4 and not np.any(layer.b.to_numpy())
    layer.b.data[...] = rng.standard_normal((1, 3))
    y = layer(Tensor(data=x))
    W, b = layer.W.to_numpy(), layer.b.to_numpy()
    expected = 0.5 * (x.T if transA else x) @ (W.T if transB else W) + 2.0 * b
    np.testing.assert_allclose(y.to_numpy(), expected, rtol=1e-5, atol=1e-6)
    assert y.shape == layer.output_shape(x.shape) == (5, 3) and y.dtype == np.float32


def test_gemm_defaults_follow_singa():
    layer = Gemm(6)
    layer(Tensor(shape=(2, 10)))
    assert (layer.alpha, layer.beta, layer.transA, layer.transB) == (1.0, 1.0, False, True)
    assert [(n, p.shape) for n, p in layer.named_parameters()] == [("W", (6, 10)),
                                                                  ("b", (1, 6))]
    # Glorot: variance 2 / (fan_in + fan_out), as SINGA's Gaussian.
    big = Gemm(300)
    big(Tensor(shape=(1, 500)))
    assert abs(big.W.to_numpy().var() / (2 / 800) - 1) < 0.05


def test_gemm_gradients_pass_gradcheck():
    rng = np.random.default_rng(1)
    layer = Gemm(3, alpha=1.5, beta=-0.5, transA=True)
    layer(Tensor(shape=(4, 2), dtype=np.float64))

    def through_layer(W, b, x):
        layer.W, layer.b = W, b
        return layer(x)

    assert autograd.gradcheck(through_layer, [rng.standard_normal((3, 4)),
                                              rng.standard_normal((1, 3)),
                                              rng.standard_normal((4, 2))])


def test_gemm_without_bias_and_with_a_bias_shape():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 4))
    layer = Gemm(3, bias=False, transB=False)
    y = layer(Tensor(data=x))
    assert layer.b is None and [n for n, _ in layer.named_parameters()] == ["W"]
    np.testing.assert_allclose(y.to_numpy(), x @ layer.W.to_numpy())
    shaped = Gemm(3, bias_shape=(3,))
    shaped(Tensor(data=x))
    assert shaped.b.shape == (3,)
    assert Gemm(3).count_parameters((2, 4)) == 3 * 4 + 3


def test_lazy_gemm_loads_a_state_dict_before_any_call():
    source = Gemm(3)
    source(Tensor(shape=(2, 5)))
    target = Gemm(3)
    target.load_state_dict(source.state_dict())
    np.testing.assert_array_equal(target.W.to_numpy(), source.W.to_numpy())
    assert target.in_features == 5


def test_gemm_input_checks_name_the_layer():
    layer = Gemm(3)
    with pytest.raises(ValueError, match=r"Gemm\(\?->3, transA=False, transB=True\): expected "
                                         r"input \(M, in_features\), got \(2, 3, 4\)"):
        layer(Tensor(shape=(2, 3, 4)))
    layer(Tensor(shape=(2, 4)))
    with pytest.raises(ValueError, match=r"expected input \(M, 4\), got \(2, 5\)"):
        layer(Tensor(shape=(2, 5)))
    with pytest.raises(ValueError, match=r"expected input \(M, in_features\), got \(\)"):
        Gemm(3).output_shape(())
    with pytest.raises(ValueError, match=r"Gemm\(\?->3, transA=False, transB=True\): b of shape "
                                         r"\(2, 3\) does not broadcast to the output \(5, 3\) "
                                         r"of input \(5, 4\)"):
        Gemm(3, bias_shape=(2, 3))(Tensor(shape=(5, 4)))
    with pytest.raises(ValueError, match=r"Gemm: nb_kernels must be a positive int, got 0"):
        Gemm(0)
    with pytest.raises(ValueError, match=r"Gemm: bias_shape \(4,\) does not broadcast"):
        Gemm(3, bias_shape=(4,))


# ---------------------------------------------------------------- SeparableConv2d

@given(st.data())
def test_separable_conv2d_is_depthwise_then_pointwise_conv(data):
    channels, out_channels = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 4))
    kernel = data.draw(st.sampled_from([1, 2, 3, (1, 3)]), label="kernel")
    stride = data.draw(st.integers(1, 2), label="stride")
    padding = data.draw(st.sampled_from([0, 1, (1, 0), "same"]), label="padding")
    bias = data.draw(st.booleans(), label="bias")
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 31)))
    layer = SeparableConv2d(channels, out_channels, kernel, stride=stride, padding=padding,
                            bias=bias)
    for p in layer.parameters():
        p.data[...] = rng.standard_normal(p.shape)
    x = Tensor(data=rng.standard_normal((2, channels, 5, 6)).astype(np.float32))
    depthwise, pointwise = layer.depthwise_conv, layer.point_conv
    kernels = (kernel, kernel) if isinstance(kernel, int) else kernel
    pads = expected_pads(padding, "NOTSET", (5, 6), kernels, (stride, stride), (1, 1))
    biases = [None if c.b is None else c.b.to_numpy() for c in (depthwise, pointwise)]
    middle = reference_conv2d(x.to_numpy().astype(np.float64), depthwise.W.to_numpy(), biases[0],
                              (stride, stride), pads[0], pads[1], (1, 1), channels)
    expected = reference_conv2d(middle, pointwise.W.to_numpy(), biases[1], (1, 1), (0, 0),
                                (0, 0), (1, 1), 1)
    y = layer(x)
    np.testing.assert_allclose(y.to_numpy(), expected, rtol=1e-4, atol=1e-4)
    assert y.shape == layer.output_shape(x.shape)
    assert layer.output_shape((None, channels, 5, 6)) == (None,) + y.shape[1:]


def test_separable_conv2d_parameters():
    layer = SeparableConv2d(4, 8, 3)
    assert [(n, p.shape) for n, p in layer.named_parameters()] == [
        ("depthwise_conv.W", (4, 1, 3, 3)), ("point_conv.W", (8, 4, 1, 1))]
    with_bias = SeparableConv2d(4, 8, (3, 2), bias=True)
    assert [(n, p.shape) for n, p in with_bias.named_parameters()] == [
        ("depthwise_conv.W", (4, 1, 3, 2)), ("depthwise_conv.b", (4,)),
        ("point_conv.W", (8, 4, 1, 1)), ("point_conv.b", (8,))]
    assert with_bias.count_parameters() == 4 * 6 + 4 + 8 * 4 + 8


def test_separable_conv2d_gradients_pass_gradcheck():
    rng = np.random.default_rng(4)
    layer = SeparableConv2d(2, 3, 3, padding=1, bias=True)

    def through_layer(depthwise_W, point_W, point_b, x):
        layer.depthwise_conv.W, layer.point_conv.W, layer.point_conv.b = \
            depthwise_W, point_W, point_b
        layer.depthwise_conv.b = Tensor(data=np.zeros(2), requires_grad=False)
        return layer(x)

    assert autograd.gradcheck(through_layer, [rng.standard_normal((2, 1, 3, 3)),
                                              rng.standard_normal((3, 2, 1, 1)),
                                              rng.standard_normal(3),
                                              rng.standard_normal((1, 2, 4, 4))])


def test_lazy_separable_conv2d_takes_channels_and_dtype_from_the_first_input():
    layer = SeparableConv2d(6, 3, padding=1)         # SINGA's (nb_kernels, kernel_size)
    assert layer.parameters() == [] and layer.output_shape((2, 4, 5, 5)) == (2, 6, 5, 5)
    assert layer.count_parameters((2, 4, 5, 5)) == 4 * 9 + 6 * 4
    y = layer(Tensor(shape=(2, 4, 5, 5), dtype=np.float64))
    assert y.shape == (2, 6, 5, 5) and layer.in_channels == 4
    assert [(p.shape, p.dtype) for p in layer.parameters()] == [((4, 1, 3, 3), np.float64),
                                                                ((6, 4, 1, 1), np.float64)]
    target = SeparableConv2d(6, 3, padding=1)
    target.load_state_dict(layer.state_dict())
    np.testing.assert_array_equal(target.point_conv.W.to_numpy(), layer.point_conv.W.to_numpy())


def test_separable_conv2d_input_checks_name_the_layer():
    layer = SeparableConv2d(3, 4, 3)
    with pytest.raises(ValueError, match=r"SeparableConv2d\(3->4, kernel_size=\(3, 3\)\): "
                                         r"expected input \(N, 3, H, W\), got \(2, 2, 5, 5\)"):
        layer(Tensor(shape=(2, 2, 5, 5)))
    with pytest.raises(ValueError, match=r"SeparableConv2d\(3->4, kernel_size=\(3, 3\)\): "
                                         r"expected input .* with H >= 3"):
        layer.output_shape((2, 3, 2, 5))
    with pytest.raises(ValueError, match="SeparableConv2d: kernel_size must be positive"):
        SeparableConv2d(3, 4, 0)


# ---------------------------------------------------------------- Pooling2d

def reference_pool2d(x, kernel, stride, pads, is_max, count_include_pad=True):
    """Direct loops over output pixels of x padded by pads ((top, bottom), (left, right))."""
    n, c, h, w = x.shape
    (top, bottom), (left, right) = pads
    padded = np.full((n, c, h + top + bottom, w + left + right), -np.inf if is_max else 0.0)
    padded[:, :, top:top + h, left:left + w] = x
    inside = np.zeros(padded.shape[2:])
    inside[top:top + h, left:left + w] = 1
    out_h = (padded.shape[2] - kernel[0]) // stride[0] + 1
    out_w = (padded.shape[3] - kernel[1]) // stride[1] + 1
    y = np.zeros((n, c, out_h, out_w))
    for i in range(out_h):
        for j in range(out_w):
            rows = slice(i * stride[0], i * stride[0] + kernel[0])
            cols = slice(j * stride[1], j * stride[1] + kernel[1])
            window = padded[:, :, rows, cols]
            if is_max:
                y[:, :, i, j] = window.max(axis=(2, 3))
            else:
                count = kernel[0] * kernel[1] if count_include_pad else inside[rows, cols].sum()
                y[:, :, i, j] = window.sum(axis=(2, 3)) / count
    return y


@pytest.mark.parametrize("is_max", [True, False])
def test_pooling2d_with_even_padding_matches_direct_loops(is_max):
    x = Tensor(data=np.random.default_rng(5).standard_normal((2, 3, 7, 6)))
    layer = Pooling2d(3, 2, padding=1, is_max=is_max)
    expected = reference_pool2d(x.to_numpy(), (3, 3), (2, 2), ((1, 1), (1, 1)), is_max)
    np.testing.assert_allclose(layer(x).to_numpy(), expected, rtol=1e-12, atol=1e-12)
    assert layer.output_shape(x.shape) == expected.shape


@given(st.data())
def test_pooling2d_pad_modes_and_uneven_padding_match_direct_loops(data):
    kernel = (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)))
    stride = (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)))
    mode = data.draw(st.sampled_from(["SAME_UPPER", "SAME_LOWER", "VALID", "NOTSET"]))
    padding = [data.draw(st.integers(0, kernel[a // 2] // 2)) for a in range(4)]
    is_max, include = data.draw(st.booleans()), data.draw(st.booleans())
    size = (data.draw(st.integers(3, 7)), data.draw(st.integers(3, 7)))
    x = np.random.default_rng(data.draw(st.integers(0, 2 ** 31))).standard_normal((2, 2) + size)
    if mode == "NOTSET":
        pads = ((padding[0], padding[1]), (padding[2], padding[3]))
    elif mode == "VALID":
        pads = ((0, 0), (0, 0))
    else:
        pads = []
        for axis in (0, 1):
            out = -(-size[axis] // stride[axis])
            total = max((out - 1) * stride[axis] + kernel[axis] - size[axis], 0)
            small, large = total // 2, total - total // 2
            pads.append((large, small) if mode == "SAME_LOWER" else (small, large))
    layer = Pooling2d(kernel, stride, padding, is_max=is_max, pad_mode=mode,
                      count_include_pad=include)
    y = layer(Tensor(data=x))
    expected = reference_pool2d(x, kernel, stride, pads, is_max, include)
    np.testing.assert_allclose(y.to_numpy(), expected, rtol=1e-12, atol=1e-12)
    assert y.shape == layer.output_shape(x.shape)
    if mode.startswith("SAME"):
        assert y.shape[2:] == (-(-size[0] // stride[0]), -(-size[1] // stride[1]))


def test_pooling2d_uneven_padding_gradients_pass_gradcheck():
    x = np.random.default_rng(6).standard_normal((1, 2, 5, 4))
    for is_max, include in [(True, True), (False, True), (False, False)]:
        layer = Pooling2d(2, 2, is_max=is_max, pad_mode="SAME_LOWER",
                          count_include_pad=include)
        assert autograd.gradcheck(lambda t: layer(t), [x])


@pytest.mark.parametrize("mode", ["SAME_UPPER", "SAME_LOWER"])
@pytest.mark.parametrize("is_max", [True, False])
def test_pooling2d_same_pad_mode_is_one_op_on_x(mode, is_max):
    x_values = np.random.default_rng(7).permutation(2 * 2 * 5 * 4).reshape(2, 2, 5, 4) / 8.0
    x = Tensor(data=x_values, stores_grad=True)
    y = Pooling2d(2, 2, is_max=is_max, pad_mode=mode)(x)
    assert type(y.creator).__name__ == ("MaxPool2d" if is_max else "AvgPool2d")
    assert y.creator.input_edges[0][2] is x          # recorded on x, not on a padded copy
    dy = np.random.default_rng(8).standard_normal(y.shape)
    # the loop's gradient of the padded input (pads as the direct-loop test computes), cropped
    pads = ((1, 0) if mode == "SAME_LOWER" else (0, 1), (0, 0))
    (top, bottom), _ = pads
    padded = np.pad(x_values, ((0, 0), (0, 0), (top, bottom), (0, 0)),
                    constant_values=-np.inf if is_max else 0.0)
    expected = np.zeros(padded.shape)
    for i in range(y.shape[2]):
        for j in range(y.shape[3]):
            window = padded[:, :, 2 * i:2 * i + 2, 2 * j:2 * j + 2]
            for a in range(2):
                for b in range(2):
                    if is_max:
                        r, c = np.unravel_index(np.argmax(window[a, b]), (2, 2))
                        expected[a, b, 2 * i + r, 2 * j + c] += dy[a, b, i, j]
                    else:
                        expected[a, b, 2 * i:2 * i + 2, 2 * j:2 * j + 2] += dy[a, b, i, j] / 4
    np.testing.assert_allclose(autograd.gradients(y, dy)[x].to_numpy(),
                               expected[:, :, top:top + 5], rtol=1e-12)


def test_pooling2d_checks_its_arguments_and_input():
    with pytest.raises(ValueError, match="Pooling2d: pad_mode must be one of"):
        Pooling2d(2, pad_mode="SAME")
    with pytest.raises(ValueError, match="Pooling2d: padding must be between 0 and half"):
        Pooling2d(3, padding=(0, 2, 0, 0))
    with pytest.raises(ValueError, match=r"Pooling2d\(kernel_size=\(2, 2\), stride=\(2, 2\)\): "
                                         r"expected input \(N, C, H, W\), got \(2, 8, 8\)"):
        Pooling2d(2)(Tensor(shape=(2, 8, 8)))
    with pytest.raises(ValueError, match=r"with H >= 3, got \(1, 1, 2, 5\)"):
        Pooling2d(3, is_max=False).output_shape((1, 1, 2, 5))


# ---------------------------------------------------------------- SoftMax

def test_softmax_is_singas_spelling_of_softmax():
    x = np.random.default_rng(7).standard_normal((3, 4))
    layer = SoftMax()
    assert isinstance(layer, Softmax) and layer.axis == 1
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(layer(Tensor(data=x)).to_numpy(), e / e.sum(axis=1, keepdims=True))
    assert SoftMax(axis=0)(Tensor(data=x)).to_numpy().sum(axis=0) == pytest.approx(np.ones(4))


def test_singa_layer_messages_reprs_and_defaults_exactly():
    import re
    with pytest.raises(ValueError, match=r"^Gemm: init must be one of \['gaussian', 'he', "
                                         r"'none', 'uniform', 'xavier'\] or a callable, got "
                                         r"'bad'$"):
        Gemm(3, init="bad")
    with pytest.raises(ValueError, match=r"^SeparableConv2d: out_channels must be a positive "
                                         r"int, got 0$"):
        SeparableConv2d(3, 0, 3)
    with pytest.raises(ValueError, match=r"^SeparableConv2d: stride must be positive, got 0$"):
        SeparableConv2d(3, 4, 3, stride=0)
    message = ("SeparableConv2d(3->4, kernel_size=(3, 3)): expected input (N, 3, H, W), got "
               "(2, 5, 6, 6)")
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        SeparableConv2d(3, 4, 3).output_shape((2, 5, 6, 6))
    assert SeparableConv2d(3, 4, 3, stride=2, padding=1).describe() == (
        "SeparableConv2d(3->4, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1))")
    assert repr(Pooling2d(3, 2, is_max=False)) == (
        "Pooling2d(kernel_size=(3, 3), stride=(2, 2), is_max=False)")
    assert Pooling2d(3).pad_mode == "NOTSET"


def test_gemm_counts_a_bias_only_when_it_has_one():
    assert Gemm(3, bias=False).count_parameters((5, 4)) == 4 * 3
    assert Gemm(3).count_parameters((5, 4)) == 4 * 3 + 3


def test_gemm_takes_a_bias_of_one_row_per_output_row():
    rng = np.random.default_rng(3)
    layer = Gemm(3, bias_shape=(4, 3))                # one bias row per row of a 4-row input
    x = rng.standard_normal((4, 2)).astype(np.float32)
    layer(Tensor(data=x))                            # builds W and b
    layer.b.data[...] = rng.standard_normal((4, 3))
    W = layer.W.to_numpy()
    expected = x @ (W.T if layer.transB else W) + layer.b.to_numpy()
    np.testing.assert_allclose(layer(Tensor(data=x)).to_numpy(), expected, rtol=1e-5, atol=1e-6)


def test_a_lazy_separable_conv2d_names_the_channels_c_in_its_message():
    message = ("SeparableConv2d(?->4, kernel_size=(3, 3)): expected input (N, C, H, W), got "
               "(2, 3)")
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        SeparableConv2d(4, 3).output_shape((2, 3))          # SINGA's lazy (out, kernel) form
