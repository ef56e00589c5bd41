"""Export round trips: every exportable op and a few networks are exported, checked with
onnx.checker (full check), run in onnxruntime and in onnx's ReferenceEvaluator at two batch
sizes against the project's own forward, imported back and compared again; an imported
network fine-tunes."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="the onnx extra is not installed")
onnxruntime = pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")
from onnx.reference import ReferenceEvaluator   # noqa: E402

import autograd                                  # noqa: E402
from autograd import Tensor                      # noqa: E402

ATOL = 1e-4


def _parameter(rng, *shape):
    return Tensor(data=rng.standard_normal(shape).astype(np.float32) * 0.5, stores_grad=True)


class Wrap(autograd.Layer):
    """A model from a function of x and some parameters."""

    def __init__(self, function, **parameters):
        super().__init__()
        self.function = function
        for name, value in parameters.items():
            setattr(self, name, value)

    def forward(self, x):
        return self.function(self, x)


def _cases():
    rng = np.random.default_rng(0)
    image, flat = (3, 6, 6), (5,)
    yield "relu", image, Wrap(lambda m, x: autograd.relu(x))
    yield "tanh_sigmoid", flat, Wrap(lambda m, x: autograd.sigmoid(autograd.tanh(x)))
    yield "exp_log_sqrt", flat, Wrap(lambda m, x: autograd.sqrt(autograd.log(
        autograd.exp(x) + 1.0)))
    yield "scalars", flat, Wrap(lambda m, x: (2.0 - x * 3.0) / 4.0 + 1.0)
    yield "binary", flat, Wrap(lambda m, x: autograd.div(autograd.mul(x, m.w) - m.w, m.w * m.w + 1.0),
                               w=_parameter(rng, 5))
    yield "matmul_bias", flat, Wrap(lambda m, x: autograd.add_bias(autograd.matmul(x, m.w), m.b),
                                    w=_parameter(rng, 5, 4), b=_parameter(rng, 4))
    yield "gemm", flat, Wrap(lambda m, x: autograd.gemm(x, m.w, m.b, 0.5, 2.0, False, True),
                             w=_parameter(rng, 3, 5), b=_parameter(rng, 3))
    yield "conv", image, Wrap(lambda m, x: autograd.conv2d(x, m.w, m.b, stride=2, padding=1),
                              w=_parameter(rng, 4, 3, 3, 3), b=_parameter(rng, 4))
    yield "conv_grouped_dilated_same", image, Wrap(
        lambda m, x: autograd.conv2d(x, m.w, None, dilation=2, groups=3, padding="same"),
        w=_parameter(rng, 6, 1, 3, 3))
    yield "conv_asymmetric_same", image, Wrap(
        lambda m, x: autograd.conv2d(x, m.w, None, stride=2, padding="same"),
        w=_parameter(rng, 2, 3, 3, 3))
    yield "pools", image, Wrap(lambda m, x: autograd.avg_pool2d(
        autograd.max_pool2d(x, 3, 1, padding=1), 2))
    yield "avg_pool_inside_pixels", image, Wrap(lambda m, x: autograd.avg_pool2d(
        x, 3, 1, padding=1, count_include_pad=False))
    # SINGA's SAME padding, uneven (one op each, pads (1, 0) and (0, 1))
    yield "same_pools", image, Wrap(lambda m, x: m.max(x) + m.avg(x),
                                    max=autograd.Pooling2d(3, 2, pad_mode="SAME_LOWER"),
                                    avg=autograd.Pooling2d(3, 2, is_max=False,
                                                           pad_mode="SAME_UPPER",
                                                           count_include_pad=False))
    yield "average_pools_without_padding", image, Wrap(lambda m, x: autograd.avg_pool2d(
        autograd.avg_pool2d(x, 3, 1, padding=1, count_include_pad=False), 3, 2,
        ceil_mode=True, count_include_pad=False))
    yield "global_pool", image, Wrap(lambda m, x: autograd.global_avg_pool2d(x))
    yield "batch_norm", image, autograd.BatchNorm2d(3)
    yield "layer_norm", flat, autograd.LayerNorm(5)
    yield "softmax", flat, Wrap(lambda m, x: autograd.log_softmax(autograd.softmax(x, 1), 1))
    yield "shape", image, Wrap(lambda m, x: autograd.transpose(
        autograd.reshape(autograd.flatten(x), (x.shape[0], 9, 12)), (0, 2, 1)))
    yield "concat", image, Wrap(lambda m, x: autograd.cat([x, autograd.relu(x)], 1))
    yield "dropout", flat, autograd.Dropout(0.5)
    yield "activations", flat, Wrap(lambda m, x: autograd.softsign(autograd.softplus(
        autograd.elu(autograd.leakyrelu(x, 0.1), 0.7))))
    yield "selu_hardsigmoid_erf", flat, Wrap(lambda m, x: autograd.erf(autograd.hardsigmoid(
        autograd.selu(x))))
    yield "gelu", flat, Wrap(lambda m, x: autograd.gelu(x) + autograd.gelu(x, "tanh"))
    yield "clip", flat, Wrap(lambda m, x: autograd.clip(x, -0.5, 0.7) + autograd.clip(x, 0.1))
    yield "pads", image, Wrap(lambda m, x: autograd.pad(autograd.pad(
        autograd.pad(x, "constant", [0, 0, 1, 2, 0, 0, 0, 1], 0.5), "reflect",
        [0, 0, 1, 1, 0, 0, 1, 1]), "edge", [0, 0, 2, 0, 0, 0, 0, 2]))

    yield "slicing", image, Wrap(lambda m, x: autograd.getitem(
        x, (slice(None), slice(1, None), 2, slice(None, None, -2))) + autograd.getitem(x, (
            slice(None), 0, slice(4, 2, -1), slice(0, 3))))
    # arrays, None and Ellipsis: Slice + Gather + Squeeze + Unsqueeze
    yield "index_array", image, Wrap(lambda m, x: autograd.getitem(x, (slice(None), [2, 0, 2])))
    yield "index_2d_array_none_ellipsis", image, Wrap(lambda m, x: autograd.getitem(
        x, (Ellipsis, None, np.array([[0, 5], [-1, 2]]), slice(None, None, 2))))
    yield "index_int_beside_array", image, Wrap(lambda m, x: autograd.getitem(
        x, (slice(None), 1, [0, -2], slice(1, 4))) + autograd.getitem(
        x, (slice(None), np.array([0, 2], np.int32), 3, slice(1, 4))))
    yield "index_2d_array_then_int", image, Wrap(lambda m, x: autograd.getitem(
        x, (slice(None), np.array([[0, 2], [1, 1]], np.int32), 3, slice(1, 4))))
    yield "index_mask_none", image, Wrap(lambda m, x: autograd.getitem(
        x, (None, slice(None), slice(-2, None), Ellipsis,
            np.array([True, False, True, True, False, True]), None)))
    yield "index_ellipsis_int", image, Wrap(lambda m, x: autograd.getitem(x, (Ellipsis, 2)))
    yield "upsample", image, Wrap(lambda m, x: autograd.upsample(x, "nearest", [1, 1, 2, 1.5]))
    yield "gather", flat, Wrap(lambda m, x: autograd.gather(x, 1, [[4, 0], [-1, 2]]))
    yield "attention", (4, 6), Wrap(lambda m, x: autograd.scaled_dot_product_attention(
        x, autograd.tanh(x), x * 0.5, causal=True) + autograd.scaled_dot_product_attention(
        x, x, x, mask=np.linspace(-1.0, 1.0, 16).reshape(4, 4), scale=0.3))
    sequence = (5, 3)                   # (steps, features) after the batch: batch_first layers
    yield "lstm", sequence, Wrap(lambda m, x: m.rnn(x)[0],
                                 rnn=autograd.LSTM(3, 4, batch_first=True))
    yield "lstm_sequences_and_cell", sequence, Wrap(
        lambda m, x: (lambda y, state: y + autograd.unsqueeze(state[1], 1))(*m.rnn(x)),
        rnn=autograd.LSTM(3, 4, batch_first=True, return_sequences=True))
    yield "lstm_without_bias", sequence, Wrap(
        lambda m, x: m.rnn(x)[0], rnn=autograd.LSTM(3, 2, bias=False, batch_first=True))
    yield "gru", sequence, Wrap(lambda m, x: m.rnn(x)[0], rnn=autograd.GRU(
        3, 4, batch_first=True, return_sequences=True))
    # (onnx's ReferenceEvaluator knows no Relu RNN: the tanh one, which both runtimes know)
    yield "rnn", sequence, Wrap(lambda m, x: m.rnn(x)[0], rnn=autograd.RNN(
        3, 4, batch_first=True))


CASES = list(_cases())


def _outputs_agree(model, proto, shape, batch, seed):
    x = np.random.default_rng(seed).standard_normal((batch,) + shape).astype(np.float32)
    ours = model(Tensor(data=x, requires_grad=False)).to_numpy()
    session = onnxruntime.InferenceSession(proto.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(session.run(None, {"input": x})[0], ours, atol=ATOL, rtol=1e-4)
    np.testing.assert_allclose(ReferenceEvaluator(proto).run(None, {"input": x})[0], ours,
                               atol=ATOL, rtol=1e-4)
    imported = autograd.onnx.load(proto)
    np.testing.assert_allclose(imported(x).to_numpy(), ours, atol=ATOL, rtol=1e-4)
    return imported


@pytest.mark.parametrize("name, shape, model", CASES, ids=[c[0] for c in CASES])
def test_each_op_exports_runs_in_onnxruntime_and_imports_back(name, shape, model):
    example = np.random.default_rng(1).standard_normal((2,) + shape).astype(np.float32)
    if isinstance(model, autograd.BatchNorm2d):     # statistics that are not 0 and 1
        model(Tensor(data=example * 3 + 1, requires_grad=False))
    proto = autograd.onnx.export(model, [example])
    model.eval()
    for batch, seed in ((2, 2), (5, 3)):            # the batch axis is symbolic
        imported = _outputs_agree(model, proto, shape, batch, seed)
    again = autograd.onnx.export(imported, [example])     # import -> export: same semantics
    x = np.random.default_rng(4).standard_normal((3,) + shape).astype(np.float32)
    np.testing.assert_allclose(ReferenceEvaluator(again).run(None, {"input": x})[0],
                               model(Tensor(data=x, requires_grad=False)).to_numpy(),
                               atol=ATOL, rtol=1e-4)


def test_an_embedding_exports_as_a_gather_of_the_ids_input():
    rng = np.random.default_rng(7)
    model = Wrap(lambda m, ids: autograd.relu(autograd.embedding(ids, m.W)),
                 W=_parameter(rng, 10, 3))
    proto = autograd.onnx.export(model, [rng.integers(0, 10, (2, 4))])
    assert [node.op_type for node in proto.graph.node][:1] == ["Gather"]
    net = autograd.onnx.load(proto)
    session = onnxruntime.InferenceSession(proto.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    for batch in (2, 5):
        ids = rng.integers(0, 10, (batch, 4))
        expected = np.maximum(model.W.to_numpy()[ids], 0)
        np.testing.assert_allclose(session.run(None, {"input": ids})[0], expected, atol=ATOL)
        np.testing.assert_allclose(ReferenceEvaluator(proto).run(None, {"input": ids})[0],
                                   expected, atol=ATOL)
        np.testing.assert_allclose(net(ids).to_numpy(), expected, atol=ATOL)


def test_indexing_by_a_mask_graph_input_runs_nonzero_and_refused_indices_are_named():
    rng = np.random.default_rng(8)
    x = rng.standard_normal((2, 3, 6)).astype(np.float32)
    mask = np.array([True, False, True, True, False, True])
    proto = autograd.onnx.export(lambda x, mask: autograd.getitem(
        x, (slice(None), None, Ellipsis, mask)), [x, mask])
    assert "NonZero" in [node.op_type for node in proto.graph.node]
    session = onnxruntime.InferenceSession(proto.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    net = autograd.onnx.load(proto)
    for batch, keep in ((2, mask), (4, ~mask)):
        x = rng.standard_normal((batch, 3, 6)).astype(np.float32)
        feeds = {"input_0": x, "input_1": keep}
        expected = x[:, None, ..., keep]
        np.testing.assert_allclose(session.run(None, feeds)[0], expected, atol=ATOL)
        np.testing.assert_allclose(ReferenceEvaluator(proto).run(None, feeds)[0], expected,
                                   atol=ATOL)
        np.testing.assert_allclose(net(x, keep).to_numpy(), expected, atol=ATOL)
    with pytest.raises(NotImplementedError, match="several arrays"):
        autograd.onnx.export(lambda x: autograd.getitem(x, (slice(None), [0, 1], [1, 2])), [x])
    with pytest.raises(NotImplementedError, match="ints apart from an index array"):
        autograd.onnx.export(lambda x: autograd.getitem(x, (0, slice(None), [1, 2])), [x])


class Block(autograd.Layer):
    """A ResNet basic block: conv-bn-relu-conv-bn, plus the input, relu."""

    def __init__(self, channels):
        super().__init__()
        self.conv1 = autograd.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = autograd.BatchNorm2d(channels)
        self.conv2 = autograd.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = autograd.BatchNorm2d(channels)

    def forward(self, x):
        y = self.bn2(self.conv2(autograd.relu(self.bn1(self.conv1(x)))))
        return autograd.relu(y + x)


class SequenceClassifier(autograd.Layer):
    """An LSTM over (batch, steps, features), its last hidden state into a Linear."""

    def __init__(self):
        super().__init__()
        self.lstm = autograd.LSTM(3, 8, batch_first=True)
        self.linear = autograd.Linear(8, 3)

    def forward(self, x):
        return self.linear(self.lstm(x)[0])


def _networks():
    from tests.test_examples import load_example
    mlp = autograd.Sequential(autograd.Linear(12, 16), autograd.ReLU(), autograd.Linear(16, 3))
    yield "mlp", (12,), mlp
    yield "seed_cnn", (1, 8, 8), load_example("train_cnn").CNN(1, 10)
    yield "resnet_block", (4, 6, 6), Block(4)
    yield "lstm", (5, 3), SequenceClassifier()


@pytest.mark.parametrize("name, shape, model", list(_networks()),
                         ids=[n[0] for n in _networks()])
def test_networks_export_and_an_imported_one_fine_tunes(name, shape, model, tmp_path):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((8,) + shape).astype(np.float32)
    model(Tensor(data=x, requires_grad=False))          # lazy layers, BatchNorm statistics
    path = tmp_path / f"{name}.onnx"
    autograd.onnx.export(model, [x[:2]], path)
    model.eval()
    _outputs_agree(model, onnx.load(str(path)), shape, 4, 6)
    net = autograd.onnx.load(path)
    # the same parameters (an LSTM's two biases are one ONNX B: count elements)
    assert sum(int(np.prod(p.shape)) for p in net.parameters()) == sum(
        int(np.prod(p.shape)) for p in model.parameters())
    net.train()
    sgd = autograd.opt.SGD(lr=0.05)
    labels = rng.integers(0, 3, 8)
    losses = []
    for _ in range(6):
        logits = net(x)
        logits = autograd.reshape(logits, (8, -1))
        loss = autograd.softmax_cross_entropy(logits, labels % logits.shape[1])
        losses.append(float(loss.item()))
        for p, g in autograd.backward(loss):
            sgd.update(p, g)
    autograd.training = True
    assert losses[-1] < losses[0]


def test_an_operation_without_mapping_is_named_and_a_registered_one_exports():
    class Cube(autograd.Operation):
        """y = x^3.   dx = 3 x^2 dy"""
        def forward(self, x):
            self.save_for_backward(x)
            return x * x * x

        def backward(self, dy):
            (x,) = self.saved
            return 3 * x * x * dy

    model = Wrap(lambda m, x: Cube()(x))
    x = np.ones((2, 3), np.float32)
    with pytest.raises(NotImplementedError, match="no ONNX mapping for the Operation Cube"):
        autograd.onnx.export(model, [x])

    @autograd.onnx.register_exporter(Cube)
    def _cube(context, op, inputs, outputs, tensors):
        context.node("Mul", [inputs[0], inputs[0]], [outputs[0] + "_square"])
        context.node("Mul", [outputs[0] + "_square", inputs[0]], outputs)

    try:
        proto = autograd.onnx.export(model, [x])
        y = np.arange(6, dtype=np.float32).reshape(2, 3)
        np.testing.assert_allclose(ReferenceEvaluator(proto).run(None, {"input": y})[0], y ** 3)
    finally:
        from autograd.onnx.export_ops import EXPORTERS
        del EXPORTERS[Cube]


def test_a_reflect_pad_as_long_as_its_axis_is_refused_both_ways():
    """ONNX's reflect stays inside the axis; SINGA's rule (a copy of the axis) has no Pad
    node, so neither direction may silently change the values."""
    from onnx import helper, TensorProto
    model = Wrap(lambda m, x: autograd.pad(x, "reflect", [0, 3, 0, 0]))
    with pytest.raises(NotImplementedError, match="reflect pad equal to its axis length"):
        autograd.onnx.export(model, [np.ones((2, 3), np.float32)])
    pads = helper.make_tensor("pads", TensorProto.INT64, [4], [0, 3, 0, 0])
    node = helper.make_node("Pad", ["x", "pads"], ["y"], name="mirror", mode="reflect")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(
        "x", TensorProto.FLOAT, [2, 3])], [helper.make_tensor_value_info(
            "y", TensorProto.FLOAT, [2, 6])], initializer=[pads])
    with pytest.raises(NotImplementedError, match=r"Pad 'mirror' reflects by \[0, 3, 0, 0\]"):
        autograd.onnx.load(helper.make_model(graph))(np.ones((2, 3), np.float32))


def test_an_unsupported_node_is_named_and_a_registered_importer_runs():
    from onnx import helper, TensorProto
    node = helper.make_node("Softplus2", ["x"], ["y"], name="mystery")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(
        "x", TensorProto.FLOAT, [2])], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph)
    with pytest.raises(NotImplementedError, match="node 'mystery' has type 'Softplus2'"):
        autograd.onnx.load(model)

    @autograd.onnx.register_importer("Softplus2")
    def _softplus2(context, node, inputs):
        return autograd.mul(autograd.softplus(context.tensor(inputs[0])),
                            context.tensor(2.0, inputs[0]))

    try:
        x = np.array([-1.0, 3.0], np.float32)
        np.testing.assert_allclose(autograd.onnx.load(model)(x).to_numpy(),
                                   2 * np.log1p(np.exp(x)), rtol=1e-6)
    finally:
        from autograd.onnx.import_ops import IMPORTERS
        del IMPORTERS[("", "Softplus2")]


def test_the_installed_onnx_and_onnxruntime_agree_on_the_ir_version():
    proto = autograd.onnx.export(Wrap(lambda m, x: autograd.relu(x)), [np.ones((1, 2), np.float32)])
    assert proto.ir_version == onnx.IR_VERSION
    session = onnxruntime.InferenceSession(proto.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    assert session.run(None, {"input": np.array([[-1.0, 1.0]], np.float32)})[0].tolist() == [
        [0.0, 1.0]]


def test_without_the_extra_the_error_names_it():
    import subprocess
    import sys
    code = ("import sys; sys.modules['onnx'] = None\n"
            "import autograd, autograd.onnx\n"
            "try:\n    autograd.onnx.load('x.onnx')\n"
            "except ImportError as error:\n    print(error)\n")
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True).stdout
    assert 'pip install -e ".[onnx]"' in output


def test_export_and_load_leave_the_process_training_switch_alone():
    model = autograd.Sequential(autograd.Linear(3, 2), autograd.Dropout(0.5))
    x = np.ones((2, 3), np.float32)
    proto = autograd.onnx.export(model, [x])
    assert autograd.training is True and model.training is True
    net = autograd.onnx.load(proto)
    assert autograd.training is True and not net.training
    net.train()
    assert autograd.training is True and net.training
