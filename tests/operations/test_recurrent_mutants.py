"""The one-step LSTM and GRU cells where the mutation run of issue 22 (docs/testing.md, chunk 5)
found the suite blind: each argument check on its own (the others valid), so that an ``and``
for an ``or`` shows, the messages word for word, and the gradient of each input alone against
finite differences (the ops skip what is not needed)."""
import re

import numpy as np
import pytest

import autograd
from autograd import Tensor
from tests.operations.test_recurrent_sequence_mutants import numeric_gradient

# the compiled kernels and the portable code they stand in for: both tested
pytestmark = pytest.mark.usefixtures("compiled_and_portable")


def exactly(message):
    return f"^{re.escape(message)}$"


def zeros(*shape, dtype=np.float32):
    return Tensor(data=np.zeros(shape, dtype))


@pytest.mark.parametrize("cell, count", [(autograd.lstm_cell, 4), (autograd.gru_cell, 3)])
def test_each_shape_check_alone_with_its_exact_message(cell, count):
    name, width = cell.__name__, 3 * count
    good, state = zeros(2, width), zeros(2, 3)
    for x_gates, h_gates in [(zeros(2, width + 1), good), (good, zeros(2, width + 1)),
                             (zeros(3, width), good), (good, zeros(2, width, 1))]:
        with pytest.raises(ValueError, match=exactly(
                f"{name}: expected x_gates and h_gates of shape (2, {width}) ({count} gate "
                f"blocks of the cell's width 3), got {tuple(x_gates.shape)} and "
                f"{tuple(h_gates.shape)}")):
            cell(x_gates, h_gates, state)
    for bad_state in (zeros(6), zeros(2, 3, 1)):
        with pytest.raises(ValueError, match=exactly(
                f"{name}: expected a 2-D state (batch, hidden), got shape "
                f"{tuple(bad_state.shape)}")):
            cell(good, good, bad_state)


@pytest.mark.parametrize("cell, count", [(autograd.lstm_cell, 4), (autograd.gru_cell, 3)])
def test_each_dtype_check_alone_with_its_exact_message(cell, count):
    name, width = cell.__name__, 3 * count
    f32, f64 = zeros(2, width), zeros(2, width, dtype=np.float64)
    for args, shown in [((f64, f32, zeros(2, 3)), "float64, float32 and float32"),
                        ((f32, f64, zeros(2, 3)), "float32, float64 and float32"),
                        ((f32, f32, zeros(2, 3, dtype=np.float64)), "float32, float32 and float64"),
                        ((zeros(2, width, dtype=np.int64), zeros(2, width, dtype=np.int64),
                          zeros(2, 3, dtype=np.int64)), "int64, int64 and int64")]:
        with pytest.raises(TypeError, match=exactly(
                f"{name}: expected floating inputs of one dtype, got {shown}")):
            cell(*args)


@pytest.mark.parametrize("cell, count", [(autograd.lstm_cell, 4), (autograd.gru_cell, 3)])
def test_each_argument_must_be_a_tensor(cell, count):
    name, width = cell.__name__, 3 * count
    args = [zeros(2, width), zeros(2, width), zeros(2, 3)]
    for k in range(3):
        given = list(args)
        given[k] = given[k].to_numpy()
        with pytest.raises(TypeError, match=exactly(f"{name}: expected a Tensor, got ndarray")):
            cell(*given)


def lstm_sum(x_gates, h_gates, c):
    h, c_new = autograd.lstm_cell(x_gates, h_gates, c)
    return autograd.sum(h * 1.5 + c_new * -0.5)


def gru_sum(x_gates, h_gates, h):
    return autograd.sum(autograd.gru_cell(x_gates, h_gates, h) * 1.5)


@pytest.mark.parametrize("fn, count", [(lstm_sum, 4), (gru_sum, 3)])
@pytest.mark.parametrize("which", [0, 1, 2])
def test_the_gradient_of_each_input_alone(fn, count, which):
    """Only one input needs a gradient; the others are constants: checked by finite differences
    (central, step 1e-6) in float64."""
    rng = np.random.default_rng(which)
    arrays = [rng.uniform(-2, 2, (2, 2 * count)), rng.uniform(-2, 2, (2, 2 * count)),
              rng.uniform(-1, 1, (2, 2))]
    inputs = [Tensor(data=a, stores_grad=(k == which)) for k, a in enumerate(arrays)]
    grads = autograd.gradients(fn(*inputs))
    assert list(grads) == [inputs[which]]
    got = grads[inputs[which]].to_numpy()
    expected = numeric_gradient(lambda *moved: fn(*(Tensor(data=a) for a in moved)).item(),
                                arrays, which)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)
