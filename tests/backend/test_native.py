"""The compiled float32 kernels (autograd/backend/csrc, through autograd/backend/native.py)
against float64 formulas written here, for every instruction set this CPU can run (the AVX-512,
AVX2 and baseline builds of the same C), on drawn sizes (vector tails included), values (the
saturated ends of sigmoid and tanh, and tanh's series near 0) and layouts (rows of wider
arrays); their errors; the switch; and the operations that use them, against the portable
NumPy code they replace."""
import os

import numpy as np
import pytest
from hypothesis import given, strategies as st

import autograd
from autograd import Tensor
from autograd.backend import attention, elementwise, native

pytestmark = pytest.mark.skipif(not native.available(),
                                reason="the compiled kernels are not built in this install")

RTOL, ATOL = 3e-6, 2e-7      # float32 kernels against float64 formulas of float32 inputs


def _builds():
    """The instruction sets whose kernels this CPU runs."""
    if not native.available():
        return ["generic"]
    names = []
    current = native._native.get_instruction_set()
    for name in ("generic", "avx2", "avx512"):
        try:
            native._native.set_instruction_set(name)
        except ValueError:
            continue
        names.append(name)
    native._native.set_instruction_set(current)
    return names


@pytest.fixture(params=_builds(), scope="module")
def build(request):
    current = native._native.get_instruction_set()
    native._native.set_instruction_set(request.param)
    yield request.param
    native._native.set_instruction_set(current)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _draw(rng, shape, scale, layout):
    """float32 values of ``scale`` (with some exact zeros and tiny ones), stored plainly or as
    every other row of a wider, taller array."""
    values = (rng.standard_normal(shape) * scale).astype(np.float32)
    values.flat[::7] = 0.0
    values.flat[3::11] *= 1e-4
    if layout == "plain":
        return values
    wide = np.full((2 * shape[0], shape[1] + 5), np.nan, np.float32)
    wide[::2, 2:2 + shape[1]] = values
    return wide[::2, 2:2 + shape[1]]


EPSILON = float(np.finfo(np.float32).eps)


def _close(actual, expected, magnitude=0.0):
    """Within RTOL and ATOL of the float64 formula, plus 8 float32 epsilons of ``magnitude``:
    the size of the terms that were summed (a standard forward error bound), since a sum that
    cancels, like x_n + r h_n with large terms, is only as exact as its terms."""
    error = np.abs(actual.astype(np.float64) - expected)
    allowed = RTOL * np.abs(expected) + ATOL + 8 * EPSILON * np.asarray(magnitude)
    worst = np.unravel_index(np.argmax(error - allowed), error.shape)
    assert np.all(error <= allowed), (worst, actual[worst], expected[worst],
                                      np.broadcast_to(allowed, error.shape)[worst])


cells = dict(rows=st.integers(1, 5), hidden=st.integers(1, 40), scale=st.sampled_from(
    [0.05, 1.0, 4.0, 40.0]), layout=st.sampled_from(["plain", "rows of a wider array"]),
    seed=st.integers(0, 2 ** 16))


@given(**cells)
def test_lstm_forward_and_backward_match_the_formulas(build, rows, hidden, scale, layout, seed):
    rng = np.random.default_rng(seed)
    x_gates, h_gates = (_draw(rng, (rows, 4 * hidden), scale, layout) for _ in range(2))
    c, dh, dc_next = (_draw(rng, (rows, hidden), 1.0, layout) for _ in range(3))
    h_new, c_new, (gates, c_saved, tanh_c) = native.lstm_forward(x_gates, h_gates, c)

    a = x_gates.astype(np.float64) + h_gates
    i, f, g, o = (a[:, k * hidden:(k + 1) * hidden] for k in range(4))
    i, f, g, o = _sigmoid(i), _sigmoid(f), np.tanh(g), _sigmoid(o)
    cell = f * c + i * g
    state = np.abs(c) + 1                       # the terms of c' (the gates' errors are ulps)
    _close(gates, np.concatenate([i, f, g, o], axis=1), 1.0)
    _close(c_new, cell, state)
    _close(tanh_c, np.tanh(cell), state)
    _close(h_new, o * np.tanh(cell), state)
    assert c_saved is c

    da, dc = native.lstm_backward((gates, c, tanh_c), dh, dc_next)
    i, f, g, o = (gates[:, k * hidden:(k + 1) * hidden].astype(np.float64) for k in range(4))
    t = tanh_c.astype(np.float64)
    dcell = dc_next + dh * o * (1 - t ** 2)
    expected = np.concatenate([dcell * g * i * (1 - i), dcell * c * f * (1 - f),
                               dcell * i * (1 - g ** 2), dh * t * o * (1 - o)], axis=1)
    terms = (np.abs(dc_next) + np.abs(dh) * (2 + np.abs(c))) * state
    _close(da, expected, np.tile(terms, 4))
    _close(dc, dcell * f, terms)


@given(**cells, share=st.booleans())
def test_gru_forward_and_backward_match_the_formulas(build, rows, hidden, scale, layout, seed,
                                                     share):
    rng = np.random.default_rng(seed)
    x_gates, h_gates = (_draw(rng, (rows, 3 * hidden), scale, layout) for _ in range(2))
    h, dh = (_draw(rng, (rows, hidden), 1.0, layout) for _ in range(2))
    h_new, saved = native.gru_forward(x_gates, h_gates, h)
    rz, n, h_n, h_saved = saved

    x64, g64 = x_gates.astype(np.float64), h_gates.astype(np.float64)
    r = _sigmoid(x64[:, :hidden] + g64[:, :hidden])
    z = _sigmoid(x64[:, hidden:2 * hidden] + g64[:, hidden:2 * hidden])
    candidate = np.tanh(x64[:, 2 * hidden:] + r * g64[:, 2 * hidden:])
    n_terms = np.abs(x64[:, 2 * hidden:]) + np.abs(g64[:, 2 * hidden:]) + 1
    _close(rz, np.concatenate([r, z], axis=1), 1.0)
    _close(n, candidate, n_terms)
    _close(h_new, candidate + z * (h - candidate), n_terms + np.abs(h))
    assert h_saved is h and np.shares_memory(h_n, h_gates)

    dx_gates = np.full((rows, 3 * hidden), np.nan, np.float32)
    dh_gates = np.full((rows, 3 * hidden), np.nan, np.float32) if share else None
    direct = native.gru_backward(saved, dh, dx_gates, dh_gates)
    r, z = (rz[:, k * hidden:(k + 1) * hidden].astype(np.float64) for k in range(2))
    n = n.astype(np.float64)
    dn = dh * (1 - z) * (1 - n ** 2)
    expected = np.concatenate([dn * g64[:, 2 * hidden:] * r * (1 - r),
                               dh * (h - n) * z * (1 - z), dn], axis=1)
    terms = np.abs(dh) * (1 + np.abs(h) + np.abs(g64[:, 2 * hidden:]))
    _close(dx_gates, expected, np.tile(terms, 3))
    _close(direct, dh * z, terms)
    if share:
        expected[:, 2 * hidden:] *= r
        _close(dh_gates, expected, np.tile(terms, 3))


def test_outputs_go_where_asked(build):
    rng = np.random.default_rng(0)
    x_gates, h_gates = (rng.standard_normal((3, 8)).astype(np.float32) for _ in range(2))
    c = rng.standard_normal((3, 2)).astype(np.float32)
    states = np.zeros((2, 3, 2), np.float32)
    h_new, _, saved = native.lstm_forward(x_gates, h_gates, c, h_out=states[1])
    assert np.shares_memory(h_new, states[1])
    assert np.array_equal(states[1], native.lstm_forward(x_gates, h_gates, c)[0])
    assert not np.any(states[0])
    da = np.zeros((2, 3, 8), np.float32)
    result, _ = native.lstm_backward(saved, c, c, out=da[0])
    assert np.shares_memory(result, da[0]) and np.all(da[0] != 0) and not np.any(da[1])
    h_new, _ = native.gru_forward(x_gates[:, :6], h_gates[:, :6], c, h_out=states[0])
    assert np.shares_memory(h_new, states[0]) and np.all(states[0] != 0)


def _ulps(actual, expected):
    return np.abs(actual - expected) / np.spacing(np.abs(expected).astype(np.float32))


def test_sigmoid_and_tanh_within_two_and_a_half_ulp(build):
    """The gates of one LSTM step with h_gates = 0 and c = 0 are sigmoid(x) and tanh(x) of
    x_gates itself: densely over [-12, 12], more sparsely out to where sigmoid's value is
    float32's smallest normal number (e^-87), and at magnitudes from 1e-30 to 1, both signs
    (tanh's series and its exp form meet at 0.4). Beyond e^-87, sigmoid stays below 2e-38."""
    tiny = np.float32(10.0) ** np.arange(-30, 0.5, 0.01, dtype=np.float32)
    x = np.concatenate([np.linspace(-12, 12, 200001, dtype=np.float32),
                        np.linspace(-87, 88, 20001, dtype=np.float32), tiny, -tiny])
    x_gates = np.repeat(x[:, None], 4, axis=1)
    gates = native.lstm_forward(x_gates, np.zeros_like(x_gates),
                                np.zeros((x.size, 1), np.float32))[2][0]
    x64 = x.astype(np.float64)
    assert _ulps(gates[:, 0], _sigmoid(x64)).max() <= 2.5
    assert _ulps(gates[:, 2], np.tanh(x64)).max() <= 2.5
    assert np.array_equal(np.sign(gates[:, 2]), np.sign(x))
    far = np.array([[-1e4, -100, 1e4, 100], [100, 1e4, -100, -1e4]], np.float32)
    gates = native.lstm_forward(far, np.zeros_like(far), np.zeros((2, 1), np.float32))[2][0]
    tiny = np.abs(gates) < 2e-38
    assert np.array_equal(tiny, [[True, True, False, False], [False, False, False, True]])
    assert np.array_equal(gates[~tiny], [1, 1, 1, 1, -1])


@given(rows=st.integers(1, 6), width=st.integers(1, 70), scale=st.sampled_from([0.1, 3.0, 300.0]),
       layout=st.sampled_from(["plain", "rows of a wider array"]), seed=st.integers(0, 2 ** 16))
def test_softmax_cross_entropy_matches_the_formula(build, rows, width, scale, layout, seed):
    """Widths on both sides of the kernel's 16 lanes, logits far apart (probabilities that
    underflow), targets anywhere in the row."""
    rng = np.random.default_rng(seed)
    x = _draw(rng, (rows, width), scale, layout)
    targets = rng.integers(0, width, rows)
    probabilities = np.full((rows, width), np.nan, np.float32)
    losses = np.full(rows, np.nan, np.float32)
    assert native.softmax_cross_entropy(x, targets, probabilities, losses)
    shifted = x.astype(np.float64) - x.max(axis=1, keepdims=True)
    total = np.exp(shifted).sum(axis=1)
    expected = np.exp(shifted) / total[:, None]
    # e^s of a rounded float32 s: relative error up to |s| epsilon
    allowed = expected * (2e-6 + 2 * EPSILON * np.abs(shifted)) + 1e-37
    assert np.all(np.abs(probabilities - expected) <= allowed)
    expected = np.log(total) - shifted[np.arange(rows), targets]
    _close(losses, expected, np.log(total) + np.abs(shifted[np.arange(rows), targets]))


@given(size=st.integers(1, 100), scale=st.sampled_from([0.01, 1.0, 5.0, 30.0]),
       seed=st.integers(0, 2 ** 16))
def test_gelu_matches_the_exact_formula(build, size, scale, seed):
    """y = x Phi(x) and slope = Phi(x) + x phi(x) against SciPy's erf in float64 (the kernel's
    erf is Abramowitz & Stegun 7.1.26, within 1.5e-7), and against the portable float32 code
    that uses the same approximation."""
    from scipy.special import erf
    x = _draw(np.random.default_rng(seed), (1, size), scale, "plain")[0]
    y, slope = np.full_like(x, np.nan), np.full_like(x, np.nan)
    assert native.gelu_forward(x, y, slope)
    x64 = x.astype(np.float64)
    cdf = 0.5 * (1 + erf(x64 / np.sqrt(2)))
    _close(y, x64 * cdf, 0.05 * np.abs(x64) + 0.05)
    _close(slope, cdf + x64 * np.exp(-x64 ** 2 / 2) / np.sqrt(2 * np.pi),
           0.05 * np.abs(x64) + 0.05)
    previous = native.set_enabled(False)
    try:
        portable_y, portable_slope = elementwise.gelu_forward(x)
    finally:
        native.set_enabled(previous)
    _close(y, portable_y.astype(np.float64), 1 + np.abs(x64))
    _close(slope, portable_slope.astype(np.float64), 1 + np.abs(x64))


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
def test_layer_norm_matches_the_formulas(build, rows, width, scale, layout, affine, needs, seed):
    """Forward (y, xhat, invstd) and backward (dx, and dscale, dbias added to what is there)
    against float64 formulas, with and without scale and bias, each gradient wanted or not."""
    rng = np.random.default_rng(seed)
    x = _draw(rng, (rows, width), scale, layout) + np.float32(scale)      # an offset mean
    dy = _draw(rng, (rows, width), 1.0, layout)
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
    _close(invstd, inverse[:, 0], inverse[:, 0] * width)
    _close(xhat, h, spread * width)
    _close(y, expected_y, spread * width * (np.abs(gamma) + 1 if affine else 1))

    dx = np.full((rows, width), np.nan, np.float32) if needs[0] else None
    dscale = np.ones(width, np.float32) if needs[1] else None
    dbias = np.ones(width, np.float32) if needs[2] else None
    assert native.layer_norm_backward(dy, xhat, invstd, gamma, dx, dscale, dbias)
    h, inverse = xhat.astype(np.float64), invstd.astype(np.float64)[:, None]
    g = dy * gamma if affine else dy.astype(np.float64)
    terms = np.abs(g).sum(axis=1, keepdims=True) * (1 + np.abs(h)) * inverse
    if needs[0]:
        _close(dx, inverse * (g - g.mean(axis=1, keepdims=True)
                              - h * (g * h).mean(axis=1, keepdims=True)), terms)
    if needs[1]:
        _close(dscale, 1 + (dy * h).sum(axis=0), 1 + (np.abs(dy) * np.abs(h)).sum(axis=0))
    if needs[2]:
        _close(dbias, 1 + dy.astype(np.float64).sum(axis=0), 1 + np.abs(dy).sum(axis=0))


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
def test_scatter_rows_add_matches_numpy_add_at(build, rows, vocabulary, width, layout, seed):
    """Repeated and negative indices, added to what the target holds, against np.add.at."""
    rng = np.random.default_rng(seed)
    target = _draw(rng, (vocabulary, width), 1.0, layout)
    values = _draw(rng, (max(rows, 1), width), 1.0, layout)[:rows]
    index = rng.integers(-vocabulary, vocabulary, rows)
    expected = target.astype(np.float64)
    np.add.at(expected, index, values)
    assert native.scatter_rows_add(target, index.astype(np.int32), values)
    _close(target, expected, 1 + np.abs(expected))


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
def test_epilogue_matches_the_formula(build, rows, width, with_bias, with_residual, relu,
                                      layout, seed):
    rng = np.random.default_rng(seed)
    y = _draw(rng, (rows, width), 1.0, layout)
    bias = rng.standard_normal(rows).astype(np.float32) if with_bias else None
    residual = _draw(rng, (rows, width), 1.0, layout) if with_residual else None
    expected = y.astype(np.float64)
    if with_bias:
        expected += bias[:, None]
    if with_residual:
        expected += residual
    if relu:
        expected = np.maximum(expected, 0)
    assert native.epilogue(y, bias, residual, relu)
    _close(y, expected, 3.0)
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


@given(batch=st.integers(1, 3), queries=st.integers(1, 9), keys=st.integers(1, 40),
       causal=st.booleans(), scale=st.sampled_from([0.1, 3.0, 100.0]),
       seed=st.integers(0, 2 ** 16))
def test_attention_softmax_matches_the_formula(build, batch, queries, keys, causal, scale,
                                               seed):
    """backend/attention.masked_softmax on float32 scores without a user mask (the compiled
    kernel): each row's softmax over its keys, with causal only over the keys j <= i of query
    i (numpy.tri(Tq, Tk), Tq above and below Tk), zeros after."""
    rng = np.random.default_rng(seed)
    scores = (rng.standard_normal((batch, queries, keys)) * scale).astype(np.float32)
    kept = np.tri(queries, keys, dtype=bool) if causal else np.ones((queries, keys), bool)
    masked = np.where(kept, scores.astype(np.float64), -np.inf)
    shifted = masked - masked.max(axis=-1, keepdims=True)
    want = np.exp(shifted) / np.exp(shifted).sum(axis=-1, keepdims=True)
    got = attention.masked_softmax(scores.copy(), None, guard=False, causal=causal)
    allowed = want * (2e-6 + 2 * EPSILON * np.abs(np.where(kept, shifted, 0))) + 1e-37
    assert np.all(np.abs(got - want) <= allowed)
    assert np.all(got[:, ~kept] == 0)


def test_attention_softmax_with_a_mask_and_causal_takes_both():
    """A user mask with causal: the portable path, the mask and the causal pattern together."""
    rng = np.random.default_rng(5)
    scores = rng.standard_normal((2, 4, 6)).astype(np.float32)
    keep = np.ones((2, 1, 6), bool)
    keep[1, :, 0] = False
    got = attention.masked_softmax(scores.copy(), keep, guard=True, causal=True)
    masked = np.where(keep & np.tri(4, 6, dtype=bool), scores.astype(np.float64), -np.inf)
    peak = masked.max(axis=-1, keepdims=True)
    peak[~np.isfinite(peak)] = 0
    total = np.exp(masked - peak).sum(axis=-1, keepdims=True)
    total[total == 0] = 1
    np.testing.assert_allclose(got, np.exp(masked - peak) / total, rtol=2e-6, atol=1e-30)
    assert np.all(got[1, 0] == 0)                       # its only key masked: zeros, no NaN
    with pytest.raises(ValueError, match="attention_softmax: expected a positive number of "
                                         "queries, got 0"):
        native._native.attention_softmax(scores[0], 0, True)


def test_softmax_cross_entropy_does_not_depend_on_a_shift_of_the_row(build):
    """Rows of logits all far below or above 0 give the probabilities of the row around 0."""
    rng = np.random.default_rng(2)
    centred = rng.standard_normal((1, 40)).astype(np.float32)
    x = np.concatenate([centred, centred - 1000, centred + 1000])
    probabilities, losses = np.empty_like(x), np.empty(3, np.float32)
    assert native.softmax_cross_entropy(x, np.array([3, 3, 3]), probabilities, losses)
    np.testing.assert_allclose(probabilities[1:], probabilities[[0, 0]], rtol=1e-4)
    np.testing.assert_allclose(losses[1:], losses[[0, 0]], rtol=1e-4)


def test_softmax_cross_entropy_rejects_bad_targets_and_propagates_nan(build):
    x = np.zeros((3, 5), np.float32)
    probabilities, losses = np.empty_like(x), np.empty(3, np.float32)
    with pytest.raises(ValueError, match="softmax_cross_entropy: target 5 of row 1 is outside "
                                         "\\[0, 5\\)"):
        native.softmax_cross_entropy(x, np.array([0, 5, 1]), probabilities, losses)
    with pytest.raises(ValueError, match="softmax_cross_entropy: target -1 of row 0"):
        native.softmax_cross_entropy(x, np.array([-1, 0, 1]), probabilities, losses)
    with pytest.raises(ValueError, match="expected targets of 3 elements, got 2"):
        native._native.softmax_cross_entropy(x, probabilities, np.zeros(2, np.int64), losses)
    with pytest.raises(ValueError, match="expected losses as a contiguous 1-D float32 array"):
        native._native.softmax_cross_entropy(x, probabilities, np.zeros(3, np.int64),
                                             np.zeros(3))
    x[1, 2] = np.nan
    assert native.softmax_cross_entropy(x, np.array([0, 1, 4], np.int32), probabilities, losses)
    assert np.isnan(losses[1]) and np.all(np.isnan(probabilities[1]))
    np.testing.assert_allclose(losses[[0, 2]], np.log(5), rtol=1e-6)
    assert native.softmax_cross_entropy(x.astype(np.float64), np.array([0, 1, 4]),
                                        probabilities, losses) is None


def test_the_token_loss_agrees_with_the_portable_code():
    """token_cross_entropy over a 3-D batch, with an ignored position, compiled against the
    portable passes: the loss and the gradient."""
    rng = np.random.default_rng(1)
    logits = (rng.standard_normal((3, 7, 50)) * 4).astype(np.float32)
    targets = rng.integers(0, 50, (3, 7))
    targets[1, 2] = -100

    def run(flag):
        previous = native.set_enabled(flag)
        try:
            x = Tensor(data=logits.copy(), stores_grad=True)
            loss = autograd.token_cross_entropy(x, targets)
            (grad,) = [g for _, g in autograd.backward(loss)]
            return loss.to_numpy(), grad
        finally:
            native.set_enabled(previous)

    (loss_native, grad_native), (loss_numpy, grad_numpy) = run(True), run(False)
    np.testing.assert_allclose(loss_native, loss_numpy, rtol=1e-6)
    np.testing.assert_allclose(grad_native, grad_numpy, rtol=1e-5, atol=1e-9)


def test_bad_operands_are_clear_errors():
    rows = np.zeros((2, 3), np.float32)
    gates = np.zeros((2, 12), np.float32)
    out = [np.zeros((2, 3), np.float32) for _ in range(3)]
    with pytest.raises(ValueError, match="lstm_forward: expected h_gates of shape \\(2, 12\\), "
                                         "got \\(2, 8\\)"):
        native._native.lstm_forward(gates, np.zeros((2, 8), np.float32), rows, *out, gates)
    with pytest.raises(ValueError, match="lstm_forward: expected x_gates as a 2-D float32"):
        native._native.lstm_forward(gates.astype(np.float64), gates, rows, *out, gates)
    with pytest.raises(ValueError, match="lstm_forward: expected c as a 2-D float32 array with "
                                         "contiguous rows"):
        native._native.lstm_forward(gates, gates, np.zeros((3, 2), np.float32).T, *out, gates)
    with pytest.raises(TypeError, match="lstm_forward: expected 7 arrays, got 2"):
        native._native.lstm_forward(gates, gates)
    read_only = np.zeros((2, 3), np.float32)
    read_only.flags.writeable = False
    with pytest.raises(ValueError, match="lstm_forward: h_out: .*read-only"):
        native._native.lstm_forward(gates, gates, rows, read_only, out[1], out[2], gates)
    with pytest.raises(TypeError, match="gru_forward: h_out: .*not .list."):
        native._native.gru_forward(gates, gates, rows, [1.0], out[0], out[1])
    with pytest.raises(ValueError, match="'sse9' is not built or not supported"):
        native._native.set_instruction_set("sse9")


def test_the_kernels_apply_only_to_float32_numpy_rows():
    x = np.zeros((2, 8), np.float32)
    c = np.zeros((2, 2), np.float32)
    assert native.lstm_forward(x, x, c) is not None
    assert native.lstm_forward(x.astype(np.float64), x, c) is None
    assert native.lstm_forward(x, x, np.zeros((4, 2), np.float32)[::2]) is not None
    assert native.lstm_forward(x, x, np.zeros((2, 4), np.float32)[:, ::2]) is None
    assert native.lstm_forward(x[None], x, c) is None
    assert native.lstm_forward(x, x, c, h_out=np.zeros((2, 2))) is None
    previous = native.set_enabled(False)
    try:
        assert native.lstm_forward(x, x, c) is None and native.instruction_set() == "off"
        assert autograd.runtime.describe()["native_kernels"] == "off"
    finally:
        native.set_enabled(previous)
    assert native.instruction_set() in ("generic", "avx2", "avx512")
    with pytest.raises(TypeError, match="set_enabled: expected True or False, got 1"):
        native.set_enabled(1)


def test_without_the_compiled_module(monkeypatch):
    monkeypatch.setattr(native, "_native", None)
    monkeypatch.setitem(native._state, "enabled", False)
    assert not native.available() and native.instruction_set() == "not built"
    with pytest.raises(RuntimeError, match="set_enabled: the compiled kernels are not built"):
        native.set_enabled(True)


def test_ci_builds_them():
    """CI installs from source with a C compiler: the kernels must be there, or every speed
    figure would be measured on the portable code without anyone noticing."""
    if not os.environ.get("CI"):
        pytest.skip("only CI promises a C compiler")
    assert native.available()


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_layers_agree_with_the_portable_code(cell, build):
    """A 2-layer recurrent net's outputs and every gradient, compiled against portable, float32
    (both run the same GEMMs, so they differ by the cells' rounding only)."""
    rng = np.random.default_rng(3)
    layer_type = autograd.LSTM if cell == "lstm" else autograd.GRU
    layers = [layer_type(6, 5, return_sequences=True), layer_type(5, 5, return_sequences=True)]
    x = rng.standard_normal((7, 4, 6)).astype(np.float32)
    dy = rng.standard_normal((7, 4, 5)).astype(np.float32)

    def run(flag):
        previous = native.set_enabled(flag)
        try:
            inputs = Tensor(data=x.copy())
            h = inputs
            for layer in layers:
                h, _ = layer(h)
            loss = autograd.sum(autograd.mul(h, Tensor(data=dy, requires_grad=False)))
            grads = {id(p): g for p, g in autograd.backward(loss)}
            params = [p for layer in layers for p in layer.get_params().values()]
            return h.to_numpy(), [grads[id(p)] for p in params]
        finally:
            native.set_enabled(previous)

    (y_native, g_native), (y_numpy, g_numpy) = run(True), run(False)
    np.testing.assert_allclose(y_native, y_numpy, rtol=1e-5, atol=1e-6)
    for a, b in zip(g_native, g_numpy):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
