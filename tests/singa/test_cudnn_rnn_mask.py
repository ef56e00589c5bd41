"""SINGA's ``layer.CudnnRNN(..., use_mask=True)(x, seq_lengths=lengths)`` (autograd/singa/
layers.py): a batch of sequences of several lengths, as cuDNN's padded layout runs it, against a
NumPy loop that runs each sequence alone over its real steps; and its gradients against finite
differences."""
import numpy as np
import pytest

import autograd
import autograd.singa
from autograd import Tensor


def sigmoid(v):
    return 1 / (1 + np.exp(-v))


def numpy_cell(mode, rnn, x, state):
    """One step of ``rnn``'s equations (PyTorch's gate order) on x (input,) or (batch, input)."""
    W, U = rnn.W_ih.to_numpy().astype(np.float64), rnn.W_hh.to_numpy().astype(np.float64)
    b = 0.0 if rnn.b_ih is None else rnn.b_ih.to_numpy().astype(np.float64)
    c = 0.0 if rnn.b_hh is None else rnn.b_hh.to_numpy().astype(np.float64)
    gx, gh = x @ W + b, state[0] @ U + c
    if mode == "lstm":
        i, f, g, o = np.split(gx + gh, 4, axis=-1)
        cell = sigmoid(f) * state[1] + sigmoid(i) * np.tanh(g)
        return sigmoid(o) * np.tanh(cell), cell
    if mode == "gru":
        xr, xz, xn = np.split(gx, 3, axis=-1)
        hr, hz, hn = np.split(gh, 3, axis=-1)
        r, z = sigmoid(xr + hr), sigmoid(xz + hz)
        return ((1 - z) * np.tanh(xn + r * hn) + z * state[0],)
    pre = gx + gh
    return (np.tanh(pre) if mode == "tanh" else np.maximum(pre, 0),)


def numpy_padded_rnn(net, mode, x, lengths, hx, cx):
    """Each sequence b run alone over x[:lengths[b], b] (seq-major x), the reverse direction
    over those steps backwards; outputs after a sequence's end are zero."""
    steps, batch, _ = x.shape
    hidden, directions = net.hidden_size, net.directions
    for layer_index in range(net.num_layers):
        out = np.zeros((steps, batch, directions * hidden))
        for direction in range(directions):
            index = layer_index * directions + direction
            rnn = getattr(net, f"rnn_{index}")
            for b in range(batch):
                order = range(lengths[b]) if direction == 0 else reversed(range(lengths[b]))
                state = (hx[index, b], cx[index, b]) if mode == "lstm" else (hx[index, b],)
                for t in order:
                    state = numpy_cell(mode, rnn, x[t, b], state)
                    out[t, b, direction * hidden:(direction + 1) * hidden] = state[0]
        x = out
    return x


def build(net, x, lengths):
    """Call ``net`` once (its layers are made on the first call)."""
    net(Tensor(data=np.nan_to_num(x).astype(np.float32)),
        seq_lengths=Tensor(data=np.asarray(lengths, np.int32)))
    assert net.rnn_0.W_ih.shape[0] == x.shape[2]


@pytest.mark.parametrize("mode", ["lstm", "gru", "tanh", "relu"])
@pytest.mark.parametrize("batch_first", [True, False])
def test_padded_batch_matches_each_sequence_run_alone(singa, mode, batch_first):
    from singa import layer, tensor
    rng = np.random.default_rng(3)
    steps, batch, size, hidden = 5, 4, 3, 4
    lengths = np.array([5, 2, 1, 3], np.int32)
    seq_major = rng.standard_normal((steps, batch, size))
    for b, length in enumerate(lengths):
        seq_major[length:, b] = np.nan                 # padding the layer must never read
    hx = rng.standard_normal((4, batch, hidden)) * 0.5
    cx = rng.standard_normal((4, batch, hidden)) * 0.5
    x = np.swapaxes(seq_major, 0, 1) if batch_first else seq_major
    for return_sequences in (True, False):
        net = layer.CudnnRNN(hidden, num_layers=2, bidirectional=True, rnn_mode=mode,
                             batch_first=batch_first, use_mask=True,
                             return_sequences=return_sequences)
        build(net, x, lengths)
        for index in range(4):                     # biases away from zero: they are checked
            rnn = getattr(net, f"rnn_{index}")
            rnn.b_ih.data[...] = rng.standard_normal(rnn.b_ih.shape) * 0.5
            rnn.b_hh.data[...] = rng.standard_normal(rnn.b_hh.shape) * 0.5
        y = net(Tensor(data=x.astype(np.float32)), Tensor(data=hx.astype(np.float32)),
                Tensor(data=cx.astype(np.float32)),
                seq_lengths=tensor.from_numpy(lengths)).to_numpy()
        want = numpy_padded_rnn(net, mode, seq_major, lengths, hx, cx)
        if not return_sequences:
            want = want[-1]                    # SINGA's: the padded output's last step
        elif batch_first:
            want = np.swapaxes(want, 0, 1)
        assert y.shape == want.shape
        np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-5)


def test_equal_lengths_give_the_unmasked_result(singa):
    from singa import layer, tensor
    x = Tensor(data=np.random.default_rng(4).standard_normal((3, 4, 2)).astype(np.float32))
    net = layer.CudnnRNN(3, bidirectional=True, use_mask=True)
    masked = net(x, seq_lengths=tensor.from_numpy(np.full(3, 4, np.int32))).to_numpy()
    net.use_mask = False
    np.testing.assert_allclose(masked, net(x).to_numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", ["lstm", "gru"])
def test_gradients_match_finite_differences(singa, mode):
    from singa import layer, tensor
    rng = np.random.default_rng(5)
    lengths = tensor.from_numpy(np.array([3, 1, 2], np.int32))
    net = layer.CudnnRNN(2, bidirectional=True, rnn_mode=mode, batch_first=False,
                         use_mask=True)
    x = rng.standard_normal((3, 3, 2))                 # (seq, batch, input)
    build(net, x, lengths.to_numpy())
    for _, parameter in net.named_parameters():
        parameter.data = parameter.data.astype(np.float64)
    hx = rng.standard_normal((2, 3, 2)) * 0.5
    reverse = net.rnn_1

    def run(x, hx, w_hh):
        reverse.W_hh = w_hh                              # the reverse direction's weights
        return net(x, hx, seq_lengths=lengths)

    w_hh = reverse.W_hh.data.copy()
    assert autograd.gradcheck(run, [x, hx, w_hh])
    # the swap takes effect (else the check above would compare two zeros)
    assert not np.allclose(run(Tensor(data=x), Tensor(data=hx), Tensor(data=w_hh)).to_numpy(),
                           run(Tensor(data=x), Tensor(data=hx),
                               Tensor(data=2 * w_hh)).to_numpy())
    # no gradient reaches the padding, and a NaN there changes nothing: never read
    padded = x.copy()
    padded[1:, 1] = padded[2:, 2] = np.nan
    xt = Tensor(data=padded, stores_grad=True)
    grads = dict(autograd.backward(autograd.sum(net(xt, seq_lengths=lengths))))
    dx = grads.pop(xt).to_numpy()
    assert np.all(dx[1:, 1] == 0) and np.all(dx[2:, 2] == 0) and np.any(dx[0, 1] != 0)
    assert np.isfinite(dx).all() and all(np.isfinite(g.to_numpy()).all() for g in grads.values())
    assert len(grads) == len(list(net.named_parameters()))


def test_mask_arguments_are_checked(singa):
    from singa import layer, tensor
    x = Tensor(data=np.ones((2, 3, 2), np.float32))
    net = layer.CudnnRNN(2, use_mask=True)
    with pytest.raises(TypeError, match="integer Tensor"):
        net(x, seq_lengths=[3, 2])
    for bad in ([3, 0], [4, 1], [3]):
        with pytest.raises(ValueError, match="seq_lengths must hold 2 whole numbers"):
            net(x, seq_lengths=tensor.from_numpy(np.array(bad, np.int32)))
    plain = layer.CudnnRNN(2)
    with pytest.warns(RuntimeWarning, match="ignored without use_mask"):
        y = plain(x, seq_lengths=tensor.from_numpy(np.array([3, 2], np.int32)))
    np.testing.assert_allclose(y.to_numpy(), plain(x).to_numpy())
