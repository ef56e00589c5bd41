"""Network nodes (import_network.py) on single-node models against onnxruntime: MatMul and
Gemm with constants and their attributes, Conv's and pooling's geometry (1-D, auto_pad,
asymmetric pads, ceil_mode, count_include_pad with explicit pads), global pooling,
BatchNormalization of 2-, 3- and 4-D inputs and its training update, LayerNormalization's
fused and formula paths (Mean and InvStdDev outputs), Softmax before and after opset 13,
Dropout's inputs and mask, LRN, and the refusals word for word. Found by the mutation run
(issue 22)."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="the onnx extra is not installed")
onnxruntime = pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")
from onnx import helper, numpy_helper                # noqa: E402
from onnx.reference import ReferenceEvaluator        # noqa: E402

import autograd                                      # noqa: E402

RNG = np.random.default_rng(0)


def _model(op_type, x, extra, opset, outputs=("y",), **attributes):
    names = ["x"] + [name if value is not None else "" for name, value in extra.items()]
    node = helper.make_node(op_type, names, list(outputs), name="n", **attributes)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, x.shape)],
        [helper.make_empty_tensor_value_info(name) for name in outputs],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in extra.items() if v is not None])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def check(op_type, x, extra=None, opset=15, outputs=("y",), rtol=1e-5, evaluator=False,
          **attributes):
    """Ours against onnxruntime (or, with ``evaluator``, onnx's ReferenceEvaluator)."""
    proto = _model(op_type, x, dict(extra or {}), opset, outputs, **attributes)
    if evaluator:
        expected = ReferenceEvaluator(proto).run(None, {"x": x})
    else:
        session = onnxruntime.InferenceSession(proto.SerializeToString(),
                                               providers=["CPUExecutionProvider"])
        expected = session.run(None, {"x": x})
    ours = autograd.onnx.load(proto)(x)
    ours = [o.to_numpy() for o in (ours if isinstance(ours, tuple) else (ours,))]
    assert len(ours) == len(expected)
    for mine, theirs in zip(ours, expected):
        assert mine.shape == theirs.shape
        np.testing.assert_allclose(mine, theirs, rtol=rtol, atol=rtol)
    return ours


def test_matmul_with_a_weight_on_either_side():
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    check("MatMul", x, {"w": RNG.standard_normal((4, 5)).astype(np.float32)})
    node = helper.make_node("MatMul", ["w", "x"], ["y"])
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [3, 4])],
        [helper.make_empty_tensor_value_info("y")],
        [numpy_helper.from_array(RNG.standard_normal((2, 3)).astype(np.float32), "w")])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)])
    ours = autograd.onnx.load(proto)(x[0]).to_numpy()
    np.testing.assert_allclose(ours, onnxruntime.InferenceSession(
        proto.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x[0]})[0],
        rtol=1e-5)


@pytest.mark.parametrize("attributes", [{}, {"alpha": 0.5}, {"beta": 2.0}, {"transA": 1},
                                        {"transB": 1}, {"transA": 1, "transB": 1, "alpha": 3.0,
                                                        "beta": 0.25}])
@pytest.mark.parametrize("c_shape", [None, (5,), (3, 5), (1, 1)])
def test_gemm_attributes_and_c(attributes, c_shape):
    a_shape = (4, 3) if attributes.get("transA") else (3, 4)
    b_shape = (5, 4) if attributes.get("transB") else (4, 5)
    extra = {"b": RNG.standard_normal(b_shape).astype(np.float32)}
    if c_shape is not None:
        extra["c"] = RNG.standard_normal(c_shape).astype(np.float32)
    check("Gemm", RNG.standard_normal(a_shape).astype(np.float32), extra, **attributes)


@pytest.mark.parametrize("attributes", [
    {}, {"pads": [1, 2, 0, 1]}, {"strides": [2, 1], "dilations": [1, 2]},
    {"auto_pad": "SAME_UPPER", "strides": [2, 2]}, {"auto_pad": "SAME_LOWER"},
    {"auto_pad": "VALID"}, {"auto_pad": "NOTSET", "pads": [1, 1, 1, 1]},
    {"group": 2, "kernel_shape": [3, 3]}])
def test_conv_2d_geometry(attributes):
    x = RNG.standard_normal((2, 4, 7, 8)).astype(np.float32)
    w = RNG.standard_normal((6, 4 // attributes.get("group", 1), 3, 3)).astype(np.float32)
    check("Conv", x, {"w": w, "b": RNG.standard_normal(6).astype(np.float32)}, **attributes)


@pytest.mark.parametrize("attributes", [{}, {"pads": [2, 1]}, {"strides": [2]},
                                        {"dilations": [2]}, {"auto_pad": "SAME_UPPER"}])
def test_conv_1d_geometry(attributes):
    x = RNG.standard_normal((2, 3, 9)).astype(np.float32)
    check("Conv", x, {"w": RNG.standard_normal((4, 3, 3)).astype(np.float32)}, **attributes)


@pytest.mark.parametrize("op_type", ["MaxPool", "AveragePool"])
@pytest.mark.parametrize("attributes", [
    {"kernel_shape": [3, 3]}, {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]},
    {"kernel_shape": [3, 2], "pads": [1, 0, 1, 1], "strides": [2, 2]},
    {"kernel_shape": [3, 3], "pads": [2, 1, 0, 1]},
    {"kernel_shape": [3, 3], "pads": [1, 0, 0, 0]}, {"kernel_shape": [3, 3], "pads": [0, 0, 1, 0]},
    {"kernel_shape": [3, 3], "pads": [0, 1, 0, 0]}, {"kernel_shape": [3, 3], "pads": [0, 0, 0, 1]},
    {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1},
    {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1, "pads": [1, 1, 1, 1]},
    {"kernel_shape": [3, 3], "auto_pad": "SAME_UPPER", "strides": [2, 2]},
    {"kernel_shape": [2, 3], "auto_pad": "SAME_LOWER"}])
@pytest.mark.parametrize("include_pad", [None, 0, 1])
def test_pooling_2d_geometry_and_padding_counts(op_type, attributes, include_pad):
    if op_type == "MaxPool" and include_pad is not None:
        pytest.skip("count_include_pad is AveragePool's")
    extra = {} if include_pad is None else {"count_include_pad": include_pad}
    x = RNG.standard_normal((2, 3, 7, 6)).astype(np.float32) - 2     # mostly negative
    check(op_type, x, opset=19 if attributes.get("ceil_mode") else 15, **attributes, **extra)


@pytest.mark.parametrize("op_type", ["MaxPool", "AveragePool"])
def test_pooling_1d(op_type):
    x = RNG.standard_normal((2, 3, 9)).astype(np.float32)
    check(op_type, x, kernel_shape=[3], strides=[2], pads=[1, 1])
    check(op_type, x, kernel_shape=[2], pads=[0, 1])
    check(op_type, x, kernel_shape=[2], strides=[2], ceil_mode=1, opset=19)


@pytest.mark.parametrize("op_type, extra", [("MaxPool", {}), ("AveragePool", {}),
                                            ("Conv", {"w": np.ones((2, 3, 2, 2), np.float32)})])
def test_an_empty_auto_pad_is_notset(op_type, extra):
    x = RNG.standard_normal((1, 3, 5, 5)).astype(np.float32)
    ours = check(op_type, x, extra, kernel_shape=[2, 2], pads=[1, 0, 0, 1], auto_pad="")
    assert ours[0].shape == (1, 2 if op_type == "Conv" else 3, 5, 5)


def test_a_pool_names_itself_in_a_geometry_error():
    proto = _model("AveragePool", np.zeros((1, 1, 5, 5), np.float32), {}, 15,
                   kernel_shape=[2, 2], strides=[0, 1])
    with pytest.raises(ValueError, match=r"^AveragePool: stride must be positive"):
        autograd.onnx.load(proto)(np.zeros((1, 1, 5, 5), np.float32))


def test_dilated_pooling_and_a_5d_input_are_refused_word_for_word():
    proto = _model("MaxPool", np.zeros((1, 1, 5, 5), np.float32), {}, 15, kernel_shape=[2, 2],
                   dilations=[2, 1])
    with pytest.raises(NotImplementedError) as caught:
        autograd.onnx.load(proto)(np.zeros((1, 1, 5, 5), np.float32))
    assert str(caught.value) == ("autograd.onnx: MaxPool 'n' has dilations (2, 1); only 1 is "
                                 "supported")
    proto = _model("MaxPool", np.zeros((1, 1, 2, 2, 2), np.float32), {}, 15,
                   kernel_shape=[1, 1, 1])
    with pytest.raises(ValueError) as caught:
        autograd.onnx.load(proto)(np.zeros((1, 1, 2, 2, 2), np.float32))
    assert str(caught.value) == ("autograd.onnx: only 1-D and 2-D windows are supported, got "
                                 "an input of shape (1, 1, 2, 2, 2)")


@pytest.mark.parametrize("op_type", ["GlobalAveragePool", "GlobalMaxPool"])
@pytest.mark.parametrize("shape", [(2, 3, 5), (2, 3, 4, 5)])
def test_global_pooling(op_type, shape):
    check(op_type, RNG.standard_normal(shape).astype(np.float32))


@pytest.mark.parametrize("shape", [(4, 3), (4, 3, 5), (4, 3, 2, 5)])
@pytest.mark.parametrize("epsilon", [None, 0.5])
def test_batch_norm_eval_of_2_3_and_4_d_inputs(shape, epsilon):
    extra = {"scale": RNG.uniform(0.5, 2, 3).astype(np.float32),
             "bias": RNG.standard_normal(3).astype(np.float32),
             "mean": RNG.standard_normal(3).astype(np.float32),
             "var": RNG.uniform(0.1, 2, 3).astype(np.float32)}
    check("BatchNormalization", RNG.standard_normal(shape).astype(np.float32), extra,
          **({} if epsilon is None else {"epsilon": epsilon}))


@pytest.mark.parametrize("momentum", [None, 0.7])
def test_batch_norm_training_uses_batch_statistics_and_moves_the_buffers(momentum):
    """y = (x - batch mean) / sqrt(biased batch var + eps) * scale + bias; the buffers move
    by ``momentum`` toward the batch mean and the unbiased batch variance."""
    shape = (4, 3, 5)
    x = RNG.standard_normal(shape).astype(np.float32) * 2 + 1
    arrays = {"scale": RNG.uniform(0.5, 2, 3).astype(np.float32),
              "bias": RNG.standard_normal(3).astype(np.float32),
              "mean": np.zeros(3, np.float32), "var": np.ones(3, np.float32)}
    proto = _model("BatchNormalization", x, arrays, 15, epsilon=1e-3,
                   **({} if momentum is None else {"momentum": momentum}))
    net = autograd.onnx.load(proto)
    net.train()
    y = net(x).to_numpy().astype(np.float64)
    x64 = x.astype(np.float64)
    mean, var = x64.mean(axis=(0, 2)), x64.var(axis=(0, 2))
    expected = ((x64 - mean[:, None]) / np.sqrt(var[:, None] + 1e-3) * arrays["scale"][:, None]
                + arrays["bias"][:, None])
    np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-4)
    m = 0.9 if momentum is None else momentum
    count = x.size // 3
    np.testing.assert_allclose(net._buffers_by_name["mean"].to_numpy(), (1 - m) * mean,
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(net._buffers_by_name["var"].to_numpy(),
                               m + (1 - m) * var * count / (count - 1), rtol=1e-5)


@pytest.mark.parametrize("axis", [None, 1, -2])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("epsilon", [None, 0.25])
def test_layer_norm_fused_path(axis, bias, epsilon):
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    start = {None: 2, 1: 1, -2: 1}[axis]
    extra = {"scale": RNG.standard_normal(x.shape[start:]).astype(np.float32)}
    if bias:
        extra["bias"] = RNG.standard_normal(x.shape[start:]).astype(np.float32)
    attributes = {k: v for k, v in (("axis", axis), ("epsilon", epsilon)) if v is not None}
    check("LayerNormalization", x, extra, opset=17, **attributes)


@pytest.mark.parametrize("bias", [True, False])
def test_layer_norm_formula_path_gives_mean_and_inverse_std(bias):
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    extra = {"scale": RNG.standard_normal((1, 4)).astype(np.float32)}     # broadcasts
    if bias:
        extra["bias"] = RNG.standard_normal((4,)).astype(np.float32)
    check("LayerNormalization", x, extra, opset=17, outputs=("y",), epsilon=0.1)
    check("LayerNormalization", x, extra, opset=17, outputs=("y", "mean", "inv"), axis=1)
    # a scale of the normalised shape, but Mean and InvStdDev asked for: the formula too
    extra = {"scale": RNG.standard_normal((4,)).astype(np.float32)}
    check("LayerNormalization", x, extra, opset=17, outputs=("y", "mean", "inv"))


@pytest.mark.parametrize("op_type", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize("opset, axis", [(11, None), (11, 2), (11, -1), (11, 0), (13, None),
                                         (13, 1)])
def test_softmax_before_and_after_opset_13(op_type, opset, axis):
    """Before 13 the input is coerced to 2-D at ``axis`` (default 1): the softmax runs over
    every axis from it on."""
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    check(op_type, x, opset=opset, **({} if axis is None else {"axis": axis}))
    if axis in (0, -1):           # a vector: the axis counts from its one dimension
        check(op_type, x[0, 0], opset=opset, axis=axis)
    # a classifier's (N, C, 1, 1): before 13 one softmax over the axis when all after it are 1
    x = RNG.standard_normal((2, 5, 1, 1)).astype(np.float32)
    check(op_type, x, opset=opset, **({} if axis is None else {"axis": axis}))


def test_dropout_in_eval_mode_is_the_identity_with_a_mask_of_ones():
    """(onnxruntime 1.32 gives opset 10's mask as zeros; the operator's definition ones.)"""
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    y, mask = check("Dropout", x, opset=10, outputs=("y", "mask"), evaluator=True, ratio=0.3)
    assert mask.dtype == bool and mask.all()
    check("Dropout", x, {"ratio": np.float32(0.6)}, opset=13, outputs=("y", "mask"))


def test_dropout_with_training_mode_true_drops_and_scales():
    x = np.ones((200, 50), np.float32)
    proto = _model("Dropout", x, {"ratio": np.float32(0.25), "training": np.bool_(True)}, 13)
    y = autograd.onnx.load(proto)(x).to_numpy()
    assert set(np.unique(y)) <= {0.0, np.float32(1 / 0.75)}
    assert 0.2 < (y == 0).mean() < 0.3
    off = _model("Dropout", x, {"ratio": np.float32(0.25), "training": np.bool_(False)}, 13)
    np.testing.assert_array_equal(autograd.onnx.load(off)(x).to_numpy(), x)
    net = autograd.onnx.load(off)
    net.train()                              # training mode drops whatever training_mode says
    assert 0.2 < (net(x).to_numpy() == 0).mean() < 0.3
    net = autograd.onnx.load(_model("Dropout", x, {"ratio": np.float32(0.0)}, 13))
    net.train()
    np.testing.assert_array_equal(net(x).to_numpy(), x)            # ratio 0: nothing dropped
    net = autograd.onnx.load(_model("Dropout", x, {}, 13))
    net.train()
    y = net(x).to_numpy()
    assert 0.4 < (y == 0).mean() < 0.6                                # default ratio 0.5


def test_dropout_that_drops_gives_its_own_mask_and_gradient():
    """With the mask output asked for, the mask is the one applied: y = x * mask / (1 - ratio),
    and dx = dy * mask / (1 - ratio)."""
    x = RNG.uniform(1, 2, (100, 40)).astype(np.float32)         # no zeros: y == 0 is dropped
    proto = _model("Dropout", x, {"ratio": np.float32(0.25), "training": np.bool_(True)}, 13,
                   outputs=("y", "mask"))
    y, mask = autograd.onnx.load(proto)(x)
    mask = mask.to_numpy()
    assert mask.dtype == bool and 0.2 < 1 - mask.mean() < 0.3
    np.testing.assert_allclose(y.to_numpy(), x * mask / np.float32(0.75), rtol=1e-6)
    x_tensor = autograd.Tensor(data=x, stores_grad=True)
    y, mask = autograd.onnx.load(proto)(x_tensor)
    mask = mask.to_numpy()
    (gradient,) = [g for p, g in autograd.backward(autograd.sum(y)) if p is x_tensor]
    np.testing.assert_allclose(gradient.to_numpy(), mask / np.float32(0.75), rtol=1e-6)


def _lrn(x, size, alpha=1e-4, beta=0.75, bias=1.0):
    """ONNX's definition: the squares summed over channels c - floor((size - 1) / 2) to
    c + ceil((size - 1) / 2), clipped to the channels there are."""
    x = x.astype(np.float64)
    channels = x.shape[1]
    square_sum = np.empty_like(x)
    for c in range(channels):
        begin = max(0, c - (size - 1) // 2)
        end = min(channels - 1, c + -(-(size - 1) // 2))
        square_sum[:, c] = (x[:, begin:end + 1] ** 2).sum(axis=1)
    return x / (bias + alpha / size * square_sum) ** beta


@pytest.mark.parametrize("attributes", [{"size": 3}, {"size": 2}, {"size": 4, "alpha": 0.01},
                                        {"size": 5, "alpha": 0.01, "beta": 0.5, "bias": 2.0}])
def test_local_response_norm(attributes):
    """Against the definition's formula; odd sizes against onnxruntime too (it refuses even
    ones, and onnx 1.23's evaluator loops over the batch where it means the channels)."""
    x = RNG.standard_normal((2, 6, 3, 4)).astype(np.float32) * 3
    proto = _model("LRN", x, {}, 15, **attributes)
    ours = autograd.onnx.load(proto)(x).to_numpy()
    np.testing.assert_allclose(ours, _lrn(x, **attributes), rtol=1e-5, atol=1e-6)
    if attributes["size"] % 2:
        check("LRN", x, rtol=1e-4, **attributes)


def test_a_handler_given_a_bare_node_proto_computes_its_geometry_each_call():
    """ImportedNode keeps a pool's geometry in its memo; a NodeProto (a handler called by
    hand) has none, and the handler computes it on each call."""
    from autograd.onnx.import_ops import IMPORTERS, Context, ImportedNode
    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], pads=[1, 1, 1, 1])
    x = RNG.standard_normal((1, 2, 5, 5)).astype(np.float32)
    context = Context({"": 15}, False, autograd.device.get_default_device())
    expected = autograd.max_pool2d(autograd.Tensor(data=x), 2, 1, 1).to_numpy()
    for given in (node, ImportedNode(node)):
        for _ in range(2):
            y = IMPORTERS[("", "MaxPool")](context, given, [x])
            np.testing.assert_array_equal(y.to_numpy(), expected)


@pytest.mark.parametrize("record", [True, False])
@pytest.mark.parametrize("x_shape, w_shape, b_shape, expected", [
    ((1, 2, 5, 5), (4, 2, 3), None,
     "expected W of shape (out_channels, in_channels / groups, kh, kw), got (4, 2, 3)"),
    ((1, 2, 7), (4, 2, 3, 3), None,
     "expected W of shape (out_channels, in_channels / groups, k), got (4, 2, 3, 3)"),
    ((1, 2, 5, 5), (4, 2, 3, 3), (3,), "expected b of shape (4,), got (3,)")])
def test_a_conv_weight_or_bias_of_the_wrong_shape_is_named_word_for_word(
        x_shape, w_shape, b_shape, expected, record):
    inputs = ["x", "w"] + ([] if b_shape is None else ["b"])
    initializers = [numpy_helper.from_array(np.ones(w_shape, np.float32), "w")]
    if b_shape is not None:
        initializers.append(numpy_helper.from_array(np.ones(b_shape, np.float32), "b"))
    graph = helper.make_graph(
        [helper.make_node("Conv", inputs, ["c"], name="c1"), helper.make_node("Relu", ["c"], ["y"])],
        "g", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, x_shape)],
        [helper.make_empty_tensor_value_info("y")], initializers)
    net = autograd.onnx.load(helper.make_model(graph))
    with pytest.raises(ValueError) as caught:
        with autograd.enable_grad() if record else autograd.no_grad():
            net(np.ones(x_shape, np.float32))
    assert str(caught.value) == f"autograd.onnx: Conv 'c1': {expected}"


@pytest.mark.parametrize("record", [True, False])
def test_a_3d_conv_is_refused_as_a_3d_window_before_any_shape_check(record):
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["y"], name="c1")], "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, (1, 2, 3, 3, 3))],
        [helper.make_empty_tensor_value_info("y")],
        [numpy_helper.from_array(np.ones((4, 2, 1, 1, 1), np.float32), "w")])
    net = autograd.onnx.load(helper.make_model(graph))
    with pytest.raises(ValueError) as caught:
        with autograd.enable_grad() if record else autograd.no_grad():
            net(np.ones((1, 2, 3, 3, 3), np.float32))
    assert str(caught.value) == ("autograd.onnx: only 1-D and 2-D windows are supported, got "
                                 "an input of shape (1, 2, 3, 3, 3)")


@pytest.mark.parametrize("x_shape, w_shape, expected", [
    ((1, 3, 5, 5), (4, 2, 3, 3), "expected x of shape (N, 2, H, W), got (1, 3, 5, 5)"),
    ((1, 3, 7), (4, 2, 3), "expected x of shape (N, 2, L), got (1, 3, 7)")])
@pytest.mark.parametrize("record", [True, False])
def test_a_conv_channel_mismatch_is_named_word_for_word(x_shape, w_shape, expected, record):
    """Recording runs the Conv handler, an eval-mode no_grad pass the fused inference step:
    each checks the channels before its matrix product."""
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="c1"),
             helper.make_node("Relu", ["c"], ["y"])]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, x_shape)],
        [helper.make_empty_tensor_value_info("y")],
        [numpy_helper.from_array(np.ones(w_shape, np.float32), "w")])
    net = autograd.onnx.load(helper.make_model(graph))
    with pytest.raises(ValueError) as caught:
        with autograd.enable_grad() if record else autograd.no_grad():
            net(np.ones(x_shape, np.float32))
    assert str(caught.value) == f"autograd.onnx: Conv 'c1': {expected}"
