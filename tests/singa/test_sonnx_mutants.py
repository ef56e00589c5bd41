"""SINGA's sonnx under the hook (autograd/singa/sonnx.py): survivors of the full mutation run
killed here: prepare's device argument, SINGA's layers (Constant nodes left out, empty output
names dropped), last_layers and aux_output against a NumPy forward written in the test, the
messages word for word, load/save, SONNXModel, and to_onnx's arguments."""
import numpy as np
import pytest

import autograd
import autograd.singa
from autograd import Tensor
from autograd.singa import sonnx

onnx = pytest.importorskip("onnx", reason="the onnx extra is not installed")
from onnx import TensorProto, helper  # noqa: E402


def hand_graph():
    """x (2, 3) -> Add(x, Constant c) -> Relu -> Dropout (second output unnamed) -> Neg ->
    the output: SINGA's layers are Add, Relu, Dropout, Neg."""
    c = np.array([[1.0, -2.0, 0.5]], np.float32)
    nodes = [
        helper.make_node("Constant", [], ["c"], value=helper.make_tensor(
            "c", TensorProto.FLOAT, [1, 3], c.ravel().tolist())),
        helper.make_node("Add", ["x", "c"], ["sum"]),
        helper.make_node("Relu", ["sum"], ["relu"]),
        helper.make_node("Dropout", ["relu"], ["drop", ""]),
        helper.make_node("Neg", ["drop"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "hand", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    return proto, c


X = np.array([[0.5, 1.0, -1.0], [-3.0, 2.0, 0.25]], np.float32)


def test_layers_leave_out_constants_and_empty_output_names():
    proto, _ = hand_graph()
    rep = sonnx.prepare(proto)
    assert rep.layer_outputs == [["sum"], ["relu"], ["drop"], ["y"]]
    assert rep.output_names() == ["y"]
    assert rep.output_names(3) == ["y"]                       # count - 1: the graph's outputs
    assert rep.output_names(0) == ["sum"] and rep.output_names(2) == ["drop"]
    assert rep.output_names(-1) == ["sum"]                    # (k + 1) mod n: SINGA's formula
    assert rep.output_names(-2) == ["y"] and rep.output_names(-3) == ["drop"]
    assert rep.output_names(-4) == ["relu"]
    assert rep.output_names(1, aux_output=("sum", "relu", "y")) == ["relu", "sum", "y"]
    assert rep.output_names(aux_output=["y"]) == ["y"]


def test_last_layers_outside_the_graph_is_named_word_for_word():
    rep = sonnx.prepare(hand_graph()[0])
    for k in (4, 5, 7):
        with pytest.raises(ValueError) as info:
            rep.output_names(k)
        assert str(info.value) == f"sonnx: last_layers={k} is outside the graph's 4 nodes"


def test_run_gives_each_layers_values(singa):
    proto, c = hand_graph()
    rep = sonnx.prepare(proto, device="cpu")
    total = X + c
    relu = np.maximum(total, 0)
    got = rep.run([X])
    assert isinstance(got, list) and len(got) == 1
    np.testing.assert_allclose(got[0].to_numpy(), -relu)
    (first,) = rep.run([X], last_layers=0)
    np.testing.assert_allclose(first.to_numpy(), total)
    drop, extra = rep.run([Tensor(data=X)], last_layers=-3, aux_output=("sum",))
    np.testing.assert_allclose(drop.to_numpy(), relu)
    np.testing.assert_allclose(extra.to_numpy(), total)
    y, = rep(Tensor(data=X))                                  # forward(*x): the layer call
    np.testing.assert_allclose(y.to_numpy(), -relu)
    (r,) = rep.forward(Tensor(data=X), last_layers=1)
    np.testing.assert_allclose(r.to_numpy(), relu)


def test_prepare_reads_a_path_and_takes_devices(tmp_path, monkeypatch):
    proto, c = hand_graph()
    path = str(tmp_path / "hand.onnx")
    sonnx.save(proto, path)
    loaded = sonnx.load(path)
    assert loaded.graph.name == "hand" and len(loaded.graph.node) == 5
    for name, args, kwargs in (("a.bin", ("textproto",), {}),              # onnx.save's format,
                               ("b.bin", (), {"format": "textproto"})):    # by position or name
        sonnx.save(proto, str(tmp_path / name), *args, **kwargs)
        assert (tmp_path / name).read_bytes().lstrip().startswith(b"ir_version")
        assert sonnx.load(str(tmp_path / name), *args, **kwargs).graph.name == "hand"
    rep = sonnx.prepare(path, device=None, ignored=True)
    assert rep.layer_outputs == [["sum"], ["relu"], ["drop"], ["y"]]
    np.testing.assert_allclose(rep.run([X])[0].to_numpy(), -np.maximum(X + c, 0))
    assert rep.model.device is autograd.device.get_default_device()
    cpu = autograd.device.cpu()
    assert sonnx._device_for(cpu) is cpu
    assert sonnx._device_for("Cpu") is autograd.device.get_default_device()
    monkeypatch.setattr(autograd.device, "gpu", lambda: "the gpu")
    assert sonnx._device_for("cuda") == "the gpu" and sonnx._device_for("GPU") == "the gpu"
    with pytest.raises(ValueError) as info:
        sonnx._device_for("tpu")
    assert str(info.value) == "sonnx.prepare: device must be 'CPU', 'CUDA' or a Device, got 'tpu'"


def test_sonnx_model_forward_passes_aux_output_and_last_layers(singa):
    proto, c = hand_graph()

    class Net(sonnx.SONNXModel):
        pass

    net = Net(proto)
    assert isinstance(net.sg_ir, sonnx.SingaRep)
    net.eval()
    total = X + c
    y, extra = net.forward(Tensor(data=X), aux_output=("sum",))
    np.testing.assert_allclose(y.to_numpy(), -np.maximum(total, 0))
    np.testing.assert_allclose(extra.to_numpy(), total)
    (first,) = net.forward(Tensor(data=X), last_layers=0)
    np.testing.assert_allclose(first.to_numpy(), total)


def test_to_onnx_takes_one_tensor_skips_non_tensors_and_names_the_graph(singa):
    rng = np.random.default_rng(0)
    net = autograd.Linear(3, 2)
    x = Tensor(data=rng.standard_normal((2, 3)).astype(np.float32))
    net.eval()
    y = autograd.relu(net(x))
    proto = sonnx.to_onnx([x, "not a tensor", 3], y)
    assert proto.graph.name == "sonnx"
    assert [i.name for i in proto.graph.input] == ["input"]
    assert [d.dim_value for d in proto.graph.input[0].type.tensor_type.shape.dim] == [2, 3]
    new = rng.standard_normal((2, 3)).astype(np.float32)
    got, = sonnx.prepare(proto).run([new])
    want = np.maximum(new @ net.W.to_numpy() + net.b.to_numpy(), 0)
    np.testing.assert_allclose(got.to_numpy(), want, rtol=1e-5, atol=1e-6)
    named = sonnx.to_onnx((x,), (y, y * 2.0), model_name="mine")
    assert named.graph.name == "mine" and len(named.graph.output) == 2


def test_the_graphs_outputs_are_the_last_layers_and_a_device_object_is_used():
    """last_layers == count - 1 gives the graph's outputs (here two, where the last node makes
    one); a Device given to prepare (or SingaRep's default) is the one the graph runs on."""
    proto, c = hand_graph()
    proto.graph.output.append(helper.make_tensor_value_info("sum", TensorProto.FLOAT, [2, 3]))
    rep = sonnx.prepare(proto)
    assert rep.output_names(3) == ["y", "sum"] and rep.output_names() == ["y", "sum"]
    assert rep.output_names(-2) == ["y"]                 # index 3 by the formula: its node only
    y, total = rep.run([X], last_layers=3)
    np.testing.assert_allclose(total.to_numpy(), X + c)
    own = autograd.device.Device("cpu", 7, np)
    assert own is not autograd.device.get_default_device()
    assert sonnx.prepare(proto, device=own).model.device is own
    assert sonnx.SingaRep(proto).model.device is autograd.device.get_default_device()
