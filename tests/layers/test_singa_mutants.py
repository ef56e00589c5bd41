"""Pooling2d's padding modes on a fixed grid (the hypothesis test in test_singa.py draws 12 of
them, so a dropped ``count_include_pad`` under a SAME mode survived the full mutation run of
layers/: docs/testing.md), float32 kept, against the direct loops of test_singa.py."""
import numpy as np
import pytest

from autograd import Tensor
from autograd.layers import Pooling2d
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
