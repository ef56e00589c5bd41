"""autograd/onnx/export_recurrent.py: the recurrent layers' paths test_export.py leaves out
(time-major input, initial states given as graph inputs, every output of the layer, a GRU or
RNN that returns its last state, the relu RNN, no bias, the weights' names). Each exported
model runs in onnxruntime (the independent reference of ONNX's RNN / LSTM / GRU equations)
against the layer's own forward."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="the onnx extra is not installed")
onnxruntime = pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")

import autograd                                  # noqa: E402
import autograd.onnx                             # noqa: E402
from autograd import Tensor                      # noqa: E402
from tests.onnx.onnxruntime_run import run_onnxruntime as _ort   # noqa: E402

ATOL = 1e-5


def _tensors(*arrays):
    return [Tensor(data=a, requires_grad=False) for a in arrays]


class Stateful(autograd.Layer):
    """Runs ``rnn`` from a given initial state and returns its output and final state flat."""

    def __init__(self, rnn):
        super().__init__()
        self.rnn = rnn

    def forward(self, x, *state):
        output, final = self.rnn(x, initial_state=state[0] if len(state) == 1 else state)
        return (output,) + (tuple(final) if isinstance(final, tuple) else (final,))


def _randomize_biases(layer, rng):
    for p in (layer.b_ih, layer.b_hh):
        p.data[...] = rng.standard_normal(p.shape).astype(np.float32) * 0.5


def _check(model, arrays, names):
    proto = autograd.onnx.export(model, arrays, input_names=names)
    ours = model(*_tensors(*arrays))
    ours = ours if isinstance(ours, tuple) else (ours,)
    theirs = _ort(proto, dict(zip(names, arrays)))
    assert len(theirs) == len(ours)
    for got, expected in zip(theirs, ours):
        np.testing.assert_allclose(got, expected.to_numpy(), atol=ATOL, rtol=1e-5)
    return proto


@pytest.mark.parametrize("sequences", [False, True])
def test_a_time_major_lstm_from_a_given_state_gives_output_h_and_c(sequences):
    rng = np.random.default_rng(1)
    lstm = autograd.LSTM(3, 4, return_sequences=sequences)
    _randomize_biases(lstm, rng)
    x, h0, c0 = (rng.standard_normal(s).astype(np.float32) for s in ((5, 2, 3), (2, 4), (2, 4)))
    proto = _check(Stateful(lstm), [x, h0, c0], ["x", "h0", "c0"])
    assert "Transpose" not in [node.op_type for node in proto.graph.node]


@pytest.mark.parametrize("sequences", [False, True])
def test_a_batch_first_gru_from_a_given_state_gives_output_and_h(sequences):
    rng = np.random.default_rng(2)
    gru = autograd.GRU(3, 4, batch_first=True, return_sequences=sequences)
    _randomize_biases(gru, rng)
    x, h0 = (rng.standard_normal(s).astype(np.float32) for s in ((2, 5, 3), (2, 4)))
    proto = _check(Stateful(gru), [x, h0], ["x", "h0"])
    # ONNX's GRU: linear_before_reset is 0 or 1 in the spec; 1 is r * (h W_hn^T + b_hn), ours
    (node,) = [node for node in proto.graph.node if node.op_type == "GRU"]
    attributes = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    assert attributes == {"hidden_size": 4, "linear_before_reset": 1}


@pytest.mark.parametrize("nonlinearity", ["relu", "tanh"])
def test_an_rnn_of_either_nonlinearity_without_bias_matches(nonlinearity):
    rng = np.random.default_rng(3)
    rnn = autograd.RNN(3, 4, nonlinearity=nonlinearity, bias=False)
    x, h0 = (rng.standard_normal(s).astype(np.float32) for s in ((5, 2, 3), (2, 4)))
    proto = _check(Stateful(rnn), [x, h0], ["x", "h0"])
    (node,) = [node for node in proto.graph.node if node.op_type == "RNN"]
    activations = [a.strings for a in node.attribute if a.name == "activations"]
    assert activations == [[b"Relu" if nonlinearity == "relu" else b"Tanh"]]
    B = {init.name: init for init in proto.graph.initializer}["rnn.onnx_B"]
    np.testing.assert_array_equal(onnx.numpy_helper.to_array(B), np.zeros((1, 8), np.float32))


def test_a_gru_without_bias_and_its_last_state_match():
    rng = np.random.default_rng(4)
    gru = autograd.GRU(3, 2, bias=False)
    x, h0 = (rng.standard_normal(s).astype(np.float32) for s in ((4, 3, 3), (3, 2)))
    _check(Stateful(gru), [x, h0], ["x", "h0"])


def test_the_weights_are_named_after_the_layer_and_laid_out_in_onnx_gate_order():
    """ONNX's LSTM W is (1, 4 * hidden, in) in i, o, f, c order; ours (in, 4 * hidden) in
    i, f, g, o: block k of ONNX's is our block (0, 3, 1, 2)[k], transposed."""
    rng = np.random.default_rng(5)
    lstm = autograd.LSTM(3, 2)
    _randomize_biases(lstm, rng)
    x, h0, c0 = (rng.standard_normal(s).astype(np.float32) for s in ((4, 2, 3), (2, 2), (2, 2)))
    proto = _check(Stateful(lstm), [x, h0, c0], ["x", "h0", "c0"])
    init = {i.name: onnx.numpy_helper.to_array(i) for i in proto.graph.initializer}
    W, R, B = init["rnn.onnx_W"], init["rnn.onnx_R"], init["rnn.onnx_B"]
    ours_W, ours_R = lstm.W_ih.to_numpy(), lstm.W_hh.to_numpy()
    assert W.shape == (1, 8, 3) and R.shape == (1, 8, 2) and B.shape == (1, 16)
    for k, block in enumerate((0, 3, 1, 2)):
        cols = slice(2 * block, 2 * block + 2)
        np.testing.assert_array_equal(W[0, 2 * k:2 * k + 2], ours_W[:, cols].T)
        np.testing.assert_array_equal(R[0, 2 * k:2 * k + 2], ours_R[:, cols].T)
        np.testing.assert_array_equal(B[0, 2 * k:2 * k + 2], lstm.b_ih.to_numpy()[cols])
        np.testing.assert_array_equal(B[0, 8 + 2 * k:8 + 2 * k + 2], lstm.b_hh.to_numpy()[cols])


class TwoLayers(autograd.Layer):
    """Two LSTMs of the same shape side by side under one parent: enc.first, enc.second."""

    def __init__(self):
        super().__init__()
        self.enc = autograd.Layer()
        self.enc.first = autograd.LSTM(3, 4)
        self.enc.second = autograd.LSTM(3, 4)

    def forward(self, x):
        return self.enc.first(x)[0] - self.enc.second(x)[0]


def test_two_layers_under_one_parent_keep_their_own_weights():
    """The prefix is the dotted name less its last part: enc.first and enc.second, not enc
    (a shared name would give the second layer the first one's weights)."""
    model = TwoLayers()
    x = np.random.default_rng(6).standard_normal((5, 2, 3)).astype(np.float32)
    proto = _check(model, [x], ["x"])
    names = {init.name for init in proto.graph.initializer}
    assert {"enc.first.onnx_W", "enc.second.onnx_W", "enc.first.onnx_B",
            "enc.second.onnx_R"} <= names


def test_two_unnamed_layers_of_one_kind_keep_their_own_weights():
    """Bug found from the survivors: a model that is a function (or to_onnx, which SINGA's
    sonnx.to_onnx calls) has no dotted names, and both LSTMs' weights were named LSTM.onnx_W:
    the second layer silently ran with the first one's weights."""
    first, second = autograd.LSTM(3, 4), autograd.LSTM(3, 4)
    x = np.random.default_rng(7).standard_normal((5, 2, 3)).astype(np.float32)
    proto = _check(lambda x: first(x)[0] - second(x)[0], [x], ["x"])
    assert sum(init.name.endswith(".onnx_W") for init in proto.graph.initializer) == 2


def test_two_batch_first_layers_on_one_input_export():
    """Bug found from the survivors: both layers named their time-major copy of the input
    '<input>_time_major', which onnx's checker refused (a name assigned twice)."""
    model = autograd.Sequential()
    model.a, model.b = autograd.GRU(3, 4, batch_first=True), autograd.GRU(3, 4, batch_first=True)
    model.forward = lambda x: model.a(x)[0] + model.b(x)[0]
    x = np.random.default_rng(8).standard_normal((2, 5, 3)).astype(np.float32)
    _check(model, [x], ["x"])
