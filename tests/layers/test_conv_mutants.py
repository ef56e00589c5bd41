"""Conv2d/Conv1d and the pooling layers of autograd/layers/conv.py: what the mutation run of
issue 22 (docs/testing.md) found unchecked. Their descriptions (the name every error message
gives) word for word, GlobalAvgPool2d's shape and message, the parameter count of a lazy layer
without a bias, and loading a state into a lazy or a built layer: the dtype it asks for, its
messages, and the parameters it keeps."""
import re

import numpy as np
import pytest

import autograd
from autograd import Conv1d, Conv2d, GlobalAvgPool2d, Tensor


@pytest.mark.parametrize("options, conv2d, conv1d", [
    (dict(stride=2), "stride=(2, 2)", "stride=2"),
    (dict(pad_mode="SAME_UPPER"), "pad_mode='SAME_UPPER'", "pad_mode='SAME_UPPER'"),
    (dict(pad_mode="SAME_UPPER", padding=1), "pad_mode='SAME_UPPER'", "pad_mode='SAME_UPPER'"),
    (dict(padding=1), "padding=(1, 1)", "padding=1"),
    (dict(padding="same"), "padding='same'", "padding='same'"),
    (dict(dilation=2), "dilation=(2, 2)", "dilation=2"),
    (dict(groups=2), "groups=2", "groups=2"),
    (dict(bias=False), "bias=False", "bias=False"),
    (dict(stride=2, padding=1, dilation=2, groups=2, bias=False),
     "stride=(2, 2), padding=(1, 1), dilation=(2, 2), groups=2, bias=False",
     "stride=2, padding=1, dilation=2, groups=2, bias=False"),
])
def test_conv_layers_describe_every_option_exactly(options, conv2d, conv1d):
    """Each option appended to the description (mutants: `text = ...` dropping what came
    before, `and` for `or` in the padding test, the bias text changed)."""
    assert Conv2d(2, 4, 3, **options).describe() == f"Conv2d(2->4, kernel_size=(3, 3), {conv2d})"
    assert Conv1d(2, 4, 3, **options).describe() == f"Conv1d(2->4, kernel_size=3, {conv1d})"


def test_a_pair_stride_of_ones_and_zero_padding_are_left_out_of_the_description():
    layer = Conv2d(2, 4, 3, stride=(1, 1), padding=(0, 0), dilation=(1, 1))
    assert layer.describe() == "Conv2d(2->4, kernel_size=(3, 3))"
    assert Conv2d(2, 4, 3, stride=(1, 2)).describe() == (
        "Conv2d(2->4, kernel_size=(3, 3), stride=(1, 2))")
    assert Conv2d(2, 4, 3, padding=(0, 1)).describe() == (
        "Conv2d(2->4, kernel_size=(3, 3), padding=(0, 1))")


def test_global_avg_pool_shape_and_message():
    layer = GlobalAvgPool2d()
    assert layer.output_shape((2, 3, 5, 7)) == (2, 3, 1, 1)
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 7))
    y = layer(Tensor(data=x)).to_numpy()
    np.testing.assert_allclose(y, x.mean(axis=(2, 3), keepdims=True), rtol=1e-12)
    with pytest.raises(ValueError, match=re.escape(
            "GlobalAvgPool2d(): expected input (N, C, H, W), got (2, 3, 5)") + "$"):
        layer.output_shape((2, 3, 5))


@pytest.mark.parametrize("make, shape, count", [
    (lambda: Conv2d(4, 3, bias=False), (1, 2, 5, 5), 4 * 2 * 9),
    (lambda: Conv2d(4, 3), (1, 2, 5, 5), 4 * 2 * 9 + 4),
    (lambda: Conv2d(4, 3, groups=2, bias=False), (1, 6, 5, 5), 4 * 3 * 9),
    (lambda: Conv1d(4, 3, bias=False), (1, 2, 7), 4 * 2 * 3),
])
def test_a_lazy_convolution_counts_a_bias_only_when_it_has_one(make, shape, count):
    layer = make()
    assert layer.count_parameters(shape) == count
    layer(Tensor(data=np.zeros(shape, np.float32)))         # built: the same count
    assert layer.count_parameters() == count


def test_a_built_convolution_counts_its_own_parameters_whatever_the_input_shape_says():
    """count_parameters(input_shape) uses the shape only while the layer is lazy (mutant: `or`
    for `and`, which computed from the shape, here with unknown channels)."""
    layer = Conv2d(2, 4, 3)
    assert layer.count_parameters((None, None, 8, 8)) == 4 * 2 * 9 + 4
    assert layer.count_parameters((1, 6, 8, 8)) == 4 * 2 * 9 + 4


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("make, shape", [(lambda: Conv2d(4, 3), (4, 2, 3, 3)),
                                         (lambda: Conv1d(4, 3), (4, 2, 3))])
def test_a_lazy_convolution_loads_a_state_in_its_dtype(make, shape, dtype):
    rng = np.random.default_rng(1)
    state = {"W": rng.standard_normal(shape).astype(dtype),
             "b": rng.standard_normal(4).astype(dtype)}
    layer = make()
    layer.load_state_dict(state)
    assert layer.W.dtype == dtype and layer.b.dtype == dtype and layer.in_channels == 2
    np.testing.assert_array_equal(layer.W.to_numpy(), state["W"])
    np.testing.assert_array_equal(layer.b.to_numpy(), state["b"])


def test_a_lazy_convolution_refuses_an_integer_or_misshapen_weight_by_name():
    """An integer W asks for float32 (mutants: any dtype taken, float64 asked); a W of the
    wrong rank is a mismatch, not an IndexError (mutant: the rank test dropped)."""
    layer = Conv2d(4, 3)
    with pytest.raises(ValueError, match=re.escape(
            "Conv2d.load_state_dict: W: expected dtype float32, got int64; "
            "b: expected dtype float32, got int64") + "$"):
        layer.load_state_dict({"W": np.zeros((4, 2, 3, 3), np.int64),
                               "b": np.zeros(4, np.int64)})
    with pytest.raises(ValueError, match=re.escape(
            "Conv2d.load_state_dict: W: expected shape (4, None, 3, 3), got (4,)") + "$"):
        layer.load_state_dict({"W": np.zeros(4, np.float32), "b": np.zeros(4, np.float32)})
    assert layer.W is None                                   # still lazy after both


def test_a_lazy_convolution_without_a_weight_in_the_state_stays_lazy():
    layer = Conv2d(4, 3)
    assert layer.load_state_dict({}, strict=False) == ([], [])
    assert layer.W is None and layer.in_channels is None


def test_loading_into_a_built_convolution_keeps_its_parameters_and_names_a_problem_once():
    """A built layer answers no lazy entries: loading copies into the same Tensors (an optimizer
    holding them keeps training them; mutant: `or` rebuilt them) and a mismatch is reported
    once (mutant: `and` announced W again as a lazy entry)."""
    layer = Conv2d(2, 4, 3)
    W, b = layer.W, layer.b
    rng = np.random.default_rng(2)
    state = {"W": rng.standard_normal((4, 2, 3, 3)).astype(np.float32),
             "b": rng.standard_normal(4).astype(np.float32)}
    layer.load_state_dict(state)
    assert layer.W is W and layer.b is b
    np.testing.assert_array_equal(W.to_numpy(), state["W"])
    with pytest.raises(ValueError, match=re.escape(
            "Conv2d.load_state_dict: W: expected shape (4, 2, 3, 3), got (5, 2, 3, 3)") + "$"):
        layer.load_state_dict({"W": np.zeros((5, 2, 3, 3), np.float32), "b": state["b"]})
    assert layer._lazy_parameters("", {"W": state["W"]}) == {}


def test_a_lazy_count_is_an_int():
    """count_parameters answers an int (mutant: `/ groups`, a float)."""
    count = Conv2d(4, 3, groups=2).count_parameters((1, 6, 5, 5))
    assert type(count) is int and count == 4 * 3 * 9 + 4


@pytest.mark.parametrize("make, text", [
    (lambda: autograd.AvgPool2d(3, padding=1, count_include_pad=False),
     "AvgPool2d(kernel_size=(3, 3), stride=(3, 3), padding=(1, 1), count_include_pad=False)"),
    (lambda: autograd.AvgPool2d(3, padding=1),
     "AvgPool2d(kernel_size=(3, 3), stride=(3, 3), padding=(1, 1))"),
    (lambda: autograd.MaxPool2d(3, 2, 1, "SAME_UPPER"),
     "MaxPool2d(kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), pad_mode='SAME_UPPER')"),
    (lambda: autograd.MaxPool1d(3, padding=1), "MaxPool1d(kernel_size=3, stride=3, padding=1)"),
    (lambda: autograd.AvgPool1d(3, 2, count_include_pad=False),
     "AvgPool1d(kernel_size=3, stride=2, count_include_pad=False)"),
])
def test_pooling_layers_describe_padding_and_count_include_pad_exactly(make, text):
    assert make().describe() == text


@pytest.mark.parametrize("pooling", ["max", "avg"])
def test_valid_pad_mode_keeps_ceil_mode(pooling):
    """With pad_mode='VALID' and ceil_mode=True a last partial window is kept, as the layer's
    output_shape says (mutant: ceil_mode=None passed to the op beside pad_mode)."""
    layer = (autograd.MaxPool2d if pooling == "max" else autograd.AvgPool2d)(
        2, 2, ceil_mode=True, pad_mode="VALID")
    x = np.random.default_rng(3).standard_normal((1, 2, 5, 5))
    y = layer(Tensor(data=x)).to_numpy()
    assert layer.output_shape(x.shape) == y.shape == (1, 2, 3, 3)
    reduce = np.max if pooling == "max" else np.mean
    expected = np.empty((1, 2, 3, 3))
    for i in range(3):
        for j in range(3):
            expected[..., i, j] = reduce(x[..., 2 * i:2 * i + 2, 2 * j:2 * j + 2], axis=(-2, -1))
    np.testing.assert_allclose(y, expected, rtol=1e-12)


P = "padding must be between 0 and half the kernel size (3, 3), got"


@pytest.mark.parametrize("make, message", [
    (lambda: Conv2d(3, 4, 3, groups=2), "Conv2d: groups=2 must divide in_channels=3"),
    (lambda: Conv2d(3, 4, 3, group=4), "Conv2d: groups=4 must divide in_channels=3"),
    (lambda: Conv2d(3, 3, 3, groups=2), "Conv2d: groups=2 must divide out_channels=3"),
    (lambda: Conv2d(0, 4, 3), "Conv2d: in_channels must be a positive int, got 0"),
    (lambda: Conv2d(3, 0, 3), "Conv2d: out_channels must be a positive int, got 0"),
    (lambda: Conv2d(3, 4, 0), "Conv2d: kernel_size must be positive, got 0"),
    (lambda: Conv2d(3, 4, 3, stride=0), "Conv2d: stride must be positive, got 0"),
    (lambda: Conv2d(3, 4, 3, padding=-1), "Conv2d: padding must be non-negative, got -1"),
    (lambda: Conv2d(3, 4, 3, padding="full"),
     "Conv2d: padding must be an int, a pair, 'same' or 'valid', got 'full'"),
    (lambda: Conv2d(3, 4, 3, pad_mode="same"), "Conv2d: pad_mode must be one of ('NOTSET', "
                                              "'SAME_UPPER', 'SAME_LOWER', 'VALID'), got 'same'"),
    (lambda: Conv2d(3, 4, 3, init="foo"), "Conv2d: init must be one of ['gaussian', 'he', "
                                          "'none', 'uniform', 'xavier'] or a callable, got 'foo'"),
    (lambda: Conv2d(3, 4, 3).output_shape((1, 3, 2, 5)), "Conv2d(3->4, kernel_size=(3, 3)): "
     "expected input (N, 3, H, W) with H >= 3 (padding (0, 0)), got (1, 3, 2, 5)"),
    (lambda: Conv2d(3, 4, 3, padding=1).output_shape((1, 3, 5, 0)),
     "Conv2d(3->4, kernel_size=(3, 3), padding=(1, 1)): expected input (N, 3, H, W) with "
     "W >= 1 (padding (1, 1)), got (1, 3, 5, 0)"),
    (lambda: Conv2d(3, 4, 3).output_shape((1, 3, 5)),
     "Conv2d(3->4, kernel_size=(3, 3)): expected input (N, 3, H, W), got (1, 3, 5)"),
    (lambda: Conv2d(4, 3).output_shape((1, 3, 5)),
     "Conv2d(?->4, kernel_size=(3, 3)): expected input (N, C, H, W), got (1, 3, 5)"),
    (lambda: Conv1d(3, 4, 3).output_shape((1, 3, 2)), "Conv1d(3->4, kernel_size=3): expected "
     "input (N, 3, L) with L >= 3 (padding (0, 0)), got (1, 3, 2)"),
    (lambda: autograd.MaxPool2d(0), "MaxPool2d: kernel_size must be positive, got 0"),
    (lambda: autograd.MaxPool2d(3, 0), "MaxPool2d: stride must be positive, got 0"),
    (lambda: autograd.MaxPool2d(3, padding=2), f"MaxPool2d: {P} 2"),
    (lambda: autograd.AvgPool2d(3, padding=(0, -1)), f"AvgPool2d: {P} (0, -1)"),
    (lambda: autograd.AvgPool2d(3).output_shape((1, 3, 2, 5)), "AvgPool2d(kernel_size=(3, 3), "
     "stride=(3, 3)): expected input (N, C, H, W) with H >= 3, got (1, 3, 2, 5)"),
    (lambda: autograd.MaxPool2d(3).output_shape((1, 3, 5, 2)), "MaxPool2d(kernel_size=(3, 3), "
     "stride=(3, 3)): expected input (N, C, H, W) with W >= 3, got (1, 3, 5, 2)"),
    (lambda: autograd.AvgPool2d(3).output_shape((1, 3, 5)), "AvgPool2d(kernel_size=(3, 3), "
     "stride=(3, 3)): expected input (N, C, H, W), got (1, 3, 5)"),
    (lambda: autograd.MaxPool1d(3).output_shape((1, 3, 2)),
     "MaxPool1d(kernel_size=3, stride=3): expected input (N, C, L) with L >= 3, got (1, 3, 2)"),
    (lambda: autograd.MaxPool1d(3).output_shape((1, 3, 2, 6)), "MaxPool1d(kernel_size=3, "
     "stride=3): expected input (N, C, L) or (N, C, 1, L), got (1, 3, 2, 6)"),
])
def test_conv_and_pooling_messages_word_for_word(make, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        make()


def test_unknown_sizes_stay_unknown_in_the_output_shape():
    assert Conv2d(3, 4, 3).output_shape((None, 3, None, 7)) == (None, 4, None, 5)
    assert Conv2d(4, 3).output_shape((2, None, 5, 5)) == (2, 4, 3, 3)
    assert autograd.MaxPool2d(2).output_shape((None, 3, None, 7)) == (None, 3, None, 3)


@pytest.mark.parametrize("make, fans", [
    (lambda init: Conv2d(6, 4, (3, 2), groups=2, init=init, wscale=0.5), (3 * 6, 4 * 6)),
    (lambda init: Conv1d(4, 6, 5, init=init, wscale=0.5), (4 * 5, 6 * 5)),
])
def test_convolution_weights_get_their_fans_and_wscale(make, fans):
    """fan_in = in / groups * kernel, fan_out = out * kernel, wscale passed on, b zeros."""
    seen = []

    def record(tensor, fan_in, fan_out, wscale):
        seen.append((tensor.shape, fan_in, fan_out, wscale))
        tensor.data[...] = 1.0

    layer = make(record)
    assert seen == [(layer.W.shape, fans[0], fans[1], 0.5)]
    assert (layer.W.to_numpy() == 1.0).all() and (layer.b.to_numpy() == 0.0).all()
    assert layer.W.dtype == layer.b.dtype == np.float32


def test_a_lazy_convolution_takes_a_float_dtype_from_its_first_input():
    """float64 input: float64 parameters; an integer input builds float32 ones (mutant: the
    integer dtype taken), which the op then refuses to mix with the integers."""
    x = np.arange(2 * 3 * 4 * 4).reshape(2, 3, 4, 4)
    layer = Conv2d(4, 3, padding=1)
    layer(Tensor(data=x.astype(np.float64)))
    assert layer.W.dtype == layer.b.dtype == np.float64
    layer = Conv2d(4, 3, padding=1)
    with pytest.raises(TypeError, match=r"^Conv2d: cannot compute on inputs \(int64"):
        layer(Tensor(data=x))
    assert layer.W.dtype == layer.b.dtype == np.float32


def test_pooling_stride_defaults_to_the_kernel_and_average_counts_padding_by_default():
    """AvgPool2d(3, padding=1) on 6x6 ones: the first window of each axis covers one padded
    row or column, so it holds 4 or 6 ones of 9 (count_include_pad True by default, as
    PyTorch); the stride is the kernel."""
    y = autograd.AvgPool2d(3, padding=1)(Tensor(data=np.ones((1, 1, 6, 6)))).to_numpy()
    assert y.shape == (1, 1, 2, 2)
    np.testing.assert_allclose(y[0, 0], [[4 / 9, 6 / 9], [6 / 9, 1.0]], rtol=1e-12)
    y = autograd.AvgPool2d(3, padding=1, count_include_pad=False)(
        Tensor(data=np.ones((1, 1, 6, 6)))).to_numpy()
    np.testing.assert_allclose(y, np.ones((1, 1, 2, 2)), rtol=1e-12)


@pytest.mark.parametrize("pooling", ["max", "avg"])
def test_ceil_mode_keeps_the_last_partial_window_in_the_shape_and_the_values(pooling):
    """ceil_mode reaches the layer's geometry (mutant: dropped there, so output_shape said 2
    where the op gives 3), in 2-D and 1-D."""
    x = np.random.default_rng(18).standard_normal((1, 2, 5, 5))
    reduce = np.max if pooling == "max" else np.mean
    layer2d = (autograd.MaxPool2d if pooling == "max" else autograd.AvgPool2d)(
        2, ceil_mode=True)
    y = layer2d(Tensor(data=x)).to_numpy()
    assert layer2d.output_shape(x.shape) == y.shape == (1, 2, 3, 3)
    expected = np.empty((1, 2, 3, 3))
    for i in range(3):
        for j in range(3):
            expected[..., i, j] = reduce(x[..., 2 * i:2 * i + 2, 2 * j:2 * j + 2], axis=(-2, -1))
    np.testing.assert_allclose(y, expected, rtol=1e-12)
    layer1d = (autograd.MaxPool1d if pooling == "max" else autograd.AvgPool1d)(2, ceil_mode=True)
    y = layer1d(Tensor(data=x[:, :, 0])).to_numpy()
    assert layer1d.output_shape(x[:, :, 0].shape) == y.shape == (1, 2, 3)
    expected = [[[reduce(x[0, c, 0, 2 * j:2 * j + 2]) for j in range(3)] for c in range(2)]]
    np.testing.assert_allclose(y, expected, rtol=1e-12)


def test_convolution_wscale_defaults_to_one():
    seen = []
    Conv2d(2, 4, 3, init=lambda tensor, fan_in, fan_out, wscale: seen.append(wscale))
    Conv1d(2, 4, 3, init=lambda tensor, fan_in, fan_out, wscale: seen.append(wscale))
    assert seen == [1.0, 1.0]
