"""The compiled row passes (autograd/backend/native.py): GELU, layer normalization, an
embedding's gradient and a convolution's epilogue, against float64 formulas (and np.add.at)
for every instruction-set build this CPU runs; their operands; the LayerNorm op against the
portable code."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import autograd
from autograd import Tensor
from autograd.backend import elementwise, native
from tests.backend.native_helpers import close, draw

pytestmark = pytest.mark.skipif(not native.available(),
                                reason="the compiled kernels are not built in this install")


@given(size=st.integers(1, 100), scale=st.sampled_from([0.01, 1.0, 5.0, 30.0]),
       seed=st.integers(0, 2 ** 16))
def test_gelu_matches_the_exact_formula(instruction_set, size, scale, seed):
    """y = x Phi(x) and slope = Phi(x) + x phi(x) against SciPy's erf in float64 (the kernel's
    erf is Abramowitz & Stegun 7.1.26, within 1.5e-7), and against the portable float32 code
    that uses the same approximation."""
    from scipy.special import erf
    x = draw(np.random.default_rng(seed), (1, size), scale, "plain")[0]
    y, slope = np.full_like(x, np.nan), np.full_like(x, np.nan)
    assert native.gelu_forward(x, y, slope)
    x64 = x.astype(np.float64)
    cdf = 0.5 * (1 + erf(x64 / np.sqrt(2)))
    close(y, x64 * cdf, 0.05 * np.abs(x64) + 0.05)
    close(slope, cdf + x64 * np.exp(-x64 ** 2 / 2) / np.sqrt(2 * np.pi),
           0.05 * np.abs(x64) + 0.05)
    previous = native.set_enabled(False)
    try:
        portable_y, portable_slope = elementwise.gelu_forward(x)
    finally:
        native.set_enabled(previous)
    close(y, portable_y.astype(np.float64), 1 + np.abs(x64))
    close(slope, portable_slope.astype(np.float64), 1 + np.abs(x64))


def test_gelu_applies_to_contiguous_float32_vectors_only():
    x = np.linspace(-3, 3, 12, dtype=np.float32)
    y, slope = np.empty_like(x), np.empty_like(x)
    assert native.gelu_forward(x, y, slope)
    assert native.gelu_forward(x[::2], y[:6], slope[:6]) is None
    assert native.gelu_forward(x.astype(np.float64), y, slope) is None
    assert native.gelu_forward(x.reshape(3, 4), y, slope) is None
    empty = np.zeros((1, 0), np.float32)[0]            # a 0-stride view: the portable code
    assert native.gelu_forward(empty, empty, empty) is None


@given(rows=st.integers(1, 6), width=st.integers(1, 70), scale=st.sampled_from([0.01, 1.0, 50.0]),
       layout=st.sampled_from(["plain", "rows of a wider array"]), affine=st.booleans(),
       needs=st.tuples(st.booleans(), st.booleans(), st.booleans()), seed=st.integers(0, 2 ** 16))
def test_layer_norm_matches_the_formulas(instruction_set, rows, width, scale, layout, affine, needs, seed):
    """Forward (y, xhat, invstd) and backward (dx, and dscale, dbias added to what is there)
    against float64 formulas, with and without scale and bias, each gradient wanted or not."""
    rng = np.random.default_rng(seed)
    x = draw(rng, (rows, width), scale, layout) + np.float32(scale)      # an offset mean
    dy = draw(rng, (rows, width), 1.0, layout)
    gamma, beta = ((rng.standard_normal(width).astype(np.float32) if affine else None)
                   for _ in range(2))
    eps = 1e-5
    y, xhat = (np.full((rows, width), np.nan, np.float32) for _ in range(2))
    invstd = np.full(rows, np.nan, np.float32)
    assert native.layer_norm_forward(x, gamma, beta, eps, y, xhat, invstd)
    x64 = x.astype(np.float64)
    centred = x64 - x64.mean(axis=1, keepdims=True)
    inverse = 1 / np.sqrt((centred ** 2).mean(axis=1, keepdims=True) + eps)
    h = centred * inverse
    expected_y = h * gamma + beta if affine else h
    spread = np.abs(x64).max(axis=1, keepdims=True) * inverse      # a cancelled mean's error
    close(invstd, inverse[:, 0], inverse[:, 0] * width)
    close(xhat, h, spread * width)
    close(y, expected_y, spread * width * (np.abs(gamma) + 1 if affine else 1))

    dx = np.full((rows, width), np.nan, np.float32) if needs[0] else None
    dscale = np.ones(width, np.float32) if needs[1] else None
    dbias = np.ones(width, np.float32) if needs[2] else None
    assert native.layer_norm_backward(dy, xhat, invstd, gamma, dx, dscale, dbias)
    h, inverse = xhat.astype(np.float64), invstd.astype(np.float64)[:, None]
    g = dy * gamma if affine else dy.astype(np.float64)
    terms = np.abs(g).sum(axis=1, keepdims=True) * (1 + np.abs(h)) * inverse
    if needs[0]:
        close(dx, inverse * (g - g.mean(axis=1, keepdims=True)
                              - h * (g * h).mean(axis=1, keepdims=True)), terms)
    if needs[1]:
        close(dscale, 1 + (dy * h).sum(axis=0), 1 + (np.abs(dy) * np.abs(h)).sum(axis=0))
    if needs[2]:
        close(dbias, 1 + dy.astype(np.float64).sum(axis=0), 1 + np.abs(dy).sum(axis=0))


@pytest.mark.parametrize("threads", [1, 2, 3, 8])
@pytest.mark.parametrize("needs", [(True, True, True), (False, True, False),
                                   (True, False, True), (True, False, False)])
def test_layer_norm_split_over_the_threads(threads, needs):
    """Rows enough to split (517 x 96: up to 3 parts of 2^14 elements): the forward and dx the
    same bits on any number of threads (each row is one thread's); dscale and dbias, summed
    per part and then added up, against float64 sums and added to what is there."""
    rng = np.random.default_rng(7)
    rows, width = 517, 96
    x = (rng.standard_normal((rows, width)) * 3 + 1).astype(np.float32)
    dy = rng.standard_normal((rows, width)).astype(np.float32)
    gamma, beta = (rng.standard_normal(width).astype(np.float32) for _ in range(2))
    outputs = {}
    for count in (1, threads):
        y, xhat = (np.full((rows, width), np.nan, np.float32) for _ in range(2))
        invstd = np.full(rows, np.nan, np.float32)
        native._native.layer_norm_forward(x, gamma, beta, 1e-5, y, xhat, invstd, count)
        dx = np.full((rows, width), np.nan, np.float32) if needs[0] else None
        dscale = np.full(width, 2, np.float32) if needs[1] else None
        dbias = np.full(width, 2, np.float32) if needs[2] else None
        native._native.layer_norm_backward(dy, xhat, invstd, gamma, dx, dscale, dbias, count)
        outputs[count] = (y, xhat, invstd, dx, dscale, dbias)
    y, xhat, invstd, dx, dscale, dbias = outputs[threads]
    for one, split in zip(outputs[1][:4], outputs[threads][:4]):
        if one is not None:
            np.testing.assert_array_equal(split, one)
    x64 = x.astype(np.float64)
    centred = x64 - x64.mean(axis=1, keepdims=True)
    inverse = 1 / np.sqrt((centred ** 2).mean(axis=1, keepdims=True) + 1e-5)
    spread = np.abs(x64).max(axis=1, keepdims=True) * inverse
    close(y, centred * inverse * gamma + beta, spread * width * (np.abs(gamma) + 1))
    if needs[1]:
        close(dscale, 2 + (dy * xhat.astype(np.float64)).sum(axis=0),
              2 + (np.abs(dy) * np.abs(xhat)).sum(axis=0))
    if needs[2]:
        close(dbias, 2 + dy.astype(np.float64).sum(axis=0), 2 + np.abs(dy).sum(axis=0))


def test_layer_norm_operands():
    x = np.zeros((2, 4), np.float32)
    invstd = np.zeros(2, np.float32)
    assert native.layer_norm_forward(x, None, None, 1e-5, x.copy(), x.copy(), invstd)
    assert native.layer_norm_forward(x, np.ones(4), None, 1e-5, x.copy(), x.copy(),
                                     invstd) is None           # a float64 scale
    assert native.layer_norm_forward(x, None, None, 1e-5, x.copy(), x.copy(),
                                     np.zeros((2, 2), np.float32)[:, 0]) is None
    with pytest.raises(ValueError, match="layer_norm_forward: expected scale of 4 elements, "
                                         "got 3"):
        native._native.layer_norm_forward(x, np.ones(3, np.float32), None, 1e-5, x.copy(),
                                           x.copy(), invstd)
    with pytest.raises(ValueError, match="layer_norm_backward: expected invstd of 2 elements"):
        native._native.layer_norm_backward(x, x, np.ones(3, np.float32), None, None, None,
                                            None)


@pytest.mark.parametrize("affine", [True, False])
def test_the_layer_norm_op_agrees_with_the_portable_code(affine):
    rng = np.random.default_rng(4)
    data = (rng.standard_normal((3, 5, 24)) * 2 + 1).astype(np.float32)
    layer = autograd.LayerNorm(24) if affine else None
    if affine:
        layer.scale.data[...] = rng.standard_normal(24)
        layer.bias.data[...] = rng.standard_normal(24)

    def run(flag):
        previous = native.set_enabled(flag)
        try:
            x = Tensor(data=data.copy(), stores_grad=True)
            y = layer(x) if affine else autograd.layer_norm(x, (24,))
            loss = autograd.sum(autograd.mul(y, y))
            return y.to_numpy(), [g for _, g in autograd.backward(loss)]
        finally:
            native.set_enabled(previous)

    (y_native, g_native), (y_numpy, g_numpy) = run(True), run(False)
    np.testing.assert_allclose(y_native, y_numpy, rtol=1e-5, atol=1e-5)
    assert len(g_native) == len(g_numpy) == (3 if affine else 1)
    for a, b in zip(g_native, g_numpy):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)


@given(rows=st.integers(0, 30), vocabulary=st.integers(1, 8), width=st.integers(1, 40),
       layout=st.sampled_from(["plain", "rows of a wider array"]), seed=st.integers(0, 2 ** 16))
def test_scatter_rows_add_matches_numpy_add_at(instruction_set, rows, vocabulary, width, layout, seed):
    """Repeated and negative indices, added to what the target holds, against np.add.at."""
    rng = np.random.default_rng(seed)
    target = draw(rng, (vocabulary, width), 1.0, layout)
    values = draw(rng, (max(rows, 1), width), 1.0, layout)[:rows]
    index = rng.integers(-vocabulary, vocabulary, rows)
    expected = target.astype(np.float64)
    np.add.at(expected, index, values)
    assert native.scatter_rows_add(target, index.astype(np.int32), values)
    close(target, expected, 1 + np.abs(expected))


def test_scatter_rows_add_checks_every_index_before_adding():
    target = np.zeros((3, 2), np.float32)
    with pytest.raises(IndexError, match="scatter_rows_add: index 3 of row 1 is out of bounds "
                                         "for 3 rows"):
        native.scatter_rows_add(target, np.array([0, 3]), np.ones((2, 2), np.float32))
    with pytest.raises(IndexError, match="index -4 of row 0"):
        native.scatter_rows_add(target, np.array([-4, 0]), np.ones((2, 2), np.float32))
    assert not np.any(target)
    assert native.scatter_rows_add(target, np.array([2 ** 63], np.uint64),
                                   np.ones((1, 2), np.float32)) is None
    assert native.scatter_rows_add(target, np.array([[0]]), np.ones((1, 2), np.float32)) is None
    assert native.scatter_rows_add(target[:, :1], np.array([0]),
                                   np.ones((1, 2), np.float32)) is None
    with pytest.raises(ValueError, match="expected target as a 2-D float32 array of 2"):
        native._native.scatter_rows_add(np.zeros((3, 3), np.float32), np.array([0]),
                                        np.ones((1, 2), np.float32))


@given(rows=st.integers(1, 6), width=st.integers(1, 70), with_bias=st.booleans(),
       with_residual=st.booleans(), relu=st.booleans(),
       layout=st.sampled_from(["plain", "rows of a wider array"]), seed=st.integers(0, 2 ** 16))
def test_epilogue_matches_the_formula(instruction_set, rows, width, with_bias, with_residual, relu,
                                      layout, seed):
    rng = np.random.default_rng(seed)
    y = draw(rng, (rows, width), 1.0, layout)
    bias = rng.standard_normal(rows).astype(np.float32) if with_bias else None
    residual = draw(rng, (rows, width), 1.0, layout) if with_residual else None
    expected = y.astype(np.float64)
    if with_bias:
        expected += bias[:, None]
    if with_residual:
        expected += residual
    if relu:
        expected = np.maximum(expected, 0)
    assert native.epilogue(y, bias, residual, relu)
    close(y, expected, 3.0)
    if relu:
        assert np.all(y >= 0)


def test_epilogue_operands():
    y = np.zeros((2, 3), np.float32)
    assert native.epilogue(y, np.zeros(2), None, True) is None          # a float64 bias
    assert native.epilogue(y, None, np.zeros((2, 3)), True) is None      # a float64 residual
    with pytest.raises(ValueError, match="epilogue: expected residual of shape \\(2, 3\\), "
                                         "got \\(3, 3\\)"):
        native._native.epilogue(y, None, np.zeros((3, 3), np.float32), True)
    with pytest.raises(ValueError, match="epilogue: expected bias of 2 elements, got 3"):
        native._native.epilogue(y, np.zeros(3, np.float32), None, False)


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("layout", ["plain", "rows of a wider array"])
def test_epilogue_split_over_the_threads(threads, layout):
    """Rows enough for every thread a part (37 rows of 1500: 3 parts of 16384 elements or
    more): each part takes its own rows' bias and residual, and the bits are the same on any
    number of threads."""
    if not native.available():
        pytest.skip("the compiled kernels are not built")
    rng = np.random.default_rng(threads)
    y = draw(rng, (37, 1500), 1.0, layout)
    bias = rng.standard_normal(37).astype(np.float32)
    residual = draw(rng, (37, 1500), 1.0, layout)
    expected = np.maximum(y.astype(np.float64) + bias[:, None] + residual, 0)
    one = y.copy()
    native._native.epilogue(one, bias, residual, True, 1)
    native._native.epilogue(y, bias, residual, True, threads)
    close(y, expected, 3.0)
    assert np.array_equal(y, one)
