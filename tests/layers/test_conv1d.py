"""Tests for autograd/layers/conv1d.py: Conv1d, MaxPool1d and AvgPool1d against direct-loop
NumPy references (tests/operations' definitions) and a NumPy formula, gradcheck through the
parameters, lazy sizing, shape inference and the input checks."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import autograd
from autograd import AvgPool1d, Conv1d, MaxPool1d, Tensor
from tests.layers.test_conv import expected_pads
from tests.operations.test_conv1d import reference_conv1d, reference_pool1d


def _sequences(rng, *shape, dtype=np.float32):
    return Tensor(data=rng.standard_normal(shape).astype(dtype), requires_grad=False)


@given(st.data())
def test_conv1d_layer_matches_direct_loops_and_its_shape_inference(data):
    groups = data.draw(st.sampled_from([1, 2]), label="groups")
    in_channels = groups * data.draw(st.integers(1, 2), label="per group in")
    out_channels = groups * data.draw(st.integers(1, 2), label="per group out")
    kernel, stride = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 2))
    dilation = data.draw(st.integers(1, 2))
    padding = data.draw(st.sampled_from([0, 1, "same", "valid"]), label="padding")
    pad_mode = data.draw(st.sampled_from(["NOTSET", "NOTSET", "SAME_UPPER", "SAME_LOWER",
                                          "VALID"]), label="pad_mode")
    length = data.draw(st.integers(5, 8), label="length")
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 31)))
    layer = Conv1d(in_channels, out_channels, kernel, stride=stride, padding=padding,
                   dilation=dilation, groups=groups, pad_mode=pad_mode)
    layer.b.data[...] = rng.standard_normal(out_channels)
    x = _sequences(rng, 2, in_channels, length)
    y = layer(x)
    (pads,) = expected_pads(padding, pad_mode, (length,), (kernel,), (stride,), (dilation,))
    expected = reference_conv1d(x.to_numpy().astype(np.float64), layer.W.to_numpy(),
                                layer.b.to_numpy(), stride, pads, dilation, groups)
    np.testing.assert_allclose(y.to_numpy(), expected, rtol=1e-5, atol=1e-5)
    assert layer.output_shape(x.shape) == y.shape
    assert layer.output_shape((None, in_channels, length)) == (None,) + y.shape[1:]


def test_conv1d_is_the_sum_of_shifted_products():
    rng = np.random.default_rng(0)
    layer = Conv1d(2, 3, 2)
    layer.b.data[...] = [1.0, 2.0, 3.0]
    x = rng.standard_normal((1, 2, 5)).astype(np.float32)
    W = layer.W.to_numpy()
    # y[o, l] = sum over c, j of W[o, c, j] x[c, l + j] + b[o]
    expected = sum(np.einsum("oc,cl->ol", W[:, :, j], x[0, :, j:j + 4]) for j in range(2))
    np.testing.assert_allclose(layer(Tensor(data=x)).to_numpy()[0],
                               expected + [[1.0], [2.0], [3.0]], rtol=1e-5, atol=1e-6)


def test_conv1d_parameters_follow_the_layout():
    layer = Conv1d(4, 6, 3, groups=2)
    assert [(n, p.shape) for n, p in layer.named_parameters()] == [("W", (6, 2, 3)),
                                                                  ("b", (6,))]
    assert Conv1d(4, 6, 3, group=2).W.shape == (6, 2, 3)                     # SINGA's spelling
    assert Conv1d(1, 2, 3, bias=False).b is None
    assert layer.count_parameters() == 6 * 2 * 3 + 6


def test_conv1d_gradients_pass_gradcheck():
    rng = np.random.default_rng(1)
    layer = Conv1d(2, 3, 3, stride=2, padding=1)

    def through_layer(W, b, x):
        layer.W, layer.b = W, b
        return layer(x)

    assert autograd.gradcheck(through_layer, [rng.standard_normal((3, 2, 3)),
                                              rng.standard_normal(3),
                                              rng.standard_normal((2, 2, 6))])


def test_lazy_conv1d_takes_its_channels_dtype_from_the_first_input():
    layer = Conv1d(8, 3, padding="same")                 # Conv1d(out_channels, kernel_size)
    assert layer.W is None and layer.output_shape((2, 5, 9)) == (2, 8, 9)
    assert layer.count_parameters((2, 5, 9)) == 8 * 5 * 3 + 8
    y = layer(_sequences(np.random.default_rng(0), 2, 5, 9, dtype=np.float64))
    assert y.shape == (2, 8, 9) and layer.W.shape == (8, 5, 3) and layer.W.dtype == np.float64


def test_lazy_conv1d_loads_a_state_dict_before_any_call():
    source = Conv1d(3, 4, 2)
    target = Conv1d(4, 2)
    target.load_state_dict(source.state_dict())
    np.testing.assert_array_equal(target.W.to_numpy(), source.W.to_numpy())
    assert target.in_channels == 3


def test_conv1d_input_checks_name_the_layer_and_the_shape():
    layer = Conv1d(2, 4, 3)
    with pytest.raises(ValueError) as info:
        layer(Tensor(shape=(4, 3, 10)))
    assert str(info.value) == ("Conv1d(2->4, kernel_size=3): expected input (N, 2, L), "
                               "got (4, 3, 10)")
    with pytest.raises(ValueError, match=r"expected input \(N, 2, L\) with L >= 3 "
                                         r"\(padding \(0, 0\)\), got \(4, 2, 2\)"):
        layer.output_shape((4, 2, 2))
    with pytest.raises(ValueError, match=r"got \(4, 2, 5, 5\)"):
        layer(Tensor(shape=(4, 2, 5, 5)))


@pytest.mark.parametrize("arguments, message", [
    (dict(in_channels=3, out_channels=4, kernel_size=3, groups=2), "groups=2 must divide"),
    (dict(in_channels=3, out_channels=4, kernel_size=0), "kernel_size must be a positive int"),
    (dict(in_channels=3, out_channels=4, kernel_size=3, padding=-1), "padding must be a non"),
    (dict(in_channels=3, out_channels=4, kernel_size=3, padding="full"), "padding must be"),
    (dict(in_channels=3, out_channels=4, kernel_size=3, pad_mode="SAME"), "pad_mode must be"),
])
def test_conv1d_rejects_bad_arguments(arguments, message):
    with pytest.raises(ValueError, match="Conv1d: " + message):
        Conv1d(**arguments)


@given(st.data())
def test_pooling_layers_match_direct_loops_and_shape_inference(data):
    kernel = data.draw(st.integers(1, 3), label="kernel")
    stride = data.draw(st.sampled_from([None, 1, 2]), label="stride")
    padding = data.draw(st.integers(0, kernel // 2), label="padding")
    ceil_mode = data.draw(st.booleans(), label="ceil_mode")
    include = data.draw(st.booleans(), label="count_include_pad")
    length = data.draw(st.integers(kernel, 8), label="length")
    x = _sequences(np.random.default_rng(data.draw(st.integers(0, 2 ** 31))), 2, 3, length)
    for layer, is_max in [(MaxPool1d(kernel, stride, padding, ceil_mode), True),
                          (AvgPool1d(kernel, stride, padding, ceil_mode, include), False)]:
        y = layer(x)
        expected = reference_pool1d(x.to_numpy().astype(np.float64), kernel, stride or kernel,
                                    padding, ceil_mode, is_max, include)
        np.testing.assert_allclose(y.to_numpy(), expected, rtol=1e-5, atol=1e-6)
        assert layer.output_shape(x.shape) == y.shape
        # SINGA's layout (N, C, 1, L) gives the same numbers, in that layout.
        y4 = layer(autograd.reshape(x, (2, 3, 1, length)))
        assert y4.shape == layer.output_shape((2, 3, 1, length)) == (2, 3, 1, y.shape[2])
        np.testing.assert_array_equal(y4.to_numpy()[:, :, 0], y.to_numpy())


def test_pooling_layers_are_window_max_and_mean():
    x = np.arange(12, dtype=np.float32).reshape(1, 2, 6) ** 2 % 7
    windows = x.reshape(1, 2, 3, 2)
    np.testing.assert_array_equal(MaxPool1d(2)(Tensor(data=x)).to_numpy(), windows.max(axis=3))
    np.testing.assert_allclose(AvgPool1d(2)(Tensor(data=x)).to_numpy(), windows.mean(axis=3))


def test_pooling_gradients_pass_gradcheck():
    x = np.random.default_rng(3).standard_normal((2, 2, 7))
    assert autograd.gradcheck(lambda t: MaxPool1d(3, 2, padding=1)(t), [x])
    assert autograd.gradcheck(lambda t: AvgPool1d(3, 2, padding=1,
                                                  count_include_pad=False)(t), [x])


def test_pooling_input_checks():
    with pytest.raises(ValueError, match=r"MaxPool1d\(kernel_size=3, stride=3\): expected "
                                         r"input \(N, C, L\) or \(N, C, 1, L\), got "
                                         r"\(4, 3, 2, 8\)"):
        MaxPool1d(3)(Tensor(shape=(4, 3, 2, 8)))
    with pytest.raises(ValueError, match=r"with L >= 3, got \(1, 1, 2\)"):
        AvgPool1d(3).output_shape((1, 1, 2))
    with pytest.raises(ValueError, match="AvgPool1d: padding must be between 0 and half"):
        AvgPool1d(3, padding=2)
    with pytest.raises(ValueError, match="MaxPool1d: stride must be a positive int"):
        MaxPool1d(3, 0)
