"""Tensors on gpu:1 (issue 23): the device of an op's inputs is made current for its forward,
its backward and the optimizer's update, so every output, gradient, running statistic and
optimizer state stays on gpu:1 and equals the CPU's; mixing gpu:0 and gpu:1 tensors is a
TypeError naming both devices, never a silent copy.

Every test starts with gpu:0 current, as in a user's process, and checks that it is current
again afterwards: an op must make its inputs' device current for as long as it runs, and no
longer. These tests need two GPUs and skip, saying so, on fewer.
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import autograd
from autograd import Tensor, opt
from autograd.device import cpu, gpu
from tests.gpu import BOTH_DTYPES, TOLERANCES, assert_on, compare_devices
from tests.gpu.test_ops_gpu import _table_cases
from tests.opcase import Integers, draw_arrays
from tests.operations.test_einsum import CASES as EINSUM_CASES

pytestmark = pytest.mark.gpu

# hypothesis draws inside one test call; the current-device fixture runs once around them
FEW = settings(max_examples=2, deadline=None,
               suppress_health_check=[HealthCheck.function_scoped_fixture,
                                      HealthCheck.too_slow])


def _current_gpu():
    import cupy
    return cupy.cuda.runtime.getDevice()


@pytest.fixture(scope="module")
def gpu1():
    import cupy
    count = cupy.cuda.runtime.getDeviceCount()
    if count < 2:
        pytest.skip(f"gpu:1 tests need two GPUs; this machine has {count}")
    return gpu(1)


@pytest.fixture(autouse=True)
def gpu0_is_current(gpu1):
    import cupy
    cupy.cuda.Device(0).use()
    yield
    assert _current_gpu() == 0, f"gpu:{_current_gpu()} was left current after the test"


def _on_gpu1(fn, arrays, gpu1, **kwargs):
    """``fn`` on gpu:1 against the CPU (values, gradients, dtypes; every output and gradient
    asserted on gpu:1 by run_on), then gpu:0 must still be current."""
    compare_devices(fn, arrays, device=gpu1, **kwargs)
    assert _current_gpu() == 0, f"{kwargs.get('what', 'op')} left gpu:{_current_gpu()} current"


# ---------------------------------------------------------------- every op family

@pytest.mark.parametrize("case", _table_cases(), ids=str)
@FEW
@given(data=st.data())
def test_table_case_on_gpu1_stays_on_gpu1_and_equals_cpu(case, data, gpu1):
    arrays = draw_arrays(case, data)
    wants_grad = [not isinstance(spec, Integers) and spec.requires_grad for spec in case.inputs]
    seed = data.draw(st.integers(0, 2 ** 32 - 1), label="dy seed")
    fn = (lambda *ts: case.fn(*ts, **case.kwargs)) if case.grad else \
        (lambda *ts: case.fn(*ts, **case.kwargs).detach())
    _on_gpu1(fn, arrays, gpu1, wants_grad=wants_grad, seed=seed, what=str(case))


@pytest.mark.parametrize("spec, shapes", EINSUM_CASES[:4], ids=[c[0] for c in EINSUM_CASES[:4]])
def test_einsum_on_gpu1(spec, shapes, gpu1):
    rng = np.random.default_rng(len(spec))
    _on_gpu1(lambda *xs: autograd.einsum(spec, *xs), [rng.uniform(-1, 1, s) for s in shapes],
             gpu1, what=f"einsum {spec}")


def test_convolution_and_pooling_on_gpu1(gpu1):
    rng = np.random.default_rng(1)
    x, W, b = rng.uniform(-1, 1, (2, 4, 7, 6)), rng.uniform(-1, 1, (6, 2, 3, 3)), rng.uniform(
        -1, 1, 6)
    _on_gpu1(lambda x, W, b: autograd.conv2d(x, W, b, stride=2, padding=1, groups=2),
             [x, W, b], gpu1, what="conv2d")
    _on_gpu1(lambda x, W: autograd.conv2d(x, W, padding="same", groups=2),
             [x, W], gpu1, wants_grad=[False, True], what="conv2d, no input gradient")
    _on_gpu1(lambda x, W: autograd.conv1d(x, W, padding=1),
             [rng.uniform(-1, 1, (2, 3, 9)), rng.uniform(-1, 1, (4, 3, 3))], gpu1, what="conv1d")
    distinct = rng.permutation(2 * 3 * 6 * 6).reshape(2, 3, 6, 6) / 10.0
    _on_gpu1(lambda x: autograd.max_pool2d(x, 2, 2), [distinct], gpu1, what="max_pool2d")
    _on_gpu1(lambda x: autograd.avg_pool2d(x, 3, 1, 1), [distinct], gpu1, what="avg_pool2d")
    _on_gpu1(autograd.global_avg_pool2d, [distinct], gpu1, what="global_avg_pool2d")
    _on_gpu1(lambda x: autograd.max_pool1d(x, 2), [distinct[:, :, 0]], gpu1, what="max_pool1d")


@pytest.mark.parametrize("dtype", BOTH_DTYPES, ids=lambda d: np.dtype(d).name)
def test_batch_norm_and_its_running_statistics_stay_on_gpu1(dtype, gpu1):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 3, 5, 5)).astype(dtype)
    scale, bias = rng.uniform(0.5, 1.5, 3).astype(dtype), rng.uniform(-1, 1, 3).astype(dtype)
    results = {}
    for device in (cpu(), gpu1):
        inputs = [Tensor(data=a, device=device, stores_grad=True) for a in (x, scale, bias)]
        mean = Tensor(data=np.zeros(3, dtype), device=device, requires_grad=False)
        var = Tensor(data=np.ones(3, dtype), device=device, requires_grad=False)
        y = autograd.batch_norm(*inputs, mean, var, training=True)
        grads = autograd.gradients(autograd.sum(y * y))
        if device is gpu1:
            assert_on(gpu1, y, mean, var, *[grads[t] for t in inputs])
        results[device] = [y.to_numpy(), mean.to_numpy(), var.to_numpy()] + [
            grads[t].to_numpy() for t in inputs]
    for c, g in zip(results[cpu()], results[gpu1]):
        np.testing.assert_allclose(g, c, **TOLERANCES[np.dtype(dtype)])
    assert _current_gpu() == 0


def test_normalization_dropout_and_random_fills_on_gpu1(gpu1):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 4, 5))
    _on_gpu1(lambda x: autograd.layer_norm(x, (4, 5)), [x], gpu1, what="layer_norm")
    t = Tensor(data=x, device=gpu1, stores_grad=True)
    y = autograd.dropout(t, 0.5, training=True)
    grad = autograd.gradients(autograd.sum(y))[t]
    assert_on(gpu1, y, grad)
    kept = y.to_numpy() != 0
    np.testing.assert_allclose(y.to_numpy()[kept], 2 * x[kept], rtol=1e-6)
    np.testing.assert_array_equal(grad.to_numpy(), 2.0 * kept)
    filled = [Tensor(shape=(50,), device=gpu1).gaussian(0.0, 1.0),
              Tensor(shape=(50,), device=gpu1).uniform(-1.0, 1.0),
              Tensor(shape=(50,), device=gpu1).bernoulli(0.5)]
    assert_on(gpu1, *filled)
    assert len(np.unique(filled[0].to_numpy())) > 40            # really drawn
    w = Tensor(data=[1.0, 2.0], device=gpu1, stores_grad=True)
    w += 1.0
    w *= Tensor(data=[2.0, 3.0], device=gpu1)
    w -= Tensor(data=[1.0, 1.0], device=gpu1).data             # a raw gpu:1 array
    w.copy_data(Tensor(data=w.to_numpy() * 2, device=gpu1))
    assert_on(gpu1, w)
    np.testing.assert_array_equal(w.to_numpy(), [6.0, 16.0])
    assert _current_gpu() == 0


def test_lookups_indexing_and_losses_on_gpu1(gpu1):
    rng = np.random.default_rng(4)
    table = rng.uniform(-1, 1, (5, 3))
    _on_gpu1(autograd.embedding, [np.array([[1, 4, 1], [0, 4, 4]]), table], gpu1,
             what="embedding (ids on gpu:1)")
    _on_gpu1(lambda W: autograd.embedding(np.array([0, 3, 3]), W), [table], gpu1,
             what="embedding (host ids)")
    logits, labels = rng.normal(0, 3, (6, 4)), np.array([0, 3, 3, 1, 2, 0])
    _on_gpu1(autograd.softmax_cross_entropy, [logits, labels], gpu1, what="labels on gpu:1")
    _on_gpu1(lambda x: autograd.softmax_cross_entropy(x, labels), [logits], gpu1,
             what="host labels")
    x = rng.uniform(-1, 1, (3, 5, 2))
    _on_gpu1(lambda x, i: autograd.gather(x, 1, i), [x, np.array([[4, -1], [0, 4]])], gpu1,
             what="gather")
    _on_gpu1(lambda x: autograd.cat(autograd.split(x, 1, [1, 3, 1])[::-1], axis=1), [x], gpu1,
             what="split and cat")
    _on_gpu1(lambda x, y: autograd.where(condition=x.data > 0, x=x, y=y),
             [x, rng.uniform(-1, 1, (5, 1))], gpu1, what="where")
    indices = np.array([[2, 0], [0, 3], [1, 1]])[None]                  # (1, 3, 2), distinct
    _on_gpu1(lambda x, i, u: autograd.scatter_elements(x, i, u, axis=1),
             [x, indices, rng.uniform(-1, 1, (1, 3, 2))], gpu1,
             what="scatter_elements")
    _on_gpu1(lambda x: x[1:, ::2], [x], gpu1, what="getitem")
    _on_gpu1(lambda x: autograd.pad(x, "reflect", [0, 1, 1, 0, 0, 1]), [x], gpu1, what="pad")
    _on_gpu1(lambda x: autograd.upsample(x, "nearest", [1, 1, 2, 3]),
             [rng.uniform(-1, 1, (2, 2, 3, 2))], gpu1, what="upsample")
    _on_gpu1(lambda i: autograd.onehot(-1, i, 4), [np.array([[0, 3], [-1, 2]])], gpu1,
             what="onehot")
    _on_gpu1(autograd.greater, [x, x[:, :1]], gpu1, wants_grad=[False, False], what="greater")


# ---------------------------------------------------------------- a model and a training step

def _model():
    """Linear, Conv and BatchNorm (the conv before BatchNorm has no bias: its gradient would be
    rounding noise, which Adam turns into full steps that differ between devices)."""
    autograd.manual_seed(0)
    return autograd.Sequential(
        autograd.Conv2d(2, 4, 3, padding=1, bias=False), autograd.BatchNorm2d(4),
        autograd.ReLU(), autograd.MaxPool2d(2), autograd.Conv2d(4, 4, 3, padding=1),
        autograd.Flatten(), autograd.Linear(4 * 4 * 4, 3))


def _state_arrays(optimizer):
    arrays = []
    for state in optimizer.states.values():
        arrays += [v for v in state.values() if hasattr(v, "shape") and hasattr(v, "dtype")
                   and not isinstance(v, np.generic)]
    return arrays


@pytest.mark.parametrize("make_optimizer", [lambda: opt.SGD(lr=0.1, momentum=0.9),
                                            lambda: opt.Adam(lr=0.01)], ids=["sgd", "adam"])
def test_a_training_step_on_gpu1_keeps_everything_on_gpu1(make_optimizer, gpu1):
    rng = np.random.default_rng(5)
    images = rng.standard_normal((5, 2, 8, 8)).astype(np.float32)
    labels = rng.integers(0, 3, 5)
    runs = {}
    for device in (cpu(), gpu1):
        model = _model().to_device(device)
        optimizer = make_optimizer()
        x = Tensor(data=images, device=device, requires_grad=False)
        t = Tensor(data=labels, device=device)
        for _ in range(2):                      # the second step uses the optimizer's state
            loss = autograd.softmax_cross_entropy(model(x), t)
            pairs = list(autograd.backward(loss))
            assert len(pairs) == len(model.parameters())
            if device is gpu1:
                assert_on(gpu1, loss, *[g for _, g in pairs])
            for p, g in pairs:
                optimizer.update(p, g)
            optimizer.step()
        model.eval()
        y = model(x)
        if device is gpu1:
            assert _current_gpu() == 0
            assert_on(gpu1, y, *model.parameters(), *model.buffers(), *_state_arrays(optimizer))
            assert _state_arrays(optimizer), "the optimizer kept no state to check"
        runs[device] = [loss.to_numpy(), y.to_numpy()] + [
            a.to_numpy() for a in model.parameters() + model.buffers()]
    for index, (c, g) in enumerate(zip(runs[cpu()], runs[gpu1])):
        np.testing.assert_allclose(g, c, rtol=1e-4, atol=1e-5, err_msg=f"array {index}")


def test_optimizer_call_on_gpu1(gpu1):
    model = _model().to_device(gpu1)
    x = Tensor(data=np.ones((2, 2, 8, 8), np.float32), device=gpu1, requires_grad=False)
    sgd = opt.SGD(lr=0.1, momentum=0.9)
    sgd(autograd.softmax_cross_entropy(model(x), Tensor(data=np.array([0, 2]), device=gpu1)))
    assert_on(gpu1, *model.parameters(), *model.buffers(), *_state_arrays(sgd))
    assert _current_gpu() == 0


# ---------------------------------------------------------------- mixing gpu:0 and gpu:1

def _pair(gpu1, shape=(3, 3)):
    a = Tensor(data=np.ones(shape, np.float32), device=gpu(0), stores_grad=True)
    b = Tensor(data=np.ones(shape, np.float32), device=gpu1, stores_grad=True)
    return a, b


@pytest.mark.parametrize("what, fn", [
    ("add", lambda a, b: a + b),
    ("mul", lambda a, b: b * a),
    ("matmul", lambda a, b: a @ b),
    ("cat", lambda a, b: autograd.cat([a, b])),
    ("where", lambda a, b: autograd.where(condition=a.data > 0, x=a, y=b)),
    ("einsum", lambda a, b: autograd.einsum("ij,jk->ik", b, a)),
    ("conv2d", lambda a, b: autograd.conv2d(a.reshape(1, 1, 3, 3), b.reshape(1, 1, 3, 3))),
    ("softmax_cross_entropy", lambda a, b: autograd.softmax_cross_entropy(
        b, Tensor(data=np.array([0, 1, 2]), device=gpu(0)))),
    ("embedding", lambda a, b: autograd.embedding(
        Tensor(data=np.array([0, 1]), device=gpu(0)), b)),
    ("gather indices", lambda a, b: autograd.gather(
        b, 0, Tensor(data=np.array([0, 1]), device=gpu(0)))),
    ("scatter_elements indices", lambda a, b: autograd.scatter_elements(
        b, Tensor(data=np.array([[1, 0, 2]]), device=gpu(0)), b[0:1])),
    ("in-place +=", lambda a, b: b.__iadd__(a)),
    ("a raw gpu:0 array", lambda a, b: b + a.data),
    ("backward with dy on gpu:0", lambda a, b: list(autograd.backward(b * 2.0, a))),
    ("optimizer update", lambda a, b: opt.SGD(lr=0.1, momentum=0.9).update(b, a)),
], ids=lambda v: v if isinstance(v, str) else "")
def test_mixing_gpu0_and_gpu1_is_a_type_error_naming_both(what, fn, gpu1):
    a, b = _pair(gpu1)
    before = b.to_numpy().copy()
    with pytest.raises(TypeError) as error:
        fn(a, b)
    message = str(error.value)
    assert "gpu:0" in message and "gpu:1" in message, f"{what}: {message}"
    np.testing.assert_array_equal(b.to_numpy(), before)           # nothing half-done
    assert_on(gpu(0), a)
    assert_on(gpu1, b)                                            # nothing moved
