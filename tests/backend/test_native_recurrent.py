"""The compiled LSTM and GRU cells (autograd/backend/native.py) against float64 formulas written
here, for every instruction-set build this CPU runs, on drawn sizes (vector tails included),
values (the saturated ends of sigmoid and tanh, and tanh's series near 0) and layouts (rows of
wider arrays); sigmoid and tanh to the ulp; and the recurrent layers against the portable code."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import autograd
from autograd import Tensor
from autograd.backend import native
from tests.backend.native_helpers import close, draw, sigmoid, ulps

pytestmark = pytest.mark.skipif(not native.available(),
                                reason="the compiled kernels are not built in this install")

cells = dict(rows=st.integers(1, 5), hidden=st.integers(1, 40), scale=st.sampled_from(
    [0.05, 1.0, 4.0, 40.0]), layout=st.sampled_from(["plain", "rows of a wider array"]),
    seed=st.integers(0, 2 ** 16))


@given(**cells)
def test_lstm_forward_and_backward_match_the_formulas(instruction_set, rows, hidden, scale, layout, seed):
    rng = np.random.default_rng(seed)
    x_gates, h_gates = (draw(rng, (rows, 4 * hidden), scale, layout) for _ in range(2))
    c, dh, dc_next = (draw(rng, (rows, hidden), 1.0, layout) for _ in range(3))
    h_new, c_new, (gates, c_saved, tanh_c) = native.lstm_forward(x_gates, h_gates, c)

    a = x_gates.astype(np.float64) + h_gates
    i, f, g, o = (a[:, k * hidden:(k + 1) * hidden] for k in range(4))
    i, f, g, o = sigmoid(i), sigmoid(f), np.tanh(g), sigmoid(o)
    cell = f * c + i * g
    state = np.abs(c) + 1                       # the terms of c' (the gates' errors are ulps)
    close(gates, np.concatenate([i, f, g, o], axis=1), 1.0)
    close(c_new, cell, state)
    close(tanh_c, np.tanh(cell), state)
    close(h_new, o * np.tanh(cell), state)
    assert c_saved is c

    da, dc = native.lstm_backward((gates, c, tanh_c), dh, dc_next)
    i, f, g, o = (gates[:, k * hidden:(k + 1) * hidden].astype(np.float64) for k in range(4))
    t = tanh_c.astype(np.float64)
    dcell = dc_next + dh * o * (1 - t ** 2)
    expected = np.concatenate([dcell * g * i * (1 - i), dcell * c * f * (1 - f),
                               dcell * i * (1 - g ** 2), dh * t * o * (1 - o)], axis=1)
    terms = (np.abs(dc_next) + np.abs(dh) * (2 + np.abs(c))) * state
    close(da, expected, np.tile(terms, 4))
    close(dc, dcell * f, terms)


@given(**cells, share=st.booleans())
def test_gru_forward_and_backward_match_the_formulas(instruction_set, rows, hidden, scale, layout, seed,
                                                     share):
    rng = np.random.default_rng(seed)
    x_gates, h_gates = (draw(rng, (rows, 3 * hidden), scale, layout) for _ in range(2))
    h, dh = (draw(rng, (rows, hidden), 1.0, layout) for _ in range(2))
    h_new, saved = native.gru_forward(x_gates, h_gates, h)
    rz, n, h_n, h_saved = saved

    x64, g64 = x_gates.astype(np.float64), h_gates.astype(np.float64)
    r = sigmoid(x64[:, :hidden] + g64[:, :hidden])
    z = sigmoid(x64[:, hidden:2 * hidden] + g64[:, hidden:2 * hidden])
    candidate = np.tanh(x64[:, 2 * hidden:] + r * g64[:, 2 * hidden:])
    n_terms = np.abs(x64[:, 2 * hidden:]) + np.abs(g64[:, 2 * hidden:]) + 1
    close(rz, np.concatenate([r, z], axis=1), 1.0)
    close(n, candidate, n_terms)
    close(h_new, candidate + z * (h - candidate), n_terms + np.abs(h))
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
    close(dx_gates, expected, np.tile(terms, 3))
    close(direct, dh * z, terms)
    if share:
        expected[:, 2 * hidden:] *= r
        close(dh_gates, expected, np.tile(terms, 3))


def test_outputs_go_where_asked(instruction_set):
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


def test_sigmoid_and_tanh_within_two_and_a_half_ulp(instruction_set):
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
    assert ulps(gates[:, 0], sigmoid(x64)).max() <= 2.5
    assert ulps(gates[:, 2], np.tanh(x64)).max() <= 2.5
    assert np.array_equal(np.sign(gates[:, 2]), np.sign(x))
    far = np.array([[-1e4, -100, 1e4, 100], [100, 1e4, -100, -1e4]], np.float32)
    gates = native.lstm_forward(far, np.zeros_like(far), np.zeros((2, 1), np.float32))[2][0]
    tiny = np.abs(gates) < 2e-38
    assert np.array_equal(tiny, [[True, True, False, False], [False, False, False, True]])
    assert np.array_equal(gates[~tiny], [1, 1, 1, 1, -1])


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_layers_agree_with_the_portable_code(cell, instruction_set):
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
