"""Conv + BatchNormalization folding (import_fold.py): which pairs fold and which may not (a
conv output that is a graph output, training_mode, BatchNorm's extra outputs, parameters that
are computed rather than initializers, an omitted bias), epsilon's default, a 1-D conv, a
grouped conv, and the outputs of each against onnxruntime in eval mode, recording or not.
Found by the mutation run (issue 22)."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="the onnx extra is not installed")
onnxruntime = pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")
from onnx import helper, numpy_helper, TensorProto   # noqa: E402
from onnx.reference import ReferenceEvaluator        # noqa: E402

import autograd                                      # noqa: E402
from autograd.onnx import import_fold                # noqa: E402
from autograd.onnx.import_ops import ImportedNode    # noqa: E402


def _pair(spatial=2, groups=1, conv_inputs=("x", "W", "b"), bn_attributes=None,
          bn_outputs=("y",), extra_nodes=(), outputs=("y",), opset=15, seed=0, var_scale=1.0):
    """x (N, 4, 6[, 5]) -> Conv (6 channels) -> BatchNormalization -> y."""
    rng = np.random.default_rng(seed)
    kernel = (3,) * spatial
    arrays = {"W": rng.standard_normal((6, 4 // groups) + kernel) * 0.5,
              "b": rng.standard_normal(6), "scale": rng.uniform(0.5, 2, 6),
              "shift": rng.standard_normal(6), "mean": rng.standard_normal(6),
              "var": rng.uniform(0.5, 2, 6) * var_scale}
    nodes = list(extra_nodes) + [
        helper.make_node("Conv", list(conv_inputs), ["c"], pads=[1] * (2 * spatial),
                         group=groups),
        helper.make_node("BatchNormalization", ["c", "scale", "shift", "mean", "var"],
                         list(bn_outputs), **(bn_attributes or {}))]
    x_shape = ["N", 4, 6, 5][:2 + spatial]
    graph = helper.make_graph(
        nodes, "pair", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, None) for name in outputs],
        [numpy_helper.from_array(a.astype(np.float32), k) for k, a in arrays.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _check(proto, folded, spatial=2, rtol=1e-4):
    net = autograd.onnx.load(proto)
    assert len(net._folded_pairs) == (1 if folded else 0)
    x = np.random.default_rng(9).standard_normal((2, 4, 6, 5)[:2 + spatial]).astype(np.float32)
    session = onnxruntime.InferenceSession(proto.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    expected = session.run(None, {"x": x})
    for record in (True, False):
        with autograd.enable_grad() if record else autograd.no_grad():
            ours = net(x)
        ours = ours if isinstance(ours, tuple) else (ours,)
        for mine, theirs in zip(ours, expected):
            np.testing.assert_allclose(mine.to_numpy(), theirs, rtol=rtol, atol=rtol)
    return net


@pytest.mark.parametrize("spatial, groups", [(2, 1), (1, 1), (2, 2), (1, 2)])
def test_a_pair_folds_for_1d_2d_and_grouped_convolutions(spatial, groups):
    net = _check(_pair(spatial, groups), True, spatial)
    assert [node.op_type for _, node in net._eval_steps] == ["Conv"]


@pytest.mark.parametrize("conv_inputs", [("x", "W"), ("x", "W", "")])
def test_a_conv_without_bias_folds(conv_inputs):
    _check(_pair(conv_inputs=conv_inputs), True)


def test_epsilon_default_and_given():
    """Variances near 1e-4, so epsilon (default 1e-5) moves the outputs by percents."""
    _check(_pair(var_scale=1e-4), True, rtol=1e-4)
    _check(_pair(var_scale=1e-4, bn_attributes={"epsilon": 1e-3}), True, rtol=1e-4)


def test_a_conv_output_that_is_a_graph_output_is_not_folded():
    _check(_pair(outputs=("y", "c")), False)


def test_batch_norm_in_training_mode_or_with_its_statistics_outputs_is_not_folded():
    assert not autograd.onnx.load(_pair(bn_attributes={"training_mode": 1}))._folded_pairs
    for outputs in (("y", "running_mean", "running_var", "", ""), ("y", "running_mean", "", "",
                                                                    "")):
        proto = _pair(bn_outputs=outputs, opset=9)
        assert not autograd.onnx.load(proto)._folded_pairs
    proto = _pair(bn_outputs=("y", "", "", "", ""), opset=9)
    _check(proto, True)


@pytest.mark.parametrize("computed", ["W", "b", "scale", "var"])
def test_a_computed_parameter_is_not_folded(computed):
    """A parameter read through an Identity is a value computed per pass, not an
    initializer: the pair runs unfolded."""
    proto = _pair(extra_nodes=[helper.make_node("Identity", [computed], [computed + "_id"])])
    for node in proto.graph.node:
        node.input[:] = [computed + "_id" if name == computed and node.op_type != "Identity"
                         else name for name in node.input]
    _check(proto, False)


def test_a_batch_norm_reading_an_input_or_another_node_is_not_folded():
    proto = _pair()
    proto.graph.node[1].input[0] = "x"
    proto.graph.node[0].output[0] = "unused"
    proto.graph.node.append(helper.make_node("Identity", ["unused"], ["z"]))
    proto.graph.input[0].type.tensor_type.shape.dim[1].dim_value = 6
    net = autograd.onnx.load(proto)
    assert not net._folded_pairs
    relu = _pair(extra_nodes=[])
    relu.graph.node.insert(1, helper.make_node("Relu", ["c"], ["r"]))
    relu.graph.node[2].input[0] = "r"
    _check(relu, False)


def test_a_pair_after_one_that_does_not_fold_still_folds():
    """Two Conv + BatchNorm pairs, the first in training_mode: only the second folds."""
    first = _pair(bn_attributes={"training_mode": 1})
    second = _pair(seed=1)
    nodes = [ImportedNode(node) for node in first.graph.node]
    for node in second.graph.node:
        node.input[:] = ["y" if name == "x" else name + "2" for name in node.input]
        node.output[:] = [name + "2" for name in node.output]
        nodes.append(ImportedNode(node))
    static = {name + suffix for name in ("W", "b", "scale", "shift", "mean", "var")
              for suffix in ("", "2")}
    pairs = import_fold.foldable_pairs(nodes, static, {"y2"})
    assert [(pair.conv, pair.batch_norm) for pair in pairs] == [(nodes[2], nodes[3])]


def test_foldable_pairs_and_eval_nodes_keep_the_order():
    nodes = [ImportedNode(node) for node in _pair().graph.node]
    nodes.append(ImportedNode(helper.make_node("Relu", ["y"], ["z"])))
    static = {"W", "b", "scale", "shift", "mean", "var"}
    pairs = import_fold.foldable_pairs(nodes, static, {"z"})
    assert len(pairs) == 1 and pairs[0].conv is nodes[0] and pairs[0].batch_norm is nodes[1]
    fused = pairs[0].fused
    assert fused.input == ["x", "y::folded_weight", "y::folded_bias"]
    assert fused.output == ["y"] and fused.op_type == "Conv"
    assert import_fold.eval_nodes(nodes, pairs) == [fused, nodes[2]]
    assert import_fold.foldable_pairs(nodes, static - {"mean"}, {"z"}) == []
    assert import_fold.foldable_pairs(nodes, static, {"z", "c"}) == []
    short = [nodes[0], ImportedNode(helper.make_node("BatchNormalization",
                                                     ["c", "scale", "shift", "mean"], ["y"]))]
    assert import_fold.foldable_pairs(short, static, set()) == []


def test_folded_conv_formula():
    rng = np.random.default_rng(3)
    W, b = rng.standard_normal((3, 2, 1, 2)), rng.standard_normal(3)
    scale, shift, mean, var = (rng.uniform(0.5, 2, 3), rng.standard_normal(3),
                               rng.standard_normal(3), rng.uniform(0.5, 2, 3))
    T = autograd.Tensor
    folded_w, folded_b = import_fold.folded_conv(T(data=W), T(data=b), T(data=scale),
                                                 T(data=shift), T(data=mean), T(data=var), 0.1)
    s = scale / np.sqrt(var + 0.1)
    np.testing.assert_allclose(folded_w.to_numpy(), W * s[:, None, None, None], rtol=1e-12)
    np.testing.assert_allclose(folded_b.to_numpy(), (b - mean) * s + shift, rtol=1e-12)
    _, no_bias = import_fold.folded_conv(T(data=W), None, T(data=scale), T(data=shift),
                                         T(data=mean), T(data=var), 0.1)
    np.testing.assert_allclose(no_bias.to_numpy(), -mean * s + shift, rtol=1e-12)


def test_double_constants_fold_into_a_float_conv_as_float():
    """BatchNormalization-15 lets scale and B (T1) and mean and var (T2) be doubles beside a
    float input; given by Constant nodes they are constants at load, and the folded weights
    take the conv's float dtype (the output stays float, as unfolded)."""
    proto = _pair()
    arrays = {init.name: numpy_helper.to_array(init) for init in proto.graph.initializer}
    del proto.graph.initializer[2:]
    for name in ("scale", "shift", "mean", "var"):
        proto.graph.node.insert(0, helper.make_node(
            "Constant", [], [name], value=numpy_helper.from_array(arrays[name].astype(np.float64))))
    net = autograd.onnx.load(proto)
    assert len(net._folded_pairs) == 1
    x = np.random.default_rng(9).standard_normal((2, 4, 6, 5)).astype(np.float32)
    expected = ReferenceEvaluator(proto).run(None, {"x": x})[0]
    for record in (True, False):
        with autograd.enable_grad() if record else autograd.no_grad():
            y = net(x).to_numpy()
        assert y.dtype == np.float32
        np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-4)
