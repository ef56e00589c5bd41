"""What SINGA's names mean under the hook where autograd's own differ: layer.RNN/LSTM's
calling convention (autograd/singa/layers.py), losses of shape (1,), tensor.softmax, DistOpt's
constructor (autograd/singa/distributed.py) and sonnx (autograd/singa/sonnx.py)."""
import warnings

import numpy as np
import pytest

import autograd
import autograd.singa
from autograd import Tensor


def sigmoid(v):
    return 1 / (1 + np.exp(-v))


def numpy_lstm(lstm, xs, h, c):
    """PyTorch's LSTM equations (gates i, f, g, o) in NumPy over the layer's fused weights."""
    W, U = lstm.W_ih.to_numpy(), lstm.W_hh.to_numpy()
    b = lstm.b_ih.to_numpy() + lstm.b_hh.to_numpy()
    hs = []
    for x in xs:
        i, f, g, o = np.split(x @ W + h @ U + b, 4, axis=1)
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
        h = sigmoid(o) * np.tanh(c)
        hs.append(h)
    return hs, h, c


def test_lstm_returns_singas_list_h_c(singa):
    from singa import layer
    rng = np.random.default_rng(0)
    lstm = layer.LSTM(3, 5)
    lstm.b_ih.data[...] = rng.standard_normal(20)
    xs = [rng.standard_normal((2, 3)).astype(np.float32) for _ in range(4)]
    h0, c0 = (rng.standard_normal((2, 5)).astype(np.float32) for _ in range(2))
    out, h, c = lstm([Tensor(data=x) for x in xs], (Tensor(data=h0), Tensor(data=c0)))
    hs, h_ref, c_ref = numpy_lstm(lstm, xs, h0, c0)
    assert isinstance(out, list) and len(out) == 4
    for got, want in zip(out, hs):
        np.testing.assert_allclose(got.to_numpy(), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h.to_numpy(), h_ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(c.to_numpy(), c_ref, rtol=1e-5, atol=1e-6)
    # a batch-1 step against a batch-2 state broadcasts, as SINGA's sums do
    out, h, c = lstm([Tensor(data=xs[0][:1])], (Tensor(data=h0), Tensor(data=c0)))
    hs, _, _ = numpy_lstm(lstm, [xs[0][:1]], h0, c0)
    np.testing.assert_allclose(out[0].to_numpy(), hs[0], rtol=1e-5, atol=1e-6)


def test_lstm_gradients_reach_every_weight(singa):
    from singa import layer
    lstm = layer.LSTM(2, 3)
    xs = [Tensor(data=np.full((1, 2), 0.5, np.float32)) for _ in range(3)]
    out, h, c = lstm(xs, (Tensor(shape=(1, 3)), Tensor(shape=(1, 3))))
    grads = dict(autograd.backward(autograd.sum(autograd.cat(out, axis=0))))
    assert set(grads) == {lstm.W_ih, lstm.W_hh, lstm.b_ih, lstm.b_hh}


def test_rnn_returns_singas_list_h(singa):
    from singa import layer
    rnn = layer.RNN(2, 3)
    xs = [np.full((1, 2), v, np.float32) for v in (0.1, -0.4)]
    out, h = rnn([Tensor(data=x) for x in xs], Tensor(shape=(1, 3)))
    W, U, b = (rnn.W_ih.to_numpy(), rnn.W_hh.to_numpy(),
               rnn.b_ih.to_numpy() + rnn.b_hh.to_numpy())
    state = np.zeros((1, 3), np.float32)
    for got, x in zip(out, xs):
        state = np.tanh(x @ W + state @ U + b)
        np.testing.assert_allclose(got.to_numpy(), state, rtol=1e-5, atol=1e-6)
    assert h is out[-1]


def test_recurrent_arguments_that_would_mean_nothing_are_refused(singa):
    from singa import layer
    with pytest.raises(NotImplementedError, match=r"num_layers=2 is not supported"):
        layer.LSTM(2, 3, num_layers=2)
    with pytest.raises(NotImplementedError, match=r"bidirectional=True"):
        layer.RNN(2, 3, bidirectional=True)
    with pytest.raises(ValueError, match=r"expected \(h0, c0\) of shape \(2, 3\)"):
        layer.LSTM(2, 3)([Tensor(shape=(2, 2))], (Tensor(shape=(2, 4)), Tensor(shape=(2, 4))))
    # autograd's own LSTM keeps its convention
    assert len(autograd.LSTM(2, 3)(Tensor(shape=(4, 1, 2)))) == 2


def test_losses_have_shape_1_and_the_same_gradient(singa):
    from singa import autograd as singa_autograd
    x = Tensor(data=np.array([[1.0, -1.0, 0.5]], np.float32), stores_grad=True)
    t = np.array([2])
    loss = singa_autograd.softmax_cross_entropy(x, t)
    assert loss.shape == (1,)
    p = np.exp([1.0, -1.0, 0.5]) / np.exp([1.0, -1.0, 0.5]).sum()
    np.testing.assert_allclose(loss[0].item(), -np.log(p[2]), rtol=1e-6)
    (param, grad), = autograd.backward(loss)
    np.testing.assert_allclose(grad.to_numpy(), [p - np.eye(3)[2]], rtol=1e-5, atol=1e-6)
    assert autograd.softmax_cross_entropy(x, t).shape == ()     # plain autograd: a scalar


def test_tensor_softmax_and_truth(singa):
    from singa import tensor
    rows = np.array([[0.0, 1.0], [2.0, 2.0]], np.float32)
    want = np.exp(rows) / np.exp(rows).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(tensor.softmax(Tensor(data=rows)).to_numpy(), want, rtol=1e-6)
    out = Tensor(shape=(2, 2))
    assert tensor.softmax(Tensor(data=rows), out) is out
    np.testing.assert_allclose(out.to_numpy(), want, rtol=1e-6)
    assert tensor.PlaceHolder((2, 3)).shape == (2, 3)
    source = Tensor(data=rows)
    host = tensor.to_host(source)
    assert host is not source and host.device.kind == "cpu"
    np.testing.assert_array_equal(host.to_numpy(), rows)
    copied = tensor.to_numpy(source)              # a copy, as SINGA's
    source.data[...] = 0
    np.testing.assert_array_equal(copied, rows)
    assert bool(Tensor(shape=(3,)))            # SINGA: `if labels:` means "is not None"
    assert not bool(Tensor(data=[0.0]))
    autograd.singa.uninstall()
    with pytest.raises(ValueError, match="ambiguous"):
        bool(Tensor(shape=(3,)))


def test_distopt_takes_singas_constructor(singa):
    from singa import opt, singa_wrap
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # outside mpiexec: a world of one
        sgd = opt.DistOpt(opt.SGD(lr=0.5), buffSize=16)
    assert isinstance(sgd, autograd.opt.DistOpt) and sgd.bucket_bytes == 64
    assert (sgd.global_rank, sgd.world_size, sgd.local_rank) == (0, 1, 0)
    w = Tensor(data=[1.0, -2.0], stores_grad=True)
    sgd(autograd.sum(w * w))
    np.testing.assert_allclose(w.to_numpy(), [0.0, 0.0])   # w - 0.5 * 2w
    with pytest.raises(NotImplementedError, match=r"mpiexec -n N python -m autograd\.singa"):
        opt.DistOpt(opt.SGD(), nccl_id=object(), local_rank=0, world_size=2)
    with pytest.raises(NotImplementedError, match=r"NcclIdHolder: launching the ranks by Python "
                                                  r"multiprocessing"):
        singa_wrap.NcclIdHolder()


def test_sonnx_prepare_and_last_layers(singa, tmp_path):
    pytest.importorskip("onnx", reason="the onnx extra is not installed")
    from autograd.onnx import export as onnx_export
    ort = pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")
    from singa import sonnx
    autograd.manual_seed(0)
    net = autograd.Sequential(autograd.Linear(3, 4), autograd.ReLU(), autograd.Linear(4, 2))
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    path = str(tmp_path / "net.onnx")
    onnx_export(net, [x], path)
    proto = sonnx.load(path)
    nodes = [n for n in proto.graph.node if n.op_type != "Constant"]
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    (want,) = session.run(None, {"input": x})
    rep = sonnx.prepare(proto)
    (y,) = rep.run([x])
    np.testing.assert_allclose(y.to_numpy(), want, rtol=1e-5, atol=1e-6)
    # last_layers=k: the outputs of SINGA's k-th layer (negative: (k + 1) mod n)
    relu = [n.op_type for n in nodes].index("Relu")
    hidden = np.maximum(x @ net[0].W.to_numpy() + net[0].b.to_numpy(), 0)
    for k in (relu, relu - 1 - len(nodes)):
        (got,) = rep.run([x], last_layers=k)
        np.testing.assert_allclose(got.to_numpy(), hidden, rtol=1e-5, atol=1e-6)
    got = rep.run([x], aux_output=(nodes[relu].output[0],))
    assert len(got) == 2
    np.testing.assert_allclose(got[1].to_numpy(), hidden, rtol=1e-5, atol=1e-6)

    class Head(sonnx.SONNXModel):
        def forward(self, *inputs):
            return super().forward(*inputs, last_layers=relu)[0]

    model = Head(proto)
    assert len(list(model.named_parameters())) == 4       # the graph's weights train
    np.testing.assert_allclose(model.forward(Tensor(data=x)).to_numpy(), hidden, rtol=1e-5,
                               atol=1e-6)
    # the cut graph's forward, exported back with SINGA's call (tests/singa/test_sonnx_export)
    inputs = Tensor(data=x)
    exported = sonnx.to_onnx([inputs], [model.forward(inputs)])
    np.testing.assert_allclose(sonnx.prepare(exported).run([x])[0].to_numpy(), hidden,
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", ["lstm", "gru"])
@pytest.mark.parametrize("return_sequences", [True, False])
def test_cudnn_rnn_matches_torch(singa, mode, return_sequences):
    torch = pytest.importorskip("torch", reason="torch is not installed")
    from singa import layer
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 4, 2)).astype(np.float32)          # (batch, seq, input)
    net = layer.CudnnRNN(5, num_layers=2, bidirectional=True, rnn_mode=mode,
                         return_sequences=return_sequences)
    y = net(Tensor(data=x))
    reference = (torch.nn.LSTM if mode == "lstm" else torch.nn.GRU)(
        2, 5, num_layers=2, bidirectional=True, batch_first=True)
    with torch.no_grad():
        for index in range(4):
            rnn = getattr(net, f"rnn_{index}")
            rnn.b_ih.data[...] = rng.standard_normal(rnn.b_ih.shape)
            suffix = f"l{index // 2}" + ("_reverse" if index % 2 else "")
            getattr(reference, f"weight_ih_{suffix}").copy_(torch.from_numpy(rnn.W_ih.data.T))
            getattr(reference, f"weight_hh_{suffix}").copy_(torch.from_numpy(rnn.W_hh.data.T))
            getattr(reference, f"bias_ih_{suffix}").copy_(torch.from_numpy(rnn.b_ih.data))
            getattr(reference, f"bias_hh_{suffix}").copy_(torch.from_numpy(rnn.b_hh.data))
        want = reference(torch.from_numpy(x))[0].numpy()
    y = net(Tensor(data=x))
    if not return_sequences:
        want = want[:, -1]                  # cuDNN's last step of y, both directions
    assert y.shape == want.shape
    np.testing.assert_allclose(y.to_numpy(), want, rtol=1e-4, atol=1e-5)


def test_cudnn_rnn_takes_initial_states_and_trains(singa):
    from singa import layer
    net = layer.CudnnRNN(3, rnn_mode="tanh", batch_first=False, return_sequences=False)
    x = Tensor(data=np.ones((4, 2, 5), np.float32))                  # (seq, batch, input)
    hx = Tensor(data=np.full((1, 2, 3), 0.5, np.float32))
    y = net(x, hx)
    rnn = net.rnn_0
    h = np.full((2, 3), 0.5, np.float32)
    b = rnn.b_ih.to_numpy() + rnn.b_hh.to_numpy()
    for _ in range(4):
        h = np.tanh(np.ones((2, 5)) @ rnn.W_ih.to_numpy() + h @ rnn.W_hh.to_numpy() + b)
    np.testing.assert_allclose(y.to_numpy(), h, rtol=1e-5, atol=1e-6)
    assert {p for p, _ in autograd.backward(autograd.sum(y))} == {
        rnn.W_ih, rnn.W_hh, rnn.b_ih, rnn.b_hh}
