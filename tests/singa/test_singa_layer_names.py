"""SINGA names under the hook that SINGA's examples/trans programs use (autograd/singa/
layers.py, names.py): ``device.create_cpu_device``, ``layer.Embedding(input_dim, output_dim,
initializer)``, ``layer.Layer``'s ``device_check``/``dtype_check``, ``tensor.gt`` and the other
comparisons, ``tensor.from_numpy`` storing float64 as float32."""
import numpy as np
import pytest

import autograd
import autograd.singa
from autograd import Tensor


def test_create_cpu_device_is_the_cpu(singa):
    from singa import device
    assert device.create_cpu_device() is autograd.device.cpu()


def test_embedding_takes_singas_arguments_and_initializers(singa):
    from singa import layer
    autograd.device.manual_seed(0)
    gaussian = layer.Embedding(input_dim=400, output_dim=50)
    assert gaussian.W.shape == (400, 50) and gaussian.W.stores_grad
    w = gaussian.W.to_numpy()
    assert abs(w.mean()) < 0.02 and abs(w.std() - 1.0) < 0.02       # SINGA's N(0, 1)
    uniform = layer.Embedding(400, 50, initializer="uniform").W.to_numpy()
    assert uniform.min() >= -1.0 and uniform.max() <= 1.0 and uniform.std() > 0.5
    ids = np.array([[3, 0], [3, 7]], np.int32)
    y = gaussian(Tensor(data=ids))
    np.testing.assert_array_equal(y.to_numpy(), w[ids])
    pretrained = np.arange(400 * 50, dtype=np.float32).reshape(400, 50)
    gaussian.from_pretrained(pretrained)
    np.testing.assert_array_equal(gaussian.W.to_numpy(), pretrained)
    assert not gaussian.W.requires_grad                               # freeze=True
    gaussian.from_pretrained(Tensor(data=pretrained), freeze=False)
    assert gaussian.W.requires_grad and gaussian.W.stores_grad


def test_layer_device_and_dtype_checks(singa):
    from singa import layer

    class Scale(layer.Layer):                     # as SINGA's trans/model.py Linear3D
        def __init__(self):
            super().__init__()
            self.W = Tensor(data=np.full((2,), 3.0), stores_grad=True)     # float64

        def forward(self, x):
            self.device_check(x, self.W)
            self.dtype_check(x, self.W)
            return x * self.W

    net = Scale()
    assert isinstance(net, autograd.Layer)
    y = net(Tensor(data=np.ones((1, 2), np.float32)))
    assert net.W.dtype == np.float32 and y.dtype == np.float32
    np.testing.assert_array_equal(y.to_numpy(), [[3.0, 3.0]])


@pytest.mark.parametrize("name, compare", [("lt", np.less), ("le", np.less_equal),
                                           ("gt", np.greater), ("ge", np.greater_equal),
                                           ("eq", np.equal)])
def test_tensor_comparisons_give_ones_and_zeros(singa, name, compare):
    from singa import tensor
    a = np.array([[0.0, 1.0, 2.0]], np.float32)
    b = np.array([[1.0, 1.0, 1.0]], np.float32)
    for other in (1.0, Tensor(data=b)):
        got = getattr(tensor, name)(Tensor(data=a), other)
        assert got.dtype == np.float32 and not got.requires_grad
        np.testing.assert_array_equal(got.to_numpy(), compare(a, b).astype(np.float32))


def test_from_numpy_stores_float64_as_float32_and_int64_as_int32(singa):
    from singa import device, tensor
    values = np.linspace(0, 1, 6).reshape(2, 3)                          # float64
    t = tensor.from_numpy(values, device.get_default_device())
    assert t.dtype == np.float32 and t.device is autograd.device.cpu()
    np.testing.assert_allclose(t.to_numpy(), values, rtol=1e-7)
    assert tensor.from_numpy(np.arange(3)).dtype == np.int32
    assert tensor.from_numpy(np.ones(2, np.float16)).dtype == np.float16
    assert autograd.tensor.from_numpy(values).dtype == np.float64            # plain autograd keeps it
    with pytest.raises(TypeError, match="expected a NumPy array"):
        tensor.from_numpy([1.0, 2.0])


def test_model_parameters_carry_their_dotted_names(singa):
    """SINGA names a layer's Tensors by their path; examples/gan selects by it."""
    from singa import layer, model, tensor

    class Net(model.Model):
        def __init__(self):
            super().__init__()
            self.gen_fc = layer.Linear(3)
            self.dis_fc = layer.Linear(1)

        def forward(self, x):
            return self.dis_fc(self.gen_fc(x))

    net = Net()
    net.compile([tensor.Tensor((2, 4))], is_train=False)
    assert {p.name for p in net.parameters()} == {"gen_fc.W", "gen_fc.b", "dis_fc.W", "dis_fc.b"}
    later = Net()                                   # no compile: named after its first call
    later.eval()
    later(Tensor(data=np.ones((2, 4), np.float32)))
    assert sorted(p.name for p in later.parameters()) == ["dis_fc.W", "dis_fc.b", "gen_fc.W",
                                                          "gen_fc.b"]
