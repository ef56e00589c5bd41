"""RNN, LSTM and GRU (autograd/layers/recurrent.py): what the mutation run of issue 22
(docs/testing.md) found unchecked: the descriptions and the messages of ``cell`` and the
input checks, word for word (each names the layer, what it expected and what it got)."""
import re

import numpy as np
import pytest

import autograd
from autograd import Tensor
from autograd.layers.recurrent import GRU, LSTM, RNN


@pytest.mark.parametrize("make, text", [
    (lambda: RNN(3, 4), "RNN(3->4)"),
    (lambda: RNN(3, 4, bias=False), "RNN(3->4, bias=False)"),
    (lambda: RNN(3, 4, nonlinearity="relu"), "RNN(3->4, nonlinearity='relu')"),
    (lambda: LSTM(3, 4, bias=False, batch_first=True, return_sequences=True),
     "LSTM(3->4, bias=False, batch_first=True, return_sequences=True)"),
    (lambda: GRU(3, 4, return_sequences=True), "GRU(3->4, return_sequences=True)"),
])
def test_recurrent_layers_describe_themselves_exactly(make, text):
    assert make().describe() == text


@pytest.mark.parametrize("x_t, got", [
    (Tensor(data=np.zeros((2, 3, 5), np.float32)), "(2, 3, 5)"),    # 3-d, shape[1] fits
    (Tensor(data=np.zeros((2, 4), np.float32)), "(2, 4)"),
    (np.zeros((2, 3), np.float32), "ndarray"),                       # not a Tensor: its type
    ([1.0, 2.0, 3.0], "list"),
])
def test_cell_names_what_it_got_word_for_word(x_t, got):
    """mutants: `and` for the first `or` (a 3-d Tensor passed), the type name replaced by the
    shape of an array or by NoneType."""
    layer = RNN(3, 4)
    with pytest.raises(ValueError, match=re.escape(
            f"RNN(3->4): expected x_t of shape (batch, 3), got {got}") + "$"):
        layer.cell(x_t)


LIST = "expected a non-empty list of (batch, 2) Tensors, got"


@pytest.mark.parametrize("make, call, error, message", [
    (lambda: RNN(2, 3), lambda l: l([]), ValueError, f"RNN(2->3): {LIST} []"),
    (lambda: RNN(2, 3), lambda l: l([Tensor(shape=(2, 2)), 3.0]), ValueError,
     f"RNN(2->3): {LIST} [(2, 2), 'float']"),
    (lambda: RNN(2, 3), lambda l: l([Tensor(shape=(2, 2, 1))]), ValueError,
     f"RNN(2->3): {LIST} [(2, 2, 1)]"),
    (lambda: GRU(2, 3), lambda l: l([Tensor(shape=(2, 2)), Tensor(shape=(3, 2))]), ValueError,
     "GRU(2->3): the steps of the list differ in shape: [(2, 2), (3, 2)]"),
    (lambda: RNN(2, 3), lambda l: l([Tensor(shape=(2, 3))]), ValueError,
     "RNN(2->3): expected input (seq_len, batch, 2), got (1, 2, 3)"),
    (lambda: RNN(2, 3), lambda l: l(np.zeros((1, 1, 2))), TypeError,
     "RNN(2->3): expected a Tensor, got ndarray"),
    (lambda: RNN(2, 3), lambda l: l(Tensor(data=np.zeros((1, 1, 2)))), TypeError,
     "RNN(2->3): input is float64 but the parameters are float32; cast one with as_type()"),
    (lambda: LSTM(2, 3), lambda l: l(Tensor(shape=(4, 2, 2)), (Tensor(shape=(2, 3)),)),
     ValueError, "LSTM(2->3): expected initial_state a pair (h, c) of shape (2, 3), got tuple"),
    (lambda: LSTM(2, 3), lambda l: l(Tensor(shape=(4, 2, 2)), Tensor(shape=(2, 3))),
     ValueError, "LSTM(2->3): expected initial_state a pair (h, c) of shape (2, 3), got Tensor"),
    (lambda: LSTM(2, 3), lambda l: l(Tensor(shape=(4, 2, 2)),
                                     (Tensor(shape=(2, 3)), Tensor(shape=(2, 4)))),
     ValueError, "LSTM(2->3): expected initial_state a pair (h, c) of shape (2, 3), got (2, 4)"),
    (lambda: GRU(2, 3), lambda l: l(Tensor(shape=(4, 2, 2)), Tensor(shape=(3, 3))), ValueError,
     "GRU(2->3): expected initial_state h of shape (2, 3), got (3, 3)"),
    (lambda: GRU(2, 3), lambda l: l(Tensor(shape=(4, 2, 2)), Tensor(data=np.zeros((2, 3)))),
     TypeError, "GRU(2->3): initial_state is float64 but the input is float32"),
    (lambda: RNN(2, 3, batch_first=True), lambda l: l(Tensor(shape=(5, 7, 3))), ValueError,
     "RNN(2->3, batch_first=True): expected input (batch, seq_len, 2), got (5, 7, 3)"),
    (lambda: RNN(2, 3), lambda l: l.output_shape((0, 7, 2)), ValueError,
     "RNN(2->3): expected input (seq_len, batch, 2), got (0, 7, 2)"),
    (lambda: RNN(2, 3), lambda l: l.output_shape((7, 0, 2)), ValueError,
     "RNN(2->3): expected input (seq_len, batch, 2), got (7, 0, 2)"),
])
def test_input_and_state_messages_word_for_word(make, call, error, message):
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        call(make())


@pytest.mark.parametrize("options, shape, expected", [
    (dict(), (None, None, 2), (None, 3)),
    (dict(), (5, 7, 2), (7, 3)),
    (dict(batch_first=True), (5, 7, 2), (5, 3)),
    (dict(return_sequences=True), (5, None, 2), (5, None, 3)),
    (dict(return_sequences=True, batch_first=True), (5, 7, 2), (5, 7, 3)),
])
def test_output_shape_with_unknown_sizes_and_either_layout(options, shape, expected):
    assert RNN(2, 3, **options).output_shape(shape) == expected


@pytest.mark.parametrize("cls, gates", [(RNN, 1), (LSTM, 4), (GRU, 3)])
def test_weights_get_one_gate_blocks_fans_and_the_wscale(cls, gates):
    """init is called with (input_size, hidden_size) for W_ih and (hidden_size, hidden_size)
    for W_hh, and the wscale given; the biases start at zero."""
    seen = []

    def record(tensor, fan_in, fan_out, wscale):
        seen.append((tensor.shape, fan_in, fan_out, wscale))
        tensor.data[...] = 1.0

    layer = cls(3, 5, init=record, wscale=0.25)
    assert seen == [((3, gates * 5), 3, 5, 0.25), ((5, gates * 5), 5, 5, 0.25)]
    assert (layer.b_ih.to_numpy() == 0).all() and (layer.b_hh.to_numpy() == 0).all()
    assert layer.b_ih.shape == layer.b_hh.shape == (gates * 5,)
    assert all(p.stores_grad for _, p in layer.named_parameters())


def test_defaults_wscale_one_xavier_bias_and_time_first():
    seen = []
    layer = LSTM(3, 5, init=lambda tensor, fan_in, fan_out, wscale: seen.append(wscale))
    assert seen == [1.0, 1.0]
    assert layer.bias and not layer.batch_first and not layer.return_sequences
    default = RNN(3, 5)
    assert default.nonlinearity == "tanh"
    limit = np.sqrt(6 / 8)                     # xavier on the (3, 5) gate block
    assert 0.5 * limit < np.abs(default.W_ih.to_numpy()).max() <= limit


@pytest.mark.parametrize("kind", ["rnn_tanh", "rnn_relu", "lstm", "gru"])
def test_bias_free_layers_forward_and_cell_match_the_numpy_loop(kind):
    """Every kind without a bias, through forward and through cell (mutant: the hidden bias
    added also without one; only LSTM's bias-free forward was tested)."""
    from tests.layers.test_recurrent import KINDS, float64_layer, random_state, unrolled
    rng = np.random.default_rng(20)
    layer = float64_layer(kind, rng, bias=False)
    assert layer.b_ih is None and layer.b_hh is None
    x = rng.normal(size=(3, 2, layer.input_size))
    state = random_state(kind, rng, batch=2)
    initial = tuple(Tensor(data=s) for s in state)
    output, _ = layer(Tensor(data=x), initial[0] if len(state) == 1 else initial)
    hidden, final = unrolled(kind, layer, x, state)
    np.testing.assert_allclose(output.to_numpy(), hidden[-1], rtol=1e-10, atol=1e-12)
    new = layer.cell(Tensor(data=x[0]), initial[0] if len(state) == 1 else initial)
    expected = KINDS[kind][1](x[0], state, layer.W_ih.to_numpy(), layer.W_hh.to_numpy(),
                              np.zeros(layer.W_ih.shape[1]), np.zeros(layer.W_ih.shape[1]))
    np.testing.assert_allclose((new,) if len(state) == 1 else new, expected, rtol=1e-10)


def test_input_size_message_word_for_word():
    with pytest.raises(ValueError, match=r"^GRU: input_size must be a positive int, got 0$"):
        GRU(0, 3)


def test_a_one_step_list_is_a_sequence_of_length_one():
    """(mutant: the steps compared with x[1], which a one-step list lacks)"""
    rng = np.random.default_rng(22)
    layer = RNN(2, 3)
    x = rng.standard_normal((2, 2)).astype(np.float32)
    from_list, _ = layer([Tensor(data=x)])
    from_tensor, _ = layer(Tensor(data=x[None]))
    np.testing.assert_array_equal(from_list.to_numpy(), from_tensor.to_numpy())
