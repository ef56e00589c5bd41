"""Elementwise nodes (import_ops.py) on single-node models against onnxruntime: the opset-6
``broadcast``/``axis`` attributes, Clip's attributes (before opset 11) and inputs, integer
division of negative numbers, static (constant) operands computed with NumPy, n-ary nodes of
one input, the attribute defaults, Context's casts, and the unsupported-node message word for
word. Found by the mutation run (issue 22)."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="the onnx extra is not installed")
onnxruntime = pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")
from onnx import helper, numpy_helper                # noqa: E402

import autograd                                      # noqa: E402
from autograd.onnx import import_ops                 # noqa: E402

_TYPES = {np.dtype(np.float32): onnx.TensorProto.FLOAT, np.dtype(np.float64):
          onnx.TensorProto.DOUBLE, np.dtype(np.int64): onnx.TensorProto.INT64,
          np.dtype(np.int32): onnx.TensorProto.INT32, np.dtype(bool): onnx.TensorProto.BOOL}


def single_node(op_type, feeds, initializers=None, opset=15, outputs=("y",), **attributes):
    """A model of one ``op_type`` node reading ``feeds`` (graph inputs) then ``initializers``
    (a name mapped to None is an omitted input)."""
    initializers = dict(initializers or {})
    names = list(feeds) + [name if value is not None else "" for name, value in
                           initializers.items()]
    node = helper.make_node(op_type, names, list(outputs), name="n", **attributes)
    graph = helper.make_graph(
        [node], "single",
        [helper.make_tensor_value_info(name, _TYPES[np.asarray(v).dtype], np.shape(v))
         for name, v in feeds.items()],
        [helper.make_empty_tensor_value_info(name) for name in outputs],
        [numpy_helper.from_array(np.asarray(v), name) for name, v in initializers.items()
         if v is not None])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def check(proto, feeds, rtol=1e-6, atol=1e-6):
    """Our outputs (as arrays) against onnxruntime's, dtype and values."""
    session = onnxruntime.InferenceSession(proto.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    expected = session.run(None, feeds)
    ours = autograd.onnx.load(proto)(*feeds.values())
    ours = [o.to_numpy() for o in (ours if isinstance(ours, tuple) else (ours,))]
    for mine, theirs in zip(ours, expected):
        assert mine.dtype == theirs.dtype and mine.shape == theirs.shape
        np.testing.assert_allclose(mine, theirs, rtol=rtol, atol=atol)
    return ours


RNG = np.random.default_rng(0)
A = RNG.standard_normal((2, 3, 4)).astype(np.float32)


@pytest.mark.parametrize("op_type", ["Add", "Sub", "Mul", "Div", "Equal", "Less", "Greater"])
@pytest.mark.parametrize("b_shape, axis", [((3,), 1), ((3, 4), 1), ((4,), 2), ((2,), 0),
                                           ((3,), -2)])
def test_opset_6_broadcast_with_axis_aligns_b_from_that_axis(op_type, b_shape, axis):
    """broadcast=1, axis: b's axes sit from ``axis`` of a (not NumPy's trailing rule)."""
    b = np.round(RNG.standard_normal(b_shape), 1).astype(np.float32)
    a = np.round(A, 1)
    opset = 7 if op_type in ("Equal", "Less", "Greater") else 6
    proto = single_node(op_type, {"a": a}, {"b": b}, opset=opset, broadcast=1, axis=axis)
    expected = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide,
                "Equal": np.equal, "Less": np.less, "Greater": np.greater}[op_type](
        a, b.reshape(b_shape + (1,) * (a.ndim - axis % a.ndim - len(b_shape))))
    ours = autograd.onnx.load(proto)(a).to_numpy()
    np.testing.assert_allclose(ours, expected, rtol=1e-6)


def test_opset_6_broadcast_without_the_flag_or_axis_uses_the_trailing_rule():
    b = RNG.standard_normal(4).astype(np.float32)
    for attributes in ({"broadcast": 1}, {"axis": 0}, {}):
        proto = single_node("Add", {"a": A}, {"b": b}, opset=6, **attributes)
        np.testing.assert_allclose(autograd.onnx.load(proto)(A).to_numpy(), A + b, rtol=1e-6)
    scalar = single_node("Mul", {"a": A}, {"b": np.float32(3)}, opset=6, broadcast=1, axis=1)
    np.testing.assert_allclose(autograd.onnx.load(scalar)(A).to_numpy(), A * 3, rtol=1e-6)


def test_opset_6_broadcast_of_a_static_operand_stays_an_array():
    """Shape arithmetic with broadcast=1 runs in NumPy (both sides integers)."""
    proto = single_node("Mul", {"a": np.int64([[1, 2], [3, 4]])}, {"b": np.int64([10, 100])},
                        opset=6, broadcast=1, axis=0)
    ours = autograd.onnx.load(proto)(np.int64([[1, 2], [3, 4]])).to_numpy()
    np.testing.assert_array_equal(ours, [[10, 20], [300, 400]])
    assert ours.dtype == np.int64


@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_integer_division_truncates_towards_zero(dtype):
    a = np.array([7, -7, 7, -7, 9, -1], dtype)
    b = np.array([2, 2, -2, -2, 3, 4], dtype)
    ours = check(single_node("Div", {"a": a, "b": b}), {"a": a, "b": b})[0]
    np.testing.assert_array_equal(ours, [3, -3, -3, 3, 3, 0])


def test_pow_of_a_float_parameter_by_an_integer_input_stays_on_the_tape():
    """Pow's exponent may be an integer type: one integer operand is not two, the float base
    (a parameter here) keeps its gradient, d(w^e)/dw = e w^(e-1)."""
    w = np.float32([1.5, -2.0, 0.5])
    e = np.int64([2, 3, 1])
    proto = single_node("Pow", {"e": e}, {"w": w})
    proto.graph.node[0].input[:] = ["w", "e"]
    net = autograd.onnx.load(proto)
    y = net(e)
    np.testing.assert_allclose(y.to_numpy(), w ** e, rtol=1e-6)
    gradients = dict(autograd.backward(autograd.sum(y)))
    (parameter,) = [p for p in gradients if p is net.weights["w"]]
    np.testing.assert_allclose(gradients[parameter].to_numpy(), e * w ** (e - 1), rtol=1e-6)


@pytest.mark.parametrize("op_type", ["Add", "Sub", "Mul", "Div", "Pow"])
def test_binary_nodes_with_a_constant_on_either_side_take_the_tensors_dtype(op_type):
    x = np.abs(RNG.standard_normal((2, 3))).astype(np.float32) + 0.5
    c = np.float64(1.5)                                     # a double constant, cast to float
    for feeds, first in (({"x": x}, "x"), ({"x": x}, "c")):
        names = ["x", "c"] if first == "x" else ["c", "x"]
        node = helper.make_node(op_type, names, ["y"])
        graph = helper.make_graph(
            [helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(
                np.float32(c))), node], "g",
            [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, x.shape)],
            [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)])
        proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)])
        net = autograd.onnx.load(proto)
        net.constants["c"] = np.asarray(c)                 # as a double constant would be
        y = net(x)
        assert y.dtype == np.float32
        expected = check(proto, feeds, rtol=1e-5)[0]
        np.testing.assert_allclose(y.to_numpy(), expected, rtol=1e-5)


def test_clip_bounds_as_attributes_before_opset_11_and_inputs_after():
    x = np.float32([-3, -0.5, 0, 0.4, 2])
    for opset, attributes, initializers, expected in (
            (6, {"min": -1.0, "max": 0.25}, {}, [-1, -0.5, 0, 0.25, 0.25]),
            (6, {"max": 0.25}, {}, [-3, -0.5, 0, 0.25, 0.25]),
            (6, {"min": -1.0}, {}, [-1, -0.5, 0, 0.4, 2]),
            (6, {}, {}, x),
            (13, {}, {"low": np.float32(-1), "high": np.float32(0.25)},
             [-1, -0.5, 0, 0.25, 0.25]),
            (13, {}, {"low": None, "high": np.float32(0.25)}, [-3, -0.5, 0, 0.25, 0.25]),
            (13, {}, {"low": np.float32(-1)}, [-1, -0.5, 0, 0.4, 2]),
            (13, {}, {}, x)):
        proto = single_node("Clip", {"x": x}, initializers, opset=opset, **attributes)
        np.testing.assert_array_equal(check(proto, {"x": x})[0], np.float32(expected))


def test_clip_of_integers_stays_integer():
    x = np.int64([-5, 0, 3, 9])
    proto = single_node("Clip", {"x": x}, {"low": np.int64(-1), "high": np.int64(4)})
    np.testing.assert_array_equal(check(proto, {"x": x})[0], [-1, 0, 3, 4])


def test_where_of_a_tensor_and_a_constant():
    condition = np.array([[True, False, True], [False, False, True]])
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    for initializers in ({"b": np.float32(-7)},):
        node = helper.make_node("Where", ["cond", "x", "b"], ["y"])
        graph = helper.make_graph(
            [node], "g", [helper.make_tensor_value_info("cond", onnx.TensorProto.BOOL, [2, 3]),
                          helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 3])],
            [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)],
            [numpy_helper.from_array(np.asarray(v), k) for k, v in initializers.items()])
        proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)])
        net = autograd.onnx.load(proto)
        net.constants["b"] = net.weights.pop("b").to_numpy()     # b as a constant operand
        ours = net(condition, x).to_numpy()
        np.testing.assert_array_equal(ours, np.where(condition, x, np.float32(-7)))
    swapped = single_node("Where", {"cond": condition, "x": x}, {"b": np.float32(2)})
    check(swapped, {"cond": condition, "x": x})


@pytest.mark.parametrize("op_type", ["Sum", "Mean", "Max", "Min"])
def test_n_ary_nodes_of_one_two_and_three_inputs(op_type):
    arrays = [RNG.standard_normal(shape).astype(np.float32) for shape in ((2, 3), (3,), (1, 3))]
    for count in (1, 2, 3):
        feeds = {f"x{k}": arrays[k] for k in range(count)}
        check(single_node(op_type, feeds), feeds)


@pytest.mark.parametrize("op_type, attributes, formula", [
    ("LeakyRelu", {}, lambda x: np.where(x > 0, x, 0.01 * x)),
    ("Elu", {}, lambda x: np.where(x > 0, x, np.exp(x) - 1)),
    ("Selu", {}, lambda x: 1.0507009873554805 * np.where(
        x > 0, x, 1.6732632423543772 * (np.exp(x) - 1))),
    ("HardSigmoid", {}, lambda x: np.clip(0.2 * x + 0.5, 0, 1)),
    ("LeakyRelu", {"alpha": 0.3}, lambda x: np.where(x > 0, x, 0.3 * x)),
    ("Elu", {"alpha": 0.5}, lambda x: np.where(x > 0, x, 0.5 * (np.exp(x) - 1))),
    ("Selu", {"alpha": 2.0, "gamma": 3.0}, lambda x: 3 * np.where(x > 0, x,
                                                                  2 * (np.exp(x) - 1))),
    ("HardSigmoid", {"alpha": 0.5, "beta": 0.25}, lambda x: np.clip(0.5 * x + 0.25, 0, 1)),
])
def test_activations_with_default_and_given_attributes(op_type, attributes, formula):
    x = np.linspace(-4, 4, 17).astype(np.float32)
    ours = check(single_node(op_type, {"x": x}, **attributes), {"x": x}, rtol=1e-5,
                 atol=1e-6)[0]
    np.testing.assert_allclose(ours, formula(x.astype(np.float64)), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op_type, formula", [("Neg", np.negative), ("Abs", np.abs)])
def test_a_unary_node_of_a_constant_folds_to_its_value(op_type, formula):
    """Neg/Abs of an integer initializer (a constant) fold at load; only Identity passes a
    constant through unchanged."""
    c = np.int64([3, -5, 7])
    proto = single_node("Add", {"x": c}, {"folded": c})
    proto.graph.node.insert(0, helper.make_node(op_type, ["c"], ["folded"]))
    proto.graph.initializer[0].name = "c"
    ours = check(proto, {"x": np.int64([1, 1, 1])})[0]
    np.testing.assert_array_equal(ours, 1 + formula(c))


@pytest.mark.parametrize("approximate", [None, "none", "tanh"])
def test_gelu_default_and_tanh(approximate):
    x = np.linspace(-4, 4, 17).astype(np.float32)
    attributes = {} if approximate is None else {"approximate": approximate}
    check(single_node("Gelu", {"x": x}, opset=20, **attributes), {"x": x}, rtol=1e-5,
          atol=1e-6)


def test_cast_and_identity_of_constants_stay_arrays():
    proto = single_node("Cast", {"s": np.int64([2, 3])}, to=onnx.TensorProto.FLOAT)
    y = check(proto, {"s": np.int64([2, 3])})[0]
    assert y.dtype == np.float32
    net = autograd.onnx.load(single_node("Identity", {"x": np.float32([1, 2])}))
    net.constants["x"] = np.float32([5, 6])
    net.input_names = []
    y = net()
    assert not y.requires_grad
    np.testing.assert_array_equal(y.to_numpy(), [5, 6])


def test_an_unsupported_node_is_named_word_for_word():
    for domain, suffix in (("", ""), ("ai.onnx", " in domain 'ai.onnx'"),
                           ("com.example", " in domain 'com.example'")):
        proto = single_node("Frobnicate", {"x": np.float32([1])})
        proto.graph.node[0].domain = domain
        if domain == "com.example":
            proto.opset_import.append(helper.make_opsetid("com.example", 1))
        with pytest.raises(NotImplementedError) as caught:
            autograd.onnx.load(proto)
        assert str(caught.value) == (
            f"autograd.onnx: node 'n' has type 'Frobnicate'{suffix}, which is not supported "
            "(see docs/onnx.md; autograd.onnx.register_importer adds one)")


def test_a_default_op_type_in_another_domain_is_not_the_default_handler():
    """Relu in a custom domain is another operator: refused unless registered there."""
    proto = single_node("Relu", {"x": np.float32([-1, 2])})
    proto.graph.node[0].domain = "com.example"
    proto.opset_import.append(helper.make_opsetid("com.example", 1))
    with pytest.raises(NotImplementedError, match="type 'Relu' in domain 'com.example'"):
        autograd.onnx.load(proto)


def test_opset_6_broadcast_of_a_parameter_keeps_its_gradient():
    """A float initializer b (a parameter) reshaped for broadcast=1 stays on the tape:
    d(sum(a + b))/db sums over the axes b was broadcast along."""
    a = np.round(A, 1)
    b = np.float32([1.0, 2.0, 3.0])
    proto = single_node("Add", {"a": a}, {"b": b}, opset=6, broadcast=1, axis=1)
    net = autograd.onnx.load(proto)
    y = net(a)
    gradients = {id(p): g for p, g in autograd.backward(autograd.sum(y))}
    expected = np.ones(a.shape, np.float32).sum(axis=tuple(k for k in range(a.ndim) if k != 1))
    np.testing.assert_allclose(gradients[id(net.weights["b"])].to_numpy(), expected)


def test_a_handler_in_the_ai_onnx_domain_is_the_default_domains():
    proto = single_node("Relu", {"x": np.float32([-1, 2])})
    proto.graph.node[0].domain = "ai.onnx"
    np.testing.assert_array_equal(autograd.onnx.load(proto)(np.float32([-1, 2])).to_numpy(),
                                  [0, 2])


def test_attribute_reads_a_bare_node_proto_and_its_default():
    node = helper.make_node("LeakyRelu", ["x"], ["y"], alpha=0.25, pads=[1, 2],
                            mode="edge", value=numpy_helper.from_array(np.float32([4])),
                            names=["a", "b"])
    assert import_ops.attribute(node, "alpha") == pytest.approx(0.25)
    assert import_ops.attribute(node, "pads") == [1, 2]
    assert import_ops.attribute(node, "mode") == "edge"
    assert import_ops.attribute(node, "names") == ["a", "b"]
    np.testing.assert_array_equal(import_ops.attribute(node, "value"), [4])
    assert import_ops.attribute(node, "beta", 7) == 7 and import_ops.attribute(node, "beta") is None
    imported = import_ops.ImportedNode(node)
    assert imported.attributes["mode"] == "edge"
    assert import_ops.attribute(imported, "beta", 7) == 7


def test_context_tensor_casts_floating_constants_to_the_like_dtype_only():
    context = import_ops.Context({"": 13}, False, None)
    like = autograd.Tensor(data=np.zeros(2, np.float32))
    assert context.tensor(np.float64([1.5]), like).dtype == np.float32
    assert context.tensor(np.int64([1]), like).dtype == np.int64
    assert context.tensor(np.float64([1.5])).dtype == np.float64
    assert context.tensor(like) is like
    constant = context.tensor(np.float32([1.5]))          # outside the graph: no gradient
    assert not constant.requires_grad and not constant.stores_grad
    assert context.version == 13 and import_ops.Context({}, False, None).version == 21
    np.testing.assert_array_equal(import_ops.Context.array(like), [0, 0])


def test_static_and_statistics_input_names():
    nodes = [import_ops.ImportedNode(helper.make_node("Slice", ["x", "s", "e", "", "st"], ["y"])),
             import_ops.ImportedNode(helper.make_node("Reshape", ["y"], ["z"])),
             import_ops.ImportedNode(helper.make_node(
                 "BatchNormalization", ["z", "g", "b", "m", "v"], ["w"]))]
    assert import_ops.static_input_names(nodes) == {"s", "e", "st"}
    assert import_ops.statistics_input_names(nodes) == {"m", "v"}


@pytest.mark.parametrize("op_type, expected", [("Div", 1.5), ("Sub", 2.0), ("Pow", 36.0),
                                               ("Add", 10.0), ("Mul", 24.0)])
def test_binary_nodes_of_two_float_constants_fold_with_numpy(op_type, expected):
    nodes = [helper.make_node("Constant", [], ["a"], value_float=6.0),
             helper.make_node("Constant", [], ["b"], value_float=4.0 if op_type != "Pow"
                              else 2.0),
             helper.make_node(op_type, ["a", "b"], ["y"])]
    if op_type == "Sub":
        nodes[1] = helper.make_node("Constant", [], ["b"], value_float=4.0)
    graph = helper.make_graph(nodes, "g", [], [helper.make_empty_tensor_value_info("y")])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)])
    net = autograd.onnx.load(proto)
    assert net.nodes == []
    y = net().to_numpy()
    assert y.dtype == np.float32 and y == expected


@pytest.mark.parametrize("op_type, expected", [("Sum", [5, 1, 9]), ("Mean", [2.5, 0.5, 4.5]),
                                               ("Max", [4, 2, 6]), ("Min", [1, -1, 3])])
def test_n_ary_nodes_of_constants_fold_with_numpy(op_type, expected):
    nodes = [helper.make_node("Constant", [], ["a"], value_floats=[1.0, 2.0, 3.0]),
             helper.make_node("Constant", [], ["b"], value_floats=[4.0, -1.0, 6.0]),
             helper.make_node(op_type, ["a", "b"], ["y"])]
    graph = helper.make_graph(nodes, "g", [], [helper.make_empty_tensor_value_info("y")])
    net = autograd.onnx.load(helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 15)]))
    assert net.nodes == []
    y = net().to_numpy()
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y, expected)
