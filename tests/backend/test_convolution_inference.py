"""convolution.inference_forward (the fused forward of imported graphs in passes that record
nothing: bias, a residual and ReLU applied in place, optionally into rows of a larger buffer)
against the windows-and-einsum reference of test_kernels.py."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from autograd.backend import convolution, winograd
from autograd.backend.layout import is_batch_last
from autograd.geometry import ConvGeometry
from tests.backend.test_kernels import conv_cases, reference_conv, _layouts

# the compiled kernels and the portable code they stand in for: both tested
pytestmark = pytest.mark.usefixtures("compiled_and_portable")


def _expected(x, W, b, case, residual, relu, out_size):
    y = reference_conv(x, W, b, case["stride"], case["dilation"], case["pads"], case["groups"],
                       np.zeros((x.shape[0], W.shape[0]) + out_size))[0]
    if residual is not None:
        y = y + residual
    return np.maximum(y, 0) if relu else y


@given(conv_cases(), st.booleans(), st.booleans(), st.booleans())
def test_inference_forward_matches_conv_bias_residual_relu(case, relu, with_residual, into):
    rng = np.random.default_rng(case["seed"])
    x = rng.standard_normal((case["n"], case["c"]) + case["size"])
    W = rng.standard_normal((case["o"], case["c"] // case["groups"]) + case["kernel"])
    b = rng.standard_normal(case["o"]) if case["bias"] else None
    geometry = ConvGeometry(case["kernel"], case["stride"], 0, case["dilation"], case["groups"])
    out_size = geometry.output_size(case["size"], case["pads"])
    residual = (rng.standard_normal((case["n"], case["o"]) + out_size) if with_residual
                else None)
    expected = _expected(x, W, b, case, residual, relu, out_size)
    out = None
    if into:       # the rows [2, 2 + o) of a larger batch-last buffer, as a Concat writes
        buffer = np.full((case["o"] + 3, out_size[0] * out_size[1] * case["n"]), np.nan)
        out = buffer[2:2 + case["o"]]
    y = convolution.inference_forward(
        _layouts(x, case["batch_last"]), W, b, geometry, case["pads"], relu, out,
        None if residual is None else _layouts(residual, not case["batch_last"]))
    np.testing.assert_allclose(y, expected, atol=1e-10)
    assert is_batch_last(y)
    if into:
        np.testing.assert_array_equal(
            buffer[2:2 + case["o"]].reshape(case["o"], *out_size, case["n"]),
            y.transpose(1, 2, 3, 0))
        assert np.isnan(buffer[:2]).all() and np.isnan(buffer[2 + case["o"]:]).all()


@pytest.mark.parametrize("batch_last", [False, True])
@pytest.mark.parametrize("into", [False, True])
def test_inference_forward_on_the_winograd_path(batch_last, into):
    rng = np.random.default_rng(1)
    x, W, b = (rng.standard_normal((8, 48, 16, 16)), rng.standard_normal((48, 48, 3, 3)),
               rng.standard_normal(48))
    residual = rng.standard_normal((8, 48, 16, 16))
    pads = ((1, 1), (1, 1))
    assert winograd.applies(x, W, (1, 1), (1, 1), 1, *pads)
    geometry = ConvGeometry(3, 1, 1)
    out = np.empty((48, 16 * 16 * 8)) if into else None
    y = convolution.inference_forward(_layouts(x, batch_last), W, b, geometry, pads, True, out,
                                      residual)
    case = dict(stride=(1, 1), dilation=(1, 1), pads=pads, groups=1)
    np.testing.assert_allclose(y, _expected(x, W, b, case, residual, True, (16, 16)), atol=1e-9)
    assert is_batch_last(y)


def test_winograd_is_left_where_its_tiles_cover_too_little_of_the_output():
    W, pads, geometry = np.zeros((64, 64, 3, 3)), ((1, 1), (1, 1)), ConvGeometry(3, 1, 1)
    assert convolution._winograd_for_inference(np.zeros((8, 64, 16, 16)), W, geometry, pads)
    assert not convolution._winograd_for_inference(np.zeros((8, 64, 13, 13)), W, geometry, pads)


@pytest.mark.parametrize("groups, stride, relu", [(1, (1, 1), True), (2, (2, 1), False)])
def test_the_bias_riding_in_the_gemm_of_small_weights(groups, stride, relu):
    rng = np.random.default_rng(4)
    x, W, b = (rng.standard_normal((4, 2, 16, 16)), rng.standard_normal((4, 2 // groups, 3, 3)),
               rng.standard_normal(4))
    pads = ((1, 0), (0, 1))
    geometry = ConvGeometry(3, stride, 0, 1, groups)
    out_size = geometry.output_size((16, 16), pads)
    assert 16 * (W.size + 4) <= 4 * out_size[0] * out_size[1] * 4      # the path taken
    case = dict(stride=stride, dilation=(1, 1), pads=pads, groups=groups)
    y = convolution.inference_forward(x, W, b, geometry, pads, relu)
    np.testing.assert_allclose(y, _expected(x, W, b, case, None, relu, out_size), atol=1e-10)


@given(conv_cases(), st.sampled_from([np.float32, np.float64]))
def test_a_forward_that_records_nothing_is_the_definition(case, dtype):
    """convolution.forward with ``needs`` empty (the eager no_grad forward: the shifted
    products for float32, Winograd, one small image's gather or the columns) against the
    windows-and-einsum reference, in float32 and float64."""
    rng = np.random.default_rng(case["seed"])
    x = rng.standard_normal((case["n"], case["c"]) + case["size"]).astype(dtype)
    W = rng.standard_normal((case["o"], case["c"] // case["groups"]) + case["kernel"])
    W = W.astype(dtype)
    b = rng.standard_normal(case["o"]).astype(dtype) if case["bias"] else None
    geometry = ConvGeometry(case["kernel"], case["stride"], 0, case["dilation"], case["groups"])
    y, _ = convolution.forward(_layouts(x, case["batch_last"]), W, b, geometry, case["pads"],
                               ())
    expected = _expected(x.astype(np.float64), W.astype(np.float64),
                         None if b is None else b.astype(np.float64), case, None, False,
                         y.shape[2:])
    tolerance = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(y, expected, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("kernel", [1, 3])
def test_an_empty_batch_of_grouped_convolutions_gives_an_empty_output(kernel):
    x = np.zeros((0, 4, 6, 7), np.float32)
    W = np.ones((6, 2, kernel, kernel), np.float32)
    geometry = ConvGeometry(kernel, padding=kernel // 2, groups=2)
    pads = ((kernel // 2,) * 2,) * 2
    y, _ = convolution.forward(x, W, None, geometry, pads, ())
    assert y.shape == (0, 6, 6, 7)
    assert convolution.inference_forward(x, W, None, geometry, pads).shape == (0, 6, 6, 7)
