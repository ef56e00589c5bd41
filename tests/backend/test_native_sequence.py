"""An LSTM layer's steps in one compiled call (autograd/backend/csrc/sequence_bindings.h,
through native_sequence.lstm_sequence_forward and lstm_sequence_backward, which LSTMSequence
takes): hs, the cell states and the gradients against the portable step-by-step loop in
float64, for every instruction-set build this CPU runs, batches on both sides of the small
products' bands, W_hh^T row-major or a transposed view, one thread or three; when the kernels
step aside; the bindings' errors."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import autograd
from autograd.backend import native, native_sequence, numpy_kernels
from autograd.operations import recurrent_sequence
from tests.backend.native_helpers import close

pytestmark = pytest.mark.skipif(not native.available(),
                                reason="the compiled kernels are not built in this install")


def operands(rng, steps, batch, hidden):
    x_gates = rng.standard_normal((steps, batch, 4 * hidden)).astype(np.float32)
    h0 = rng.standard_normal((batch, hidden)).astype(np.float32) * 0.5
    c0 = rng.standard_normal((batch, hidden)).astype(np.float32) * 0.5
    W_hh = (rng.standard_normal((hidden, 4 * hidden)) / np.sqrt(hidden)).astype(np.float32)
    return x_gates, h0, c0, W_hh


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def reference(x_gates, h0, c0, W_hh, dhs, dh_last, dc_last):
    """The LSTM equations step by step in float64: hs, cs and (da, dh0, dc0)."""
    x_gates, h, c, W = (a.astype(np.float64) for a in (x_gates, h0, c0, W_hh))
    hidden = h.shape[1]
    hs, cs, saved = [h], [c], []
    for t in range(x_gates.shape[0]):
        a = x_gates[t] + h @ W
        i, f, o = (sigmoid(a[:, k * hidden:(k + 1) * hidden]) for k in (0, 1, 3))
        g = np.tanh(a[:, 2 * hidden:3 * hidden])
        c_new = f * c + i * g
        h = o * np.tanh(c_new)
        saved.append((i, f, g, o, c, np.tanh(c_new)))
        c = c_new
        hs.append(h)
        cs.append(c)
    da = np.empty(x_gates.shape)
    dh_next, dc = dh_last.astype(np.float64), dc_last.astype(np.float64)
    for t in range(x_gates.shape[0] - 1, -1, -1):
        i, f, g, o, c_prev, tanh_c = saved[t]
        dh = dhs[t] + dh_next
        dc = dc + dh * o * (1 - tanh_c ** 2)
        da[t] = np.concatenate([dc * g * i * (1 - i), dc * c_prev * f * (1 - f),
                                dc * i * (1 - g ** 2), dh * tanh_c * o * (1 - o)], axis=1)
        dc = dc * f
        dh_next = da[t] @ W.T
    return np.stack(hs), np.stack(cs), (da, dh_next, dc)


@settings(max_examples=25, deadline=None)
@given(steps=st.integers(1, 7), batch=st.sampled_from([1, 2, 3, 5, 8, 13, 32]),
       hidden=st.sampled_from([1, 3, 8, 40]), transposed=st.booleans(),
       threads=st.sampled_from([1, 3]), seed=st.integers(0, 2 ** 16))
def test_the_whole_sequence_matches_the_lstm_equations(instruction_set, steps, batch, hidden,
                                                       transposed, threads, seed):
    """hs and cs forward, da, dh0 and dc0 backward, against float64 equations written here;
    W_hh^T as the row-major copy (what repeated_operand gives at 4 rows or more) or as a view
    of W_hh, read as dot products (up to 16 rows)."""
    if transposed and batch > 16:
        batch = 16
    rng = np.random.default_rng(seed)
    x_gates, h0, c0, W_hh = operands(rng, steps, batch, hidden)
    dhs = rng.standard_normal((steps, batch, hidden)).astype(np.float32)
    dh_last = rng.standard_normal((batch, hidden)).astype(np.float32)
    dc_last = rng.standard_normal((batch, hidden)).astype(np.float32)
    W_hh_T = W_hh.T if transposed else np.ascontiguousarray(W_hh.T)
    previous = autograd.get_num_threads()
    autograd.set_num_threads(threads)
    try:
        whole = native_sequence.lstm_sequence_forward(x_gates, h0, c0, W_hh)
        assert whole is not None
        hs, cs, gates, tanh_cs = whole
        gradients = native_sequence.lstm_sequence_backward((gates, cs, tanh_cs), dhs, dh_last,
                                                           dc_last, W_hh_T)
    finally:
        autograd.set_num_threads(previous)
    assert gradients is not None
    want_hs, want_cs, want_gradients = reference(x_gates, h0, c0, W_hh, dhs, dh_last, dc_last)
    scale = 4 * (steps + hidden)         # error grows along the steps and the inner products
    close(hs, want_hs, scale)
    close(cs, want_cs, scale)
    for got, want in zip(gradients, want_gradients):
        close(got, want, scale * (1 + np.abs(want)))


@pytest.mark.parametrize("batch, hidden", [(2, 40), (3, 40), (8, 40), (8, 70), (32, 70)])
def test_each_step_split_by_hidden_units_gives_the_whole_products_bits(batch, hidden):
    """From a batch of 2 the loop splits each step by blocks of 32 hidden units (their four
    gates' columns of h W_hh, then their cells): every value is what the whole product and the
    cell give, step by step through the compiled product and the cell's own binding, bit for
    bit, at 1, 2 and 3 threads (40 and 70 units: a partial last block)."""
    rng = np.random.default_rng(batch * 100 + hidden)
    x_gates, h0, c0, W_hh = operands(rng, 5, batch, hidden)
    h, c, expected = h0, c0, []
    for t in range(5):
        h_gates = np.empty((batch, 4 * hidden), np.float32)
        assert native.product(h, W_hh, h_gates)          # the compiled small product
        step = [np.empty((batch, hidden), np.float32), np.empty((batch, hidden), np.float32),
                np.empty((batch, 4 * hidden), np.float32), np.empty((batch, hidden), np.float32)]
        native._native.lstm_forward(x_gates[t], h_gates, c, *step)
        expected.append(step)
        h, c = step[0], step[1]
    previous = autograd.get_num_threads()
    try:
        for threads in (1, 2, 3):
            autograd.set_num_threads(threads)
            hs, cs, gates, tanh_cs = native_sequence.lstm_sequence_forward(x_gates, h0, c0, W_hh)
            for t, (h_new, c_new, g, tanh_c) in enumerate(expected):
                assert hs[t + 1].tobytes() == h_new.tobytes()
                assert cs[t + 1].tobytes() == c_new.tobytes()
                assert gates[t].tobytes() == g.tobytes()
                assert tanh_cs[t].tobytes() == tanh_c.tobytes()
    finally:
        autograd.set_num_threads(previous)


def test_the_binding_reads_a_transposed_W_hh_through_the_whole_product():
    """The binding also takes W_hh as a transposed view (contiguous columns); the split by
    hidden units reads W_hh's rows, so such a W_hh goes through the whole product, and hs
    and cs still follow the equations."""
    rng = np.random.default_rng(4)
    steps, batch, hidden = 4, 8, 40
    x_gates, h0, c0, W_hh = operands(rng, steps, batch, hidden)
    transposed = np.ascontiguousarray(W_hh.T).T          # W_hh's values, columns contiguous
    hs = np.empty((steps + 1, batch, hidden), np.float32)
    cs = np.empty_like(hs)
    gates = np.empty((steps, batch, 4 * hidden), np.float32)
    tanh_cs = np.empty((steps, batch, hidden), np.float32)
    hs[0], cs[0] = h0, c0
    native._native.lstm_sequence_forward(
        x_gates[:, None], hs[:, None], cs[:, None], gates[:, None], tanh_cs[:, None],
        np.empty((1, 1, batch, 4 * hidden), np.float32), transposed, 2)
    zeros = np.zeros((steps, batch, hidden))
    want_hs, want_cs, _ = reference(x_gates, h0, c0, W_hh, zeros, zeros[0], zeros[0])
    close(hs, want_hs, 4 * (steps + hidden))
    close(cs, want_cs, 4 * (steps + hidden))


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "portable"])
def test_the_op_gives_what_the_step_by_step_loop_gives(compiled):
    """LSTMSequence forward and backward with the whole-sequence kernels, and with the
    portable NumPy loop."""
    previous = native.set_enabled(compiled)
    try:
        check_the_op_against_the_equations()
    finally:
        native.set_enabled(previous)


def check_the_op_against_the_equations():
    rng = np.random.default_rng(9)
    x_gates, h0, c0, W_hh = operands(rng, 6, 4, 16)
    tensors = [autograd.Tensor(data=a, stores_grad=True) for a in (x_gates, h0, c0, W_hh)]
    hs, h, c = recurrent_sequence.lstm_sequence(*tensors)
    loss = autograd.sum(hs * hs) + autograd.sum(c)
    grads = {id(p): g.data for p, g in autograd.backward(loss)}
    want_hs, want_cs, _ = reference(x_gates, h0, c0, W_hh, np.zeros((6, 4, 16)),
                                    np.zeros((4, 16)), np.zeros((4, 16)))
    close(hs.data, want_hs[1:], 100)
    close(c.data, want_cs[-1], 100)
    np.testing.assert_array_equal(h.data, hs.data[-1])
    # the gradients of the float64 loss, by the reference's backward
    dhs = 2 * want_hs[1:]
    _, _, (da, dh0, dc0) = reference(x_gates, h0, c0, W_hh, dhs, np.zeros((4, 16)),
                                     np.ones((4, 16)))
    close(grads[id(tensors[0])], da, 400 * (1 + np.abs(da)))
    close(grads[id(tensors[1])], dh0, 400 * (1 + np.abs(dh0)))
    close(grads[id(tensors[2])], dc0, 400 * (1 + np.abs(dc0)))
    dW = want_hs[:-1].reshape(-1, 16).T @ da.reshape(-1, 64)
    close(grads[id(tensors[3])], dW, 400 * (1 + np.abs(dW)))


def test_the_op_takes_the_whole_sequence_kernels(monkeypatch):
    """At float32 and a batch of 32 or less the op calls them, forward and backward."""
    calls = []
    for name in ("lstm_sequence_forward", "lstm_sequence_backward"):
        original = getattr(numpy_kernels, name)
        monkeypatch.setattr(numpy_kernels, name,
                            lambda *a, _o=original, _n=name: calls.append(_n) or _o(*a))
    rng = np.random.default_rng(10)
    tensors = [autograd.Tensor(data=a, stores_grad=True) for a in operands(rng, 3, 2, 8)]
    hs, _, _ = recurrent_sequence.lstm_sequence(*tensors)
    list(autograd.backward(autograd.sum(hs)))
    assert calls == ["lstm_sequence_forward", "lstm_sequence_backward"]


def test_they_step_aside():
    """float64, a batch over 32 (over 16 with a transposed W_hh^T), a W_hh that is not
    row-major, switched off: None."""
    rng = np.random.default_rng(11)
    x_gates, h0, c0, W_hh = operands(rng, 2, 3, 4)
    assert native_sequence.lstm_sequence_forward(*(a.astype(np.float64) for a in
                                          (x_gates, h0, c0, W_hh))) is None
    big = operands(rng, 2, 33, 4)
    assert native_sequence.lstm_sequence_forward(*big) is None
    assert native_sequence.lstm_sequence_forward(x_gates, h0, c0, np.asfortranarray(W_hh)) is None
    hs, cs, gates, tanh_cs = native_sequence.lstm_sequence_forward(x_gates, h0, c0, W_hh)
    dhs = np.zeros((2, 3, 4), np.float32)
    dh, dc = np.zeros((3, 4), np.float32), np.zeros((3, 4), np.float32)
    strided = np.zeros((16, 8), np.float32)[:, ::2]
    saved = (gates, cs, tanh_cs)
    assert native_sequence.lstm_sequence_backward(saved, dhs, dh, dc, strided) is None
    x17 = operands(rng, 2, 17, 4)
    whole = native_sequence.lstm_sequence_forward(*x17)
    assert whole is not None
    _, cs17, gates17, tanh17 = whole
    zeros = np.zeros((17, 4), np.float32)
    assert native_sequence.lstm_sequence_backward((gates17, cs17, tanh17), np.zeros((2, 17, 4),
                                         np.float32), zeros, zeros, x17[3].T) is None
    previous = native.set_enabled(False)
    try:
        assert native_sequence.lstm_sequence_forward(x_gates, h0, c0, W_hh) is None
    finally:
        native.set_enabled(previous)


def test_the_bindings_refuse_mismatched_operands():
    rng = np.random.default_rng(12)
    x_gates, h0, c0, W_hh = operands(rng, 2, 3, 4)
    hs = np.zeros((3, 3, 4), np.float32)
    cs, tanh_cs = np.zeros((3, 3, 4), np.float32), np.zeros((2, 3, 4), np.float32)
    gates, scratch = np.zeros((2, 3, 16), np.float32), np.zeros((3, 16), np.float32)
    with pytest.raises(ValueError, match="lstm_sequence_forward: expected hs of shape"):
        native._native.lstm_sequence_forward(x_gates[:, None], hs[:2, None], cs[:, None],
                                             gates[:, None], tanh_cs[:, None],
                                             scratch[None, None], W_hh, 1)
    with pytest.raises(ValueError, match=r"lstm_sequence_forward: expected W_hh of shape "
                                         r"\(4, 16\)"):
        native._native.lstm_sequence_forward(x_gates[:, None], hs[:, None], cs[:, None],
                                             gates[:, None], tanh_cs[:, None],
                                             scratch[None, None], W_hh.T, 1)
    with pytest.raises(ValueError, match="lstm_sequence_forward: expected x_gates 4H wide"):
        native._native.lstm_sequence_forward(x_gates[:, None, :, :15], hs[:, None],
                                             cs[:, None], gates[:, None], tanh_cs[:, None],
                                             scratch[None, None], W_hh, 1)
    zeros = np.zeros((1, 1, 3, 4), np.float32)
    with pytest.raises(ValueError, match="lstm_sequence_backward: expected da of shape"):
        native._native.lstm_sequence_backward(gates[:, None], cs[:, None], tanh_cs[:, None],
                                              tanh_cs[:, None], zeros, zeros, gates[:1, None],
                                              zeros.copy(), zeros.copy(), W_hh.T.copy(), 1)


def test_a_broadcast_gradient_takes_the_step_loop_over_the_saved_arrays():
    """sum(hs) gives a broadcast dhs (zero strides), which the backward kernel does not take:
    the step-by-step loop then runs over the arrays the whole-sequence forward saved."""
    rng = np.random.default_rng(13)
    x_gates, h0, c0, W_hh = operands(rng, 5, 3, 8)
    tensors = [autograd.Tensor(data=a, stores_grad=True) for a in (x_gates, h0, c0, W_hh)]
    hs, _, _ = recurrent_sequence.lstm_sequence(*tensors)
    grads = {id(p): g.data for p, g in autograd.backward(autograd.sum(hs))}
    _, _, (da, dh0, dc0) = reference(x_gates, h0, c0, W_hh, np.ones((5, 3, 8)),
                                     np.zeros((3, 8)), np.zeros((3, 8)))
    close(grads[id(tensors[0])], da, 400 * (1 + np.abs(da)))
    close(grads[id(tensors[1])], dh0, 400 * (1 + np.abs(dh0)))
    close(grads[id(tensors[2])], dc0, 400 * (1 + np.abs(dc0)))
