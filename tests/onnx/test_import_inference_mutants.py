"""The fused steps of passes that record nothing (import_inference.py), where the mutation run
(issue 22) found them untested: a Concat of three convolutions with equal channel counts (the
third part's inputs and channel offset), whether the in-place path really ran (its test of
sizes and dtypes), and a Conv + Add whose shortcut the fused kernel cannot take (it broadcasts,
or the conv is 1-D), which runs the nodes one by one. Outputs against onnxruntime."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="the onnx extra is not installed")
onnxruntime = pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")
from onnx import helper, numpy_helper, TensorProto   # noqa: E402

import autograd                                      # noqa: E402
from autograd.backend import convolution             # noqa: E402
from autograd.onnx import import_inference           # noqa: E402
from autograd.onnx.import_inference import FusedConcat, FusedConv   # noqa: E402


def _graph_model(nodes, x_shape, arrays, opset=15):
    graph = helper.make_graph(
        nodes, "fused", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.asarray(a, np.float32), name) for name, a in arrays.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _onnxruntime(proto, x):
    session = onnxruntime.InferenceSession(proto.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})[0]


def _spy_on_plans(monkeypatch, record):
    """``record(relu, out)`` at every call of a fused step's compiled plan (the path of a
    convolution the shifted products take, decided on the first pass)."""
    original = import_inference.shifted_rows_plan

    def planned(x, W, b, geometry, pads, relu):
        made = original(x, W, b, geometry, pads, relu)
        if made is None:
            return None
        size, plan = made

        def spied(x, W, b=None, out=None):
            record(relu, out)
            return plan(x, W, b, out)
        return size, spied
    monkeypatch.setattr(import_inference, "shifted_rows_plan", planned)


@pytest.fixture
def in_place_calls(monkeypatch):
    """The ``out=`` arguments' shapes of every fused convolution written into a Concat."""
    calls = []
    original = convolution.inference_forward

    def spy(*args, **kwargs):
        if kwargs.get("out") is not None:
            calls.append(kwargs["out"].shape)
        return original(*args, **kwargs)
    monkeypatch.setattr(convolution, "inference_forward", spy)
    _spy_on_plans(monkeypatch, lambda relu, out: out is None or calls.append(out.shape))
    return calls


def _three_branches(seed=0):
    """Concat(relu(conv3x3(x) + b1), conv3x3(x), relu(conv3x3(x) + b3)), 3 channels each
    (a batch of 2: the batch size differs from the channel count)."""
    rng = np.random.default_rng(seed)
    arrays = {"W1": rng.standard_normal((3, 2, 3, 3)), "b1": rng.standard_normal(3),
              "W2": rng.standard_normal((3, 2, 3, 3)),
              "W3": rng.standard_normal((3, 2, 3, 3)), "b3": rng.standard_normal(3)}
    nodes = [helper.make_node("Conv", ["x", "W1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["x", "W2"], ["c2"], pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["x", "W3", "b3"], ["c3"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c3"], ["r3"]),
             helper.make_node("Concat", ["r1", "c2", "r3"], ["y"], axis=1)]
    return _graph_model(nodes, ["N", 2, 6, 5], arrays)


def test_a_concat_of_three_equal_convolutions_is_written_in_place(in_place_calls):
    """Each part reads its own weights (the groups of inputs are sliced one after another)
    into its own channels (the offsets add up); a batch of 2 beside 3 channels per part tells
    the batch size from the channel count in the output shape."""
    proto = _three_branches()
    net = autograd.onnx.load(proto)
    net.eval()
    assert [type(step).__name__ for _, step in net._inference_steps] == ["FusedConcat"]
    x = np.random.default_rng(1).standard_normal((2, 2, 6, 5)).astype(np.float32)
    with autograd.no_grad():
        ours = net(x).to_numpy()
    assert in_place_calls == [(3, 6 * 5 * 2)] * 3          # the in-place path ran, per part
    np.testing.assert_allclose(ours, _onnxruntime(proto, x), rtol=1e-5, atol=1e-5)


def test_parts_with_different_channel_counts_and_kernels_are_written_in_place(in_place_calls):
    """Parts of 4 and 2 channels, 3x3 padded and 1x1 kernels: the same (N, H, W) of outputs,
    so the in-place path runs (its size test reads the batch and each part's input size)."""
    rng = np.random.default_rng(2)
    arrays = {"W1": rng.standard_normal((4, 3, 3, 3)), "W2": rng.standard_normal((2, 3, 1, 1)),
              "b2": rng.standard_normal(2)}
    nodes = [helper.make_node("Conv", ["x", "W1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["x", "W2", "b2"], ["c2"]),
             helper.make_node("Relu", ["c2"], ["r2"]),
             helper.make_node("Concat", ["c1", "r2"], ["y"], axis=-3)]
    proto = _graph_model(nodes, ["N", 3, 5, 5], arrays)
    net = autograd.onnx.load(proto)
    x = rng.standard_normal((3, 3, 5, 5)).astype(np.float32)
    with autograd.no_grad():
        ours = net(x).to_numpy()
    assert in_place_calls == [(4, 75), (2, 75)]
    np.testing.assert_allclose(ours, _onnxruntime(proto, x), rtol=1e-5, atol=1e-5)


def test_a_concat_of_convolutions_of_different_output_sizes_is_refused_like_unfused():
    """Outputs of different heights cannot be concatenated: the fused step must take the
    unfused path (which raises as the graph does), not write past its buffer."""
    rng = np.random.default_rng(3)
    arrays = {"W1": rng.standard_normal((2, 1, 3, 3)), "W2": rng.standard_normal((2, 1, 1, 1))}
    nodes = [helper.make_node("Conv", ["x", "W1"], ["c1"]),
             helper.make_node("Conv", ["x", "W2"], ["c2"]),
             helper.make_node("Concat", ["c1", "c2"], ["y"], axis=1)]
    net = autograd.onnx.load(_graph_model(nodes, ["N", 1, 5, 5], arrays))
    x = rng.standard_normal((1, 1, 5, 5)).astype(np.float32)
    messages = []
    for record in (True, False):                         # recorded: the graph as it is
        with pytest.raises(ValueError) as caught:
            with autograd.enable_grad() if record else autograd.no_grad():
                net(x)
        messages.append(str(caught.value))
    assert messages[0] == messages[1] == ("cat: cannot join (1, 2, 3, 3) and (1, 2, 5, 5) "
                                          "along axis 1")


def _conv_add_relu(x_shape, w_shape, shortcut_shape, seed):
    rng = np.random.default_rng(seed)
    arrays = {"W": rng.standard_normal(w_shape), "b": rng.standard_normal(w_shape[0]),
              "s": rng.standard_normal(shortcut_shape)}
    pads = [1] * (2 * (len(x_shape) - 2))
    nodes = [helper.make_node("Conv", ["x", "W", "b"], ["c"], pads=pads),
             helper.make_node("Add", ["c", "s"], ["a"]),
             helper.make_node("Relu", ["a"], ["y"])]
    return _graph_model(nodes, ["N", *x_shape[1:]], arrays)


@pytest.mark.parametrize("x_shape, w_shape, shortcut_shape", [
    ((2, 3, 5, 4), (4, 3, 3, 3), (1, 4, 1, 1)),         # a shortcut that broadcasts
    ((2, 3, 7), (4, 3, 3), (2, 4, 7)),                   # a 1-D convolution
])
def test_a_conv_add_relu_the_kernel_cannot_take_runs_node_by_node(x_shape, w_shape,
                                                                   shortcut_shape):
    """The fused step falls back to Conv, then Add of the shortcut, then Relu: the shortcut
    is the step's last input, added to the conv's output in its dtype."""
    proto = _conv_add_relu(x_shape, w_shape, shortcut_shape, seed=4)
    net = autograd.onnx.load(proto)
    step = net._inference_steps[0][1]
    assert isinstance(step, FusedConv) and step.add is not None and step.relu is not None
    x = np.random.default_rng(5).standard_normal(x_shape).astype(np.float32)
    with autograd.no_grad():
        ours = net(x)
    assert ours.dtype == np.float32
    expected = _onnxruntime(proto, x)
    assert (expected == 0).any() and (expected > 0).any()      # the Relu clips some
    np.testing.assert_allclose(ours.to_numpy(), expected, rtol=1e-5, atol=1e-5)


def test_a_fused_concat_of_fallback_parts_matches_onnxruntime():
    """1-D convolutions in a Concat: no part takes the fused kernel, each runs node by node."""
    rng = np.random.default_rng(6)
    arrays = {"W1": rng.standard_normal((2, 2, 3)), "W2": rng.standard_normal((3, 2, 3)),
              "b2": rng.standard_normal(3), "W3": rng.standard_normal((1, 2, 1))}
    nodes = [helper.make_node("Conv", ["x", "W1"], ["c1"], pads=[1, 1]),
             helper.make_node("Conv", ["x", "W2", "b2"], ["c2"], pads=[1, 1]),
             helper.make_node("Relu", ["c2"], ["r2"]),
             helper.make_node("Conv", ["x", "W3"], ["c3"]),
             helper.make_node("Concat", ["c1", "r2", "c3"], ["y"], axis=1)]
    proto = _graph_model(nodes, ["N", 2, 6], arrays)
    net = autograd.onnx.load(proto)
    assert isinstance(net._inference_steps[-1][1], FusedConcat)
    x = rng.standard_normal((2, 2, 6)).astype(np.float32)
    with autograd.no_grad():
        ours = net(x).to_numpy()
    np.testing.assert_allclose(ours, _onnxruntime(proto, x), rtol=1e-5, atol=1e-5)


@pytest.fixture
def fused_calls(monkeypatch):
    """(relu, residual given, out given) of every call of the fused convolution kernel."""
    calls = []
    original = convolution.inference_forward

    def spy(x, W, b, geometry, pads, relu=False, out=None, residual=None):
        calls.append((relu, residual is not None, out is not None))
        return original(x, W, b, geometry, pads, relu, out=out, residual=residual)
    monkeypatch.setattr(convolution, "inference_forward", spy)
    _spy_on_plans(monkeypatch, lambda relu, out: calls.append((relu, False, out is not None)))
    return calls


def _resnet_end(groups=1, seed=7, shortcut="x"):
    """y = relu(conv3x3(x; groups) + b + shortcut), 4 channels in and out."""
    rng = np.random.default_rng(seed)
    arrays = {"W": rng.standard_normal((4, 4 // groups, 3, 3)) * 0.4,
              "b": rng.standard_normal(4)}
    nodes = [helper.make_node("Conv", ["x", "W", "b"], ["c"], pads=[1, 1, 1, 1], group=groups,
                              strides=[1, 1]),
             helper.make_node("Add", ["c", shortcut], ["a"]),
             helper.make_node("Relu", ["a"], ["y"])]
    return _graph_model(nodes, ["N", 4, 5, 6], arrays)


@pytest.mark.parametrize("groups", [1, 2])
def test_conv_add_relu_runs_as_one_fused_call_with_the_shortcut(fused_calls, groups):
    """The shortcut (the graph input x, its shape and dtype those of the conv's output) goes
    to the kernel with the ReLU: one call. A grouped conv keeps its groups on this path."""
    proto = _resnet_end(groups)
    net = autograd.onnx.load(proto)
    x = np.random.default_rng(8).standard_normal((3, 4, 5, 6)).astype(np.float32)
    with autograd.no_grad():
        ours = net(x).to_numpy()
    assert fused_calls == [(True, True, False)]
    np.testing.assert_allclose(ours, _onnxruntime(proto, x), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ours, net(x).to_numpy(), rtol=1e-5, atol=1e-6)   # recorded


def test_a_grouped_conv_relu_fused_matches_onnxruntime(fused_calls):
    rng = np.random.default_rng(9)
    arrays = {"W": rng.standard_normal((6, 1, 3, 3)), "b": rng.standard_normal(6)}
    nodes = [helper.make_node("Conv", ["x", "W", "b"], ["c"], group=3, strides=[2, 1]),
             helper.make_node("Relu", ["c"], ["y"])]
    proto = _graph_model(nodes, ["N", 3, 7, 6], arrays)
    x = rng.standard_normal((2, 3, 7, 6)).astype(np.float32)
    with autograd.no_grad():
        ours = autograd.onnx.load(proto)(x).to_numpy()
    assert fused_calls == [(True, False, False)]
    np.testing.assert_allclose(ours, _onnxruntime(proto, x), rtol=1e-5, atol=1e-5)


def test_a_shortcut_of_another_dtype_is_refused_as_in_the_recorded_pass(fused_calls):
    """A float64 shortcut beside a float32 conv: not the kernel's (it would add in x's dtype
    silently); the unfused Add refuses to mix them, as a recording pass does."""
    proto = _resnet_end(shortcut="s")
    proto.graph.input.append(helper.make_tensor_value_info("s", TensorProto.DOUBLE,
                                                           ["N", 4, 5, 6]))
    net = autograd.onnx.load(proto)
    rng = np.random.default_rng(10)
    x = rng.standard_normal((2, 4, 5, 6)).astype(np.float32)
    s = rng.standard_normal((2, 4, 5, 6))
    messages = []
    for record in (True, False):
        with pytest.raises(TypeError) as caught:
            with autograd.enable_grad() if record else autograd.no_grad():
                net(x, s)
        messages.append(str(caught.value))
    assert fused_calls == []
    assert messages[0] == messages[1] == ("Add: cannot mix float32 and float64 inputs; cast "
                                          "one explicitly with as_type()")


def test_a_constant_shortcut_takes_the_unfused_path(fused_calls):
    """A shortcut folded at load is an array, not a Tensor: the conv runs unfused."""
    proto = _resnet_end(shortcut="k")
    k = np.random.default_rng(11).standard_normal((1, 4, 5, 6)).astype(np.float32)
    proto.graph.node.insert(0, helper.make_node("Constant", [], ["k"],
                                                value=numpy_helper.from_array(k)))
    net = autograd.onnx.load(proto)
    x = np.random.default_rng(12).standard_normal((1, 4, 5, 6)).astype(np.float32)
    with autograd.no_grad():
        ours = net(x).to_numpy()
    assert fused_calls == []
    np.testing.assert_allclose(ours, _onnxruntime(proto, x), rtol=1e-5, atol=1e-5)


def test_a_lone_conv_is_one_fused_call_and_a_1d_conv_is_not(fused_calls):
    proto = _graph_model([helper.make_node("Conv", ["x", "W"], ["y"])], ["N", 2, 4, 4],
                         {"W": np.ones((3, 2, 1, 1))})
    x = np.random.default_rng(13).standard_normal((2, 2, 4, 4)).astype(np.float32)
    with autograd.no_grad():
        ours = autograd.onnx.load(proto)(x).to_numpy()
    assert fused_calls == [(False, False, False)]
    np.testing.assert_allclose(ours, np.repeat(x.sum(1, keepdims=True), 3, 1), rtol=1e-6)
    proto = _graph_model([helper.make_node("Conv", ["x", "W"], ["y"])], ["N", 2, 4],
                         {"W": np.ones((3, 2, 1))})
    with autograd.no_grad():
        ours = autograd.onnx.load(proto)(x[:, :, 0]).to_numpy()
    assert len(fused_calls) == 1                       # a sequence: the unfused path
    np.testing.assert_allclose(ours, np.repeat(x[:, :, 0].sum(1, keepdims=True), 3, 1),
                               rtol=1e-6)


@pytest.mark.parametrize("record", [True, False])
def test_the_conv_geometry_messages_name_the_conv_in_either_pass(record):
    proto = _graph_model([helper.make_node("Conv", ["x", "W"], ["y"], strides=[0, 1])],
                         ["N", 2, 5, 5], {"W": np.ones((2, 2, 3, 3))})
    net = autograd.onnx.load(proto)
    with pytest.raises(ValueError) as caught:
        with autograd.enable_grad() if record else autograd.no_grad():
            net(np.ones((1, 2, 5, 5), np.float32))
    assert str(caught.value) == "Conv: stride must be positive, got [0, 1]"


@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "SAME_LOWER"])
def test_a_fused_conv_with_auto_pad_pads_by_its_input_size(fused_calls, auto_pad):
    """SAME pads depend on the input's height and width (7 x 6, stride 2, 3 x 2 kernel)."""
    rng = np.random.default_rng(14)
    nodes = [helper.make_node("Conv", ["x", "W"], ["c"], auto_pad=auto_pad, strides=[2, 2]),
             helper.make_node("Relu", ["c"], ["y"])]
    proto = _graph_model(nodes, ["N", 2, 7, 6], {"W": rng.standard_normal((3, 2, 3, 2))})
    x = rng.standard_normal((2, 2, 7, 6)).astype(np.float32)
    with autograd.no_grad():
        ours = autograd.onnx.load(proto)(x).to_numpy()
    assert fused_calls == [(True, False, False)]
    np.testing.assert_allclose(ours, _onnxruntime(proto, x), rtol=1e-5, atol=1e-5)


def _two_convs_joined_by(op_type, **attributes):
    """op_type(conv_a(x), conv_b(x)) -> Relu: both conv outputs read by one node."""
    rng = np.random.default_rng(11)
    arrays = {"Wa": rng.standard_normal((3, 2, 3, 3)), "Wb": rng.standard_normal((3, 2, 3, 3))}
    nodes = [helper.make_node("Conv", ["x", "Wa"], ["a"], pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["x", "Wb"], ["b"], pads=[1, 1, 1, 1]),
             helper.make_node(op_type, ["a", "b"], ["s"], **attributes),
             helper.make_node("Relu", ["s"], ["y"])]
    return _graph_model(nodes, ["N", 2, 5, 4], arrays)


@pytest.mark.parametrize("op_type, attributes", [("Add", {}), ("Sum", {}),
                                                 ("Concat", {"axis": 0}),
                                                 ("Concat", {"axis": 1})])
def test_two_convolutions_joined_by_one_node_match_onnxruntime(op_type, attributes):
    """An Add of two conv outputs is fused into the first conv only (the second runs alone);
    a Concat along the batch axis is not a channel concat and runs unfused."""
    proto = _two_convs_joined_by(op_type, **attributes)
    x = np.random.default_rng(12).standard_normal((2, 2, 5, 4)).astype(np.float32)
    net = autograd.onnx.load(proto)
    with autograd.no_grad():
        ours = net(x).to_numpy()
    expected = _onnxruntime(proto, x)
    assert ours.shape == expected.shape
    np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-5)
