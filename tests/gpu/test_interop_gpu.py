"""DLPack on the GPU (issue 21, item 1): CuPy arrays cross both ways without a copy, and
``Tensor.numpy()`` refuses a GPU tensor. The reference is CuPy's own view of the memory."""
import numpy as np
import pytest

import autograd
from autograd import Tensor
from tests.gpu import device_under_test

pytestmark = pytest.mark.gpu


def test_cupy_zero_copy_both_ways():
    import cupy
    gpu = device_under_test()
    t = Tensor(data=np.arange(6, dtype=np.float32).reshape(2, 3), device=gpu)
    assert t.__dlpack_device__() == (2, 0)
    view = cupy.from_dlpack(t)
    view[0, 0] = 9.0
    assert t.to_numpy()[0, 0] == 9.0

    source = cupy.arange(12, dtype=cupy.float64).reshape(3, 4).T
    ours = autograd.from_dlpack(source)
    assert ours.device == gpu and ours.data.strides == source.strides
    source[1, 2] = -5.0
    assert ours.to_numpy()[1, 2] == -5.0


def test_numpy_of_a_gpu_tensor_is_an_error():
    t = Tensor(data=[1.0], device=device_under_test())
    with pytest.raises(TypeError, match="Tensor.numpy: the tensor is on gpu:0"):
        t.numpy()
    assert t.tolist() == [1.0]
