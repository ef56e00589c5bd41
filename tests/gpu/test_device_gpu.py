"""Devices on a GPU (issue 6, items 1, 3, 4): the spellings of the GPU device, the default
device, moving tensors to and from the GPU, errors when a GPU tensor meets a CPU one, and the
per-device random generator seeded by ``autograd.manual_seed``."""
import re

import numpy as np
import pytest

import autograd
from autograd import Tensor
from autograd.device import cpu
from tests.gpu import device_under_test, assert_on

pytestmark = pytest.mark.gpu


@pytest.fixture
def gpu():
    return device_under_test()


@pytest.fixture
def restore_default_device():
    previous = autograd.device.get_default_device()
    yield
    autograd.device.set_default_device(previous)


# ---------------------------------------------------------------- the device objects

def test_every_spelling_gives_the_one_gpu_device(gpu):
    import cupy
    assert autograd.device.gpu(0) is gpu
    assert autograd.device.create_cuda_gpu() is gpu
    assert autograd.device.create_cuda_gpu_on(0) is gpu
    assert (gpu.kind, gpu.index, repr(gpu)) == ("gpu", 0, "gpu:0")
    assert gpu.xp is cupy and gpu != cpu()


def test_asking_for_a_gpu_the_machine_lacks_names_the_count(gpu):
    import cupy
    count = cupy.cuda.runtime.getDeviceCount()
    with pytest.raises(RuntimeError, match=rf"gpu:{count} but this machine has {count} GPU"):
        autograd.device.create_cuda_gpu_on(count)


def test_set_default_device_sends_new_tensors_and_layers_to_the_gpu(gpu, restore_default_device):
    autograd.device.set_default_device(gpu)
    assert autograd.device.get_default_device() is gpu
    zeros = Tensor(shape=(2, 3))
    listed = Tensor(data=[[1.0, 2.0]])
    assert_on(gpu, zeros, listed)
    assert zeros.dtype == np.float32 and not zeros.to_numpy().any()
    np.testing.assert_array_equal(listed.to_numpy(), [[1.0, 2.0]])
    for layer in (autograd.Linear(3, 2), autograd.Conv2d(1, 2, 3), autograd.Embedding(4, 2)):
        assert_on(gpu, *layer.parameters())
    autograd.device.set_default_device(cpu())
    assert_on(cpu(), Tensor(shape=(2,)))


def test_normalization_layers_follow_the_default_device(gpu, restore_default_device):
    autograd.device.set_default_device(gpu)
    bn, ln = autograd.BatchNorm2d(3), autograd.LayerNorm(4)
    assert_on(gpu, *bn.parameters(), *bn.buffers(), *ln.parameters())


# ---------------------------------------------------------------- moving data

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_a_host_array_goes_to_the_gpu_and_comes_back_unchanged(gpu, dtype):
    values = (np.arange(12).reshape(3, 4) - 5).astype(dtype)
    t = Tensor(data=values, device=gpu)
    assert_on(gpu, t)
    assert t.dtype == dtype and t.shape == (3, 4)
    values[0, 0] = 99                                   # the tensor holds its own copy
    back = t.to_numpy()
    assert isinstance(back, np.ndarray) and back.dtype == dtype
    np.testing.assert_array_equal(back, (np.arange(12).reshape(3, 4) - 5).astype(dtype))
    assert Tensor(data=[[2.5]], device=gpu).item() == 2.5


def test_a_cupy_array_makes_a_gpu_tensor_without_saying_so(gpu):
    import cupy
    t = Tensor(data=cupy.arange(6, dtype=cupy.float64).reshape(2, 3))
    assert_on(gpu, t)
    assert t.dtype == np.float64
    np.testing.assert_array_equal(t.to_numpy(), np.arange(6.0).reshape(2, 3))


def test_to_device_moves_in_place_both_ways(gpu):
    values = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    t = Tensor(data=values, stores_grad=True)
    assert t.to_device(gpu) is t
    assert_on(gpu, t)
    assert t.stores_grad and t.requires_grad
    same = t.data
    assert t.to_device(gpu).data is same                # already there: no copy
    np.testing.assert_array_equal(t.to_numpy(), values)
    assert t.to_device(cpu()) is t
    assert_on(cpu(), t)
    np.testing.assert_array_equal(t.data, values)
    assert t.to_device(gpu).to_host() is t and t.device is cpu()


def test_a_gpu_tensor_refuses_an_implicit_host_copy(gpu):
    t = Tensor(data=[1.0, 2.0], device=gpu)
    with pytest.raises(TypeError, match="to_numpy"):
        np.asarray(t)


# ---------------------------------------------------------------- mixing devices is an error

BINARY = {
    "add": (lambda a, b: a + b, "add", (3, 4), (3, 4)),
    "sub": (autograd.sub, "sub", (3, 4), (4,)),
    "mul": (autograd.mul, "mul", (3, 4), (3, 1)),
    "div": (autograd.div, "div", (3, 4), (3, 4)),
    "pow": (autograd.pow, "pow", (3, 4), (3, 4)),
    "maximum": (autograd.maximum, "maximum", (3, 4), (3, 4)),
    "matmul": (lambda a, b: a @ b, "matmul", (3, 4), (4, 2)),
    "gemm": (autograd.gemm, "gemm", (3, 4), (4, 2)),
    "einsum": (lambda a, b: autograd.einsum("ij,jk->ik", a, b), "einsum", (3, 4), (4, 2)),
    "add_bias": (autograd.add_bias, "add_?bias", (3, 4), (4,)),
    "cat": (lambda a, b: autograd.cat([a, b], axis=0), "c(on)?cat", (3, 4), (2, 4)),
    # keywords: the same call whichever argument order where() has (NumPy's or SINGA's)
    "where": (lambda a, b: autograd.where(condition=np.ones((3, 4), bool), x=a, y=b), "where",
              (3, 4), (3, 4)),
    "mse_loss": (autograd.mse_loss, "mse_?loss", (3, 4), (3, 4)),
    "prelu": (autograd.prelu, "prelu", (3, 4), (4,)),
}


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("gpu_first", [True, False], ids=["gpu_first", "cpu_first"])
def test_a_gpu_tensor_with_a_cpu_tensor_is_a_type_error_naming_the_op_and_devices(
        gpu, name, gpu_first):
    fn, op_pattern, shape_a, shape_b = BINARY[name]
    a = Tensor(data=np.ones(shape_a, np.float32), stores_grad=True)
    b = Tensor(data=np.ones(shape_b, np.float32), stores_grad=True)
    (a if gpu_first else b).to_device(gpu)
    with pytest.raises(TypeError) as error:
        fn(a, b)
    message = str(error.value)
    assert re.search(rf"(?i)\b{op_pattern}\b", message), message
    assert "gpu:0" in message and "cpu" in message, message


def test_a_host_array_or_cpu_labels_do_not_silently_join_a_gpu_tensor(gpu):
    x = Tensor(data=np.ones((2, 3), np.float32), device=gpu, stores_grad=True)
    with pytest.raises(TypeError, match=r"add: a numpy\.ndarray cannot be combined with a "
                                        r"Tensor on gpu:0"):
        x + np.ones((2, 3), np.float32)
    with pytest.raises(TypeError, match=r"(?i)softmax.*(gpu:0.*cpu|cpu.*gpu:0)"):
        autograd.softmax_cross_entropy(x, Tensor(data=np.array([0, 2])))
    with pytest.raises(TypeError, match=r"embedding: ids are on cpu but W is on gpu:0"):
        autograd.embedding(Tensor(data=np.array([0, 1])), x)


def test_backward_with_dy_on_the_other_device_is_a_type_error(gpu):
    x = Tensor(data=[1.0, 2.0], device=gpu, stores_grad=True)
    y = x * 3.0
    with pytest.raises(TypeError, match="different devices"):
        list(autograd.backward(y, np.ones(2, np.float32)))


def test_an_optimizer_refuses_a_cpu_gradient_for_a_gpu_parameter(gpu):
    w = Tensor(data=[1.0, -2.0], device=gpu, stores_grad=True)
    sgd = autograd.opt.SGD(lr=0.1, momentum=0.9)
    with pytest.raises(TypeError, match=r"SGD: .* is on gpu:0 but its gradient is on cpu"):
        sgd.update(w, Tensor(data=[1.0, 1.0]))
    np.testing.assert_array_equal(w.to_numpy(), [1.0, -2.0])
    assert sgd.states == {}


# ---------------------------------------------------------------- random numbers

def _samples(gpu):
    gaussian = Tensor(shape=(200, 50), device=gpu).gaussian(1.0, 2.0)
    uniform = Tensor(shape=(200, 50), device=gpu, dtype=np.float64).uniform(-3.0, 5.0)
    kept = autograd.dropout(Tensor(data=np.ones((200, 50), np.float32), device=gpu), 0.3,
                            training=True)
    assert_on(gpu, gaussian, uniform, kept)
    assert (gaussian.dtype, uniform.dtype, kept.dtype) == (np.float32, np.float64, np.float32)
    return [gaussian.to_numpy(), uniform.to_numpy(), kept.to_numpy()]


def test_manual_seed_repeats_gaussian_uniform_and_dropout_on_the_gpu(gpu):
    autograd.manual_seed(7)
    first = _samples(gpu)
    autograd.manual_seed(7)
    second = _samples(gpu)
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    autograd.manual_seed(8)
    third = _samples(gpu)
    assert all(not np.array_equal(a, c) for a, c in zip(first, third))
    gaussian, uniform, kept = first            # and they are the distributions asked for
    assert abs(gaussian.mean() - 1.0) < 0.1 and abs(gaussian.std() - 2.0) < 0.1
    assert uniform.min() >= -3.0 and uniform.max() < 5.0 and abs(uniform.mean() - 1.0) < 0.15
    assert set(np.unique(kept)) <= {0.0, np.float32(1 / 0.7)}
    assert abs((kept == 0).mean() - 0.3) < 0.03


def test_debug_mode_names_the_op_that_made_a_nan_on_the_gpu(gpu):
    autograd.set_debug(True)
    try:
        with pytest.raises(FloatingPointError, match="Log"):
            autograd.log(Tensor(data=[-1.0, 1.0], device=gpu, stores_grad=True))
    finally:
        autograd.set_debug(False)
