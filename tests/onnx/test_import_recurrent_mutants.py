"""RNN, GRU and LSTM nodes (import_recurrent.py) against onnxruntime (layout 1 through its
layout-0 twin) and onnx's ReferenceEvaluator (which has no Relu): every direction, with and without B and initial states,
RNN with Relu, GRU with either linear_before_reset, sequence_lens, and the refusals word for
word. The mutation run (issue 22) found these untested: the conformance suite has no Relu RNN,
no reverse or bidirectional GRU/RNN, no GRU linear_before_reset with a recurrence bias."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="the onnx extra is not installed")
onnxruntime = pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")
from onnx import helper, numpy_helper, TensorProto   # noqa: E402
from onnx.reference import ReferenceEvaluator        # noqa: E402

import autograd                                      # noqa: E402

STEPS, BATCH, FEATURES, HIDDEN = 3, 2, 3, 4
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}


def _recurrent_model(op_type, direction="forward", layout=0, bias=True, initial=True,
                     lengths=None, seed=0, name="rnn", **attributes):
    rng = np.random.default_rng(seed)
    directions = 2 if direction == "bidirectional" else 1
    gates = GATES[op_type]
    arrays = {"W": rng.standard_normal((directions, gates * HIDDEN, FEATURES)) * 0.6,
              "R": rng.standard_normal((directions, gates * HIDDEN, HIDDEN)) * 0.6}
    inputs = ["x", "W", "R"]
    if bias:
        arrays["B"] = rng.standard_normal((directions, 2 * gates * HIDDEN))
    inputs.append("B" if bias else "")
    initializers = []
    if lengths is not None:
        initializers.append(numpy_helper.from_array(np.asarray(lengths, np.int32), "lengths"))
    inputs.append("" if lengths is None else "lengths")
    state_shape = (BATCH, directions, HIDDEN) if layout else (directions, BATCH, HIDDEN)
    states = ["h0", "c0"] if op_type == "LSTM" else ["h0"]
    for state in states:
        if initial:
            arrays[state] = rng.standard_normal(state_shape)
        inputs.append(state if initial else "")
    while inputs[-1] == "":
        inputs.pop()
    outputs = ["y", "h", "c"] if op_type == "LSTM" else ["y", "h"]
    node = helper.make_node(op_type, inputs, outputs, hidden_size=HIDDEN, direction=direction,
                            layout=layout, name=name, **attributes)
    x_shape = [BATCH, STEPS, FEATURES] if layout else [STEPS, BATCH, FEATURES]
    initializers += [numpy_helper.from_array(np.asarray(a, np.float32), key)
                     for key, a in arrays.items()]
    graph = helper.make_graph(
        [node], "recurrent", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info(key, TensorProto.FLOAT, None) for key in outputs],
        initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]), x_shape


def _onnxruntime(proto, x):
    session = onnxruntime.InferenceSession(proto.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})


def _as_layout_0(proto):
    """The same node in layout 0 (onnxruntime runs only that): x and the states transposed."""
    copy = onnx.ModelProto()
    copy.CopyFrom(proto)
    node = copy.graph.node[0]
    for attribute in node.attribute:
        if attribute.name == "layout":
            attribute.i = 0
    dims = copy.graph.input[0].type.tensor_type.shape.dim
    dims[0].dim_value, dims[1].dim_value = dims[1].dim_value, dims[0].dim_value
    for initializer in copy.graph.initializer:
        if initializer.name in ("h0", "c0"):
            initializer.CopyFrom(numpy_helper.from_array(
                numpy_helper.to_array(initializer).transpose(1, 0, 2), initializer.name))
    return copy


def _check(proto, x_shape, layout, seed=1):
    """Our outputs against onnxruntime (through the layout-0 twin for layout 1) and, where
    it has the activation, the ReferenceEvaluator."""
    x = np.random.default_rng(seed).standard_normal(x_shape).astype(np.float32)
    ours = [value.to_numpy() for value in autograd.onnx.load(proto)(x)]
    references = []
    if not any(a.name == "activations" and b"Relu" in a.strings
               for a in proto.graph.node[0].attribute):
        references.append(ReferenceEvaluator(proto).run(None, {"x": x}))
    if layout:
        y, *states = _onnxruntime(_as_layout_0(proto), x.transpose(1, 0, 2))
        references.append([y.transpose(2, 0, 1, 3)] + [s.transpose(1, 0, 2) for s in states])
    else:
        references.append(_onnxruntime(proto, x))
    for reference in references:
        assert len(ours) == len(reference)
        for mine, theirs in zip(ours, reference):
            assert mine.shape == theirs.shape
            np.testing.assert_allclose(mine, theirs, rtol=1e-5, atol=1e-5)
    return ours


CASES = [("RNN", {}), ("RNN", {"activations": ["Relu"]}),
         ("RNN", {"activations": ["Relu", "Relu"]}), ("RNN", {"activations": ["Tanh"]}),
         ("GRU", {}), ("GRU", {"linear_before_reset": 1}), ("LSTM", {})]


@pytest.mark.parametrize("op_type, attributes", CASES)
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("layout", [0, 1])
def test_recurrent_nodes_match_the_references(op_type, attributes, direction, layout):
    if "activations" in attributes and direction == "bidirectional":
        attributes = {"activations": attributes["activations"][:1] * 2}
    proto, x_shape = _recurrent_model(op_type, direction, layout, **attributes)
    _check(proto, x_shape, layout)


@pytest.mark.parametrize("op_type", ["RNN", "GRU", "LSTM"])
def test_a_node_without_layout_is_sequence_first(op_type):
    """layout's default is 0: (steps, batch, features), as onnxruntime reads the same node."""
    proto, x_shape = _recurrent_model(op_type)
    (node,) = proto.graph.node
    kept = [attribute for attribute in node.attribute if attribute.name != "layout"]
    assert len(kept) == len(node.attribute) - 1
    del node.attribute[:]
    node.attribute.extend(kept)
    _check(proto, x_shape, 0)


@pytest.mark.parametrize("op_type, attributes", CASES)
@pytest.mark.parametrize("bias, initial", [(False, False), (True, False), (False, True)])
def test_recurrent_nodes_without_bias_or_initial_state_match_the_references(
        op_type, attributes, bias, initial):
    if "activations" in attributes and bias:             # bidirectional: one per direction
        attributes = {"activations": attributes["activations"][:1] * 2}
    proto, x_shape = _recurrent_model(op_type, "bidirectional" if bias else "forward",
                                      bias=bias, initial=initial, seed=2, **attributes)
    _check(proto, x_shape, 0, seed=3)


def test_a_relu_rnn_is_not_a_tanh_rnn():
    """The references above would agree on a Tanh RNN too; here Relu's outputs exceed 1."""
    proto, x_shape = _recurrent_model("RNN", activations=["Relu"], seed=4)
    y = _check(proto, x_shape, 0, seed=5)[0]
    assert y.max() > 1.5 and y.min() == 0


@pytest.mark.parametrize("op_type", ["RNN", "GRU", "LSTM"])
def test_sequence_lens_equal_to_the_steps_are_accepted(op_type):
    proto, x_shape = _recurrent_model(op_type, lengths=[STEPS] * BATCH)
    _check(proto, x_shape, 0)


@pytest.mark.parametrize("op_type", ["RNN", "GRU", "LSTM"])
def test_sequence_lens_in_layout_1_count_the_steps_axis(op_type, monkeypatch):
    """Batch-first: the steps are x's axis 1 (sizes all different, so no other axis passes)."""
    monkeypatch.setitem(globals(), "FEATURES", 5)
    proto, x_shape = _recurrent_model(op_type, layout=1, lengths=[STEPS] * BATCH)
    _check(proto, x_shape, 1)


@pytest.mark.parametrize("op_type", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("steps, features, hidden", [(2, 3, 4), (1, 3, 4), (3, 1, 4),
                                                     (3, 3, 1), (2, 1, 1)])
@pytest.mark.parametrize("direction", ["forward", "bidirectional"])
def test_short_sequences_one_feature_and_one_unit_match_the_references(
        op_type, steps, features, hidden, direction, monkeypatch):
    """Two steps, one step, a single input feature (a univariate series) or a single hidden
    unit: the squeezes of W, R, B and the states must drop only the directions axis."""
    for name, value in (("STEPS", steps), ("FEATURES", features), ("HIDDEN", hidden)):
        monkeypatch.setitem(globals(), name, value)
    proto, x_shape = _recurrent_model(op_type, direction, seed=6)
    _check(proto, x_shape, 0, seed=7)


def test_shorter_sequence_lens_are_refused_word_for_word():
    proto, x_shape = _recurrent_model("GRU", lengths=[STEPS, STEPS - 1], name="g")
    net = autograd.onnx.load(proto)
    with pytest.raises(NotImplementedError) as caught:
        net(np.zeros(x_shape, np.float32))
    assert str(caught.value) == ("autograd.onnx: GRU node 'g': sequence_lens shorter than the "
                                 "sequence is not supported (default activations only)")


@pytest.mark.parametrize("op_type, attributes, what", [
    ("RNN", {"activations": ["Sigmoid"]}, "activations ['Sigmoid']"),
    ("LSTM", {"activations": ["Sigmoid", "Tanh", "Relu"]},
     "activations ['Sigmoid', 'Tanh', 'Relu']"),
    ("GRU", {"activations": ["Tanh", "Sigmoid"]}, "activations ['Tanh', 'Sigmoid']"),
    ("GRU", {"activations": ["Relu", "Relu"]}, "activations ['Relu', 'Relu']"),
    ("LSTM", {"activations": ["Relu"]}, "activations ['Relu']"),
    ("LSTM", {"clip": 1.0}, "attribute clip"),
    ("RNN", {"activation_alpha": [0.5]}, "attribute activation_alpha"),
    ("GRU", {"activation_beta": [0.5]}, "attribute activation_beta"),
    ("LSTM", {"input_forget": 1}, "input_forget=1"),
])
def test_unsupported_attributes_are_refused_word_for_word(op_type, attributes, what):
    proto, x_shape = _recurrent_model(op_type, name="n", **attributes)
    net = autograd.onnx.load(proto)
    with pytest.raises(NotImplementedError) as caught:
        net(np.zeros(x_shape, np.float32))
    assert str(caught.value) == (f"autograd.onnx: {op_type} node 'n': {what} is not "
                                 "supported (default activations only)")


def test_an_unknown_direction_is_refused_word_for_word():
    proto, x_shape = _recurrent_model("RNN", name="n")
    proto.graph.node[0].attribute[[a.name for a in proto.graph.node[0].attribute].index(
        "direction")].s = b"sideways"
    net = autograd.onnx.load(proto)
    with pytest.raises(NotImplementedError) as caught:
        net(np.zeros(x_shape, np.float32))
    assert str(caught.value) == ("autograd.onnx: RNN node 'n': direction 'sideways' is not "
                                 "supported (default activations only)")
