"""lstm_sequence and gru_sequence where the mutation run of issue 22 (docs/testing.md, chunk 5)
found the suite blind: each argument check on its own (the others valid), so that an ``and``
for an ``or`` shows, the messages word for word, and the gradient of each input alone (the
ops skip what is not needed), against a NumPy loop and finite differences."""
import re

import numpy as np
import pytest

import autograd
from autograd import Tensor
from tests.operations.test_recurrent import gru_sequence_reference, lstm_sequence_reference

# the compiled kernels and the portable code they stand in for: both tested
pytestmark = pytest.mark.usefixtures("compiled_and_portable")


def exactly(message):
    return f"^{re.escape(message)}$"


def zeros(*shape, dtype=np.float32):
    return Tensor(data=np.zeros(shape, dtype))


LSTM_EXPECTED = ("lstm_sequence: expected x_gates (steps, batch, 4 * hidden), states (batch, "
                 "hidden), W_hh (hidden, 4 * hidden), got ")
GRU_EXPECTED = ("gru_sequence: expected x_gates (steps, batch, 3 * hidden), states (batch, "
                "hidden), W_hh (hidden, 3 * hidden)")


@pytest.mark.parametrize("x, h0, c0, W", [
    ((2, 3, 8), (3, 2, 1), (3, 2), (2, 8)),      # h0 not 2-D
    ((2, 3, 8), (3, 2), (4, 2), (2, 8)),         # c0 unlike h0
    ((2, 3, 8), (3, 2), (3, 3), (2, 8)),
    ((3, 8), (3, 2), (3, 2), (2, 8)),            # x_gates not 3-D
    ((2, 4, 8), (3, 2), (3, 2), (2, 8)),         # x_gates' batch
    ((2, 3, 6), (3, 2), (3, 2), (2, 8)),         # x_gates' width
    ((2, 3, 8), (3, 2), (3, 2), (3, 8)),         # W_hh
    ((2, 3, 8), (3, 2), (3, 2), (2, 6)),
])
def test_lstm_sequence_each_shape_check_alone(x, h0, c0, W):
    shown = ", ".join(str(s) for s in (x, h0, c0, W))
    with pytest.raises(ValueError, match=exactly(LSTM_EXPECTED + shown)):
        autograd.lstm_sequence(zeros(*x), zeros(*h0), zeros(*c0), zeros(*W))


@pytest.mark.parametrize("x, h0, W, b", [
    ((2, 3, 6), (3,), (2, 6), None),
    ((2, 3, 6), (3, 2), (2, 6), (5,)),
    ((2, 3, 6), (3, 2), (2, 6), (1, 6)),
    ((2, 3), (3, 2), (2, 6), (6,)),
    ((2, 3, 6), (3, 2), (2, 5), (6,)),
])
def test_gru_sequence_each_shape_check_alone(x, h0, W, b):
    shapes = (x, h0, W) + (() if b is None else (b,))
    tail = "" if b is None else ", b_hh (3 * hidden,)"
    with pytest.raises(ValueError, match=exactly(
            GRU_EXPECTED + tail + ", got " + ", ".join(str(s) for s in shapes))):
        autograd.gru_sequence(zeros(*x), zeros(*h0), zeros(*W),
                              None if b is None else zeros(*b))


def test_dtype_checks_alone_and_the_messages():
    f64 = np.float64
    with pytest.raises(TypeError, match=exactly(
            "gru_sequence: expected floating inputs of one dtype, got float32, float32, "
            "float32, float64")):
        autograd.gru_sequence(zeros(2, 3, 6), zeros(3, 2), zeros(2, 6), zeros(6, dtype=f64))
    with pytest.raises(TypeError, match=exactly(
            "lstm_sequence: expected floating inputs of one dtype, got float64, float32, "
            "float32, float32")):
        autograd.lstm_sequence(zeros(2, 3, 8, dtype=f64), zeros(3, 2), zeros(3, 2), zeros(2, 8))
    i32 = np.int32
    with pytest.raises(TypeError, match=exactly(
            "lstm_sequence: expected floating inputs of one dtype, got int32, int32, int32, "
            "int32")):
        autograd.lstm_sequence(zeros(2, 3, 8, dtype=i32), zeros(3, 2, dtype=i32),
                               zeros(3, 2, dtype=i32), zeros(2, 8, dtype=i32))


def test_each_argument_must_be_a_tensor():
    args = [zeros(2, 3, 6), zeros(3, 2), zeros(2, 6), zeros(6)]
    for k in range(4):
        given = list(args)
        given[k] = given[k].to_numpy()
        with pytest.raises(TypeError, match=exactly(
                "gru_sequence: expected a Tensor, got ndarray")):
            autograd.gru_sequence(*given)


def lstm_loss(x, h0, c0, W):
    hs, h, c = autograd.lstm_sequence(x, h0, c0, W)
    return autograd.sum(hs * 0.5) + autograd.sum(h * -1.5) + autograd.sum(c * 2.0)


def lstm_loss_numpy(x, h0, c0, W):
    hs, h, c = lstm_sequence_reference(x, h0, c0, W)
    return (hs * 0.5).sum() + (h * -1.5).sum() + (c * 2.0).sum()


def gru_loss(x, h0, W, b=None):
    hs, h = autograd.gru_sequence(x, h0, W, b)
    return autograd.sum(hs * 0.5) + autograd.sum(h * -1.5)


def gru_loss_numpy(x, h0, W, b=0.0):
    hs, h = gru_sequence_reference(x, h0, W, b)
    return (hs * 0.5).sum() + (h * -1.5).sum()


def numeric_gradient(f, arrays, which):
    expected = np.zeros_like(arrays[which])
    for index in np.ndindex(*arrays[which].shape):
        values = []
        for step in (1e-6, -1e-6):
            moved = [a.copy() for a in arrays]
            moved[which][index] += step
            values.append(f(*moved))
        expected[index] = (values[0] - values[1]) / 2e-6
    return expected


def inputs_for(shapes, seed):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, s) for s in shapes]


@pytest.mark.parametrize("which", range(4))
def test_lstm_sequence_gradient_of_each_input_alone(which):
    arrays = inputs_for([(3, 2, 8), (2, 2), (2, 2), (2, 8)], which)
    tensors = [Tensor(data=a, stores_grad=(k == which)) for k, a in enumerate(arrays)]
    loss = lstm_loss(*tensors)
    assert loss.item() == pytest.approx(lstm_loss_numpy(*arrays), rel=1e-12)
    grads = autograd.gradients(loss)
    assert list(grads) == [tensors[which]]
    np.testing.assert_allclose(grads[tensors[which]].to_numpy(),
                               numeric_gradient(lstm_loss_numpy, arrays, which),
                               rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("which", range(4))
def test_gru_sequence_gradient_of_each_input_alone_with_a_bias(which):
    arrays = inputs_for([(3, 2, 6), (2, 2), (2, 6), (6,)], 10 + which)
    tensors = [Tensor(data=a, stores_grad=(k == which)) for k, a in enumerate(arrays)]
    loss = gru_loss(*tensors)
    assert loss.item() == pytest.approx(gru_loss_numpy(*arrays), rel=1e-12)
    grads = autograd.gradients(loss)
    assert list(grads) == [tensors[which]]
    np.testing.assert_allclose(grads[tensors[which]].to_numpy(),
                               numeric_gradient(gru_loss_numpy, arrays, which),
                               rtol=1e-6, atol=1e-8)


def test_gru_sequence_without_a_bias_all_gradients():
    arrays = inputs_for([(2, 3, 6), (3, 2), (2, 6)], 20)
    tensors = [Tensor(data=a, stores_grad=True) for a in arrays]
    grads = autograd.gradients(gru_loss(*tensors))
    for k, t in enumerate(tensors):
        np.testing.assert_allclose(grads[t].to_numpy(),
                                   numeric_gradient(gru_loss_numpy, arrays, k),
                                   rtol=1e-6, atol=1e-8)


def test_outputs_are_new_arrays_and_the_last_state_is_the_last_step():
    x = Tensor(data=np.random.default_rng(1).uniform(-1, 1, (3, 2, 6)))
    h0, W = zeros(2, 2, dtype=np.float64), zeros(2, 6, dtype=np.float64)
    hs, h = autograd.gru_sequence(x, h0, W)
    np.testing.assert_array_equal(h.to_numpy(), hs.to_numpy()[-1])
    h.data[...] = 7.0                     # the last state is a copy, not a view of hs
    assert not (hs.to_numpy()[-1] == 7.0).any()


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_a_long_wide_sequence_through_the_row_major_copy_of_W_hh(cell):
    """16 steps of 4 rows: the backward multiplies by a row-major copy of W_hh^T (matmul.py's
    repeated_operand) instead of the transposed view; h0's and x's gradients pass every step."""
    count = 4 if cell == "lstm" else 3
    shapes = [(16, 4, 3 * count), (4, 3)] + ([(4, 3)] if cell == "lstm" else []) + [(3, 3 * count)]
    arrays = inputs_for(shapes, 30)
    loss_of, numpy_loss = (lstm_loss, lstm_loss_numpy) if cell == "lstm" else (gru_loss,
                                                                                gru_loss_numpy)
    tensors = [Tensor(data=a, stores_grad=True) for a in arrays]
    grads = autograd.gradients(loss_of(*tensors))
    for which in (0, 1, len(arrays) - 1):
        np.testing.assert_allclose(grads[tensors[which]].to_numpy(),
                                   numeric_gradient(numpy_loss, arrays, which),
                                   rtol=1e-6, atol=1e-8)
