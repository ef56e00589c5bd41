"""SINGA's layer.RNN / LSTM / CudnnRNN / Embedding / Layer (autograd/singa/layers.py):
survivors of the full mutation run killed here, each against a NumPy loop written in the test
(every rnn_mode, stacked and bidirectional, given states, broadcast batches), or a message word
for word."""
import warnings

import numpy as np
import pytest

import autograd
import autograd.singa
from autograd import Tensor
from autograd.singa import layers
from tests.singa.test_cudnn_rnn_mask import numpy_cell as cell, numpy_padded_rnn


def numpy_cudnn(net, x, hx, cx):
    """cuDNN's stacked, bidirectional RNN over x (seq, batch, input): every step's output (the
    padded reference with every sequence full length)."""
    mode = "tanh" if net.rnn_mode == "vanilla" else net.rnn_mode
    return numpy_padded_rnn(net, mode, x, [x.shape[0]] * x.shape[1], hx, cx)


@pytest.mark.parametrize("mode", ["lstm", "gru", "tanh", "vanilla", "relu"])
def test_stacked_bidirectional_modes_with_states_match_numpy(singa, mode):
    rng = np.random.default_rng(0)
    net = layers.CudnnRNN(3, num_layers=2, bidirectional=True, rnn_mode=mode,
                          batch_first=False, dropout=0.5)
    net.eval()                                       # no dropout outside training
    x = rng.standard_normal((4, 2, 5)).astype(np.float32)          # (seq, batch, input)
    hx = rng.standard_normal((4, 2, 3)).astype(np.float32)
    cx = rng.standard_normal((4, 2, 3)).astype(np.float32)
    y = net(Tensor(data=x), Tensor(data=hx), Tensor(data=cx))
    for index in range(4):
        rnn = getattr(net, f"rnn_{index}")
        assert rnn.W_ih.shape[0] == (5 if index < 2 else 6)
        rnn.b_ih.data[...] = rng.standard_normal(rnn.b_ih.shape)
        if mode in ("tanh", "vanilla", "relu"):
            assert rnn.nonlinearity == ("relu" if mode == "relu" else "tanh")
    y = net(Tensor(data=x), Tensor(data=hx), Tensor(data=cx))
    want = numpy_cudnn(net, x, hx, cx if mode == "lstm" else hx)
    assert y.shape == (4, 2, 6)
    np.testing.assert_allclose(y.to_numpy(), want, rtol=1e-4, atol=1e-5)
    net.return_sequences = False
    np.testing.assert_allclose(net(Tensor(data=x), Tensor(data=hx),
                                   Tensor(data=cx)).to_numpy(), want[-1], rtol=1e-4, atol=1e-5)


def test_batch_first_one_layer_and_missing_states_are_zeros(singa):
    rng = np.random.default_rng(1)
    net = layers.CudnnRNN(2, rnn_mode="lstm", bias=False)
    x = rng.standard_normal((3, 4, 2)).astype(np.float32)          # (batch, seq, input)
    hx = rng.standard_normal((1, 3, 2)).astype(np.float32)
    cx = rng.standard_normal((1, 3, 2)).astype(np.float32)
    seq = x.transpose(1, 0, 2)
    zeros = np.zeros((1, 3, 2))
    y = net(Tensor(data=x), Tensor(data=hx))                       # cx None: zeros
    assert net.rnn_0.b_ih is None and net.rnn_0.b_hh is None and not hasattr(net, "rnn_1")
    np.testing.assert_allclose(y.to_numpy(), numpy_cudnn(net, seq, hx, zeros).transpose(1, 0, 2),
                               rtol=1e-4, atol=1e-5)
    y = net(Tensor(data=x), None, Tensor(data=cx))                 # hx None: zeros
    np.testing.assert_allclose(y.to_numpy(), numpy_cudnn(net, seq, zeros, cx).transpose(1, 0, 2),
                               rtol=1e-4, atol=1e-5)
    y = net(Tensor(data=x))
    np.testing.assert_allclose(y.to_numpy(), numpy_cudnn(net, seq, zeros, zeros)
                               .transpose(1, 0, 2), rtol=1e-4, atol=1e-5)


def test_dropout_runs_between_stacked_layers_in_training_only(singa, monkeypatch):
    calls = []

    def recording_dropout(x, p):
        calls.append((x.shape, p))
        return x

    monkeypatch.setattr(layers, "dropout", recording_dropout)
    x = Tensor(data=np.ones((2, 5, 3), np.float32))
    net = layers.CudnnRNN(4, num_layers=3, dropout=0.25, bidirectional=True)
    net(x)
    assert calls == [((5, 2, 8), 0.25)] * 2               # before layers 1 and 2, not 0
    calls.clear()
    net.eval()
    net(x)
    assert calls == []
    layers.CudnnRNN(4, num_layers=2)(x)                     # dropout 0: not called
    assert calls == []


def test_cudnn_constructor_errors_word_for_word(singa):
    with pytest.raises(ValueError) as info:
        layers.CudnnRNN(3, rnn_mode="LSTM")
    assert str(info.value) == ("singa.layer.CudnnRNN: rnn_mode must be one of ['gru', 'lstm', "
                               "'relu', 'tanh', 'vanilla'], got 'LSTM'")
    for num_layers, dropout in ((0, 0), (1.0, 0), (2, 1), (2, -0.1)):
        with pytest.raises(ValueError) as info:
            layers.CudnnRNN(3, num_layers=num_layers, dropout=dropout)
        assert str(info.value) == (f"singa.layer.CudnnRNN: num_layers must be a positive int "
                                   f"and 0 <= dropout < 1, got {num_layers!r} and {dropout!r}")
    net = layers.CudnnRNN(3, num_layers=1, dropout=0, bias=0, batch_first=0,
                          return_sequences=1, use_mask=1)
    assert (net.bias, net.batch_first, net.return_sequences, net.use_mask) == \
        (False, False, True, True)
    assert net.directions == 1 and layers.CudnnRNN(3, bidirectional=True).directions == 2


def test_mask_messages_word_for_word_and_the_warning_told_once(singa):
    x = Tensor(data=np.ones((2, 3, 2), np.float32))
    net = layers.CudnnRNN(2, use_mask=True)
    with pytest.raises(TypeError) as info:
        net(x, seq_lengths=[3, 2])
    assert str(info.value) == ("singa.layer.CudnnRNN: use_mask needs seq_lengths, an integer "
                               "Tensor (batch,) as SINGA's, got list")
    for bad in ([2.5, 1.0], [True, True], [[3, 2]]):
        with pytest.raises(ValueError) as info:
            net(x, seq_lengths=Tensor(data=np.array(bad)))
        assert str(info.value) == ("singa.layer.CudnnRNN: seq_lengths must hold 2 whole numbers "
                                   f"from 1 to the sequence length 3, got {np.array(bad).tolist()}")
    whole = net(x, seq_lengths=Tensor(data=np.array([3.0, 2.0])))       # whole floats: fine
    exact = net(x, seq_lengths=Tensor(data=np.array([3, 2], np.uint8)))
    np.testing.assert_array_equal(whole.to_numpy(), exact.to_numpy())
    plain = layers.CudnnRNN(2)
    lengths = Tensor(data=np.array([3, 2], np.int32))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plain(x, seq_lengths=lengths)
        plain(x, seq_lengths=lengths)                            # told once per layer
        plain(x)
    assert [str(w.message) for w in caught] == [
        "singa.layer.CudnnRNN: seq_lengths is ignored without use_mask=True (as in SINGA)"]
    assert caught[0].category is RuntimeWarning


def test_singa_rnn_takes_a_stacked_tensor_a_single_h0_and_broadcasts_a_batch_of_one(singa):
    rng = np.random.default_rng(2)
    rnn = layers.RNN(2, 3, nonlinearity="relu")
    rnn.b_ih.data[...] = rng.standard_normal(3)
    x = rng.standard_normal((3, 2, 2)).astype(np.float32)            # (seq, batch, input)
    h0 = rng.standard_normal((1, 3)).astype(np.float32)              # a batch of one
    out, h = rnn(Tensor(data=x), Tensor(data=h0))
    state = (np.broadcast_to(h0, (2, 3)),)
    for t in range(3):
        state = cell("relu", rnn, x[t], state)
        np.testing.assert_allclose(out[t].to_numpy(), state[0], rtol=1e-5, atol=1e-6)
    assert len(out) == 3 and h is out[-1]
    out, h = rnn([Tensor(data=x[0])])                                 # h0 None: zeros
    np.testing.assert_allclose(h.to_numpy(), cell("relu", rnn, x[0], (np.zeros((2, 3)),))[0],
                               rtol=1e-5, atol=1e-6)
    assert layers.RNN(2, 3, bias=False).b_ih is None


def test_singa_lstm_broadcasts_a_state_of_one_to_the_batch(singa):
    rng = np.random.default_rng(3)
    lstm = layers.LSTM(2, 3)
    x = rng.standard_normal((2, 2)).astype(np.float32)
    h0, c0 = (rng.standard_normal((1, 3)).astype(np.float32) for _ in range(2))
    out, h, c = lstm([Tensor(data=x), Tensor(data=x)], [Tensor(data=h0), Tensor(data=c0)])
    state = (np.broadcast_to(h0, (2, 3)), np.broadcast_to(c0, (2, 3)))
    for step in range(2):
        state = cell("lstm", lstm, x, state)
        np.testing.assert_allclose(out[step].to_numpy(), state[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(c.to_numpy(), state[1], rtol=1e-5, atol=1e-6)


def test_singa_recurrent_errors_word_for_word(singa):
    rnn, lstm = layers.RNN(2, 3), layers.LSTM(2, 3)
    with pytest.raises(ValueError) as info:
        rnn([Tensor(shape=(2, 2)), Tensor(shape=(2, 3))])
    assert str(info.value) == ("RNN(2->3): expected a non-empty list of (batch, 2) Tensors, "
                               "got ['(2, 2)', '(2, 3)']")
    for bad in ([], [Tensor(shape=(2,))], [np.ones((2, 2))]):
        with pytest.raises(ValueError, match=r"^RNN\(2->3\): expected a non-empty list"):
            rnn(bad)
    cases = [(rnn, Tensor(shape=(3, 3)), "h0 of shape (2, 3), got ['(3, 3)']"),
             (rnn, Tensor(shape=(2, 4)), "h0 of shape (2, 3), got ['(2, 4)']"),
             (rnn, Tensor(shape=(1, 2, 3)), "h0 of shape (2, 3), got ['(1, 2, 3)']"),
             (lstm, Tensor(shape=(2, 3)), "(h0, c0) of shape (2, 3), got ['(2, 3)']"),
             (lstm, (Tensor(shape=(2, 3)), np.zeros((2, 3))),
              "(h0, c0) of shape (2, 3), got ['(2, 3)', '(2, 3)']")]
    for layer, state, tail in cases:
        with pytest.raises(ValueError) as info:
            layer([Tensor(shape=(2, 2))], state)
        assert str(info.value) == f"{layer.describe()}: expected {tail}"
    with pytest.raises(TypeError, match=r"input is float64 but the parameters are float32"):
        rnn([Tensor(shape=(2, 2), dtype=np.float64)])
    for name, value in (("num_layers", 2), ("dropout", 0.5), ("bidirectional", True)):
        with pytest.raises(NotImplementedError) as info:
            layers.RNN(2, 3, **{name: value})
        assert str(info.value) == (f"singa.layer.RNN: {name}={value!r} is not supported "
                                   "(SINGA's layer.RNN ignores it too); stack layers instead. "
                                   "See docs/singa.md")
    layers.LSTM(2, 3, num_layers=1, dropout=0, bidirectional=False)
    with pytest.raises(ValueError) as info:
        layers.LSTM(2, 3, nonlinearity="relu")
    assert str(info.value) == ("singa.layer.LSTM: nonlinearity must be 'tanh' (SINGA's LSTM "
                               "always uses tanh), got 'relu'")
    with pytest.raises(NotImplementedError, match=r"^singa\.layer\.LSTM: dropout=0\.1"):
        layers.LSTM(2, 3, dropout=0.1)


def test_embedding_keeps_singas_arguments_and_draws_uniform_weights(singa):
    autograd.device.manual_seed(0)
    emb = layers.Embedding(300, 40, initializer="uniform")
    assert (emb.input_dim, emb.output_dim, emb.initializer) == (300, 40, "uniform")
    w = emb.W.to_numpy()
    assert w.min() >= -1.0 and w.max() <= 1.0 and w.min() < -0.99 and w.max() > 0.99
    assert abs(w.std() - 1 / np.sqrt(3)) < 0.02 and abs(w.mean()) < 0.02
    emb.from_pretrained([[float(i + j) for j in range(40)] for i in range(300)])
    assert emb.W.to_numpy()[2, 3] == 5.0 and not emb.W.stores_grad
    assert layers.Embedding(3, 2).initializer == "gaussian"


class Fake:
    def __init__(self, device):
        self.device, self.moved = device, []

    def to_device(self, device):
        self.moved.append(device)


def test_device_and_dtype_checks_move_only_the_later_mismatched_tensors(singa):
    layer = layers.SingaLayer()
    first, same, other = Fake("a"), Fake("a"), Fake("b")
    layer.device_check(other, first, same)
    assert other.moved == [] and first.moved == ["b"] and same.moved == ["b"]
    a = Tensor(data=np.ones(2, np.float64))
    b = Tensor(data=np.ones(2, np.float32))
    c = Tensor(data=np.ones(2, np.float64))
    kept = c.data
    layer.dtype_check(a, b, c)
    assert a.dtype == np.float64 and b.dtype == np.float64 and c.data is kept


def test_the_ignored_seq_lengths_warning_points_at_the_programs_call(singa):
    """The warning names the line that called the layer (stacklevel 4: _masks, forward,
    Layer.__call__, the caller), not autograd/layers/base.py."""
    x = Tensor(data=np.ones((2, 3, 2), np.float32))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        layers.CudnnRNN(2)(x, seq_lengths=Tensor(data=np.array([3, 2], np.int32)))
    assert len(caught) == 1 and caught[0].filename == __file__


def test_singa_state_shapes_and_arguments_in_messages_and_defaults(singa):
    rnn, lstm = layers.RNN(2, 3), layers.LSTM(2, 3)
    with pytest.raises(ValueError) as info:
        rnn([3])                                         # no shape: shown as ()
    assert str(info.value) == ("RNN(2->3): expected a non-empty list of (batch, 2) Tensors, "
                               "got ['()']")
    with pytest.raises(ValueError) as info:
        lstm([Tensor(shape=(4, 2))], (Tensor(shape=(3, 3)), 5))
    assert str(info.value) == ("LSTM(2->3): expected (h0, c0) of shape (4, 3), got "
                               "['(3, 3)', '()']")
    x = np.random.default_rng(4).standard_normal((5, 2)).astype(np.float32)
    out, h, c = lstm([Tensor(data=x)])                    # zero states of the input's batch
    assert h.shape == (5, 3) and c.shape == (5, 3)
    want = cell("lstm", lstm, x, (np.zeros((5, 3)), np.zeros((5, 3))))
    np.testing.assert_allclose(h.to_numpy(), want[0], rtol=1e-5, atol=1e-6)
    with pytest.raises(NotImplementedError, match=r"^singa\.layer\.LSTM: bidirectional=True"):
        layers.LSTM(2, 3, bidirectional=True)
    plain = layers.LSTM(2, 3, bias=False)
    assert plain.b_ih is None and plain.b_hh is None
