"""An imported Conv + BatchNormalization runs folded into one Conv in eval mode: its outputs and
gradients match onnxruntime (outputs, and central differences of the loss), and eval after
training folds the current parameters and statistics again."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="the onnx extra is not installed")
onnxruntime = pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")
from onnx import helper, numpy_helper, TensorProto   # noqa: E402

import autograd                                      # noqa: E402


def _conv_batch_norm_model(bias=True, seed=0):
    """x (N, 3, 6, 6) -> Conv (4 channels, 3x3, pad 1) -> BatchNormalization -> y."""
    rng = np.random.default_rng(seed)
    arrays = {"W": rng.standard_normal((4, 3, 3, 3)) * 0.5,
              "scale": rng.uniform(0.5, 2.0, 4), "shift": rng.standard_normal(4),
              "mean": rng.standard_normal(4), "var": rng.uniform(0.5, 2.0, 4)}
    if bias:
        arrays["b"] = rng.standard_normal(4)
    conv_inputs = ["x", "W"] + (["b"] if bias else [])
    nodes = [helper.make_node("Conv", conv_inputs, ["c"], kernel_shape=[3, 3],
                              pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c", "scale", "shift", "mean", "var"],
                              ["y"], epsilon=1e-3)]
    graph = helper.make_graph(
        nodes, "conv_bn", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                         ["N", 3, 6, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4, 6, 6])],
        [numpy_helper.from_array(a.astype(np.float32), name) for name, a in arrays.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)])


def _run(proto, x):
    session = onnxruntime.InferenceSession(proto.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})[0].astype(np.float64)


def _with_initializers(proto, arrays):
    """A copy of ``proto`` whose initializers named in ``arrays`` hold those values."""
    copy = onnx.ModelProto()
    copy.CopyFrom(proto)
    for initializer in copy.graph.initializer:
        if initializer.name in arrays:
            initializer.CopyFrom(numpy_helper.from_array(
                np.asarray(arrays[initializer.name], np.float32), initializer.name))
    return copy


def _current_arrays(net):
    named = dict(net.weights)
    named.update(net._buffers_by_name)
    return {name: tensor.to_numpy() for name, tensor in named.items()}


@pytest.mark.parametrize("bias", [True, False])
def test_eval_runs_the_pair_as_one_conv_with_onnxruntime_outputs(bias):
    proto = _conv_batch_norm_model(bias)
    net = autograd.onnx.load(proto)
    assert [node.op_type for _, node in net._eval_steps] == ["Conv"]
    x = np.random.default_rng(1).standard_normal((2, 3, 6, 6)).astype(np.float32)
    with autograd.no_grad():
        np.testing.assert_allclose(net(x).to_numpy(), _run(proto, x), atol=1e-4, rtol=1e-4)
    np.testing.assert_allclose(net(x).to_numpy(), _run(proto, x), atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("bias", [True, False])
def test_eval_gradients_reach_the_unfolded_parameters(bias):
    """loss = sum(y * u) is linear in each parameter here, so central differences through
    onnxruntime are exact up to float32 rounding."""
    proto = _conv_batch_norm_model(bias, seed=2)
    net = autograd.onnx.load(proto)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 6, 6)).astype(np.float32)
    u = rng.standard_normal((2, 4, 6, 6))
    y = net(x)
    loss = autograd.sum(autograd.mul(y, autograd.Tensor(data=u.astype(np.float32))))
    grads = {id(p): g.to_numpy() for p, g in autograd.backward(loss)}
    arrays = _current_arrays(net)
    for name in ["W", "scale", "shift"] + (["b"] if bias else []):
        analytic = grads[id(net.weights[name])]
        index = tuple(rng.integers(0, size) for size in analytic.shape)
        step = 0.05
        values = []
        for sign in (1, -1):
            changed = arrays[name].copy()
            changed[index] += sign * step
            values.append((_run(_with_initializers(proto, {name: changed}), x) * u).sum())
        numeric = (values[0] - values[1]) / (2 * step)
        assert analytic[index] == pytest.approx(numeric, rel=2e-3, abs=2e-3), name


def test_eval_after_training_folds_the_current_parameters_and_statistics():
    proto = _conv_batch_norm_model(True, seed=4)
    net = autograd.onnx.load(proto)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 3, 6, 6)).astype(np.float32)
    with autograd.no_grad():
        net(x)                                  # keeps the folded parameters of the load
    net.train()
    sgd = autograd.opt.SGD(lr=0.1)
    for _ in range(2):                          # changes W, b, scale, shift and the statistics
        loss = autograd.sum(autograd.mul(net(x), net(x)))
        for p, g in autograd.backward(loss):
            sgd.update(p, g)
    net.eval()
    current = _with_initializers(proto, _current_arrays(net))
    assert not np.allclose(_run(current, x), _run(proto, x), atol=1e-3)
    with autograd.no_grad():
        np.testing.assert_allclose(net(x).to_numpy(), _run(current, x), atol=1e-4, rtol=1e-4)


def test_a_conv_output_read_elsewhere_is_not_folded():
    proto = _conv_batch_norm_model(True)
    proto.graph.node.append(helper.make_node("Add", ["c", "y"], ["z"]))
    proto.graph.output[0].name = "z"
    net = autograd.onnx.load(proto)
    assert [node.op_type for _, node in net._eval_steps] == ["Conv", "BatchNormalization",
                                                            "Add"]
    x = np.random.default_rng(6).standard_normal((2, 3, 6, 6)).astype(np.float32)
    with autograd.no_grad():
        np.testing.assert_allclose(net(x).to_numpy(), _run(proto, x), atol=1e-4, rtol=1e-4)
