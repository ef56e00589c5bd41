"""Training on the GPU (issue 6, items 3 and 5): the seed CNN of issue 4 learns on random data,
a training step never waits for the GPU, and examples/train_cnn.py --device gpu reaches the
accuracy of the same run on the CPU."""
import numpy as np
import pytest

import autograd
from autograd import Tensor, opt
from tests.gpu import device_under_test, assert_on
from tests.gpu.test_layers_gpu import small_cnn
from tests.layers.test_seed_example import CNN as SeedCNN
from tests.test_examples import load_example

pytestmark = pytest.mark.gpu


@pytest.fixture
def gpu():
    return device_under_test()


@pytest.fixture(autouse=True)
def restore_training_flag():
    yield
    autograd.training = True


def test_the_seed_cnn_of_issue_4_trains_on_the_gpu(gpu):
    autograd.manual_seed(0)
    rng = np.random.default_rng(0)
    images = rng.standard_normal((4, 1, 28, 28)).astype(np.float32)
    labels = rng.integers(0, 10, size=4)
    model = SeedCNN()
    reference_loss = autograd.softmax_cross_entropy(
        model(Tensor(data=images, requires_grad=False)), labels).item()   # on the CPU first
    model.to_device(gpu)
    x = Tensor(data=images, device=gpu, requires_grad=False)
    t = Tensor(data=labels, device=gpu)
    losses = []
    for _ in range(4):
        loss = autograd.softmax_cross_entropy(model(x), t)
        assert_on(gpu, loss)
        losses.append(loss.item())
        pairs = list(autograd.backward(loss))
        assert {id(p) for p, _ in pairs} == {id(p) for p in model.parameters()}
        for p, g in pairs:
            assert_on(gpu, p, g)
            p.data -= 0.001 * g.data
    np.testing.assert_allclose(losses[0], reference_loss, rtol=1e-4)   # same start as the CPU
    assert np.isfinite(losses).all()
    assert all(b < a for a, b in zip(losses, losses[1:])), losses
    assert losses[-1] < 0.5 * losses[0], losses
    assert np.any(model.bn1.running_mean.to_numpy() != 0)


def _no_sync_context():
    import cupyx
    allow = getattr(cupyx, "allow_synchronize", None)
    if allow is None:
        pytest.skip("this CuPy has no cupyx.allow_synchronize to detect a synchronisation")
    return allow(False)


def _train_without_waiting(gpu, targets):
    model = small_cnn().to_device(gpu)
    rng = np.random.default_rng(3)
    x = Tensor(data=rng.standard_normal((6, 2, 8, 8)).astype(np.float32), device=gpu,
               requires_grad=False)
    for optimizer in (opt.SGD(lr=0.05, momentum=0.9), opt.Adam(lr=1e-3)):
        optimizer(autograd.softmax_cross_entropy(model(x), targets))     # warm-up: build, compile
        with _no_sync_context():
            for _ in range(2):
                loss = autograd.softmax_cross_entropy(model(x), targets)
                optimizer(loss)
        assert np.isfinite(loss.item())


def test_a_training_step_with_one_hot_targets_never_waits_for_the_gpu(gpu):
    labels = np.array([0, 2, 1, 1, 0, 2])
    _train_without_waiting(gpu, Tensor(data=np.eye(3, dtype=np.float32)[labels], device=gpu,
                                       requires_grad=False))


@pytest.mark.xfail(strict=True, reason="softmax_cross_entropy checks that labels already on "
                   "the GPU lie in [0, C) with one any() read on the host (operations/loss.py); "
                   "labels given as host arrays are checked before upload and do not wait")
def test_a_training_step_with_integer_labels_never_waits_for_the_gpu(gpu):
    _train_without_waiting(gpu, Tensor(data=np.array([0, 2, 1, 1, 0, 2]), device=gpu))


def test_train_cnn_on_the_gpu_reaches_the_accuracy_of_the_cpu_run():
    example = load_example("train_cnn")
    common = ["--epochs", "3", "--quiet", "--plot", ""]
    on_cpu = example.main(["--device", "cpu"] + common)
    on_gpu = example.main(["--device", "gpu"] + common)
    losses = on_gpu["history"]["loss"]
    assert len(losses) == 3 and losses[-1] < losses[0], losses
    assert on_gpu["accuracy"] > 0.9, on_gpu
    # The lazy Linear draws its weights from the GPU's generator there, so the two runs start
    # apart; on the embedded digits seeds 0-3 of the CPU run land within 0.9 points.
    assert abs(on_gpu["accuracy"] - on_cpu["accuracy"]) <= 0.01 + 1e-9, (on_cpu, on_gpu)
