"""Tests for autograd/layers/recurrent.py: RNN (tanh/relu), LSTM and GRU against NumPy gate
equations written here (one step and unrolled), gradcheck through time, return conventions,
initial states, errors, and a small sequence task each layer learns."""
import numpy as np
import pytest

import autograd
from autograd import Tensor
from autograd.layers.recurrent import RNN, LSTM, GRU

SEQ, BATCH, INPUT, HIDDEN = 3, 2, 2, 3


# ---------------------------------------------------------------- NumPy references

def sigmoid(v):
    return 1 / (1 + np.exp(-v))


def rnn_step(x, state, W_ih, W_hh, b_ih, b_hh, nonlinearity="tanh"):
    (h,) = state
    pre = x @ W_ih + b_ih + h @ W_hh + b_hh
    return (np.tanh(pre) if nonlinearity == "tanh" else np.maximum(pre, 0),)


def lstm_step(x, state, W_ih, W_hh, b_ih, b_hh):
    h, c = state
    H = h.shape[1]
    gates = x @ W_ih + b_ih + h @ W_hh + b_hh
    i = sigmoid(gates[:, :H])
    f = sigmoid(gates[:, H:2 * H])
    g = np.tanh(gates[:, 2 * H:3 * H])
    o = sigmoid(gates[:, 3 * H:])
    c = f * c + i * g
    return o * np.tanh(c), c


def gru_step(x, state, W_ih, W_hh, b_ih, b_hh):
    (h,) = state
    H = h.shape[1]
    from_x = x @ W_ih + b_ih
    from_h = h @ W_hh + b_hh
    r = sigmoid(from_x[:, :H] + from_h[:, :H])
    z = sigmoid(from_x[:, H:2 * H] + from_h[:, H:2 * H])
    n = np.tanh(from_x[:, 2 * H:] + r * from_h[:, 2 * H:])
    return ((1 - z) * n + z * h,)


KINDS = {
    "rnn_tanh": (lambda **kw: RNN(INPUT, HIDDEN, **kw), rnn_step, 1),
    "rnn_relu": (lambda **kw: RNN(INPUT, HIDDEN, nonlinearity="relu", **kw),
                 lambda *a: rnn_step(*a, nonlinearity="relu"), 1),
    "lstm": (lambda **kw: LSTM(INPUT, HIDDEN, **kw), lstm_step, 2),
    "gru": (lambda **kw: GRU(INPUT, HIDDEN, **kw), gru_step, 1),
}


def float64_layer(kind, rng, **options):
    """The layer with random float64 parameters (biases nonzero, so they are tested too)."""
    layer = KINDS[kind][0](**options)
    for name, p in list(layer.named_parameters()):
        setattr(layer, name, Tensor(data=rng.normal(scale=0.6, size=p.shape), stores_grad=True))
    return layer


def parameter_arrays(layer):
    bias = layer.b_ih is not None
    zeros = np.zeros(layer.W_ih.shape[1])
    return (layer.W_ih.to_numpy(), layer.W_hh.to_numpy(),
            layer.b_ih.to_numpy() if bias else zeros, layer.b_hh.to_numpy() if bias else zeros)


def unrolled(kind, layer, x, state):
    """NumPy loop over time: (all hidden states (T, B, H), final state tuple)."""
    step = KINDS[kind][1]
    hidden = []
    for x_t in x:
        state = step(x_t, state, *parameter_arrays(layer))
        hidden.append(state[0])
    return np.stack(hidden), state


def random_state(kind, rng, batch=BATCH):
    return tuple(rng.normal(size=(batch, HIDDEN)) for _ in range(KINDS[kind][2]))


def as_initial_state(kind, state):
    tensors = tuple(Tensor(data=s) for s in state)
    return tensors[0] if KINDS[kind][2] == 1 else tensors


def state_arrays(kind, state):
    return (state,) if KINDS[kind][2] == 1 else state


# ---------------------------------------------------------------- one step, unrolled

@pytest.mark.parametrize("kind", KINDS)
def test_one_step_of_the_cell_follows_the_gate_equations(kind):
    rng = np.random.default_rng(1)
    layer = float64_layer(kind, rng)
    x_t = rng.normal(size=(4, INPUT))
    state = random_state(kind, rng, batch=4)
    new = state_arrays(kind, layer.cell(Tensor(data=x_t), as_initial_state(kind, state)))
    expected = KINDS[kind][1](x_t, state, *parameter_arrays(layer))
    assert len(new) == len(expected)
    for got, want in zip(new, expected):
        np.testing.assert_allclose(got.to_numpy(), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("return_sequences", [False, True])
@pytest.mark.parametrize("kind", KINDS)
def test_unrolled_forward_matches_a_numpy_loop(kind, return_sequences):
    rng = np.random.default_rng(2)
    layer = float64_layer(kind, rng, return_sequences=return_sequences)
    x = rng.normal(size=(5, 4, INPUT))
    state = random_state(kind, rng, batch=4)
    output, final = layer(Tensor(data=x), initial_state=as_initial_state(kind, state))
    hidden, expected_final = unrolled(kind, layer, x, state)
    np.testing.assert_allclose(output.to_numpy(), hidden if return_sequences else hidden[-1],
                               rtol=1e-12, atol=1e-12)
    for got, want in zip(state_arrays(kind, final), expected_final):
        np.testing.assert_allclose(got.to_numpy(), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kind", KINDS)
def test_default_initial_state_is_zeros_and_a_given_one_is_used(kind):
    rng = np.random.default_rng(3)
    layer = float64_layer(kind, rng)
    x = rng.normal(size=(SEQ, BATCH, INPUT))
    zeros = tuple(np.zeros((BATCH, HIDDEN)) for _ in range(KINDS[kind][2]))
    output, _ = layer(Tensor(data=x))
    np.testing.assert_allclose(output.to_numpy(), unrolled(kind, layer, x, zeros)[0][-1],
                               rtol=1e-12, atol=1e-12)
    state = random_state(kind, rng)
    with_state, _ = layer(Tensor(data=x), initial_state=as_initial_state(kind, state))
    assert np.abs(with_state.to_numpy() - output.to_numpy()).max() > 1e-3
    np.testing.assert_allclose(with_state.to_numpy(), unrolled(kind, layer, x, state)[0][-1],
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kind", KINDS)
def test_the_final_state_continues_a_sequence(kind):
    rng = np.random.default_rng(4)
    layer = float64_layer(kind, rng, return_sequences=True)
    x = rng.normal(size=(5, BATCH, INPUT))
    whole, whole_final = layer(Tensor(data=x))
    first, state = layer(Tensor(data=x[:2]))
    second, final = layer(Tensor(data=x[2:]), initial_state=state)
    joined = np.concatenate([first.to_numpy(), second.to_numpy()])
    np.testing.assert_allclose(joined, whole.to_numpy(), rtol=1e-12, atol=1e-12)
    for got, want in zip(state_arrays(kind, final), state_arrays(kind, whole_final)):
        np.testing.assert_allclose(got.to_numpy(), want.to_numpy(), rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------- gradients through time

@pytest.mark.parametrize("return_sequences", [False, True])
@pytest.mark.parametrize("kind", KINDS)
def test_gradcheck_through_time_for_input_initial_state_and_every_parameter(kind,
                                                                            return_sequences):
    rng = np.random.default_rng(5)
    layer = float64_layer(kind, rng, return_sequences=return_sequences)
    names = [name for name, _ in layer.named_parameters()]
    assert names == ["W_ih", "W_hh", "b_ih", "b_hh"]
    states = KINDS[kind][2]
    x = rng.normal(size=(SEQ, BATCH, INPUT))
    inputs = [x] + list(random_state(kind, rng)) + [getattr(layer, n).to_numpy() for n in names]

    def run(x, *rest):
        state, parameters = rest[:states], rest[states:]
        for name, p in zip(names, parameters):
            setattr(layer, name, p)
        output, final = layer(x, initial_state=state[0] if states == 1 else state)
        return (output,) + state_arrays(kind, final)

    assert autograd.gradcheck(run, [Tensor(data=a) for a in inputs])


@pytest.mark.parametrize("kind", KINDS)
def test_the_first_input_gets_a_gradient_from_the_last_output(kind):
    rng = np.random.default_rng(6)
    layer = float64_layer(kind, rng)
    x = Tensor(data=rng.normal(size=(4, BATCH, INPUT)), stores_grad=True)
    output, _ = layer(x)
    grad = autograd.gradients(autograd.sum(output))[x].to_numpy()
    assert np.abs(grad[0]).max() > 1e-4


def test_an_rnn_without_recurrent_weights_forgets_earlier_inputs():
    # the recurrence is the only path from early steps to the last output
    layer = float64_layer("rnn_tanh", np.random.default_rng(6))
    layer.W_hh.data[...] = 0
    x = Tensor(data=np.random.default_rng(7).normal(size=(4, BATCH, INPUT)), stores_grad=True)
    output, _ = layer(x)
    grad = autograd.gradients(autograd.sum(output))[x].to_numpy()
    np.testing.assert_array_equal(grad[:-1], 0.0)
    assert np.abs(grad[-1]).max() > 1e-4


# ---------------------------------------------------------------- conventions

@pytest.mark.parametrize("kind", KINDS)
def test_shapes_of_output_and_state_with_and_without_return_sequences(kind):
    states = KINDS[kind][2]
    x = Tensor(data=np.ones((5, 4, INPUT), np.float32))
    output, final = KINDS[kind][0]()(x)
    assert output.shape == (4, HIDDEN) and output.dtype == np.float32
    assert [s.shape for s in state_arrays(kind, final)] == [(4, HIDDEN)] * states
    layer = KINDS[kind][0](return_sequences=True)
    output, final = layer(x)
    assert output.shape == (5, 4, HIDDEN) == layer.output_shape((5, 4, INPUT))
    np.testing.assert_array_equal(output.to_numpy()[-1], state_arrays(kind, final)[0].to_numpy())
    assert KINDS[kind][0]().output_shape((5, None, INPUT)) == (None, HIDDEN)
    single, _ = layer(Tensor(data=np.ones((1, 4, INPUT), np.float32)))
    assert single.shape == (1, 4, HIDDEN)


@pytest.mark.parametrize("kind", KINDS)
def test_batch_first_and_a_list_of_steps_give_the_same_result(kind):
    rng = np.random.default_rng(7)
    layer = float64_layer(kind, rng, return_sequences=True)
    x = rng.normal(size=(5, BATCH, INPUT))
    reference, _ = layer(Tensor(data=x))
    steps, _ = layer([Tensor(data=x_t) for x_t in x])
    np.testing.assert_allclose(steps.to_numpy(), reference.to_numpy(), rtol=1e-12)
    layer.batch_first = True
    assert layer.output_shape((BATCH, 5, INPUT)) == (BATCH, 5, HIDDEN)
    batch_major, _ = layer(Tensor(data=x.transpose(1, 0, 2)))
    np.testing.assert_allclose(batch_major.to_numpy(), reference.to_numpy().transpose(1, 0, 2),
                               rtol=1e-12)


def test_parameters_layout_bias_and_initialisation():
    lstm = LSTM(5, 4)
    assert [(n, p.shape, p.dtype) for n, p in lstm.named_parameters()] == [
        ("W_ih", (5, 16), np.float32), ("W_hh", (4, 16), np.float32),
        ("b_ih", (16,), np.float32), ("b_hh", (16,), np.float32)]
    assert [n for n, _ in GRU(5, 4, bias=False).named_parameters()] == ["W_ih", "W_hh"]
    assert RNN(5, 4).W_hh.shape == (4, 4) and GRU(5, 4).W_ih.shape == (5, 12)
    # Glorot uniform per gate block: |W_ih| <= sqrt(6 / (5 + 4)), |W_hh| <= sqrt(6 / 8)
    assert np.abs(lstm.W_ih.to_numpy()).max() <= np.sqrt(6 / 9)
    assert np.abs(lstm.W_hh.to_numpy()).max() <= np.sqrt(6 / 8)
    assert np.abs(lstm.W_ih.to_numpy()).max() > 0.3 * np.sqrt(6 / 9)
    assert np.all(lstm.b_ih.to_numpy() == 0)
    assert np.all(LSTM(5, 4, init="none").W_ih.to_numpy() == 0)
    assert repr(RNN(2, 3, nonlinearity="relu", return_sequences=True)) == (
        "RNN(2->3, return_sequences=True, nonlinearity='relu')")


def test_state_dict_round_trip_reproduces_the_output():
    rng = np.random.default_rng(8)
    x = Tensor(data=rng.normal(size=(3, 2, INPUT)).astype(np.float32))
    source, target = GRU(INPUT, HIDDEN), GRU(INPUT, HIDDEN)
    target.load_state_dict(source.state_dict())
    np.testing.assert_array_equal(target(x)[0].to_numpy(), source(x)[0].to_numpy())


def test_bias_false_forward_matches_the_numpy_loop():
    rng = np.random.default_rng(9)
    layer = LSTM(INPUT, HIDDEN, bias=False)
    x = rng.normal(size=(SEQ, BATCH, INPUT)).astype(np.float32)
    output, _ = layer(Tensor(data=x))
    zeros = (np.zeros((BATCH, HIDDEN)), np.zeros((BATCH, HIDDEN)))
    np.testing.assert_allclose(output.to_numpy(), unrolled("lstm", layer, x, zeros)[0][-1],
                               rtol=1e-5, atol=1e-6)


def test_matches_pytorch_gate_order_and_equations():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(10)
    x = rng.normal(size=(4, BATCH, INPUT))
    for ours, theirs in [(RNN(INPUT, HIDDEN), torch.nn.RNN(INPUT, HIDDEN)),
                         (RNN(INPUT, HIDDEN, nonlinearity="relu"),
                          torch.nn.RNN(INPUT, HIDDEN, nonlinearity="relu")),
                         (LSTM(INPUT, HIDDEN), torch.nn.LSTM(INPUT, HIDDEN)),
                         (GRU(INPUT, HIDDEN), torch.nn.GRU(INPUT, HIDDEN))]:
        theirs = theirs.double()
        for name in ["W_ih", "W_hh", "b_ih", "b_hh"]:
            torch_name = ("weight_" if name[0] == "W" else "bias_") + name[2:] + "_l0"
            value = getattr(theirs, torch_name).detach().numpy()
            setattr(ours, name, Tensor(data=value.T.copy() if name[0] == "W" else value,
                                       stores_grad=True))
        expected = theirs(torch.from_numpy(x))[0].detach().numpy()
        ours.return_sequences = True
        np.testing.assert_allclose(ours(Tensor(data=x))[0].to_numpy(), expected, rtol=1e-10,
                                   atol=1e-12, err_msg=type(ours).__name__)


@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_gradients_through_time_match_pytorch(kind):
    """The fused cells' backward against torch.nn.LSTM / GRU: the input, the initial state and
    every parameter, from a loss on every output and on the final state."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(11)
    steps = 5
    ours = (LSTM if kind == "lstm" else GRU)(INPUT, HIDDEN, return_sequences=True)
    theirs = (torch.nn.LSTM if kind == "lstm" else torch.nn.GRU)(INPUT, HIDDEN).double()
    for name in ["W_ih", "W_hh", "b_ih", "b_hh"]:
        torch_name = ("weight_" if name[0] == "W" else "bias_") + name[2:] + "_l0"
        value = getattr(theirs, torch_name).detach().numpy()
        setattr(ours, name, Tensor(data=value.T.copy() if name[0] == "W" else value,
                                   stores_grad=True))
    x = rng.normal(size=(steps, BATCH, INPUT))
    state = [rng.normal(size=(BATCH, HIDDEN)) for _ in range(2 if kind == "lstm" else 1)]
    weights = rng.normal(size=(steps, BATCH, HIDDEN))
    x_ours = Tensor(data=x, requires_grad=True, stores_grad=True)
    state_ours = [Tensor(data=s, requires_grad=True, stores_grad=True) for s in state]
    output, final = ours(x_ours, initial_state=state_ours[0] if kind == "gru" else state_ours)
    final = final if kind == "gru" else final[1]          # c_T for the LSTM, h_T for the GRU
    loss = autograd.sum(output * Tensor(data=weights)) + autograd.sum(final * final)
    grads = {id(p): g.to_numpy() for p, g in autograd.backward(loss)}

    x_torch = torch.from_numpy(x).requires_grad_(True)
    state_torch = [torch.from_numpy(s[None]).requires_grad_(True) for s in state]
    out_torch, final_torch = theirs(x_torch, tuple(state_torch) if kind == "lstm"
                                    else state_torch[0])
    final_torch = final_torch if kind == "gru" else final_torch[1]
    ((out_torch * torch.from_numpy(weights)).sum() + (final_torch ** 2).sum()).backward()

    np.testing.assert_allclose(output.to_numpy(), out_torch.detach().numpy(), rtol=1e-10)
    pairs = [(x_ours, x_torch.grad.numpy())]
    pairs += [(s, t.grad.numpy()[0]) for s, t in zip(state_ours, state_torch)]
    for name in ["W_ih", "W_hh", "b_ih", "b_hh"]:
        torch_name = ("weight_" if name[0] == "W" else "bias_") + name[2:] + "_l0"
        expected = getattr(theirs, torch_name).grad.numpy()
        pairs.append((getattr(ours, name), expected.T if name[0] == "W" else expected))
    for tensor, expected in pairs:
        np.testing.assert_allclose(grads[id(tensor)], expected, rtol=1e-9, atol=1e-12)


# ---------------------------------------------------------------- errors

def test_input_and_state_errors_name_the_layer():
    lstm = LSTM(2, 3)
    with pytest.raises(ValueError, match=r"LSTM\(2->3\): expected input \(seq_len, batch, 2\), "
                                         r"got \(3, 2, 5\)"):
        lstm(Tensor(shape=(3, 2, 5)))
    with pytest.raises(ValueError, match=r"LSTM\(2->3\): expected input .*got \(2, 2\)"):
        lstm(Tensor(shape=(2, 2)))
    with pytest.raises(ValueError, match=r"LSTM\(2->3\): expected initial_state a pair \(h, c\) "
                                         r"of shape \(2, 3\), got Tensor"):
        lstm(Tensor(shape=(4, 2, 2)), initial_state=Tensor(shape=(2, 3)))
    with pytest.raises(ValueError, match=r"GRU\(2->3\): expected initial_state h of shape "
                                         r"\(2, 3\), got \(3, 3\)"):
        GRU(2, 3)(Tensor(shape=(4, 2, 2)), initial_state=Tensor(shape=(3, 3)))
    with pytest.raises(ValueError, match=r"RNN\(2->3, batch_first=True\): expected input "
                                         r"\(batch, seq_len, 2\), got \(2, 0, 2\)"):
        RNN(2, 3, batch_first=True)(Tensor(shape=(2, 0, 2)))
    with pytest.raises(TypeError, match=r"RNN\(2->3\): input is float64 but the parameters are "
                                        r"float32"):
        RNN(2, 3)(Tensor(data=np.zeros((1, 1, 2))))
    with pytest.raises(ValueError, match=r"RNN\(2->3\): expected x_t of shape \(batch, 2\), "
                                         r"got \(4, 3\)"):
        RNN(2, 3).cell(Tensor(shape=(4, 3)))
    with pytest.raises(TypeError, match=r"LSTM\(2->3\): input is float64"):
        lstm.cell(Tensor(data=np.zeros((4, 2))))
    with pytest.raises(ValueError, match=r"GRU\(2->3\): the steps of the list differ"):
        GRU(2, 3)([Tensor(shape=(2, 2)), Tensor(shape=(3, 2))])


def test_constructor_errors():
    with pytest.raises(ValueError, match="RNN: nonlinearity must be 'tanh' or 'relu', got 'gelu'"):
        RNN(2, 3, nonlinearity="gelu")
    with pytest.raises(ValueError, match="LSTM: hidden_size must be a positive int, got 0"):
        LSTM(2, 0)
    with pytest.raises(ValueError, match="GRU: init must be one of"):
        GRU(2, 3, init="orthogonal-ish")
    with pytest.raises(TypeError):
        LSTM(2, 3, 1)      # options are keywords: a SINGA num_layers is not silently taken


# ---------------------------------------------------------------- learning

@pytest.mark.parametrize("kind", ["rnn", "lstm", "gru"])
def test_learns_the_mean_of_a_short_sequence(kind):
    """Regress the mean of 6 numbers in [-1, 1] from the last hidden state (150 SGD steps)."""
    autograd.manual_seed(0)
    rng = np.random.default_rng(11)
    layer = {"rnn": RNN, "lstm": LSTM, "gru": GRU}[kind](1, 8)
    readout = autograd.Linear(8, 1)
    sgd = autograd.opt.SGD(lr=0.1, momentum=0.9)
    losses = []
    for _ in range(150):
        x = rng.uniform(-1, 1, size=(6, 32, 1)).astype(np.float32)
        target = Tensor(data=x.mean(axis=0))
        hidden, _ = layer(Tensor(data=x))
        loss = autograd.mse_loss(readout(hidden), target)
        sgd(loss)
        losses.append(loss.item())
    # predicting 0 gives the variance of the mean, 1/18 ~ 0.056
    assert np.mean(losses[:10]) > 0.03
    assert np.mean(losses[-10:]) < 0.1 * np.mean(losses[:10]), losses[::15]


def test_an_initial_state_given_as_a_float64_array_takes_the_inputs_dtype():
    rnn = RNN(3, 4)
    x = Tensor(data=np.ones((2, 5, 3), np.float32))
    given = rnn(x, np.full((5, 4), 0.5))                    # a float64 NumPy array
    as_tensor = rnn(x, Tensor(data=np.full((5, 4), 0.5, np.float32), requires_grad=False))
    for a, b in zip(given, as_tensor):
        assert a.dtype == np.float32
        np.testing.assert_array_equal(a.to_numpy(), b.to_numpy())
