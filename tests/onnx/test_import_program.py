"""The inference programs of imported graphs (import_program.py): one traced per layout of the
inputs, giving the bits of the same steps run node by node; planned convolutions that run the
steps again when their input or weights change; programs dropped when the weights or the mode
change; outputs nothing reads not asked for; the input read in place, never returned."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="the onnx extra is not installed")
from onnx import helper, numpy_helper, TensorProto   # noqa: E402

import autograd                                      # noqa: E402
from autograd.onnx import import_inference, import_program    # noqa: E402
from tests.layouts import stored_batch_last         # noqa: E402
from tests.onnx.test_import_inference import _model   # noqa: E402


def _node_by_node(monkeypatch):
    """Programs whose every step calls its handler, as a pass node by node does."""
    monkeypatch.setattr(import_program, "_compiled", lambda handler, step, context, arguments,
                        read: (import_program._StepCall(handler, context, step),
                               list(range(len(arguments)))))


def _inputs(seed, layouts):
    rng = np.random.default_rng(seed)
    inputs = []
    for batch, batch_last in layouts:
        x = rng.standard_normal((batch, 4, 7, 7)).astype(np.float32)
        x.flat[::11] = -0.0
        x.flat[5::17] = np.nan
        inputs.append(stored_batch_last(x) if batch_last else x)
    return inputs


def _bits(array):
    return np.asarray(array).view(np.int32)


def test_programs_give_the_bits_of_the_steps_node_by_node_one_per_layout(monkeypatch):
    net = autograd.onnx.load(_model())
    net.eval()
    inputs = _inputs(1, [(1, False), (3, False), (1, False), (3, True), (3, False)])
    traced = []
    trace = import_program.trace
    monkeypatch.setattr(import_program, "trace", lambda *a: traced.append(1) or trace(*a))
    with autograd.no_grad():
        ours = [net(x).to_numpy() for x in inputs]
        again = [net(x).to_numpy() for x in inputs]
    assert len(traced) == 3 and len(net._programs) == 3    # (1), (3), (3) batch-last
    kinds = {type(v).__name__ for program in net._programs.values()
             for v in program.function.__globals__.values()}
    assert {"PlannedConv", "PlannedConcat", "_StepCall"} <= kinds
    _node_by_node(monkeypatch)
    net._programs.clear()
    with autograd.no_grad():
        theirs = [net(x).to_numpy() for x in inputs]
    for a, b, c in zip(ours, again, theirs):
        np.testing.assert_array_equal(_bits(a), _bits(c))
        np.testing.assert_array_equal(_bits(b), _bits(c))


def test_the_program_source_is_one_line_per_step_and_frees_values_after_their_last_reader():
    net = autograd.onnx.load(_model())
    net.eval()
    with autograd.no_grad():
        net(np.zeros((2, 4, 7, 7), np.float32))
    (program,) = net._programs.values()
    lines = program.source.splitlines()
    calls = [line for line in lines[1:] if " = k" in line]
    assert lines[0].startswith("def replay(r") and len(calls) == len(net._inference_steps)
    assert any(line.strip().startswith("del ") for line in lines)


def test_a_planned_concat_runs_its_step_again_on_another_layout(monkeypatch):
    net = autograd.onnx.load(_model())
    net.eval()
    with autograd.no_grad():
        net(_inputs(7, [(2, False)])[0])
        (program,) = net._programs.values()
        (concat,) = [v for v in program.function.__globals__.values()
                     if isinstance(v, import_inference.PlannedConcat)]
        shape = concat.parts[0].layout[1]
        other = autograd.Tensor(data=np.random.default_rng(8).standard_normal(shape).astype(
            np.float32), requires_grad=False)      # C order: the traced input is batch-last
        assert not concat.parts[0].applies(other)
        arguments = list(concat.inputs)
        for position in concat.reads:
            arguments[position] = other
        expected = import_inference._run_concat(concat.context, concat.step, arguments)
        run = import_inference._run_concat
        ran = []
        monkeypatch.setattr(import_inference, "_run_concat", lambda *a: ran.append(1) or run(*a))
        ours = concat(*[other] * len(concat.reads))
    assert ran == [1]
    np.testing.assert_array_equal(_bits(ours.to_numpy()), _bits(expected.to_numpy()))


def test_a_planned_convolution_runs_its_step_again_on_another_layout_or_new_weights(
        monkeypatch):
    net = autograd.onnx.load(_model())
    net.eval()
    x = _inputs(2, [(2, False)])[0]
    with autograd.no_grad():
        net(x)
        (program,) = net._programs.values()
        planned = [v for v in program.function.__globals__.values()
                   if isinstance(v, import_inference.PlannedConv)]
        assert planned
        conv = planned[0]
        other = autograd.Tensor(data=stored_batch_last(np.ascontiguousarray(
            np.random.default_rng(3).standard_normal(conv.layout[1]).astype(np.float32))),
            requires_grad=False)
        assert not conv.applies(other)
        expected = import_inference._run_conv(conv.context, conv.step,
                                            [other] + conv.inputs[1:])
        run, ran = import_inference._run_conv, []
        monkeypatch.setattr(import_inference, "_run_conv", lambda *a: ran.append(1) or run(*a))
        np.testing.assert_array_equal(conv(other).to_numpy(), expected.to_numpy())
        assert ran == [1]
        first = net(x).to_numpy()
        name = conv.step.conv.input[1]
        net.weights[name].data = net.weights[name].data * 2     # a new array: a new program
        assert not conv.applies(autograd.Tensor(data=np.zeros(conv.layout[1], np.float32),
                                                requires_grad=False))
        doubled = net(x).to_numpy()
    assert len(net._programs) == 2
    fresh = autograd.onnx.load(_model())
    fresh.weights[name].data = fresh.weights[name].data * 2
    fresh.eval()
    with autograd.no_grad():
        np.testing.assert_array_equal(_bits(doubled), _bits(fresh(x).to_numpy()))
    assert not np.array_equal(first, doubled, equal_nan=True)


def _batch_norm_model():
    rng = np.random.default_rng(4)
    arrays = {"W": rng.standard_normal((3, 2, 3, 3)), "scale": rng.uniform(0.5, 2, 3),
              "bias": rng.standard_normal(3), "mean": rng.standard_normal(3),
              "var": rng.uniform(0.5, 2, 3)}
    nodes = [helper.make_node("Conv", ["x", "W"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c", "scale", "bias", "mean", "var"],
                              ["y"])]
    graph = helper.make_graph(
        nodes, "bn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 2, 5, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3, 5, 5])],
        [numpy_helper.from_array(a.astype(np.float32), name) for name, a in arrays.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)])


def test_programs_are_dropped_with_the_folded_parameters_and_by_train_and_eval():
    net = autograd.onnx.load(_batch_norm_model())
    net.eval()
    x = np.random.default_rng(5).standard_normal((2, 2, 5, 5)).astype(np.float32)
    with autograd.no_grad():
        first = net(x).to_numpy()
        assert len(net._programs) == 1
        net.weights["scale"].data[...] *= 3     # in place: seen after eval() again
        np.testing.assert_array_equal(net(x).to_numpy(), first)
        net.eval()
        assert not net._programs
        tripled = net(x).to_numpy()
    fresh = autograd.onnx.load(_batch_norm_model())
    fresh.weights["scale"].data[...] *= 3
    fresh.eval()
    with autograd.no_grad():
        np.testing.assert_allclose(tripled, fresh(x).to_numpy(), rtol=1e-6, atol=1e-6)
    assert not np.allclose(first, tripled)
    net.train()
    assert not net._programs


def _dropout_model(mask_is_output):
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])]
    if mask_is_output:
        outputs.append(helper.make_tensor_value_info("mask", TensorProto.BOOL, ["N", 3]))
    nodes = [helper.make_node("Dropout", ["x"], ["d", "mask"]),
             helper.make_node("Relu", ["d"], ["y"])]
    graph = helper.make_graph(
        nodes, "dropout", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])],
        outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_outputs_nothing_reads_are_not_asked_for_and_graph_outputs_are(monkeypatch):
    from autograd.onnx import import_ops
    seen = []
    dropout = import_ops.IMPORTERS[("", "Dropout")]
    monkeypatch.setitem(import_ops.IMPORTERS, ("", "Dropout"), lambda context, node, inputs: (
        seen.append(list(node.output)) or dropout(context, node, inputs)))
    x = np.array([[-1.0, 2.0, 3.0]], np.float32)
    for mask_is_output in (False, True):
        net = autograd.onnx.load(_dropout_model(mask_is_output))
        net.eval()
        with autograd.no_grad():
            result = net(x)
        if mask_is_output:
            y, mask = result
            np.testing.assert_array_equal(mask.to_numpy(), np.ones((1, 3), bool))
            assert seen[-1] == ["d", "mask"]
        else:
            y = result
            assert seen[-1] == ["d"]
        np.testing.assert_array_equal(y.to_numpy(), np.maximum(x, 0))


def _view_model():
    nodes = [helper.make_node("Reshape", ["x", "shape"], ["y"])]     # a view of x
    graph = helper.make_graph(
        nodes, "view", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 2])],
        [numpy_helper.from_array(np.array([3, 2], np.int64), "shape")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_an_output_never_shares_the_inputs_memory():
    net = autograd.onnx.load(_view_model())
    net.eval()
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for _ in range(2):                      # the trace, then the program
        with autograd.no_grad():
            y = net(x).to_numpy()
        y[...] = -1
        np.testing.assert_array_equal(x, np.arange(6, dtype=np.float32).reshape(2, 3))


def test_a_graph_output_nothing_produces_is_a_clear_error_in_the_inference_pass():
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"])], "missing",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    net = autograd.onnx.load(helper.make_model(graph,
                                               opset_imports=[helper.make_opsetid("", 13)]))
    net.eval()
    with autograd.no_grad(), pytest.raises(ValueError, match=r"no node or input produces \['y'\]"):
        net(np.zeros(2, np.float32))
    assert not net._programs


def test_a_program_reads_the_folded_parameters_of_the_weights_an_eval_mode_step_updated():
    """Fine-tuning in eval mode: a recording pass, an update in place, then a pass that records
    nothing folds the updated weights (the program made before holds the old folded ones)."""
    net = autograd.onnx.load(_batch_norm_model())
    net.eval()
    x = np.random.default_rng(6).standard_normal((2, 2, 5, 5)).astype(np.float32)
    with autograd.no_grad():
        before = net(x).to_numpy()
    loss = autograd.sum(net(x))
    for param, grad in autograd.backward(loss):
        param.data -= 0.1 * grad.data
    with autograd.no_grad():
        after = net(x).to_numpy()
    reference = autograd.onnx.load(_batch_norm_model())
    for name, tensor in net.weights.items():
        reference.weights[name].data[...] = tensor.data
    reference.eval()
    with autograd.no_grad():
        np.testing.assert_allclose(after, reference(x).to_numpy(), rtol=1e-6, atol=1e-6)
    assert not np.allclose(before, after)


def test_an_omitted_output_and_a_node_after_the_outputs():
    """Split's middle output omitted (no name: no register); a node after every graph output is
    known is not run, and not written."""
    nodes = [helper.make_node("Split", ["x"], ["a", "", "c"], axis=1, num_outputs=3),
             helper.make_node("Add", ["a", "c"], ["y"]),
             helper.make_node("Neg", ["y"], ["dead"])]
    graph = helper.make_graph(
        nodes, "split", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 2])])
    net = autograd.onnx.load(helper.make_model(graph,
                                               opset_imports=[helper.make_opsetid("", 18)]))
    net.eval()
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    with autograd.no_grad():
        for _ in range(2):
            np.testing.assert_array_equal(net(x).to_numpy(), x[:, 0:2] + x[:, 4:6])
    (program,) = net._programs.values()
    calls = [line for line in program.source.splitlines() if "= k" in line]
    assert len(calls) == 2 and calls[0].strip().startswith("r") and ", _, r" in calls[0]


def test_a_model_keeps_its_eight_latest_programs_and_threads_may_share_it():
    import threading
    from autograd.onnx import importer
    net = autograd.onnx.load(_model())
    net.eval()
    rng = np.random.default_rng(12)
    inputs = [rng.standard_normal((batch, 4, 7, 7)).astype(np.float32) for batch in range(1, 11)]
    with autograd.no_grad():
        alone = [net(x).to_numpy() for x in inputs]
    assert len(net._programs) == importer._MOST_PROGRAMS == 8
    assert [key[0][0][1][0] for key in net._programs] == list(range(3, 11))   # batch sizes
    results = {}

    def run(index):
        with autograd.no_grad():
            for repeat in range(3):
                results[(index, repeat)] = net(inputs[(index + repeat) % 10]).to_numpy()
    workers = [threading.Thread(target=run, args=(index,)) for index in range(6)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert len(results) == 18 and len(net._programs) <= 8
    for (index, repeat), y in results.items():
        np.testing.assert_array_equal(_bits(y), _bits(alone[(index + repeat) % 10]))
