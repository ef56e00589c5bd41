"""Issue 23 on one GPU: scatter_elements runs on CuPy (its index grid was NumPy-only) and an
in-place operator given an array of another device names the op and both devices."""
import re

import numpy as np
import pytest

import autograd
from autograd import Tensor
from tests.gpu import compare_devices, device_under_test, assert_on

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_scatter_elements_on_gpu_equals_cpu(axis):
    rng = np.random.default_rng(23)
    shape, index_shape = (4, 5, 3), (3, 4, 2)
    size = shape[axis]
    lines = np.moveaxis(np.zeros(index_shape, np.int64), axis, -1)
    for line in np.ndindex(*lines.shape[:-1]):      # distinct targets: a defined gradient
        lines[line] = rng.permutation(size)[:lines.shape[-1]] - rng.integers(0, 2) * size
    indices = np.moveaxis(lines, -1, axis)
    x, updates = rng.standard_normal(shape), rng.standard_normal(index_shape)
    compare_devices(lambda x, i, u: autograd.scatter_elements(x, i, u, axis),
                    [x, indices, updates], what=f"scatter_elements axis={axis}")


def test_scatter_elements_takes_host_indices_for_a_gpu_tensor():
    gpu = device_under_test()
    y = autograd.scatter_elements(Tensor(shape=(2, 3), device=gpu), np.array([[1, 0, 1]]),
                                  Tensor(data=[[5.0, 6.0, 7.0]], device=gpu))
    assert_on(gpu, y)
    np.testing.assert_array_equal(y.to_numpy(), [[0, 6, 0], [5, 0, 7]])


@pytest.mark.parametrize("symbol", ["+=", "-=", "*=", "/="])
def test_in_place_with_a_host_array_names_the_op_and_both_devices(symbol):
    gpu = device_under_test()
    t = Tensor(data=[1.0, 2.0], device=gpu)
    with pytest.raises(TypeError, match=re.escape(f"Tensor {symbol}") +
                       r".*numpy\.ndarray on cpu.*self on gpu:0"):
        exec(f"t {symbol} np.ones(2, np.float32)", {"t": t, "np": np})
    np.testing.assert_array_equal(t.to_numpy(), [1.0, 2.0])      # untouched


def test_in_place_with_a_gpu_array_on_a_cpu_tensor_is_refused():
    gpu = device_under_test()
    t = Tensor(data=[1.0, 2.0])
    with pytest.raises(TypeError, match=r"Tensor \+=.*on gpu:0.*self on cpu"):
        t += gpu.xp.ones(2, np.float32)
    np.testing.assert_array_equal(t.to_numpy(), [1.0, 2.0])


def test_in_place_with_same_device_arrays_and_scalars_still_works():
    gpu = device_under_test()
    t = Tensor(data=[1.0, 2.0], device=gpu)
    t += gpu.xp.ones(2, np.float32)
    t *= np.float32(2.0)
    t -= 1
    assert_on(gpu, t)
    np.testing.assert_array_equal(t.to_numpy(), [3.0, 5.0])
