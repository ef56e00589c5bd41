"""The transformer's CPU kernels against plain NumPy formulas written here: layer_norm_forward /
layer_norm_backward (one block of rows at a time, split over the threads) and the exact GELU
(erf approximation and slope in one pass), on sizes that take one block and many, at 1 and 3
threads."""
import math

import numpy as np
import pytest
import scipy.special

import autograd
from autograd.backend import numpy_kernels as kernels
from autograd.backend import normalization, threads

# the compiled kernels and the portable code they stand in for: both tested
pytestmark = pytest.mark.usefixtures("compiled_and_portable")


@pytest.fixture(params=[1, 3], ids=["1-thread", "3-threads"])
def thread_count(request):
    previous = autograd.get_num_threads()
    autograd.set_num_threads(request.param)
    yield request.param
    autograd.set_num_threads(previous)


# (rows, width): one block; several blocks; past threads.MIN_PARALLEL_ELEMENTS, so split
LAYER_NORM_SHAPES = [(3, 5), (3 * normalization.LAYER_NORM_BLOCK // 128 + 7, 128),
                     (threads.MIN_PARALLEL_ELEMENTS // 64 + 5, 96)]


def reference_layer_norm(x, scale, bias, dy, eps):
    mean = x.mean(axis=1, keepdims=True)
    invstd = 1 / np.sqrt(x.var(axis=1, keepdims=True) + eps)
    xhat = (x - mean) * invstd
    g = dy * (1 if scale is None else scale)
    dx = invstd * (g - g.mean(axis=1, keepdims=True)
                   - xhat * (g * xhat).mean(axis=1, keepdims=True))
    y = xhat * (1 if scale is None else scale) + (0 if bias is None else bias)
    return y, xhat, invstd, dx, (dy * xhat).sum(axis=0), dy.sum(axis=0)


@pytest.mark.parametrize("shape", LAYER_NORM_SHAPES)
@pytest.mark.parametrize("affine", ["both", "none"])
def test_layer_norm_kernels_match_the_formulas(shape, affine, thread_count):
    rng = np.random.default_rng(shape[0])
    x = rng.standard_normal(shape) * 3 + 1
    dy = rng.standard_normal(shape)
    scale = bias = None
    if affine == "both":
        scale, bias = rng.uniform(0.5, 2, shape[1]), rng.standard_normal(shape[1])
    y, xhat, invstd = kernels.layer_norm_forward(x, scale, bias, 1e-3)
    expect = reference_layer_norm(x, scale, bias, dy, 1e-3)
    for got, want in zip((y, xhat, invstd), expect[:3]):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)
    wanted = (True, affine == "both", affine == "both")
    dx, dscale, dbias = kernels.layer_norm_backward(dy, xhat, invstd, scale, wanted)
    np.testing.assert_allclose(dx, expect[3], rtol=1e-9, atol=1e-10)
    if affine == "both":
        np.testing.assert_allclose(dscale, expect[4], rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(dbias, expect[5], rtol=1e-9, atol=1e-9)
    else:
        assert dscale is None and dbias is None


def test_layer_norm_backward_computes_only_what_is_asked(thread_count):
    rng = np.random.default_rng(5)
    x, dy = rng.standard_normal((40, 8)), rng.standard_normal((40, 8))
    scale = rng.uniform(0.5, 2, 8)
    _, xhat, invstd = kernels.layer_norm_forward(x, scale, None, 1e-5)
    dx, dscale, dbias = kernels.layer_norm_backward(dy, xhat, invstd, scale,
                                                    (False, True, False))
    assert dx is None and dbias is None
    np.testing.assert_allclose(dscale, (dy * xhat).sum(axis=0), rtol=1e-10)


def test_layer_norm_kernels_keep_float32():
    x = np.random.default_rng(0).standard_normal((300, 64)).astype(np.float32)
    ones = np.ones(64, np.float32)
    y, xhat, invstd = kernels.layer_norm_forward(x, ones, ones, 1e-5)
    grads = kernels.layer_norm_backward(x, xhat, invstd, ones, (True, True, True))
    assert {a.dtype for a in (y, xhat, invstd) + grads} == {np.dtype(np.float32)}
    np.testing.assert_allclose(y, reference_layer_norm(x.astype(np.float64), 1, 1, x, 1e-5)[0],
                               atol=2e-5)


def reference_gelu(x):
    cdf = 0.5 * (1 + scipy.special.erf(x / math.sqrt(2)))
    return x * cdf, cdf + x * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)


# one chunk; several chunks with a ragged end; past threads.MIN_PARALLEL_ELEMENTS, so split
@pytest.mark.parametrize("shape", [(7,), (3, 16384 + 5), (2, 3, threads.MIN_PARALLEL_ELEMENTS
                                                           // 3 + 11)])
def test_gelu_kernels_match_erf_and_the_derivative(shape, thread_count):
    x = np.random.default_rng(len(shape)).uniform(-6, 6, shape)
    want_y, want_slope = reference_gelu(x)
    y, slope = kernels.gelu_forward(x.astype(np.float32))       # the one-pass approximation
    assert y.dtype == slope.dtype == np.float32 and y.shape == slope.shape == shape
    np.testing.assert_allclose(y, want_y, atol=3e-6, rtol=1e-6)
    np.testing.assert_allclose(slope, want_slope, atol=3e-6, rtol=1e-6)
    y64, slope64 = kernels.gelu_forward(x)                        # SciPy's erf in float64
    np.testing.assert_allclose(y64, want_y, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(slope64, want_slope, rtol=1e-12, atol=1e-14)
    dy = np.random.default_rng(9).standard_normal(shape).astype(np.float32)
    np.testing.assert_array_equal(kernels.gelu_backward(dy, slope), dy * slope)


def test_gelu_forward_reads_any_layout_and_keeps_0d():
    x = np.random.default_rng(1).uniform(-3, 3, (64, 600)).astype(np.float32)
    y, slope = kernels.gelu_forward(x.T)
    np.testing.assert_allclose(y, reference_gelu(x.T.astype(np.float64))[0], atol=3e-6)
    y0, _ = kernels.gelu_forward(np.array(1.0, np.float32))
    assert y0.shape == () and abs(float(y0) - reference_gelu(1.0)[0]) < 1e-6


def reference_masked_softmax(scores, keep):
    masked = np.where(keep, scores, -np.inf) if keep is not None else scores
    peak = masked.max(axis=-1, keepdims=True)
    peak[~np.isfinite(peak)] = 0
    e = np.exp(masked - peak)
    total = e.sum(axis=-1, keepdims=True)
    total[total == 0] = 1
    return e / total


# (N, H, T): small; past threads.MIN_PARALLEL_ELEMENTS, so split over (batch, head) slices
@pytest.mark.parametrize("n, h, t", [(2, 3, 5), (4, 4, 100)])
@pytest.mark.parametrize("mask", ["none", "causal", "padding"])
def test_attention_softmax_kernels_match_the_formulas(n, h, t, mask, thread_count):
    rng = np.random.default_rng(t)
    scores = rng.standard_normal((n, h, t, t)) * 3
    keep = None
    if mask == "causal":
        keep = np.tri(t, t, dtype=bool)
    elif mask == "padding":
        keep = np.ones((n, 1, 1, t), bool)
        keep[1, ..., t // 2:] = False
        keep[0] = False                     # every key masked: zeros, not NaN
    want = reference_masked_softmax(scores, keep)
    strided = np.ascontiguousarray(scores.transpose(3, 2, 1, 0)).transpose(3, 2, 1, 0)
    for given in (scores.copy(), strided):
        got = kernels.masked_softmax(given, keep, guard=True)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    gradient = rng.standard_normal(scores.shape)
    rowsum = (want * gradient).sum(axis=-1, keepdims=True)
    expect = want * (gradient - rowsum)
    np.testing.assert_allclose(kernels.softmax_backward(gradient.copy(), want, rowsum), expect,
                               rtol=1e-12, atol=1e-15)
    strided_gradient = np.asfortranarray(gradient)
    np.testing.assert_allclose(kernels.softmax_backward(strided_gradient, want, rowsum), expect,
                               rtol=1e-12, atol=1e-15)
