"""SINGA's in-place Tensor methods (autograd/tensor_inplace.py): unrecorded arithmetic that
refuses graph results, copy_data, bernoulli."""
import re

import numpy as np
import pytest

from autograd import Tensor
from tests.foreign_device import CurrentDevice, tensor_on_a_foreign_device


def test_in_place_operators_change_data_and_record_nothing():
    w = Tensor(data=[1.0, 2.0], stores_grad=True)
    array = w.data
    w -= Tensor(data=[0.5, 0.5])
    w *= 2
    w += np.array([1.0, 1.0], np.float32)
    w /= 2.0
    assert w.data is array and w.creator is None and w.dtype == np.float32
    np.testing.assert_array_equal(w.to_numpy(), [1.0, 2.0])


def test_in_place_on_a_recorded_result_is_refused():
    y = Tensor(data=[1.0], stores_grad=True) * 3.0
    before = y.to_numpy().copy()
    with pytest.raises(RuntimeError, match=r"in-place arithmetic .* MulScalar"):
        y += 1.0
    np.testing.assert_array_equal(y.to_numpy(), before)


def test_copy_data_and_bernoulli():
    t = Tensor(shape=(2, 2))
    source = Tensor(data=[[1.0, 2.0], [3.0, 4.0]])
    assert t.copy_data(source) is t and t.data is not source.data
    np.testing.assert_array_equal(t.to_numpy(), source.to_numpy())
    with pytest.raises(ValueError, match=r"copy_data: expected shape \(2, 2\), got \(3,\)"):
        t.copy_data(Tensor(shape=(3,)))
    draws = Tensor(shape=(50000,)).bernoulli(0.3).to_numpy()
    assert set(np.unique(draws)) <= {0.0, 1.0} and abs(draws.mean() - 0.3) < 0.01
    with pytest.raises(ValueError, match="bernoulli"):
        Tensor(shape=(2,)).bernoulli(1.5)


def test_copy_from_numpy_refills_in_place_with_the_tensor_dtype_and_shape():
    tx = Tensor(shape=(2, 3))
    array = tx.data
    values = np.arange(6, dtype=np.float64)
    assert tx.copy_from_numpy(values) is tx
    assert tx.data is array and tx.dtype == np.float32
    np.testing.assert_array_equal(tx.to_numpy(), values.reshape(2, 3))
    ty = Tensor(shape=(4,), dtype=np.int32)
    ty.copy_from_numpy(np.array([[1.0], [0.0], [3.0], [2.0]], np.float32))   # SINGA's (N, 1)
    np.testing.assert_array_equal(ty.to_numpy(), [1, 0, 3, 2])
    assert ty.dtype == np.int32
    with pytest.raises(ValueError, match=r"copy_from_numpy: the tensor of shape \(2, 3\) "
                                         r"holds 6 elements, got an array of shape \(5,\)"):
        tx.copy_from_numpy(np.zeros(5))
    np.testing.assert_array_equal(tx.to_numpy(), values.reshape(2, 3))     # untouched
    other = Tensor(data=np.ones((2, 3), np.float32))
    np.testing.assert_array_equal(tx.copy_from(other).to_numpy(), np.ones((2, 3)))


def test_singa_positional_constructor_is_shape_device_dtype():
    from autograd import device
    t = Tensor((3, 2), device.cpu(), np.int32)
    assert t.shape == (3, 2) and t.dtype == np.int32 and t.device is device.cpu()
    assert not t.to_numpy().any()
    # SINGA's fourth positional argument is the data (SINGA's trans/train.py passes it)
    values = np.arange(6, dtype=np.int64).reshape(3, 2)
    t = Tensor((3, 2), device.cpu(), np.int32, values)
    assert t.dtype == np.int32 and t.device is device.cpu()
    np.testing.assert_array_equal(t.to_numpy(), values)
    t = Tensor((2,), device.cpu(), np.float32, [1.5, 2.5])
    np.testing.assert_array_equal(t.to_numpy(), [1.5, 2.5])
    with pytest.raises(ValueError, match=r"data has shape \(2,\) but shape=\(3,\)"):
        Tensor((3,), device.cpu(), np.float32, [1.0, 2.0])


@pytest.mark.parametrize("symbol", ["+=", "-=", "*=", "/="])
def test_in_place_with_another_devices_array_names_the_op_and_both_devices(symbol):
    t = tensor_on_a_foreign_device([1.0, 2.0])
    with pytest.raises(TypeError, match=re.escape(f"Tensor {symbol}: other is a "
                                                  f"numpy.ndarray on cpu, self on gpu:7")):
        exec(f"t {symbol} np.ones(2, np.float32)", {"t": t, "np": np})
    np.testing.assert_array_equal(np.asarray(t.data), [1.0, 2.0])      # nothing written


def test_in_place_with_a_foreign_devices_tensor_is_refused_too():
    t = Tensor(data=[1.0, 2.0])
    with pytest.raises(TypeError, match=r"Tensor -=: other is on gpu:7, self on cpu"):
        t -= tensor_on_a_foreign_device([1.0, 2.0])
    np.testing.assert_array_equal(t.to_numpy(), [1.0, 2.0])


def test_in_place_with_numbers_lists_and_numpy_scalars_is_unchecked_arithmetic():
    t = tensor_on_a_foreign_device([1.0, 2.0])       # NumPy underneath: the maths runs
    CurrentDevice.entered.clear()
    t += 1
    t *= np.float32(2.0)
    t -= [1.0, 1.0]
    np.testing.assert_array_equal(np.asarray(t.data), [3.0, 5.0])
    assert CurrentDevice.entered == [7, 7, 7]      # each ran with the tensor's device current
    host = Tensor(data=[1.0, 2.0])
    host += np.array([1.0, 1.0], np.float32)        # a same-device array is fine
    np.testing.assert_array_equal(host.to_numpy(), [2.0, 3.0])


@pytest.mark.parametrize("symbol", ["+=", "-=", "*=", "/="])
def test_in_place_on_a_recorded_result_says_what_to_write_instead(symbol):
    y = Tensor(data=[1.0], stores_grad=True) * 3.0
    message = (f"Tensor {symbol}: in-place arithmetic on a tensor produced by a recorded "
               f"MulScalar would corrupt its gradients; write y = y {symbol[0]} x instead")
    with pytest.raises(RuntimeError, match=f"^{re.escape(message)}$"):
        exec(f"y {symbol} 1.0", {"y": y})


def test_bernoulli_takes_both_ends_and_draws_in_the_tensors_dtype():
    from autograd import manual_seed
    from autograd.device import cpu
    np.testing.assert_array_equal(Tensor(shape=(1000,)).bernoulli(0.0).to_numpy(), 0.0)
    np.testing.assert_array_equal(Tensor(shape=(1000,)).bernoulli(1.0).to_numpy(), 1.0)
    for dtype in (np.float32, np.float64):
        manual_seed(5)
        drawn = Tensor(shape=(1000,), dtype=dtype).bernoulli(0.4).to_numpy()
        manual_seed(5)                    # the same stream, drawn as this dtype's uniforms
        expected = cpu().random.random((1000,), dtype=dtype) < 0.4
        np.testing.assert_array_equal(drawn, expected)


def test_copy_from_numpy_names_an_offset_it_cannot_take():
    with pytest.raises(ValueError, match=r"^copy_from_numpy: only offset=0 is supported, got 2$"):
        Tensor(shape=(2,)).copy_from_numpy(np.zeros(2), offset=2)
