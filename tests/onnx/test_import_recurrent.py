"""ONNX LSTM nodes with peepholes (the P input) imported: outputs against onnxruntime running
the same node with non-zero P (forward, reverse, bidirectional; with and without initial
states; both layouts: onnxruntime runs layout 0 only, onnx's ReferenceEvaluator both), and
P's gradient against central differences of onnxruntime's loss."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="the onnx extra is not installed")
onnxruntime = pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")
from onnx import helper, numpy_helper, TensorProto   # noqa: E402
from onnx.reference import ReferenceEvaluator        # noqa: E402

import autograd                                      # noqa: E402

STEPS, BATCH, FEATURES, HIDDEN = 4, 3, 2, 5


def _lstm_model(direction, initial_state, layout, seed=0, P=None):
    rng = np.random.default_rng(seed)
    directions = 2 if direction == "bidirectional" else 1
    arrays = {"W": rng.standard_normal((directions, 4 * HIDDEN, FEATURES)) * 0.5,
              "R": rng.standard_normal((directions, 4 * HIDDEN, HIDDEN)) * 0.5,
              "B": rng.standard_normal((directions, 8 * HIDDEN)) * 0.5,
              "P": rng.standard_normal((directions, 3 * HIDDEN))}
    if P is not None:                   # drawn all the same: the other arrays stay as they were
        arrays["P"] = P
    inputs = ["x", "W", "R", "B", ""]
    state_shape = ((BATCH, directions, HIDDEN) if layout else (directions, BATCH, HIDDEN))
    if initial_state:
        arrays["h0"] = rng.standard_normal(state_shape)
        arrays["c0"] = rng.standard_normal(state_shape)
        inputs += ["h0", "c0"]
    else:
        inputs += ["", ""]
    node = helper.make_node("LSTM", inputs + ["P"], ["y", "h", "c"], hidden_size=HIDDEN,
                            direction=direction, layout=layout)
    x_shape = [BATCH, STEPS, FEATURES] if layout else [STEPS, BATCH, FEATURES]
    outputs = [helper.make_tensor_value_info(name, TensorProto.FLOAT, None)
               for name in ("y", "h", "c")]
    graph = helper.make_graph(
        [node], "lstm_peepholes", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                 x_shape)], outputs,
        [numpy_helper.from_array(np.asarray(a, np.float32), name) for name, a in arrays.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]), x_shape


def _onnxruntime(proto, x):
    session = onnxruntime.InferenceSession(proto.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("initial_state", [False, True])
@pytest.mark.parametrize("layout", [0, 1])
def test_lstm_peepholes_match_onnxruntime(direction, initial_state, layout):
    proto, x_shape = _lstm_model(direction, initial_state, layout)
    x = np.random.default_rng(1).standard_normal(x_shape).astype(np.float32)
    net = autograd.onnx.load(proto)
    assert "P" in net.weights                     # a parameter, as W and R are
    ours = [value.to_numpy() for value in net(x)]
    references = [ReferenceEvaluator(proto).run(None, {"x": x})]
    if not layout:
        references.append(_onnxruntime(proto, x))
    for reference in references:
        for mine, theirs in zip(ours, reference):
            np.testing.assert_allclose(mine, theirs, rtol=1e-5, atol=1e-5)
    without, _ = _lstm_model(direction, initial_state, layout, P=np.zeros((
        2 if direction == "bidirectional" else 1, 3 * HIDDEN)))
    unpeeped = ReferenceEvaluator(without).run(None, {"x": x})[0]
    assert np.abs(unpeeped - ours[0]).max() > 1e-2              # P matters here


def test_the_peepholes_gradient_matches_central_differences_of_onnxruntime():
    proto, x_shape = _lstm_model("forward", True, 0)
    x = np.random.default_rng(2).standard_normal(x_shape).astype(np.float32)
    weights = np.random.default_rng(3).standard_normal((STEPS, 1, BATCH, HIDDEN))
    net = autograd.onnx.load(proto)
    y = net(x)[0]
    loss = autograd.sum(autograd.mul(y, autograd.Tensor(data=weights.astype(np.float32),
                                                        requires_grad=False)))
    gradients = {id(p): g for p, g in autograd.backward(loss)}
    ours = gradients[id(net.weights["P"])].to_numpy()
    P = numpy_helper.to_array(next(i for i in proto.graph.initializer if i.name == "P"))
    P = P.astype(np.float64)
    expected = np.empty_like(P)
    step = 1e-2
    for index in np.ndindex(P.shape):
        losses = []
        for sign in (1, -1):
            moved = P.copy()
            moved[index] += sign * step
            shifted, _ = _lstm_model("forward", True, 0, P=moved)
            losses.append(float((_onnxruntime(shifted, x)[0].astype(np.float64)
                                 * weights).sum()))
        expected[index] = (losses[0] - losses[1]) / (2 * step)
    np.testing.assert_allclose(ours, expected, rtol=2e-2, atol=2e-3)
