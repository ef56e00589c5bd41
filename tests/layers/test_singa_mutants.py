"""Pooling2d's padding modes on a fixed grid (the hypothesis test in test_singa.py draws 12 of
them, so a dropped ``count_include_pad`` under a SAME mode survived the full mutation run of
layers/: docs/testing.md), float32 kept, against the direct loops of test_singa.py."""
import numpy as np
import pytest

import re

import autograd
from autograd import Tensor
from autograd.layers import Gemm, Pooling2d, SeparableConv2d
from tests.layers.test_singa import reference_pool2d


def same_pads(size, kernel, stride, lower):
    pads = []
    for axis in (0, 1):
        out = -(-size[axis] // stride[axis])
        total = max((out - 1) * stride[axis] + kernel[axis] - size[axis], 0)
        small, large = total // 2, total - total // 2
        pads.append((large, small) if lower else (small, large))
    return pads


@pytest.mark.parametrize("mode", ["SAME_UPPER", "SAME_LOWER", "NOTSET"])
@pytest.mark.parametrize("is_max", [True, False])
@pytest.mark.parametrize("include", [True, False])
def test_every_pad_mode_and_count_include_pad_matches_direct_loops(mode, is_max, include):
    x = np.random.default_rng(3).standard_normal((2, 2, 5, 6)).astype(np.float32)
    kernel, stride = (3, 2), (2, 2)
    if mode == "NOTSET":                          # uneven: top 1, bottom 0, left 0, right 1
        layer = Pooling2d(kernel, stride, [1, 0, 0, 1], is_max=is_max,
                          count_include_pad=include)
        pads = ((1, 0), (0, 1))
    else:
        layer = Pooling2d(kernel, stride, is_max=is_max, pad_mode=mode,
                          count_include_pad=include)
        pads = same_pads((5, 6), kernel, stride, mode == "SAME_LOWER")
    assert any(sum(p) for p in pads)              # the grid pads, so the count matters
    y = layer(Tensor(data=x))
    assert y.dtype == np.float32
    np.testing.assert_allclose(y.to_numpy(),
                               reference_pool2d(x.astype(np.float64), kernel, stride, pads,
                                                is_max, include), rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- lazy Gemm / SeparableConv2d
# count_parameters before the first call, and a state loaded into a lazy layer, against the
# same layer built by a forward (its real parameters): the full run of layers/ let wrong
# counts (transA, SeparableConv2d's biases) and wrong lazy shapes (transB, bias keys) through.

from autograd.layers import Gemm, SeparableConv2d        # noqa: E402


def built(layer, x):
    layer(Tensor(data=x))
    return layer


@pytest.mark.parametrize("make,shape", [
    (lambda: Gemm(3, transA=True), (4, 2)),
    (lambda: Gemm(3, transA=False, transB=False), (2, 4)),
    (lambda: SeparableConv2d(5, 3, bias=True), (1, 2, 6, 6)),      # SINGA's lazy form
    (lambda: SeparableConv2d(5, 3, bias=False), (1, 2, 6, 6)),
])
def test_count_parameters_of_a_lazy_layer_is_that_of_the_built_one(make, shape):
    counted = make().count_parameters(shape)
    layer = built(make(), np.ones(shape, np.float32))
    assert counted == sum(p.size for p in layer.get_params().values())


@pytest.mark.parametrize("make,shape", [
    (lambda: Gemm(3, transB=True), (2, 4)),
    (lambda: Gemm(3, transB=False), (2, 4)),
    (lambda: Gemm(3, transA=True, transB=True), (4, 2)),
    (lambda: SeparableConv2d(5, 3, bias=True), (1, 2, 6, 6)),
    (lambda: SeparableConv2d(5, 3, bias=False), (1, 2, 6, 6)),
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_lazy_layer_loads_the_state_of_a_built_one(make, shape, dtype):
    x = np.random.default_rng(8).standard_normal(shape).astype(dtype)
    source = built(make(), x)
    target = make()
    target.load_state_dict(source.state_dict())
    state, loaded = source.state_dict(), target.state_dict()
    assert sorted(state) == sorted(loaded)
    for key in state:
        assert loaded[key].dtype == dtype           # the state's own floating dtype
        np.testing.assert_array_equal(np.asarray(loaded[key]), np.asarray(state[key]))
    np.testing.assert_array_equal(target(Tensor(data=x)).to_numpy(),
                                  source(Tensor(data=x)).to_numpy())


# From the mutation run of issue 22's layersB session (the tests below, on Gemm and
# SeparableConv2d: descriptions, messages, lazy counting and loading).

@pytest.mark.parametrize("lazy", [False, True])
def test_a_separable_conv2d_too_small_input_is_named_as_given(lazy):
    """The message shows the input the layer got and its channels, not the one-channel probe
    that computes the spatial size (a bug the mutants of that probe's shape showed: the
    message said "got (2, 1, 2, 5)" for an input (2, 3, 2, 5))."""
    import re
    from autograd.layers import SeparableConv2d
    layer = SeparableConv2d(4, 3) if lazy else SeparableConv2d(3, 4, 3)
    channels, inputs = ("C", "?") if lazy else ("3", "3")
    for shape, letter in [((2, 3, 2, 5), "H"), ((2, 3, 5, 1), "W")]:
        message = (f"SeparableConv2d({inputs}->4, kernel_size=(3, 3)): expected input (N, "
                   f"{channels}, H, W) with {letter} >= 3 (padding (0, 0)), got {shape}")
        with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
            layer.output_shape(shape)


@pytest.mark.parametrize("make, text", [
    (lambda: Gemm(3), "Gemm(?->3, transA=False, transB=True)"),
    (lambda: Gemm(3, alpha=2.0), "Gemm(?->3, alpha=2.0, beta=1.0, transA=False, transB=True)"),
    (lambda: Gemm(3, beta=0.5, transA=True, bias=False),
     "Gemm(?->3, alpha=1.0, beta=0.5, transA=True, transB=True, bias=False)"),
    (lambda: SeparableConv2d(3, 4, 3, bias=True),
     "SeparableConv2d(3->4, kernel_size=(3, 3), bias=True)"),
    (lambda: Pooling2d(3, pad_mode="SAME_UPPER"),
     "Pooling2d(kernel_size=(3, 3), stride=(3, 3), pad_mode='SAME_UPPER')"),
    (lambda: Pooling2d(3, padding=(1, 0, 1, 1), is_max=False),
     "Pooling2d(kernel_size=(3, 3), stride=(3, 3), padding=((1, 0), (1, 1)), is_max=False)"),
])
def test_singa_layers_describe_themselves_exactly(make, text):
    assert make().describe() == text


def test_a_built_gemm_describes_its_features():
    layer = Gemm(3, bias=False)
    layer(Tensor(data=np.ones((2, 4), np.float32)))
    assert layer.describe() == "Gemm(4->3, transA=False, transB=True, bias=False)"


def test_gemm_with_transa_names_its_input_layout_exactly():
    with pytest.raises(ValueError, match=re.escape(
            "Gemm(?->3, transA=True, transB=True): expected input (in_features, M), got (2,)")
            + "$"):
        Gemm(3, transA=True).output_shape((2,))


def test_gemm_checks_the_bias_only_when_it_has_one_and_knows_the_rows():
    """A bias-free Gemm ignores bias_shape, and unknown rows skip the broadcast test (mutant:
    `or` for `and`)."""
    assert Gemm(3, bias=False, bias_shape=(2, 3)).output_shape((4, 2)) == (4, 3)
    assert Gemm(3).output_shape((None, 2)) == (None, 3)
    with pytest.raises(ValueError, match=re.escape(
            "Gemm(?->3, transA=False, transB=True): b of shape (2, 3) does not broadcast to "
            "the output (4, 3) of input (4, 2)") + "$"):
        Gemm(3, bias_shape=(2, 3)).output_shape((4, 2))


def test_a_lazy_gemm_on_integer_input_builds_float32_parameters():
    x = np.arange(8).reshape(2, 4)
    layer = Gemm(3)
    y = layer(Tensor(data=x))
    assert layer.W.dtype == np.float32 and layer.b.dtype == np.float32
    # float32 sums of terms up to ~7 (an output near 0 has no relative precision to compare)
    np.testing.assert_allclose(y.to_numpy(), x @ layer.W.to_numpy().T + layer.b.to_numpy(),
                               rtol=1e-6, atol=1e-5)


def test_gemm_draws_its_weights_with_its_wscale():
    """Glorot uniform limit wscale * sqrt(6 / (in + out)) (mutant: wscale not passed on)."""
    autograd.manual_seed(3)
    layer = Gemm(50, wscale=0.5)
    layer(Tensor(data=np.ones((1, 50), np.float32)))
    limit = 0.5 * np.sqrt(6 / 100)
    W = np.abs(layer.W.to_numpy())
    assert W.max() <= limit * (1 + 1e-6) and W.max() > 0.95 * limit


@pytest.mark.parametrize("make, state, message", [
    (lambda: Gemm(3), {"W": np.zeros((3, 2), np.int64), "b": np.zeros((1, 3), np.int64)},
     "Gemm.load_state_dict: W: expected dtype float32, got int64; b: expected dtype float32, "
     "got int64"),
    (lambda: Gemm(3), {"W": np.zeros(3, np.float32), "b": np.zeros((1, 3), np.float32)},
     "Gemm.load_state_dict: W: expected shape (3, None), got (3,)"),
    (lambda: SeparableConv2d(4, 3), {"depthwise_conv.W": np.zeros((2, 1, 3, 3), np.int64),
                                     "point_conv.W": np.zeros((4, 2, 1, 1), np.int64)},
     "SeparableConv2d.load_state_dict: depthwise_conv.W: expected dtype float32, got int64; "
     "point_conv.W: expected dtype float32, got int64"),
    (lambda: SeparableConv2d(4, 3), {"depthwise_conv.W": np.zeros(2, np.float32),
                                     "point_conv.W": np.zeros((4, 2, 1, 1), np.float32)},
     "SeparableConv2d.load_state_dict: depthwise_conv.W: expected shape (None, 1, 3, 3), got "
     "(2,); point_conv.W: expected shape (4, None, 1, 1), got (4, 2, 1, 1)"),
])
def test_a_lazy_layer_refuses_an_integer_or_misshapen_state_by_name(make, state, message):
    """An integer weight asks for float32 (mutants: any dtype taken, float64 asked); a weight
    of the wrong rank is a mismatch, not an IndexError (mutant: the rank test dropped)."""
    layer = make()
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        layer.load_state_dict(state)
    assert layer.load_state_dict({}, strict=False) == ([], [])        # nothing to build from
    assert getattr(layer, "W", None) is None and getattr(layer, "depthwise_conv", None) is None


@pytest.mark.parametrize("make, shape", [
    (lambda: Gemm(3), (2, 4)),
    (lambda: SeparableConv2d(3, 4, 3, bias=True), (1, 3, 5, 5)),
])
def test_loading_into_a_built_layer_keeps_its_parameters_and_names_a_problem_once(make, shape):
    """A built layer announces no lazy entries (mutant: `and` for `or`, which reported a
    mismatch twice) and loads into the Tensors it has (mutant: `or` rebuilt them, leaving an
    optimizer holding the old ones); a given input_shape does not change its count."""
    layer = make()
    layer(Tensor(data=np.ones(shape, np.float32)))
    state = {name: np.full(t.shape, 0.5, np.float32) for name, t in layer.named_parameters()}
    tensors = dict(layer.named_parameters())
    layer.load_state_dict(state)
    assert all(t is tensors[name] for name, t in layer.named_parameters())
    assert all((t.to_numpy() == 0.5).all() for t in tensors.values())
    first = next(iter(state))
    wrong = dict(state, **{first: np.zeros((7,) + state[first].shape[1:], np.float32)})
    message = (f"{type(layer).__name__}.load_state_dict: {first}: expected shape "
               f"{state[first].shape}, got {wrong[first].shape}")
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        layer.load_state_dict(wrong)
    count = layer.count_parameters()
    assert layer.count_parameters((None, None) + shape[2:]) == count


@pytest.mark.parametrize("padding, message", [
    ("full", "SeparableConv2d: padding must be an int, a pair, 'same' or 'valid', got 'full'"),
    (-1, "SeparableConv2d: padding must be non-negative, got -1"),
])
def test_separable_conv2d_padding_messages_name_the_layer(padding, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        SeparableConv2d(3, 4, 3, padding=padding)


@pytest.mark.parametrize("arguments, message", [
    ((0, 4, 3), "SeparableConv2d: in_channels must be a positive int, got 0"),
    ((3, 0, 3), "SeparableConv2d: out_channels must be a positive int, got 0"),
])
def test_separable_conv2d_channel_messages_word_for_word(arguments, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        SeparableConv2d(*arguments)


@pytest.mark.parametrize("padding", [(1, 1, 0, 1), (1, 0, 1, 1), (1, 1, 1, 1), (0, 1, 1, 0)])
@pytest.mark.parametrize("is_max, include", [(True, True), (False, True), (False, False)])
def test_pooling2d_explicit_padding_even_on_one_axis_only(padding, is_max, include):
    """Padding even on one axis and not the other takes the padded path (mutants: `or` / `!=`
    in the even test), max pads with -inf (the inputs are all negative, so a 0 fill would win),
    and an even padding keeps count_include_pad; against the direct loops of test_singa.py."""
    x = np.random.default_rng(13).standard_normal((2, 2, 5, 6)) - 10.0
    top, bottom, left, right = padding
    layer = Pooling2d(3, 2, list(padding), is_max=is_max, count_include_pad=include)
    expected = reference_pool2d(x, (3, 3), (2, 2), ((top, bottom), (left, right)), is_max,
                                include)
    np.testing.assert_allclose(layer(Tensor(data=x)).to_numpy(), expected, rtol=1e-12,
                               atol=1e-12)


def test_pooling2d_rescaled_average_of_a_constant_input_records_no_graph():
    """The count_include_pad=False rescaling multiplies by a constant: an input without
    gradient gives an output without one and no graph (the constant's own requires_grad
    flag turned out not to matter: a leaf that stores no gradient adds nothing)."""
    x = Tensor(data=np.ones((1, 1, 5, 6)), requires_grad=False)
    y = Pooling2d(3, 2, [1, 0, 0, 1], is_max=False, count_include_pad=False)(x)
    assert y.requires_grad is False and y.creator is None
    np.testing.assert_allclose(y.to_numpy(), np.ones(y.shape), rtol=1e-12)


PAD = "padding must be between 0 and half the kernel size (3, 3), got"


@pytest.mark.parametrize("make, message", [
    (lambda: Pooling2d(0), "Pooling2d: kernel_size must be positive, got 0"),
    (lambda: Pooling2d(3, 0), "Pooling2d: stride must be positive, got 0"),
    (lambda: Pooling2d(3, padding=(0, 2, 0, 0)), f"Pooling2d: {PAD} (0, 2, 0, 0)"),
    (lambda: Pooling2d(3, padding=(0, 0, 0, -1)), f"Pooling2d: {PAD} (0, 0, 0, -1)"),
    (lambda: Pooling2d(3, padding=(0, 0, 2, 0)), f"Pooling2d: {PAD} (0, 0, 2, 0)"),
    (lambda: Pooling2d(3, padding=(-1, 0, 0, 0)), f"Pooling2d: {PAD} (-1, 0, 0, 0)"),
    (lambda: Pooling2d(3, padding=2), f"Pooling2d: {PAD} 2"),
    (lambda: Pooling2d(3, pad_mode="x"), "Pooling2d: pad_mode must be one of ('NOTSET', "
                                         "'SAME_UPPER', 'SAME_LOWER', 'VALID'), got 'x'"),
    (lambda: Pooling2d(3).output_shape((1, 1, 5, 2)), "Pooling2d(kernel_size=(3, 3), "
     "stride=(3, 3)): expected input (N, C, H, W) with W >= 3, got (1, 1, 5, 2)"),
    (lambda: Pooling2d(3).output_shape((1, 1, 2, 5)), "Pooling2d(kernel_size=(3, 3), "
     "stride=(3, 3)): expected input (N, C, H, W) with H >= 3, got (1, 1, 2, 5)"),
    (lambda: Pooling2d(3).output_shape((1, 5, 5)), "Pooling2d(kernel_size=(3, 3), "
     "stride=(3, 3)): expected input (N, C, H, W), got (1, 5, 5)"),
])
def test_pooling2d_messages_word_for_word(make, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        make()


def test_pooling2d_defaults_stride_to_the_kernel_and_max_pooling():
    layer = Pooling2d((2, 3))
    assert layer.stride == (2, 3) and layer.is_max and layer.count_include_pad
    assert layer.padding == ((0, 0), (0, 0)) and layer.pad_mode == "NOTSET"
    x = np.random.default_rng(15).standard_normal((1, 2, 4, 6))
    expected = x.reshape(1, 2, 2, 2, 2, 3).max(axis=(3, 5))
    np.testing.assert_allclose(layer(Tensor(data=x)).to_numpy(), expected, rtol=1e-12)
    assert Pooling2d(3, padding=(1, 0)).padding == ((1, 1), (0, 0))


@pytest.mark.parametrize("arguments, message", [
    (dict(kernel_size=3, padding=(1, 2, 3)), "padding must be an int or 2 ints, got (1, 2, 3)"),
    (dict(kernel_size=(3, 3, 3)), "kernel_size must be an int or 2 ints, got (3, 3, 3)"),
    (dict(kernel_size=3, stride=(1, 2, 3)), "stride must be an int or 2 ints, got (1, 2, 3)"),
])
def test_pooling2d_pair_messages_name_the_layer_and_argument(arguments, message):
    with pytest.raises(TypeError, match=f"^{re.escape('Pooling2d: ' + message)}$"):
        Pooling2d(**arguments)


def test_gemm_defaults_wscale_one_and_xavier():
    seen = []
    layer = Gemm(3, init=lambda tensor, fan_in, fan_out, wscale: seen.append(
        (tensor.shape, fan_in, fan_out, wscale)))
    layer(Tensor(data=np.ones((2, 4), np.float32)))
    assert seen == [((3, 4), 4, 3, 1.0)]
