"""SINGA-only spellings under the hook (autograd/singa/names.py and distributed.py): survivors
of the full mutation run killed here, each against a hand-written value, a NumPy formula or a
message word for word."""
import warnings

import numpy as np
import pytest

import autograd
import autograd.singa
from autograd import Tensor
from autograd.singa import distributed, names


def test_to_numpy_gives_a_scalar_as_shape_1_and_keeps_other_shapes(singa):
    from singa import tensor
    got = tensor.to_numpy(Tensor(data=np.float64(2.5)))
    assert got.shape == (1,) and got.dtype == np.float64 and got[0] == 2.5
    one = tensor.to_numpy(Tensor(data=np.array([7.0], np.float32)))
    assert one.shape == (1,)
    matrix = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(tensor.to_numpy(Tensor(data=matrix)), matrix)


def test_cuda_constructors_under_cpu_tell_once_word_for_word(capsys):
    autograd.singa.install(cpu=True)
    names.settings.told = False
    try:
        from singa import device
        assert device.create_cuda_gpu() is autograd.device.cpu()
        assert capsys.readouterr().err == ("autograd.singa: --cpu: create_cuda_gpu() gives the "
                                           "CPU\n")
        assert device.create_cuda_gpu_on(3) is autograd.device.cpu()
        assert capsys.readouterr().err == ""                         # told once per run
        assert names.settings.told is True
        assert device.create_cuda_gpus_on([0, 2, 5]) == [autograd.device.cpu()] * 3
        assert device.create_cuda_gpus(4) == [autograd.device.cpu()] * 4
    finally:
        autograd.singa.uninstall()
        names.settings.told = False


def test_cuda_constructors_name_their_autograd_function():
    create = names.DEVICE["create_cuda_gpu_on"]
    assert create.__name__ == "create_cuda_gpu_on"
    assert create.__doc__ == "autograd.device.create_cuda_gpu_on, or the CPU under ``--cpu``."
    assert names.DEVICE["create_cuda_gpu"].__name__ == "create_cuda_gpu"


def test_without_cpu_the_cuda_constructor_is_autograds(singa, monkeypatch):
    calls = []
    monkeypatch.setattr(autograd.device, "create_cuda_gpu_on",
                        lambda *a, **k: calls.append((a, k)) or "gpu")
    from singa import device
    assert device.create_cuda_gpu_on(1, flag=2) == "gpu" and calls == [((1,), {"flag": 2})]


def test_several_gpus_without_cpu_are_refused_word_for_word(singa):
    from singa import device
    with pytest.raises(NotImplementedError) as info:
        device.create_cuda_gpus(2)
    assert str(info.value) == ("singa.device.create_cuda_gpus: several GPUs in one process are "
                               "not supported; see docs/singa.md")


def test_losses_keep_their_names_docs_and_values(singa):
    from singa import autograd as singa_autograd
    loss = singa_autograd.mse_loss
    assert loss.__name__ == "mse_loss"
    assert loss.__doc__ == "autograd.mse_loss, its scalar as shape (1,) (SINGA's)."
    x = Tensor(data=np.array([[1.0, 3.0]], np.float64), stores_grad=True)
    t = Tensor(data=np.array([[0.0, 1.0]], np.float64))
    got = loss(x, t)
    assert got.shape == (1,)
    np.testing.assert_allclose(got.to_numpy(), [((1.0 - 0.0) ** 2 + (3.0 - 1.0) ** 2) / 2])
    by_name = loss(x, t=t)                              # keyword arguments reach the loss too
    np.testing.assert_allclose(by_name.to_numpy(), got.to_numpy())


def test_backward_keeps_the_graph_for_a_second_walk(singa):
    from singa import autograd as singa_autograd
    w = Tensor(data=np.array([1.0, -2.0]), stores_grad=True)
    y = autograd.sum(autograd.tanh(w) * w)
    first = {id(p): g.to_numpy() for p, g in singa_autograd.backward(y)}
    second = {id(p): g.to_numpy() for p, g in singa_autograd.backward(y)}    # SINGA's GAN walk
    v = np.array([1.0, -2.0])
    want = np.tanh(v) + v * (1 - np.tanh(v) ** 2)
    np.testing.assert_allclose(first[id(w)], want)
    np.testing.assert_allclose(second[id(w)], want)
    dy = Tensor(data=np.float64(3.0))
    (_, g), = singa_autograd.backward(y, dy)
    np.testing.assert_allclose(g.to_numpy(), 3 * want)


def test_softmax_of_a_row_and_into_out_is_not_recorded(singa):
    from singa import tensor
    row = Tensor(data=np.array([1.0, 2.0, 4.0]), stores_grad=True)
    got = tensor.softmax(row)
    e = np.exp([1.0, 2.0, 4.0])
    np.testing.assert_allclose(got.to_numpy(), e / e.sum())
    assert not got.requires_grad
    out = Tensor(shape=(3,), dtype=np.float64)
    assert tensor.softmax(row, out=out) is out
    np.testing.assert_allclose(out.to_numpy(), e / e.sum())


def test_from_numpy_copies_refuses_non_arrays_and_moves_to_a_device(singa):
    from singa import tensor
    array = np.array([1.0, 2.0])
    t = tensor.from_numpy(array)
    array[0] = 9.0
    assert t.to_numpy()[0] == 1.0
    assert tensor.from_numpy(np.array([1, 2], np.int32)).dtype == np.int32
    assert tensor.from_numpy(np.array([1.0], np.float32), autograd.device.cpu()).device is \
        autograd.device.cpu()
    with pytest.raises(TypeError) as info:
        tensor.from_numpy((1, 2))
    assert str(info.value) == ("singa.tensor.from_numpy: expected a NumPy array, got tuple "
                               "(SINGA asserts the same)")


def test_comparisons_keep_the_tensors_dtype_and_name_themselves(singa):
    from singa import tensor
    a = Tensor(data=np.array([0.0, 1.0, 2.0]))
    got = tensor.ge(a, Tensor(data=np.array([1.0, 1.0, 1.0])))
    assert got.dtype == np.float64 and got.device is a.device and got.requires_grad is False
    np.testing.assert_array_equal(got.to_numpy(), [0.0, 1.0, 1.0])
    np.testing.assert_array_equal(tensor.lt(a, 1).to_numpy(), [1.0, 0.0, 0.0])
    assert tensor.gt.__name__ == "gt"
    assert tensor.eq.__doc__ == ("SINGA's ``tensor.eq(t, x)``: 1.0 where the comparison holds, "
                                 "else 0.0, in t's dtype (not recorded).")


def test_placeholder_is_a_zero_input_of_its_shape_dtype_and_device(singa):
    from singa import tensor
    p = tensor.PlaceHolder([2, 3])
    assert p.shape == (2, 3) and p.dtype == np.float32 and p.requires_grad is False
    np.testing.assert_array_equal(p.to_numpy(), np.zeros((2, 3)))
    q = tensor.PlaceHolder((4,), device=autograd.device.cpu(), dtype=np.float64)
    assert q.dtype == np.float64 and q.device is autograd.device.cpu()


def test_to_host_is_a_copy_that_does_not_follow_the_source(singa):
    from singa import tensor
    source = Tensor(data=np.array([1.0, 2.0]))
    host = tensor.to_host(source)
    source.data[...] = 0.0
    np.testing.assert_array_equal(host.to_numpy(), [1.0, 2.0])


def _linear_net():
    """A SINGA Model of one Linear(2): forward is the layer, train_one_batch twice it (the
    hook must be installed: the ``singa`` fixture)."""
    from singa import layer, model

    class Net(model.Model):
        def __init__(self):
            super().__init__()
            self.fc = layer.Linear(2)

        def forward(self, x):
            return self.fc(x)

        def train_one_batch(self, x):
            return self.forward(x) * 2.0
    return Net()


def test_model_eval_calls_run_forward_eagerly_and_name_tensors(singa):
    net = _linear_net()
    x = Tensor(data=np.ones((1, 3), np.float32))
    net.eval()
    y = net(x)                                     # eval: forward, not train_one_batch
    want = x.to_numpy() @ net.fc.W.to_numpy() + net.fc.b.to_numpy()
    np.testing.assert_allclose(y.to_numpy(), want, rtol=1e-6)
    assert net.fc.W.name == "fc.W" and net._all_named is True
    net.fc.W.name = "mine"
    net.train()
    np.testing.assert_allclose(net(x).to_numpy(), 2 * want, rtol=1e-6)
    assert net.fc.W.name == "mine"                 # named once: later calls keep a user's name
    assert names.Model._graph_refusal == "eager"


def test_compile_names_the_tensors(singa):
    net = _linear_net()
    net.eval()
    net.compile([Tensor(shape=(1, 3))])          # SINGA's defaults: train, no graph, not sequential
    assert net.fc.W.name == "fc.W" and net.fc.b.name == "fc.b"
    assert net.training is True and net.graph_step is None and net.sequential is False


def test_model_calls_pass_keyword_arguments_in_eval_and_training(singa):
    from singa import model

    class Scaled(model.Model):
        def forward(self, x, scale=1.0):
            return x * scale

        def train_one_batch(self, x, scale=1.0):
            return self.forward(x, scale=scale) + 1.0

    net = Scaled()
    x = Tensor(data=np.array([2.0]))
    net.eval()
    np.testing.assert_array_equal(net(x, scale=3.0).to_numpy(), [6.0])
    net.train()
    np.testing.assert_array_equal(net(x, scale=3.0).to_numpy(), [7.0])


def test_create_cpu_device_and_the_extras_tables(singa):
    from singa import device, layer, opt, singa_wrap
    assert device.create_cpu_device() is autograd.device.cpu()
    assert opt.DistOpt is distributed.DistOpt and singa_wrap.NcclIdHolder is \
        distributed.NcclIdHolder
    assert layer.RNN is autograd.singa.layers.RNN and layer.Layer is \
        autograd.singa.layers.SingaLayer


def test_distopt_messages_word_for_word_and_default_bucket():
    message = ("launching the ranks by Python multiprocessing, joined by an NCCL id (SINGA's "
               "train_multiprocess.py), is not supported: it needs NCCL on GPUs. Start one process "
               "per rank instead: mpiexec -n N python -m autograd.singa train_mpi.py ... (DistOpt "
               "over MPI; on GPUs autograd.opt.NcclCommunicator). See docs/singa.md")
    with pytest.raises(NotImplementedError) as info:
        distributed.DistOpt(autograd.opt.SGD(lr=0.1), nccl_id=0)
    assert str(info.value) == "singa.opt.DistOpt(nccl_id=...): " + message
    with pytest.raises(NotImplementedError) as info:
        distributed.NcclIdHolder(1, key=2)
    assert str(info.value) == "singa.singa_wrap.NcclIdHolder: " + message
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        default = distributed.DistOpt(autograd.opt.SGD(lr=0.1))
        given = distributed.DistOpt(autograd.opt.SGD(lr=0.1), None, 0, 1, buffSize="10")
    assert default.bucket_bytes == 4194304 * 4 and given.bucket_bytes == 40


def test_placeholder_keeps_a_given_device(singa):
    """A second CPU Device object stands for another device (GPU-free): the result is on it."""
    from singa import tensor
    own = autograd.device.Device("cpu", 7, np)
    assert tensor.PlaceHolder((2,), device=own).device is own
