"""Behaviour of the SINGA names whose only other test was ``hasattr`` in test_singa_names.py.

Found by running the suite under coverage and listing each supported name whose function body
no test executed, or that is an alias of another name (``clone = copy``): each is called here
and its result compared with NumPy. clone, copy, deepcopy and to_host: test_tensor_copies.py."""
import numpy as np
import pytest

import autograd
from autograd import Layer, Model, Tensor, tensor


@pytest.mark.parametrize("axes", [None, (1, 0, 2), (2, 0, 1)])
def test_tensor_transpose_method_matches_numpy_and_routes_the_gradient_back(axes):
    data = np.arange(24.0).reshape(2, 3, 4)
    x = Tensor(data=data, stores_grad=True)
    y = x.transpose(axes) if axes is not None else x.transpose()
    np.testing.assert_array_equal(y.to_numpy(), np.transpose(data, axes))
    dy = np.random.default_rng(0).standard_normal(y.shape)
    grad = autograd.gradients(y, dy)[x].to_numpy()
    np.testing.assert_array_equal(grad, np.transpose(dy, np.argsort(axes) if axes else None))


def test_tensor_T_reverses_all_axes():
    data = np.arange(6.0).reshape(1, 2, 3)
    np.testing.assert_array_equal(Tensor(data=data).T.to_numpy(), data.T)


def test_tensor_shape_properties_are_the_arrays():
    data = np.zeros((2, 3, 4), np.float64)
    t = Tensor(data=data)
    assert (t.shape, t.ndim, t.size, t.dtype) == ((2, 3, 4), 3, 24, np.dtype(np.float64))


@pytest.mark.parametrize("method,reference", [("lt", np.less), ("le", np.less_equal),
                                              ("gt", np.greater), ("ge", np.greater_equal),
                                              ("eq", np.equal)])
def test_tensor_comparison_methods_match_numpy(method, reference):
    a = np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]])
    b = np.array([2.0, 2.0, 2.0])
    for other in (Tensor(data=b), 2.0):
        got = getattr(Tensor(data=a), method)(other)
        assert got.creator is None
        np.testing.assert_array_equal(got.to_numpy(), reference(a, b).astype(np.float32))


def test_tensor_repr_shows_values_dtype_device_and_flags():
    x = Tensor(data=[1.5, -2.0], stores_grad=True)
    assert repr(x) == "Tensor([ 1.5 -2. ], dtype=float32, device=cpu, stores_grad=True)"
    assert repr(x * x) == "Tensor([2.25 4.  ], dtype=float32, device=cpu, creator=Mul)"
    assert repr(Tensor(data=[1.0])).endswith("device=cpu)")


def test_tensor_module_dtypes_are_numpys_and_work_as_dtype_arguments():
    assert tensor.float32 is np.float32 and tensor.int32 is np.int32
    assert Tensor(data=[1.7, 2.2], dtype=tensor.int32).to_numpy().tolist() == [1, 2]
    assert tensor.zeros((2,), dtype=tensor.int32).dtype == np.int32


def test_create_cuda_gpu_on_is_gpu_of_that_index():
    try:
        import cupy  # noqa: F401
    except ImportError:
        with pytest.raises(RuntimeError, match="CuPy is not installed"):
            autograd.device.create_cuda_gpu_on(0)
        with pytest.raises(RuntimeError, match="CuPy is not installed"):
            autograd.device.create_cuda_gpu()
        return
    try:
        device = autograd.device.gpu(0)
    except RuntimeError:
        pytest.skip("CuPy without a usable GPU")
    assert autograd.device.create_cuda_gpu_on(0) is device is autograd.device.create_cuda_gpu()


def test_layer_initialize_runs_once_with_the_first_inputs_and_forward_must_be_defined():
    seen = []

    class Doubling(Layer):
        def initialize(self, x):
            seen.append(x.shape)
            self.factor = Tensor(data=np.full(x.shape[1:], 2.0, np.float32), stores_grad=True)

        def forward(self, x):
            return x * self.factor

    layer = Doubling()
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(layer(Tensor(data=x)).to_numpy(), 2 * x)
    layer(Tensor(data=x + 1))
    assert seen == [(2, 3)] and [p.shape for p in layer.parameters()] == [(3,)]
    assert Layer().initialize(Tensor(data=x)) is None               # the default does nothing
    for bare in (Layer(), Model()):
        with pytest.raises(NotImplementedError, match="does not define forward"):
            bare.forward(Tensor(data=x))
