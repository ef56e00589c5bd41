"""tensor.py survivors of the full mutation run of 2026-11-28 that docs/testing.md does not
explain: the message naming a negative ``size`` of copy_data_to_from, and SINGA's positional
data (the fourth argument) given as a Tensor or an object with ``__array__``."""
import numpy as np
import pytest

from autograd import Tensor
from autograd.device import cpu
from autograd.tensor import copy_data_to_from


@pytest.mark.parametrize("size, text", [(-1, "-1"), (1.0, "1.0"), (True, "True")])
def test_copy_data_to_from_names_a_bad_size_word_for_word(size, text):
    dst, src = Tensor(data=np.zeros(3, np.float32)), Tensor(data=np.ones(3, np.float32))
    with pytest.raises(ValueError) as info:
        copy_data_to_from(dst, src, size)
    assert str(info.value) == f"copy_data_to_from: size must be a non-negative int, got {text}"


class HostArray:
    """Not a list or an ndarray, but array-like through __array__ (as a CuPy array or a
    pandas column is)."""

    def __array__(self, dtype=None, copy=None):
        return np.array([3.0, 4.0], dtype or np.float64)


@pytest.mark.parametrize("data", [Tensor(data=np.array([3.0, 4.0], np.float32)), HostArray()])
def test_singas_positional_data_may_be_a_tensor_or_array_like(data):
    t = Tensor((2,), cpu(), np.float32, data)           # SINGA: Tensor(shape, device, dtype, data)
    assert t.dtype == np.float32 and t.to_numpy().tolist() == [3.0, 4.0]
