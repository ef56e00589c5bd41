"""Layers and optimizers on the GPU (issue 6, items 1 and 2): Layer.to_device moves parameters
and buffers in place, a CNN computes the same forward and gradients on both devices, optimizer
steps agree and keep their state on the parameter's device, checkpoints cross devices."""
import numpy as np
import pytest

import autograd
from autograd import Tensor, opt
from autograd.device import cpu
from tests.gpu import device_under_test, assert_on, TOLERANCES

pytestmark = pytest.mark.gpu


@pytest.fixture
def gpu():
    return device_under_test()


def small_cnn(dtype=np.float32):
    """conv-bn-relu-maxpool, conv(groups)-avgpool, flatten, linear-tanh-dropout-linear. The
    first conv has no bias: before BatchNorm its gradient is rounding noise, which Adam would
    normalise into full-size steps that differ between devices."""
    autograd.manual_seed(0)
    model = autograd.Sequential(
        autograd.Conv2d(2, 6, 3, padding=1, bias=False), autograd.BatchNorm2d(6), autograd.ReLU(),
        autograd.MaxPool2d(2), autograd.Conv2d(6, 4, 3, padding="same", groups=2),
        autograd.AvgPool2d(2), autograd.Flatten(), autograd.Linear(4 * 2 * 2, 8),
        autograd.Tanh(), autograd.Dropout(0.3), autograd.Linear(8, 3))
    for tensor in model.parameters() + model.buffers():
        tensor.data = tensor.data.astype(dtype)
    return model


def twins(gpu, dtype=np.float32):
    """The same model twice: one on the CPU, one moved to the GPU."""
    reference = small_cnn(dtype)
    tested = small_cnn(dtype).to_device(gpu)
    return reference, tested


def batch(dtype=np.float32, n=5, seed=1):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, 2, 8, 8)).astype(dtype), rng.integers(0, 3, n)


def assert_close(actual, expected, dtype, what):
    np.testing.assert_allclose(actual, expected, **TOLERANCES[np.dtype(dtype)], err_msg=what)


# ---------------------------------------------------------------- moving a model

def test_layer_to_device_moves_every_parameter_and_buffer_in_place(gpu):
    model = small_cnn()
    model.append(autograd.LayerNorm(3))
    before = model.state_dict()
    parameters, buffers = model.parameters(), model.buffers()
    assert model.to_device(gpu) is model
    assert [id(p) for p in model.parameters()] == [id(p) for p in parameters]   # same objects
    assert_on(gpu, *parameters, *buffers)
    assert all(p.stores_grad for p in parameters)
    for name, value in model.state_dict().items():
        np.testing.assert_array_equal(value, before[name], err_msg=name)
    model.to_device(cpu())
    assert_on(cpu(), *model.parameters(), *model.buffers())


def test_a_lazy_layer_builds_its_parameters_on_the_input_device(gpu):
    layer = autograd.Linear(4)
    conv = autograd.Conv2d(3, 2)                       # SINGA's lazy Conv2d(out, kernel)
    layer(Tensor(data=np.ones((2, 5), np.float32), device=gpu, requires_grad=False))
    conv(Tensor(data=np.ones((1, 2, 4, 4), np.float64), device=gpu, requires_grad=False))
    assert_on(gpu, *layer.parameters(), *conv.parameters())
    assert conv.W.dtype == np.float64


# ---------------------------------------------------------------- the same numbers

@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
def test_a_cnn_forward_and_backward_are_equal_on_both_devices(gpu, dtype, training):
    reference, tested = twins(gpu, dtype)
    x, labels = batch(dtype)
    results = []
    for model, device in ((reference, cpu()), (tested, gpu)):
        model.train(training)
        model[9].ratio = 0.0 if training else model[9].ratio   # no dropout draws to compare
        logits = model(Tensor(data=x, device=device, requires_grad=False))
        loss = autograd.softmax_cross_entropy(logits, labels)
        assert_on(device, logits, loss)
        grads = {p: g for p, g in autograd.backward(loss)} if training else {}
        named = dict(model.named_parameters())
        results.append((logits.to_numpy(), loss.item(),
                        {n: grads[p].to_numpy() for n, p in named.items() if p in grads},
                        {n: b.to_numpy() for n, b in model.named_buffers()}))
    (ref_logits, ref_loss, ref_grads, ref_buffers), (logits, loss, grads, buffers) = results
    assert_close(logits, ref_logits, dtype, "logits")
    assert_close(loss, ref_loss, dtype, "loss")
    assert sorted(grads) == sorted(ref_grads)
    assert len(grads) == (len(dict(reference.named_parameters())) if training else 0)
    for name in ref_grads:
        assert grads[name].dtype == dtype
        assert_close(grads[name], ref_grads[name], dtype, f"gradient of {name}")
    for name in ref_buffers:                           # running statistics moved alike
        assert_close(buffers[name], ref_buffers[name], dtype, name)


OPTIMIZERS = {
    "sgd_momentum": lambda: opt.SGD(lr=0.1, momentum=0.9),
    "sgd_nesterov_decay": lambda: opt.SGD(lr=0.05, momentum=0.8, nesterov=True,
                                          weight_decay=1e-3),
    "adam": lambda: opt.Adam(lr=0.01),
    "adamw": lambda: opt.AdamW(lr=0.01, weight_decay=0.1),
    "rmsprop": lambda: opt.RMSProp(lr=0.01),
    "adagrad": lambda: opt.AdaGrad(lr=0.05),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_steps_are_equal_on_both_devices_with_state_on_the_gpu(gpu, name):
    dtype = np.float64                  # steps compound: compare them where rounding is tiny
    reference, tested = twins(gpu, dtype)
    optimizers = [OPTIMIZERS[name](), OPTIMIZERS[name]()]
    for step in range(3):
        x, labels = batch(dtype, seed=10 + step)
        for model, optimizer, device in ((reference, optimizers[0], cpu()),
                                         (tested, optimizers[1], gpu)):
            model[9].ratio = 0.0
            logits = model(Tensor(data=x, device=device, requires_grad=False))
            optimizer(autograd.softmax_cross_entropy(logits, labels))
    for (n, p), (_, q) in zip(reference.named_parameters(), tested.named_parameters()):
        assert_on(gpu, q)
        np.testing.assert_allclose(q.to_numpy(), p.to_numpy(), rtol=1e-9, atol=1e-11, err_msg=n)
    gpu_states = optimizers[1].states
    assert len(gpu_states) == len(tested.parameters())
    for param, state in gpu_states.items():
        arrays = [v for v in state.values() if hasattr(v, "shape")]
        assert arrays, f"{name} kept no state arrays"
        for array in arrays:
            assert_on(gpu, array)
            assert array.dtype == param.dtype and array.shape == param.shape
    saved = optimizers[1].state_dict()                 # host copies, loadable on the CPU
    for entry in saved["parameters"]:
        assert all(isinstance(v, np.ndarray) for v in entry["state"].values()
                   if hasattr(v, "shape"))


def test_sgd_momentum_update_matches_the_formula_on_the_gpu(gpu):
    w0 = np.array([1.0, -2.0, 0.5], np.float32)
    w = Tensor(data=w0, device=gpu, stores_grad=True)
    sgd = opt.SGD(lr=0.1, momentum=0.9)
    g1, g2 = np.array([0.5, 1.0, -1.0], np.float32), np.array([1.0, 0.0, 2.0], np.float32)
    sgd.update(w, Tensor(data=g1, device=gpu))
    sgd.update(w, Tensor(data=g2, device=gpu))
    buffer = 0.9 * g1 + g2                              # buf = g1, then 0.9 buf + g2
    np.testing.assert_allclose(w.to_numpy(), w0 - 0.1 * g1 - 0.1 * buffer, rtol=1e-6)
    assert_on(gpu, w, sgd.states[w]["momentum_buffer"])


def test_clip_grad_norm_computes_on_the_gpu(gpu):
    rng = np.random.default_rng(2)
    grads = [rng.standard_normal((3, 4)).astype(np.float32) for _ in range(2)]
    pairs = [(None, Tensor(data=g, device=gpu)) for g in grads]
    clipped, norm = opt.clip_grad_norm(pairs, max_norm=1.0)
    assert_on(gpu, norm, *[g for _, g in clipped])
    expected_norm = np.sqrt(sum((g.astype(np.float64) ** 2).sum() for g in grads))
    np.testing.assert_allclose(norm.item(), expected_norm, rtol=1e-5)
    for (_, g), original in zip(clipped, grads):
        np.testing.assert_allclose(g.to_numpy(), original / (expected_norm + 1e-6), rtol=1e-5)


def test_a_checkpoint_written_from_the_gpu_loads_on_the_cpu(gpu, tmp_path):
    reference, tested = twins(gpu)
    sgd = opt.SGD(lr=0.1, momentum=0.9)
    x, labels = batch()
    sgd(autograd.softmax_cross_entropy(tested(Tensor(data=x, device=gpu)), labels))
    path = tmp_path / "gpu.ckpt"
    autograd.io.save(path, model=tested, optimizer=sgd, step=1)
    restored_opt = opt.SGD(lr=0.1, momentum=0.9)
    assert autograd.io.load(path, model=reference, optimizer=restored_opt)["step"] == 1
    for name, value in tested.state_dict().items():
        np.testing.assert_array_equal(reference.state_dict()[name], value, err_msg=name)
    tested.to_device(cpu())                            # and back: the GPU state, moved
    for name, value in reference.state_dict().items():
        np.testing.assert_array_equal(tested.state_dict()[name], value, err_msg=name)


# ---------------------------------------------------------------- layers with ids and modes

def test_embedding_layer_with_gpu_ids(gpu):
    layer = autograd.Embedding(5, 3).to_device(gpu)
    ids = Tensor(data=np.array([[0, 4], [4, 2]]), device=gpu)
    out = layer(ids)
    assert_on(gpu, out)
    np.testing.assert_array_equal(out.to_numpy(), layer.W.to_numpy()[[[0, 4], [4, 2]]])
    grad = autograd.gradients(autograd.sum(out))[layer.W].to_numpy()
    np.testing.assert_array_equal(grad[:, 0], [1, 0, 1, 0, 2])       # repeated id: twice


def test_embedding_layer_with_raw_cupy_ids_and_host_lists(gpu):
    layer = autograd.Embedding(5, 3).to_device(gpu)
    table = layer.W.to_numpy()
    for ids in (gpu.xp.asarray(np.array([1, 1, 3])), [1, 1, 3]):
        out = layer(ids)
        assert_on(gpu, out)
        np.testing.assert_array_equal(out.to_numpy(), table[[1, 1, 3]])


def test_dropout_layer_trains_and_evaluates_on_the_gpu(gpu):
    layer = autograd.Dropout(0.5)
    x = Tensor(data=np.ones((40, 40), np.float32), device=gpu)
    dropped = layer(x).to_numpy()
    assert set(np.unique(dropped)) == {0.0, 2.0}
    layer.eval()
    assert layer(x) is x
