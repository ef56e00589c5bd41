"""Shape, indexing, constant and reduction nodes (import_shape.py) against onnxruntime, each on
a graph input (the tape) and on a constant (NumPy at load), in the opsets where an attribute
became an input: reductions (keepdims, axes, noop_with_empty_axes), Shape's start and end,
Constant's value kinds, Reshape's 0, Flatten, Transpose, (Un)Squeeze, Concat, Split (sizes,
num_outputs), Gather, Slice (negative steps, opset 9), Pad (opsets 6, 11, 18; modes), Expand,
Tile. Found by the mutation run (issue 22); the reductions' handler is built by ``_reduce`` at
import, so mutmut cannot switch its mutants on: they were planted by hand."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="the onnx extra is not installed")
onnxruntime = pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")
from onnx import helper, numpy_helper                # noqa: E402

import autograd                                      # noqa: E402

_TYPES = {np.dtype(np.float32): onnx.TensorProto.FLOAT, np.dtype(np.int64):
          onnx.TensorProto.INT64}


def _model(op_type, x, extra, opset, constant, outputs=("y",), **attributes):
    """``op_type`` reading x (a graph input, or a Constant node when ``constant``) and the
    ``extra`` initializers (None: an omitted input)."""
    nodes, inputs = [], []
    if constant:
        nodes.append(helper.make_node("Constant", [], ["x"],
                                      value=numpy_helper.from_array(x)))
    else:
        inputs.append(helper.make_tensor_value_info("x", _TYPES[x.dtype], x.shape))
    names = ["x"] + [name if value is not None else "" for name, value in extra.items()]
    nodes.append(helper.make_node(op_type, names, list(outputs), name="n", **attributes))
    graph = helper.make_graph(
        nodes, "g", inputs, [helper.make_empty_tensor_value_info(name) for name in outputs],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in extra.items() if v is not None])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def check(op_type, x, extra=None, opset=13, outputs=("y",), **attributes):
    """Ours against onnxruntime, x as a graph input and as a constant; the outputs."""
    results = []
    for constant in (False, True):
        proto = _model(op_type, x, dict(extra or {}), opset, constant, outputs, **attributes)
        session = onnxruntime.InferenceSession(proto.SerializeToString(),
                                               providers=["CPUExecutionProvider"])
        feeds = {} if constant else {"x": x}
        expected = session.run(None, feeds)
        net = autograd.onnx.load(proto)
        if constant:
            assert [node.op_type for node in net.nodes] == []       # folded at load
        ours = net(*feeds.values())
        ours = [o.to_numpy() for o in (ours if isinstance(ours, tuple) else (ours,))]
        assert len(ours) == len(expected)
        for mine, theirs in zip(ours, expected):
            assert mine.shape == theirs.shape and mine.dtype == theirs.dtype
            np.testing.assert_allclose(mine, theirs, rtol=1e-6, atol=1e-6)
        results.append(ours)
    return results[0]


X = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)


@pytest.mark.parametrize("op_type", ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin"])
@pytest.mark.parametrize("axes", [None, [1], [-1, 0], []])
@pytest.mark.parametrize("keepdims", [None, 0, 1])
@pytest.mark.parametrize("noop", [None, 0, 1])
def test_reductions_by_axes_input(op_type, axes, keepdims, noop):
    attributes = {k: v for k, v in (("keepdims", keepdims), ("noop_with_empty_axes", noop))
                  if v is not None}
    extra = {} if axes is None else {"axes": np.int64(axes)}
    check(op_type, X, extra, opset=18, **attributes)


@pytest.mark.parametrize("op_type", ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin"])
@pytest.mark.parametrize("axes", [None, [2], [0, -1]])
@pytest.mark.parametrize("keepdims", [None, 0])
def test_reductions_by_axes_attribute(op_type, axes, keepdims):
    opset = 11 if op_type == "ReduceSum" else 13
    attributes = {k: v for k, v in (("keepdims", keepdims), ("axes", axes)) if v is not None}
    check(op_type, X, {}, opset=opset, **attributes)


def test_shape_start_end_and_size():
    for attributes in ({}, {"start": 1}, {"end": -1}, {"start": -2, "end": 3}):
        check("Shape", X, opset=15, **attributes)
    assert check("Size", X)[0] == 24


@pytest.mark.parametrize("name, value, dtype", [
    ("value_float", 1.5, np.float32), ("value_floats", [1.5, -2.0], np.float32),
    ("value_int", 3, np.int64), ("value_ints", [3, -4], np.int64)])
def test_constant_values_of_every_kind_keep_onnx_dtypes(name, value, dtype):
    node = helper.make_node("Constant", [], ["y"], **{name: value})
    graph = helper.make_graph([node], "g", [], [helper.make_empty_tensor_value_info("y")])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    y = autograd.onnx.load(proto)().to_numpy()
    assert y.dtype == dtype
    np.testing.assert_array_equal(y, np.asarray(value, dtype))


def test_a_constant_without_a_readable_value_is_named_word_for_word():
    node = helper.make_node("Constant", [], ["y"], name="c", value_string="text")
    graph = helper.make_graph([node], "g", [], [helper.make_empty_tensor_value_info("y")])
    with pytest.raises(NotImplementedError) as caught:
        autograd.onnx.load(helper.make_model(graph, opset_imports=[
            helper.make_opsetid("", 13)]))
    assert str(caught.value) == ("autograd.onnx: Constant 'c' has no value this importer "
                                 "reads (value, value_float(s), value_int(s))")


def test_constant_of_shape_default_and_given_value():
    shape = np.int64([2, 3])
    for attributes in ({}, {"value": numpy_helper.from_array(np.int64([7]))},
                       {"value": numpy_helper.from_array(np.float32([-1.5]))}):
        check("ConstantOfShape", shape, **attributes)


def test_reshape_with_zero_minus_one_and_allowzero():
    for shape in ([0, -1], [4, 0, 2], [-1, 4], [2, 0, 0]):
        check("Reshape", X, {"shape": np.int64(shape)})
    check("Reshape", X, {"shape": np.int64([2, 12])}, opset=14, allowzero=1)


@pytest.mark.parametrize("axis", [None, 0, 2, -1, 3])
def test_flatten(axis):
    check("Flatten", X, **({} if axis is None else {"axis": axis}))


@pytest.mark.parametrize("perm", [None, [1, 0, 2], [2, 0, 1]])
def test_transpose(perm):
    check("Transpose", X, **({} if perm is None else {"perm": perm}))


def test_squeeze_and_unsqueeze_by_attribute_and_input():
    ones = X.reshape(2, 1, 3, 1, 4)
    check("Squeeze", ones, opset=11, axes=[1, -2])
    check("Squeeze", ones, {"axes": np.int64([3])})
    check("Squeeze", ones)
    check("Unsqueeze", X, opset=11, axes=[0, 4])
    check("Unsqueeze", X, {"axes": np.int64([-1, 1])})


def test_concat_of_a_tensor_and_constants():
    parts = [helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(
        np.ones((2, 1, 4), np.float32)))]
    node = helper.make_node("Concat", ["x", "c", "x"], ["y"], axis=1)
    graph = helper.make_graph(
        parts + [node], "g", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT,
                                                            X.shape)],
        [helper.make_empty_tensor_value_info("y")])
    y = autograd.onnx.load(helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 13)]))(X).to_numpy()
    np.testing.assert_array_equal(y, np.concatenate([X, np.ones((2, 1, 4)), X], 1))
    check("Concat", np.int64([3, 4]), axis=0)                 # shapes: NumPy


def test_split_by_sizes_outputs_and_num_outputs():
    x = np.arange(2 * 7, dtype=np.float32).reshape(2, 7)
    check("Split", x, opset=11, outputs=("a", "b"), axis=1, split=[3, 4])
    check("Split", x, {"split": np.int64([5, 2])}, outputs=("a", "b"), axis=-1)
    check("Split", x, outputs=("a", "b"), axis=0)
    check("Split", x, opset=18, outputs=("a", "b", "c"), axis=1, num_outputs=3)
    check("Split", x[:, :6], opset=18, outputs=("a", "b", "c"), axis=1, num_outputs=3)
    check("Split", x[:1, :6], outputs=("a", "b", "c"), axis=-1)


def test_gather_on_each_axis_with_negative_indices():
    for axis, indices in ((None, [1, -2]), (1, [[0, 2], [-1, 1]]), (-1, 3)):
        attributes = {} if axis is None else {"axis": axis}
        check("Gather", X, {"i": np.int64(indices)}, **attributes)


def test_nonzero():
    check("NonZero", np.float32([[0, 1.5, 0], [2, 0, -1]]))


@pytest.mark.parametrize("starts, ends, axes, steps", [
    ([1], [3], None, None), ([0, -3], [2, 100], [2, 1], None),
    ([-1], [-1000], [2], [-1]), ([3, 2], [0, -100], [2, 1], [-2, -1]),
    ([0], [9223372036854775807], [-1], [2]), ([2], [-9223372036854775807], [1], [-1])])
def test_slice_by_inputs_with_negative_steps_and_huge_bounds(starts, ends, axes, steps):
    extra = {"starts": np.int64(starts), "ends": np.int64(ends),
             "axes": None if axes is None else np.int64(axes),
             "steps": None if steps is None else np.int64(steps)}
    while extra and list(extra.values())[-1] is None:
        extra.pop(list(extra)[-1])
    check("Slice", X, extra)


def test_slice_by_attributes_before_opset_10():
    check("Slice", X, opset=9, starts=[1, 0], ends=[3, 2])
    check("Slice", X, opset=9, starts=[1], ends=[100], axes=[-1])


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge"])
def test_pad_by_attributes_and_inputs(mode):
    x = X[0]
    pads = [1, 0, 2, 3]
    value = {} if mode != "constant" else {"value": 2.5}
    check("Pad", x, opset=6, pads=pads, mode=mode, **value)
    check("Pad", x, opset=10, pads=pads, mode=mode)
    extra = {"pads": np.int64(pads)}
    if mode == "constant":
        extra["value"] = np.float32(-3)
    check("Pad", x, extra, opset=11, mode=mode)
    check("Pad", X, {"pads": np.int64([2, 1, 0, 1]), "value": None,
                     "axes": np.int64([-1, 0])}, opset=18, mode=mode)


def test_pad_reflecting_by_an_axis_length_is_refused_word_for_word():
    proto = _model("Pad", X[0], {"pads": np.int64([3, 0, 0, 0])}, 13, False, mode="reflect")
    with pytest.raises(NotImplementedError) as caught:
        autograd.onnx.load(proto)(X[0])
    assert str(caught.value) == ("autograd.onnx: Pad 'n' reflects by [3, 0, 0, 0], as long as "
                                 "an axis of shape (3, 4)")


def test_expand_and_tile():
    check("Expand", X[:, :1], {"shape": np.int64([3, 2, 5, 4])})
    check("Expand", X, {"shape": np.int64([3, 1])})
    check("Tile", X, {"repeats": np.int64([1, 2, 3])})


@pytest.mark.parametrize("op_type", ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin"])
def test_reductions_of_a_tensor_stay_on_the_tape(op_type):
    """loss = sum(Reduce(x * W, axis 1) * u): W's gradient against the NumPy formula (a
    reduction computed on the arrays would give the same values and no gradient)."""
    rng = np.random.default_rng(1)
    w = rng.standard_normal(X.shape).astype(np.float32)
    u = rng.standard_normal((2, 1, 4))
    nodes = [helper.make_node("Mul", ["x", "W"], ["z"]),
             helper.make_node(op_type, ["z", "axes"], ["y"])]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, X.shape)],
        [helper.make_empty_tensor_value_info("y")],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(np.int64([1]), "axes")])
    net = autograd.onnx.load(helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 18)]))
    y = net(X)
    loss = autograd.sum(autograd.mul(y, autograd.Tensor(data=u.astype(np.float32))))
    gradients = {id(p): g.to_numpy() for p, g in autograd.backward(loss)}
    z = X.astype(np.float64) * w
    dz = {"ReduceSum": np.broadcast_to(u, z.shape), "ReduceMean": np.broadcast_to(u / 3, z.shape),
          "ReduceMax": (z == z.max(1, keepdims=True)) * u,
          "ReduceMin": (z == z.min(1, keepdims=True)) * u}[op_type]
    np.testing.assert_allclose(gradients[id(net.weights["W"])], dz * X, rtol=1e-5, atol=1e-6)
