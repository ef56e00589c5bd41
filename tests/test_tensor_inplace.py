"""SINGA's in-place Tensor methods (autograd/tensor_inplace.py): unrecorded arithmetic that
refuses graph results, copy_data, bernoulli."""
import numpy as np
import pytest

from autograd import Tensor


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
