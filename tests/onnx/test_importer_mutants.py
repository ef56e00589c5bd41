"""OnnxModel (importer.py): what the conformance suite does not look at. How a model is read
(ModelProto, bytes, bytearray, a path), the opsets accepted and the message for others, which
initializers become parameters, constants or buffers, which inputs are inputs, what is folded
at load, the three messages of ``values_of`` word for word, several outputs, the train/eval
switches and the folded Conv + BatchNorm parameters kept between passes. Found by the mutation
run (issue 22)."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="the onnx extra is not installed")
onnxruntime = pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")
from onnx import helper, numpy_helper, TensorProto   # noqa: E402

import autograd                                      # noqa: E402
from autograd.onnx.importer import OnnxModel, read_model   # noqa: E402


def _model(nodes, inputs, outputs, initializers=(), opset=15, domain=""):
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)
                     for name, shape in inputs],
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, None) for name in outputs],
        [numpy_helper.from_array(np.asarray(a), name) for name, a in dict(initializers).items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid(domain, opset)])


def _onnxruntime(proto, feeds):
    session = onnxruntime.InferenceSession(proto.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def _affine():
    """y = relu(x W + b): W, b float initializers (parameters)."""
    rng = np.random.default_rng(0)
    return _model([helper.make_node("MatMul", ["x", "W"], ["m"]),
                   helper.make_node("Add", ["m", "b"], ["a"]),
                   helper.make_node("Relu", ["a"], ["y"])], [("x", [2, 3])], ["y"],
                  {"W": rng.standard_normal((3, 4)).astype(np.float32),
                   "b": rng.standard_normal(4).astype(np.float32)})


def test_a_model_is_read_from_a_proto_bytes_a_bytearray_and_a_path(tmp_path):
    proto = _affine()
    path = tmp_path / "affine.onnx"
    onnx.save(proto, str(path))
    assert read_model(proto) is proto
    x = np.random.default_rng(1).standard_normal((2, 3)).astype(np.float32)
    expected = _onnxruntime(proto, {"x": x})[0]
    data = proto.SerializeToString()
    for source in (proto, data, bytearray(data), str(path), path):
        np.testing.assert_allclose(autograd.onnx.load(source)(x).to_numpy(), expected,
                                   rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("domain", ["", "ai.onnx"])
def test_opsets_outside_six_to_the_newest_are_refused_word_for_word(domain):
    newest = onnx.defs.onnx_opset_version()
    for version in (6, newest):
        assert autograd.onnx.load(_model([helper.make_node("Relu", ["x"], ["y"])],
                                         [("x", [2])], ["y"], opset=version,
                                         domain=domain)).opset == {"": version}
    for version in (5, newest + 1):
        proto = _model([helper.make_node("Relu", ["x"], ["y"])], [("x", [2])], ["y"],
                       opset=version, domain=domain)
        with pytest.raises(ValueError) as caught:
            autograd.onnx.load(proto)
        assert str(caught.value) == (f"autograd.onnx.load: opset {version} is not supported "
                                     f"(opsets 6 to {newest}, that of the installed onnx, are)")


def test_a_model_without_a_default_domain_opset_runs_at_the_newest():
    proto = _model([helper.make_node("Relu", ["x"], ["y"])], [("x", [2])], ["y"])
    del proto.opset_import[:]
    proto.opset_import.append(helper.make_opsetid("com.example", 1))
    net = autograd.onnx.load(proto)
    assert net.opset == {"com.example": 1}
    np.testing.assert_array_equal(net(np.float32([-1, 2])).to_numpy(), [0, 2])


def _sorted_initializers():
    """Every kind of initializer: a float weight W, an int64 shape, a float read at a static
    position (Clip's bounds), BatchNorm's scale and bias (weights) and statistics (buffers),
    and an initializer also listed as an input (old exporters)."""
    rng = np.random.default_rng(2)
    arrays = {"W": rng.standard_normal((4, 4)).astype(np.float32),
              "shape": np.int64([2, 4, 1, 1]), "low": np.float32(-0.5),
              "high": np.float32(0.75), "scale": rng.uniform(0.5, 2, 4).astype(np.float32),
              "bias": rng.standard_normal(4).astype(np.float32),
              "mean": rng.standard_normal(4).astype(np.float32),
              "var": rng.uniform(0.5, 2, 4).astype(np.float32)}
    nodes = [helper.make_node("MatMul", ["x", "W"], ["m"]),
             helper.make_node("Reshape", ["m", "shape"], ["r"]),
             helper.make_node("BatchNormalization", ["r", "scale", "bias", "mean", "var"],
                              ["n"]),
             helper.make_node("Clip", ["n", "low", "high"], ["y"])]
    proto = _model(nodes, [("x", [2, 4]), ("W", [4, 4])], ["y"], arrays)
    return proto, arrays


def test_initializers_become_weights_constants_and_buffers():
    proto, arrays = _sorted_initializers()
    net = autograd.onnx.load(proto)
    assert sorted(net.weights) == ["W", "bias", "scale"]
    assert all(t.stores_grad for t in net.weights.values())
    assert sorted(net.constants) == ["high", "low", "shape"]
    assert sorted(net._buffers_by_name) == ["mean", "var"]
    assert [name for name, _ in net.named_buffers()] == ["buffer_0", "buffer_1"]
    assert all(not t.requires_grad for t in net._buffers_by_name.values())
    np.testing.assert_array_equal(net._buffers_by_name["var"].to_numpy(), arrays["var"])
    assert net.input_names == net.declared_input_names == ["x"]
    x = np.random.default_rng(3).standard_normal((2, 4)).astype(np.float32)
    net.eval()
    np.testing.assert_allclose(net(x).to_numpy(), _onnxruntime(proto, {"x": x})[0],
                               rtol=1e-5, atol=1e-5)
    # a copy of the initializers' arrays: the proto's own values are not written to
    net.weights["W"].data[...] = 0
    assert numpy_helper.to_array(proto.graph.initializer[0]).any()


def test_an_input_a_node_overwrites_is_declared_but_not_taken():
    proto = _model([helper.make_node("Constant", [], ["c"], value_float=2.0),
                    helper.make_node("Mul", ["x", "c"], ["y"])],
                   [("x", [2]), ("c", [])], ["y"])
    net = autograd.onnx.load(proto)
    assert net.declared_input_names == ["x", "c"] and net.input_names == ["x"]
    np.testing.assert_array_equal(net(np.float32([1, -3])).to_numpy(), [2, -6])


def test_constant_subgraphs_fold_at_load_but_dropout_and_batch_norm_stay():
    rng = np.random.default_rng(4)
    arrays = {"shape": np.int64([3, 2]),
              "scale": np.ones(2, np.float32), "bias": np.zeros(2, np.float32),
              "mean": np.float32([1, -1]), "var": np.float32([4, 9])}
    nodes = [helper.make_node("ConstantOfShape", ["shape"], ["z"],
                              value=numpy_helper.from_array(np.float32([1.5]))),
             helper.make_node("Constant", [], ["two"], value_float=2.0),
             helper.make_node("Mul", ["z", "two"], ["k"]),                 # folds: 3.0
             helper.make_node("Dropout", ["k"], ["d", ""]),                # stays
             helper.make_node("BatchNormalization", ["d", "scale", "bias", "mean", "var"],
                              ["n"]),                                        # stays
             helper.make_node("Add", ["x", "n"], ["y"])]
    proto = _model(nodes, [("x", [3, 2])], ["y"], arrays)
    net = autograd.onnx.load(proto)
    assert [node.op_type for node in net.nodes] == ["Dropout", "BatchNormalization", "Add"]
    np.testing.assert_array_equal(net.constants["k"], np.full((3, 2), 3.0, np.float32))
    assert net.constants["k"].dtype == np.float32
    x = rng.standard_normal((3, 2)).astype(np.float32)
    net.eval()
    np.testing.assert_allclose(net(x).to_numpy(), _onnxruntime(proto, {"x": x})[0],
                               rtol=1e-6, atol=1e-6)


def test_a_folded_node_with_an_empty_output_name_keeps_the_named_ones():
    proto = _model([helper.make_node("Split", ["c"], ["", "second"], axis=0),
                    helper.make_node("Add", ["x", "second"], ["y"])],
                   [("x", [2])], ["y"], {"c": np.int64([1, 2, 3, 4])})
    net = autograd.onnx.load(proto)
    assert "" not in net.constants and net.nodes[0].op_type == "Add"
    assert isinstance(net.constants["second"], np.ndarray)      # computed constants are arrays
    np.testing.assert_array_equal(net.constants["second"], [3, 4])


def test_values_of_gives_intermediate_values_and_several_outputs_give_a_tuple():
    proto = _model([helper.make_node("Relu", ["x"], ["r"]),
                    helper.make_node("Neg", ["r"], ["n"]),
                    helper.make_node("Exp", ["x"], ["e"])], [("x", [3])], ["n", "e"])
    net = autograd.onnx.load(proto)
    x = np.float32([-1, 0, 2])
    n, e = net(x)
    np.testing.assert_array_equal(n.to_numpy(), [0, 0, -2])
    np.testing.assert_allclose(e.to_numpy(), np.exp(x), rtol=1e-6)
    (r,) = net.values_of([x], ["r"])
    np.testing.assert_array_equal(r.to_numpy(), [0, 0, 2])
    r, x_again = net.values_of([autograd.Tensor(data=x)], ["r", "x"])
    np.testing.assert_array_equal(x_again.to_numpy(), x)
    assert isinstance(x_again, autograd.Tensor)
    (single,) = net.values_of([[-1.0, 0.0, 2.0]], ["n"])         # a list as the input
    np.testing.assert_array_equal(single.to_numpy(), [0, 0, -2])


def test_a_constant_output_is_returned_as_a_tensor():
    proto = _model([helper.make_node("Shape", ["x"], ["s"])], [("x", [2, 5])], ["s"])
    proto.graph.output[0].type.tensor_type.elem_type = TensorProto.INT64
    y = autograd.onnx.load(proto)(np.zeros((2, 5), np.float32))
    assert isinstance(y, autograd.Tensor) and not y.requires_grad
    np.testing.assert_array_equal(y.to_numpy(), [2, 5])


def test_the_messages_of_values_of_are_exact():
    proto = _model([helper.make_node("Add", ["x", "ghost"], ["y"], name="adder")],
                   [("x", [2])], ["y"])
    net = autograd.onnx.load(proto)
    with pytest.raises(ValueError) as caught:
        net(np.float32([1, 2]), np.float32([3, 4]))
    assert str(caught.value) == "OnnxModel: the graph takes 1 input(s) ['x'], got 2"
    with pytest.raises(ValueError) as caught:
        net(np.float32([1, 2]))
    assert str(caught.value) == ("OnnxModel: node adder (Add) reads ['ghost'], which nothing "
                                 "produced")
    proto.graph.node[0].name = ""
    with pytest.raises(ValueError) as caught:
        autograd.onnx.load(proto)(np.float32([1, 2]))
    assert str(caught.value) == ("OnnxModel: node Add (Add) reads ['ghost'], which nothing "
                                 "produced")
    with pytest.raises(ValueError) as caught:
        autograd.onnx.load(_affine()).values_of([np.zeros((2, 3), np.float32)], ["m", "nope"])
    assert str(caught.value) == "OnnxModel: no node or input produces ['nope']"
    # a node whose only input is missing is named too
    proto = _model([helper.make_node("Relu", ["ghost"], ["y"], name="lonely")], [("x", [2])],
                   ["y"])
    with pytest.raises(ValueError) as caught:
        autograd.onnx.load(proto)(np.float32([1, 2]))
    assert str(caught.value) == ("OnnxModel: node lonely (Relu) reads ['ghost'], which nothing "
                                 "produced")


def test_values_of_stops_once_it_has_every_value_asked_for():
    """The node after ``r`` reads a value nothing produces: asking for ``r`` never runs it."""
    proto = _model([helper.make_node("Relu", ["x"], ["r"]),
                    helper.make_node("Add", ["r", "ghost"], ["y"], name="later")],
                   [("x", [2])], ["y"])
    (r,) = autograd.onnx.load(proto).values_of([np.float32([-1, 2])], ["r"])
    np.testing.assert_array_equal(r.to_numpy(), [0, 2])


def test_a_plain_array_input_becomes_a_tensor_that_needs_no_gradient():
    """An input given as an array is data, not a parameter (what values_of gives back)."""
    proto = _model([helper.make_node("Relu", ["x"], ["y"])], [("x", [2])], ["y"])
    (x,) = autograd.onnx.load(proto).values_of([np.float32([-1, 2])], ["x"])
    assert isinstance(x, autograd.Tensor) and not x.requires_grad and not x.stores_grad
    np.testing.assert_array_equal(x.to_numpy(), [-1, 2])


def test_an_omitted_optional_input_is_none_for_the_handler():
    """Clip with no min ("") and a max: the empty name is not a missing value."""
    proto = _model([helper.make_node("Clip", ["x", "", "high"], ["y"])], [("x", [3])], ["y"],
                   {"high": np.float32(1)})
    np.testing.assert_array_equal(autograd.onnx.load(proto)(np.float32([-5, 0.5, 3])).to_numpy(),
                                  [-5, 0.5, 1])


def _conv_batch_norm(seed=5):
    rng = np.random.default_rng(seed)
    arrays = {"W": (rng.standard_normal((3, 2, 3, 3)) * 0.5).astype(np.float32),
              "scale": rng.uniform(0.5, 2, 3).astype(np.float32),
              "shift": rng.standard_normal(3).astype(np.float32),
              "mean": rng.standard_normal(3).astype(np.float32),
              "var": rng.uniform(0.5, 2, 3).astype(np.float32)}
    nodes = [helper.make_node("Conv", ["x", "W"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c", "scale", "shift", "mean", "var"],
                              ["y"])]
    return _model(nodes, [("x", ["N", 2, 5, 5])], ["y"], arrays), arrays


def _with(proto, name, array):
    copy = onnx.ModelProto()
    copy.CopyFrom(proto)
    for initializer in copy.graph.initializer:
        if initializer.name == name:
            initializer.CopyFrom(numpy_helper.from_array(array, name))
    return copy


def test_an_intermediate_value_in_eval_mode_comes_from_the_unfolded_graph():
    """The folded steps skip the conv's own output: asked for it, the graph runs unfolded."""
    proto, _ = _conv_batch_norm()
    net = autograd.onnx.load(proto)
    x = np.random.default_rng(6).standard_normal((2, 2, 5, 5)).astype(np.float32)
    probe = onnx.ModelProto()
    probe.CopyFrom(proto)
    probe.graph.output.append(helper.make_tensor_value_info("c", TensorProto.FLOAT, None))
    y_expected, c_expected = _onnxruntime(probe, {"x": x})
    for record in (True, False):
        with autograd.enable_grad() if record else autograd.no_grad():
            c, y = net.values_of([x], ["c", "y"])
            (y_alone,) = net.values_of([x], ["y"])
        np.testing.assert_allclose(c.to_numpy(), c_expected, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(y.to_numpy(), y_expected, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(y_alone.to_numpy(), y_expected, rtol=1e-5, atol=1e-5)


def test_the_folded_parameters_are_kept_until_an_array_is_replaced_or_the_mode_switches():
    proto, arrays = _conv_batch_norm()
    net = autograd.onnx.load(proto)
    x = np.random.default_rng(7).standard_normal((2, 2, 5, 5)).astype(np.float32)
    with autograd.no_grad():
        net(x)
        kept = net._folded
        net(x)
        assert net._folded is kept                 # the second pass reuses them
    doubled = arrays["scale"] * 2
    net.weights["scale"].data = doubled.copy()     # a replaced array is seen
    with autograd.no_grad():
        y = net(x).to_numpy()
    assert net._folded is not kept
    np.testing.assert_allclose(y, _onnxruntime(_with(proto, "scale", doubled), {"x": x})[0],
                               rtol=1e-5, atol=1e-5)
    net.weights["scale"].data[...] = arrays["scale"]     # in place: kept until eval() again
    with autograd.no_grad():
        np.testing.assert_allclose(net(x).to_numpy(), y, rtol=1e-6)
    net.eval()
    assert net._folded is None
    with autograd.no_grad():
        np.testing.assert_allclose(net(x).to_numpy(), _onnxruntime(proto, {"x": x})[0],
                                   rtol=1e-5, atol=1e-5)
    assert net._folded is not None
    net.train()
    assert net._folded is None
    net.eval()
    with autograd.no_grad():
        net(x)
    net(x)                                         # a pass that records drops them
    assert net._folded is None


def test_train_mode_needs_both_the_model_switch_and_the_process_switch():
    """BatchNorm uses batch statistics (and moves its buffers) only when the net is in
    training mode and ``autograd.training`` is on; otherwise the running statistics."""
    proto, arrays = _conv_batch_norm()
    x = np.random.default_rng(8).standard_normal((4, 2, 5, 5)).astype(np.float32)
    expected_eval = _onnxruntime(proto, {"x": x})[0]
    net = autograd.onnx.load(proto)
    assert not net.training and not net.is_training         # loaded in eval mode
    np.testing.assert_allclose(net(x).to_numpy(), expected_eval, rtol=1e-5, atol=1e-5)
    net.train()
    assert net.is_training
    try:
        autograd.training = False
        assert not net.is_training
        np.testing.assert_allclose(net(x).to_numpy(), expected_eval, rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(net._buffers_by_name["mean"].to_numpy(), arrays["mean"])
    finally:
        autograd.training = True
    y = net(x).to_numpy()                                  # batch statistics: mean 0 per channel
    np.testing.assert_allclose(y.mean(axis=(0, 2, 3)), arrays["shift"], atol=1e-4)
    assert not np.allclose(net._buffers_by_name["mean"].to_numpy(), arrays["mean"])
