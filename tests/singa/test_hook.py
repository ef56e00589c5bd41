"""The import hook (autograd/singa/hook.py, install/uninstall in autograd/singa/__init__.py)."""
import subprocess
import sys
import warnings

import numpy as np
import pytest

import autograd
import autograd.singa


@pytest.fixture
def hook():
    autograd.singa.install()
    yield
    autograd.singa.uninstall()
    autograd.training = True


def test_singa_modules_resolve_to_autograds(hook):
    import singa
    from singa import autograd as singa_autograd, layer, model, tensor, opt, device, initializer
    assert singa_autograd.matmul is autograd.matmul
    assert layer.Conv2d is autograd.Conv2d and issubclass(layer.Layer, autograd.Layer)
    assert tensor.Tensor is autograd.Tensor and opt.SGD is autograd.opt.SGD
    assert device.get_default_device() is autograd.device.get_default_device()
    assert initializer.he_normal is autograd.initializer.he_normal
    assert issubclass(model.Model, autograd.Model)
    assert singa.tensor is tensor                     # attribute access on the package too
    from singa.tensor import from_numpy, zeros
    assert zeros is autograd.tensor.zeros
    assert from_numpy is autograd.singa.names.from_numpy          # SINGA's float32 storage
    names = {}
    exec("from singa.tensor import *", names)
    assert names["Tensor"] is autograd.Tensor and names["float16"] is np.float16


def test_assignment_reaches_autograds_module_flag(hook):
    from singa import autograd as singa_autograd
    singa_autograd.training = False
    assert autograd.training is False
    singa_autograd.training = True
    assert autograd.training is True


def test_missing_names_and_modules_say_what_and_where(hook):
    from singa import tensor, opt, singa_wrap
    with pytest.raises(AttributeError, match=r"^singa\.tensor\.from_raw_tensor: this SINGA name "
                                             r"has no counterpart in autograd; docs/singa\.md"):
        tensor.from_raw_tensor
    with pytest.raises(AttributeError, match=r"singa\.singa_wrap\.Tensor: singa_wrap is "
                                             r"SINGA's compiled C\+\+ binding.*docs/singa\.md"):
        singa_wrap.Tensor
    with pytest.raises(ModuleNotFoundError, match=r"singa\.converter: there is no Caffe "
                                                  r"converter; docs/singa\.md"):
        from singa import converter    # noqa: F401
    with pytest.raises(ModuleNotFoundError, match=r"singa\.utils: autograd has no counterpart"):
        import singa.utils             # noqa: F401


def test_singa_only_spellings(hook):
    from singa import tensor, model
    loss = autograd.Tensor(data=np.float32(0.25))
    assert loss.to_numpy().shape == ()
    np.testing.assert_array_equal(tensor.to_numpy(loss), [0.25])      # SINGA: no 0-d tensors
    assert tensor.to_numpy(autograd.Tensor(shape=(2, 3))).shape == (2, 3)
    assert tensor.float16 is np.float16

    class Net(model.Model):
        def __init__(self):
            super().__init__()
            self.linear = autograd.Linear(3)

        def forward(self, x):
            return self.linear(x)

        def train_one_batch(self, x):
            return self.forward(x)

    net = Net()
    net.compile([autograd.Tensor(shape=(2, 4))], is_train=False, use_graph=True,
                sequential=True)
    assert net.linear.W.shape == (4, 3) and net.sequential is True
    x = autograd.Tensor(data=np.ones((2, 4), np.float32))
    assert net.graph_step is not None
    [net(x) for _ in range(3)]            # eval: forward runs eagerly, as SINGA's Model
    assert net.graph_step.replays == 0 and net.graph_step.captures == 0
    net.train()                           # training calls: recorded twice, then replayed
    outputs = [net(x).to_numpy() for _ in range(3)]
    np.testing.assert_array_equal(outputs[0], outputs[2])
    assert net.graph_step.replays == 1
    net.graph(False)
    assert net.graph_step is None

    class Reading(Net):                          # a host read: SINGA's Model runs it eagerly
        def forward(self, x):
            y = self.linear(x)
            y.to_numpy()
            return y

    reading = Reading()
    reading.compile([x], is_train=True, use_graph=True)
    with pytest.warns(RuntimeWarning, match="to_numpy.*runs eagerly"):
        reading(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reading(x)


def test_cpu_install_maps_gpu_requests_to_the_cpu():
    autograd.singa.install(cpu=True)
    try:
        from singa import device
        assert device.create_cuda_gpu_on(0) is autograd.device.cpu()
        assert device.create_cuda_gpus(2) == [autograd.device.cpu()] * 2
    finally:
        autograd.singa.uninstall()


def test_nothing_named_singa_exists_without_the_hook():
    autograd.singa.install()
    import singa  # noqa: F401
    autograd.singa.uninstall()
    assert "singa" not in sys.modules and autograd.singa.installed() is None
    with pytest.raises(ModuleNotFoundError, match="No module named 'singa'"):
        import singa  # noqa: F401,F811
    # nor in a fresh process that imports autograd and autograd.singa
    code = "import autograd, autograd.singa\ntry:\n import singa\nexcept ImportError: print('no')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "no", out.stderr
