"""convolution.py survivors of the backend/ mutation run (the rest: convolution, im2col,
winograd, buffer_cache, threads) that test_convolution_mutants.py (full at ~400 lines) let
through: a residual added by inference_forward with no bias and no ReLU, a pad on the left
alone, and the batch-last layout that im2col.padded_batch_last promises. Results are checked
against the direct sum over kernel offsets of test_convolution_mutants.py."""
import numpy as np
import pytest

from autograd.backend import convolution, im2col
from autograd.backend.layout import is_batch_last
from autograd.geometry import ConvGeometry
from tests.backend.test_convolution_mutants import _inputs, direct_conv
from tests.layouts import stored_batch_last

# the compiled kernels and the portable code they stand in for: both tested
pytestmark = pytest.mark.usefixtures("compiled_and_portable")


@pytest.mark.parametrize("kernel", [1, 3])
@pytest.mark.parametrize("residual_batch_last", [False, True])
def test_inference_forward_adds_a_residual_with_no_bias_and_no_relu(kernel,
                                                                     residual_batch_last):
    """A residual alone (no bias, relu=False) is still added: the mutant `residual is None`
    in the epilogue's guard skips the epilogue then and returns the bare convolution."""
    x, W, _ = _inputs(30, (2, 3, 6, 5), (4, 3, kernel, kernel), False)
    pad = kernel // 2
    pads = ((pad, pad), (pad, pad))
    residual = np.random.default_rng(31).standard_normal((2, 4, 6, 5))
    if residual_batch_last:
        residual = stored_batch_last(residual)
    y = convolution.inference_forward(x, W, None, ConvGeometry(kernel, 1, pad), pads,
                                      residual=residual)
    expected = direct_conv(x, W, None, (1, 1), (1, 1), pads, 1) + residual
    np.testing.assert_allclose(y, expected, atol=1e-10)


# Pads where only one of the four sides is non-zero: the guard that decides whether to pad
# must read each side (the mutant read `pads_w[1]` twice, so a left-only pad was dropped).
ONE_SIDED_PADS = [((0, 0), (1, 0)), ((0, 0), (0, 2)), ((2, 0), (0, 0)), ((0, 1), (0, 0))]


@pytest.mark.parametrize("pads", ONE_SIDED_PADS)
@pytest.mark.parametrize("kernel", [(1, 1), (2, 3)])
def test_inference_forward_with_a_pad_on_one_side_only(pads, kernel):
    x, W, b = _inputs(32, (2, 3, 5, 6), (4, 3) + kernel, True)
    y = convolution.inference_forward(x, W, b, ConvGeometry(kernel, 1, 0), pads)
    expected = direct_conv(x, W, b, (1, 1), (1, 1), pads, 1)
    assert y.shape == expected.shape
    np.testing.assert_allclose(y, expected, atol=1e-10)


@pytest.mark.parametrize("pads", ONE_SIDED_PADS)
def test_forward_and_backward_with_a_pad_on_one_side_only(pads):
    """The training path (forward with needs, then dx and dW) through the same pad; dx is
    checked as the adjoint of the forward: sum(dy * conv(x)) is linear in x."""
    x, W, b = _inputs(33, (2, 3, 5, 6), (4, 3, 2, 3), True)
    geometry = ConvGeometry((2, 3), 1, 0)
    y, context = convolution.forward(x, W, b, geometry, pads, (True, True))
    expected = direct_conv(x, W, b, (1, 1), (1, 1), pads, 1)
    assert y.shape == expected.shape
    np.testing.assert_allclose(y, expected, atol=1e-10)
    dy = np.random.default_rng(34).standard_normal(y.shape)
    dx, dW, db = convolution.backward(context, dy, (True, True, True))
    # conv is linear in x and in W: <dy, conv(e)> for each basis element e gives the gradient
    dx_expected = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[index] = 1.0
        dx_expected[index] = np.sum(dy * direct_conv(e, W, None, (1, 1), (1, 1), pads, 1))
    dW_expected = np.zeros_like(W)
    for index in np.ndindex(W.shape):
        e = np.zeros_like(W)
        e[index] = 1.0
        dW_expected[index] = np.sum(dy * direct_conv(x, e, None, (1, 1), (1, 1), pads, 1))
    np.testing.assert_allclose(dx, dx_expected, atol=1e-10)
    np.testing.assert_allclose(dW, dW_expected, atol=1e-10)
    np.testing.assert_allclose(db, dy.sum(axis=(0, 2, 3)), atol=1e-10)


@pytest.mark.parametrize("pads", ONE_SIDED_PADS + [((1, 1), (2, 2))])
def test_padded_batch_last_pads_a_c_order_input_into_a_batch_last_array(pads):
    """The helper's contract (its name and docstring): the padded copy is stored (C, Hp, Wp, N)
    whatever x's layout, the layout every column copy and col2im add is written for. The
    mutants that drop `axis_order=BATCH_LAST` pad a C-order x in C order."""
    x = np.random.default_rng(35).standard_normal((3, 2, 4, 5))
    assert x.flags.c_contiguous
    padded = im2col.padded_batch_last(x, *pads)
    assert is_batch_last(padded)
    np.testing.assert_array_equal(padded, np.pad(x, ((0, 0), (0, 0)) + pads))


@pytest.mark.parametrize("needs", [(True, True), (False, True, True)])
def test_a_float32_layer_with_its_bias_in_the_gemm_multiplies_float32_operands(monkeypatch,
                                                                              needs):
    """The bias concatenated to W for the GEMM is cast to W's dtype: the mutant `astype(None)`
    makes it float64, which turns the whole GEMM float64 (twice the time and memory, and y
    rounded differently), although y still comes back float32."""
    operands, original = [], np.matmul

    def spy(a, b, *args, **kwargs):
        operands.append((a.dtype, b.dtype))
        return original(a, b, *args, **kwargs)
    monkeypatch.setattr(np, "matmul", spy)
    x, W, b = _inputs(36, (2, 3, 6, 6), (4, 3, 3, 3), True, np.float32)
    geometry, pads = ConvGeometry(3, 2, 1), ((1, 1), (1, 1))
    y, _ = convolution.forward(x, W, b, geometry, pads, needs)
    assert y.dtype == np.float32
    np.testing.assert_allclose(y, direct_conv(x, W, b, (2, 2), (1, 1), pads, 1),
                               rtol=1e-4, atol=1e-4)
    assert operands and set(operands) == {(np.dtype(np.float32), np.dtype(np.float32))}
