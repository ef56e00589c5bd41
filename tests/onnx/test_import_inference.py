"""The fused steps of passes that record nothing (import_inference.py): Conv + Relu, Conv + Add
of a shortcut + Relu, a Concat of convolutions written in place; outputs against onnxruntime
and against the unfused graph of a recording pass, at two batch sizes and in both layouts of
the input."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="the onnx extra is not installed")
onnxruntime = pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")
from onnx import helper, numpy_helper, TensorProto   # noqa: E402

import autograd                                      # noqa: E402
from autograd.onnx.import_inference import FusedConcat, FusedConv   # noqa: E402
from tests.layouts import stored_batch_last         # noqa: E402


def _model(seed=0):
    """x (N, 4, 7, 7): a = relu(conv3x3(x)); s = relu(conv1x1(a) + x);
    c = concat(relu(conv1x1(s)), conv3x3(s), axis 1); t = conv1x1(c) read twice: t + relu(t);
    the output also reads ``a`` (a fused step's output read elsewhere)."""
    rng = np.random.default_rng(seed)
    arrays = {"W1": rng.standard_normal((4, 4, 3, 3)) * 0.3, "b1": rng.standard_normal(4),
              "W2": rng.standard_normal((4, 4, 1, 1)) * 0.5, "b2": rng.standard_normal(4),
              "W3": rng.standard_normal((3, 4, 1, 1)) * 0.5, "b3": rng.standard_normal(3),
              "W4": rng.standard_normal((5, 4, 3, 3)) * 0.3,
              "W5": rng.standard_normal((4, 8, 1, 1)) * 0.5}
    nodes = [helper.make_node("Conv", ["x", "W1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["a"]),
             helper.make_node("Conv", ["a", "W2", "b2"], ["c2"]),
             helper.make_node("Add", ["c2", "x"], ["sum"]),
             helper.make_node("Relu", ["sum"], ["s"]),
             helper.make_node("Conv", ["s", "W3", "b3"], ["c3"]),
             helper.make_node("Relu", ["c3"], ["r3"]),
             helper.make_node("Conv", ["s", "W4"], ["c4"], pads=[1, 1, 1, 1]),
             helper.make_node("Concat", ["r3", "c4"], ["cat"], axis=1),
             helper.make_node("Conv", ["cat", "W5"], ["t"]),
             helper.make_node("Relu", ["t"], ["rt"]),
             helper.make_node("Add", ["t", "rt"], ["u"]),
             helper.make_node("Add", ["u", "a"], ["y"])]
    graph = helper.make_graph(
        nodes, "fusions", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                         ["N", 4, 7, 7])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4, 7, 7])],
        [numpy_helper.from_array(a.astype(np.float32), name) for name, a in arrays.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)])


def test_the_fusions_found_and_those_refused():
    net = autograd.onnx.load(_model())
    steps = [node for _, node in net._inference_steps]
    fused = [(type(step).__name__, [n.op_type for n in getattr(step, "nodes", [])])
             for step in steps if isinstance(step, (FusedConv, FusedConcat))]
    assert fused == [("FusedConv", ["Conv", "Relu"]), ("FusedConv", ["Conv", "Add", "Relu"]),
                     ("FusedConcat", []), ("FusedConv", ["Conv"])]
    concat = next(step for step in steps if isinstance(step, FusedConcat))
    assert [[n.op_type for n in part.nodes] for part in concat.parts] == [["Conv", "Relu"],
                                                                          ["Conv"]]


@pytest.mark.parametrize("batch", [1, 3])
@pytest.mark.parametrize("batch_last", [False, True])
def test_fused_pass_matches_onnxruntime_and_the_recorded_pass(batch, batch_last):
    proto = _model()
    x = np.random.default_rng(batch).standard_normal((batch, 4, 7, 7)).astype(np.float32)
    session = onnxruntime.InferenceSession(proto.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    expected = session.run(None, {"x": x})[0]
    net = autograd.onnx.load(proto)
    net.eval()
    with autograd.no_grad():
        fused = net(stored_batch_last(x) if batch_last else x).to_numpy()
    recorded = net(x).to_numpy()            # records: the graph as it is, unfused
    np.testing.assert_allclose(fused, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(fused, recorded, rtol=1e-5, atol=1e-6)


def test_one_dimensional_convolutions_take_the_unfused_path_with_the_same_outputs():
    rng = np.random.default_rng(5)
    arrays = {"W1": rng.standard_normal((3, 2, 3)), "b1": rng.standard_normal(3),
              "W2": rng.standard_normal((2, 2, 1))}
    nodes = [helper.make_node("Conv", ["x", "W1", "b1"], ["c1"], pads=[1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["x", "W2"], ["c2"]),
             helper.make_node("Concat", ["r1", "c2"], ["y"], axis=1)]
    graph = helper.make_graph(
        nodes, "sequences", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 2, 7])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 5, 7])],
        [numpy_helper.from_array(a.astype(np.float32), name) for name, a in arrays.items()])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)])
    net = autograd.onnx.load(proto)
    assert any(isinstance(step, FusedConcat) for _, step in net._inference_steps)
    x = rng.standard_normal((2, 2, 7)).astype(np.float32)
    with autograd.no_grad():
        ours = net(x).to_numpy()
    session = onnxruntime.InferenceSession(proto.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(ours, session.run(None, {"x": x})[0], rtol=1e-5, atol=1e-5)


def test_graph_mode_captures_the_unfused_graph_and_replays_it_on_new_inputs():
    net = autograd.onnx.load(_model())
    net.eval()

    @autograd.capture
    def infer(x):
        with autograd.no_grad():
            return net(x)

    rng = np.random.default_rng(6)
    inputs = [rng.standard_normal((2, 4, 7, 7)).astype(np.float32) for _ in range(4)]
    replayed = [infer(autograd.Tensor(data=x, requires_grad=False)).to_numpy() for x in inputs]
    assert infer.replays >= 1
    for x, y in zip(inputs, replayed):
        with autograd.no_grad():
            np.testing.assert_allclose(y, net(x).to_numpy(), rtol=1e-5, atol=1e-6)


def test_the_fused_steps_plans_give_the_unplanned_bits_and_are_kept_per_layout(monkeypatch):
    """A fused Conv (+ Relu), a Concat's parts: the compiled plan made on a layout's first
    pass (import_inference._planned) and run on later ones gives the bits of the fused path
    without plans, over passes, batch sizes, a batch-last input, NaN and -0.0 values; a
    Conv + Add of a shortcut has no plan."""
    from autograd.onnx import import_inference
    net = autograd.onnx.load(_model())
    net.eval()
    rng = np.random.default_rng(9)
    inputs = []
    for batch, batch_last in [(1, False), (1, False), (3, False), (3, True), (1, False)]:
        x = rng.standard_normal((batch, 4, 7, 7)).astype(np.float32)
        x.flat[::11] = -0.0
        x.flat[5::17] = np.nan
        inputs.append(stored_batch_last(x) if batch_last else x)

    def passes():
        with autograd.no_grad():
            return [net(x).to_numpy() for x in inputs]

    planned = passes()
    steps = [step for _, step in net._inference_steps if isinstance(step, FusedConv)]
    steps += [part for _, step in net._inference_steps if isinstance(step, FusedConcat)
              for part in step.parts]
    for step in steps:     # a plan per layout: batches of 1 and 3 (the first step: 3 layouts)
        plans = list(step.plans.values())
        if step.add is not None:
            assert plans == []
        else:
            assert len(plans) in (2, 3) and all(plan is not None for plan in plans)
    decide = import_inference._prepared

    def only_with_a_shortcut(context, step, inputs):
        assert step.add is not None, f"{step.name} decided again"
        return decide(context, step, inputs)
    net._programs.clear()           # (import_program.py) a new trace finds the steps' plans
    with monkeypatch.context() as patched:       # with the plans made, no step decides again
        patched.setattr(import_inference, "_prepared", only_with_a_shortcut)
        with autograd.no_grad():
            again = net(inputs[0]).to_numpy()
    np.testing.assert_array_equal(again.view(np.int32), planned[0].view(np.int32))
    monkeypatch.setattr(import_inference, "_planned", lambda context, step, inputs: None)
    net._programs.clear()
    for ours, theirs in zip(planned, passes()):
        np.testing.assert_array_equal(ours.view(np.int32), theirs.view(np.int32))


def test_the_fused_steps_plans_are_not_run_with_the_kernels_switched_off(monkeypatch):
    from autograd.backend import forward_plans, native
    net = autograd.onnx.load(_model())
    net.eval()
    x = np.random.default_rng(10).standard_normal((2, 4, 7, 7)).astype(np.float32)
    with autograd.no_grad():
        net(x)                                      # the plans made, with the kernels
        previous = native.set_enabled(False)
        try:
            class Refused:
                def __getattr__(self, name):
                    raise AssertionError(f"a plan called the compiled {name}")
            monkeypatch.setattr(forward_plans, "_native", Refused())
            without = net(x).to_numpy()
        finally:
            native.set_enabled(previous)
        monkeypatch.undo()
        np.testing.assert_allclose(without, net(x).to_numpy(), rtol=1e-5, atol=1e-6)
