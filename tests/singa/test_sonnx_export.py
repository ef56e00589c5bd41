"""SINGA's ``sonnx.to_onnx(inputs, [y])`` after a forward has run (autograd/singa/sonnx.py over
autograd/singa/provenance.py), as SINGA's test/python/test_onnx.py calls it: the exported graph,
run by onnxruntime and by sonnx.prepare, gives the forward's outputs, on the forward's inputs
and on new ones (an exported graph that kept an intermediate result as a constant would pass
the first check only)."""
import numpy as np
import pytest

import autograd
import autograd.singa
from autograd import Tensor

onnx = pytest.importorskip("onnx", reason="the onnx extra is not installed")


def onnxruntime_outputs(proto, arrays):
    ort = pytest.importorskip("onnxruntime", reason="onnxruntime is not installed")
    session = ort.InferenceSession(proto.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    return session.run(None, dict(zip(names, arrays)))


def check_export(sonnx, forward, inputs, atol=1e-5, seed=0):
    """Export ``forward(*inputs)`` (Tensors) with SINGA's call, then compare the graph with
    the forward on those inputs and on new values of them."""
    y = forward(*inputs)
    proto = sonnx.to_onnx(list(inputs), [y])
    got, = onnxruntime_outputs(proto, [t.to_numpy() for t in inputs])
    np.testing.assert_allclose(got, y.to_numpy(), rtol=1e-5, atol=atol)
    by_prepare, = sonnx.prepare(proto).run(list(inputs))      # SINGA's test runs it back
    np.testing.assert_allclose(by_prepare.to_numpy(), y.to_numpy(), rtol=1e-5, atol=atol)
    rng = np.random.default_rng(seed)
    new = [Tensor(data=rng.standard_normal(t.shape).astype(t.dtype)) for t in inputs]
    got, = onnxruntime_outputs(proto, [t.to_numpy() for t in new])
    np.testing.assert_allclose(got, forward(*new).to_numpy(), rtol=1e-5, atol=atol)
    return proto


@pytest.mark.parametrize("training", [True, False])
def test_layers_forward_exports(singa, training):
    from singa import layer, sonnx, tensor
    autograd.training = training          # SINGA records only in training; ours either way
    x = tensor.Tensor(shape=(2, 3, 6, 6))
    x.gaussian(0.0, 1.0)
    conv, pool = layer.Conv2d(4, 3, padding=1, activation="RELU"), layer.MaxPool2d(2, 2)
    flat, dense = layer.Flatten(), layer.Linear(5)

    def forward(x):
        y = dense(flat(pool(conv(x))))
        return autograd.softmax(autograd.tanh(y) * 2.0)

    proto = check_export(sonnx, forward, [x])
    assert [i.name for i in proto.graph.input] == ["input"]
    assert {"Conv", "MaxPool", "Softmax", "Tanh"} <= {n.op_type for n in proto.graph.node}


def test_two_inputs_a_constant_and_a_shared_weight(singa):
    from singa import layer, sonnx, tensor
    rng = np.random.default_rng(1)
    x1, x2 = (tensor.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))
              for _ in range(2))
    dense = layer.Linear(4)
    offset = Tensor(data=rng.standard_normal((1, 4)).astype(np.float32))   # no op made it

    def forward(x1, x2):
        # the same weights twice, a constant, and an op whose inputs none recorded
        return autograd.relu(dense(x1) + dense(x2)) - offset * x1

    check_export(sonnx, forward, [x1, x2])
    # SINGA's inputs may hold other things (test_onnx.py passes a shape): only Tensors count
    proto = sonnx.to_onnx([x1, x2, (3, 4)], [forward(x1, x2)])
    assert len(proto.graph.input) == 2


def test_exports_from_an_intermediate_input(singa):
    from singa import sonnx, tensor
    x = tensor.from_numpy(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3))
    h = autograd.sigmoid(x)
    proto = check_export(sonnx, lambda h: autograd.relu(h * 3.0 - 1.0), [h])
    assert "Sigmoid" not in {n.op_type for n in proto.graph.node}


def test_trained_model_forward_exports(singa):
    """SINGA's docs: train a Model, run its forward, export it with to_onnx."""
    from singa import layer, model, opt, sonnx, tensor

    class Net(model.Model):
        def __init__(self):
            super().__init__()
            self.conv = layer.Conv2d(3, 3, padding=1)
            self.bn = layer.BatchNorm2d(3)
            self.flat = layer.Flatten()
            self.fc = layer.Linear(2)

        def forward(self, x):
            return self.fc(self.flat(autograd.relu(self.bn(self.conv(x)))))

        def train_one_batch(self, x, t):
            out = self.forward(x)
            loss = autograd.softmax_cross_entropy(out, t)
            self.optimizer(loss)
            return out, loss

    rng = np.random.default_rng(2)
    tx = tensor.Tensor((4, 1, 5, 5))
    ty = tensor.Tensor((4,), dtype=tensor.int32)
    net = Net()
    net.set_optimizer(opt.SGD(lr=0.1))
    net.compile([tx], is_train=True, use_graph=True, sequential=False)
    net.train()
    for _ in range(3):              # two captured calls, then a replay
        tx.copy_from_numpy(rng.standard_normal((4, 1, 5, 5)).astype(np.float32))
        ty.copy_from_numpy(np.array([0, 1, 0, 1], np.int32))
        out, loss = net(tx, ty)
        # a graph-mode training call runs on the capture's copies, or is replayed (SINGA
        # drops the creators of its buffered step too): refused, not a graph that ignores
        # its input
        with pytest.raises(ValueError, match="outside a graph-mode training step"):
            sonnx.to_onnx([tx], [out])
    net.eval()                  # BatchNorm's running statistics: what ONNX's node uses
    check_export(sonnx, net, [tx], atol=1e-4)


def test_output_made_without_the_hook_is_a_clear_error(singa):
    from singa import sonnx
    autograd.singa.uninstall()
    x = Tensor(data=np.ones((1, 2), np.float32))
    y = autograd.relu(x)
    autograd.singa.install()
    with pytest.raises(ValueError, match="output 0 was not made by an operation"):
        sonnx.to_onnx([x], [y])
