"""The fused recurrent cells: forward against NumPy formulas of PyTorch's LSTM and GRU equations,
float64 gradcheck with both outputs' gradients flowing, float32 kept (tests/opcase.py), and the
argument errors. The layers built on them are checked against torch.nn in
tests/layers/test_recurrent.py."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import autograd
from autograd import Tensor
from tests.opcase import OpCase, floats, check_case

# the compiled kernels and the portable code they stand in for: both tested
pytestmark = pytest.mark.usefixtures("compiled_and_portable")

BATCH, HIDDEN = 3, 2


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def lstm_reference(x_gates, h_gates, c):
    """(h', c') of PyTorch's LSTM equations, gate blocks i, f, g, o."""
    a = x_gates + h_gates
    i, f, g, o = np.split(a, 4, axis=1)
    c_new = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
    return sigmoid(o) * np.tanh(c_new), c_new


def gru_reference(x_gates, h_gates, h):
    """h' of PyTorch's GRU equations, gate blocks r, z, n."""
    x_r, x_z, x_n = np.split(x_gates, 3, axis=1)
    h_r, h_z, h_n = np.split(h_gates, 3, axis=1)
    r, z = sigmoid(x_r + h_r), sigmoid(x_z + h_z)
    n = np.tanh(x_n + r * h_n)
    return (1 - z) * n + z * h


def lstm_h(x_gates, h_gates, c):
    return autograd.lstm_cell(x_gates, h_gates, c)[0]


def lstm_c(x_gates, h_gates, c):
    return autograd.lstm_cell(x_gates, h_gates, c)[1]


def lstm_both(x_gates, h_gates, c):
    """h' * c': both outputs carry a gradient into one backward."""
    h, c_new = autograd.lstm_cell(x_gates, h_gates, c)
    return h * c_new


STEPS = 3


def lstm_sequence_reference(x_gates, h, c, W_hh):
    hs = []
    for x_t in x_gates:
        h, c = lstm_reference(x_t, h @ W_hh, c)
        hs.append(h)
    return np.stack(hs), h, c


def gru_sequence_reference(x_gates, h, W_hh, b_hh=0.0):
    hs = []
    for x_t in x_gates:
        h = gru_reference(x_t, h @ W_hh + b_hh, h)
        hs.append(h)
    return np.stack(hs), h


def lstm_sequence_all(*inputs):
    """hs * (h_T + c_T): every output carries a gradient into one backward."""
    hs, h, c = autograd.lstm_sequence(*inputs)
    return hs * (h + c)


def gru_sequence_all(*inputs):
    hs, h = autograd.gru_sequence(*inputs)
    return hs * h


LSTM_INPUTS = [floats(-3, 3, shape=(BATCH, 4 * HIDDEN)), floats(-3, 3, shape=(BATCH, 4 * HIDDEN)),
               floats(shape=(BATCH, HIDDEN))]
GRU_INPUTS = [floats(-3, 3, shape=(BATCH, 3 * HIDDEN)), floats(-3, 3, shape=(BATCH, 3 * HIDDEN)),
              floats(shape=(BATCH, HIDDEN))]

CASES = [
    OpCase(lstm_h, lambda *a: lstm_reference(*a)[0], LSTM_INPUTS, name="lstm_cell_h"),
    OpCase(lstm_c, lambda *a: lstm_reference(*a)[1], LSTM_INPUTS, name="lstm_cell_c"),
    OpCase(lstm_both, lambda *a: np.multiply(*lstm_reference(*a)), LSTM_INPUTS,
           name="lstm_cell_h_and_c"),
    OpCase(autograd.gru_cell, gru_reference, GRU_INPUTS),
    # the previous state as a constant (the zero initial state of a layer)
    OpCase(lstm_both, lambda *a: np.multiply(*lstm_reference(*a)),
           LSTM_INPUTS[:2] + [floats(shape=(BATCH, HIDDEN), requires_grad=False)],
           name="lstm_cell_constant_c"),
    OpCase(autograd.gru_cell, gru_reference,
           GRU_INPUTS[:2] + [floats(shape=(BATCH, HIDDEN), requires_grad=False)],
           name="gru_cell_constant_h"),
    # the whole loop over time, backward through time with one dW_hh
    OpCase(lstm_sequence_all, lambda x, h, c, W: (lambda hs, h, c: hs * (h + c))(
               *lstm_sequence_reference(x, h, c, W)),
           [floats(-2, 2, shape=(STEPS, BATCH, 4 * HIDDEN)), floats(shape=(BATCH, HIDDEN)),
            floats(shape=(BATCH, HIDDEN)), floats(-1, 1, shape=(HIDDEN, 4 * HIDDEN))],
           name="lstm_sequence"),
    OpCase(lambda *a: autograd.lstm_sequence(*a)[0], lambda *a: lstm_sequence_reference(*a)[0],
           [floats(-2, 2, shape=(STEPS, BATCH, 4 * HIDDEN)),
            floats(shape=(BATCH, HIDDEN), requires_grad=False),
            floats(shape=(BATCH, HIDDEN), requires_grad=False),
            floats(-1, 1, shape=(HIDDEN, 4 * HIDDEN))], name="lstm_sequence_hs_constant_state"),
    OpCase(gru_sequence_all, lambda *a: (lambda hs, h: hs * h)(*gru_sequence_reference(*a)),
           [floats(-2, 2, shape=(STEPS, BATCH, 3 * HIDDEN)), floats(shape=(BATCH, HIDDEN)),
            floats(-1, 1, shape=(HIDDEN, 3 * HIDDEN)), floats(-1, 1, shape=(3 * HIDDEN,))],
           name="gru_sequence"),
    OpCase(lambda *a: autograd.gru_sequence(*a)[1], lambda *a: gru_sequence_reference(*a)[1],
           [floats(-2, 2, shape=(STEPS, BATCH, 3 * HIDDEN)), floats(shape=(BATCH, HIDDEN)),
            floats(-1, 1, shape=(HIDDEN, 3 * HIDDEN))], name="gru_sequence_no_bias_last_h"),
]


@pytest.mark.parametrize("case", CASES, ids=str)
@given(data=st.data())
def test_op(case, data):
    check_case(case, data)


@pytest.mark.parametrize("cell, count", [(autograd.lstm_cell, 4), (autograd.gru_cell, 3)])
def test_errors_name_the_cell_and_the_shapes(cell, count):
    name = cell.__name__
    state = Tensor(data=np.zeros((2, 3), np.float32))
    good = Tensor(data=np.zeros((2, count * 3), np.float32))
    with pytest.raises(ValueError, match=rf"{name}: expected x_gates and h_gates of shape "
                                         rf"\(2, {count * 3}\)"):
        cell(good, Tensor(data=np.zeros((2, count * 3 + 1), np.float32)), state)
    with pytest.raises(ValueError, match=rf"{name}: expected a 2-D state"):
        cell(good, good, Tensor(data=np.zeros((2, 3, 1), np.float32)))
    with pytest.raises(TypeError, match=rf"{name}: expected floating inputs of one dtype"):
        cell(good, good, Tensor(data=np.zeros((2, 3))))
    with pytest.raises(TypeError, match=rf"{name}: expected a Tensor"):
        cell(good.data, good, state)


def test_extreme_gate_values_stay_finite():
    big = Tensor(data=np.full((1, 8), 1e4, np.float32), stores_grad=True)
    c = Tensor(data=np.ones((1, 2), np.float32), stores_grad=True)
    h, c_new = autograd.lstm_cell(big, big, c)
    grads = dict((id(p), g.to_numpy()) for p, g in autograd.backward(autograd.sum(h * c_new)))
    assert np.isfinite(h.to_numpy()).all() and all(np.isfinite(g).all() for g in grads.values())


def test_sequence_errors_name_the_op_and_the_shapes():
    x = Tensor(data=np.zeros((2, 3, 8), np.float32))
    h = Tensor(data=np.zeros((3, 2), np.float32))
    W = Tensor(data=np.zeros((2, 8), np.float32))
    with pytest.raises(ValueError, match=r"lstm_sequence: expected x_gates \(steps, batch, 4 \* "
                                         r"hidden\).*got \(2, 3, 8\), \(3, 2\), \(3, 2\), "
                                         r"\(2, 6\)"):
        autograd.lstm_sequence(x, h, h, Tensor(data=np.zeros((2, 6), np.float32)))
    with pytest.raises(ValueError, match=r"gru_sequence: expected .*b_hh"):
        autograd.gru_sequence(Tensor(data=np.zeros((2, 3, 6), np.float32)), h,
                              Tensor(data=np.zeros((2, 6), np.float32)),
                              Tensor(data=np.zeros(5, np.float32)))
    with pytest.raises(TypeError, match=r"lstm_sequence: expected floating inputs of one dtype"):
        autograd.lstm_sequence(x, h, Tensor(data=np.zeros((3, 2))), W)
