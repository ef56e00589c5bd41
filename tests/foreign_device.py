"""A stand-in for a GPU where none exists: a Device ``gpu:7`` whose array module is not NumPy
(it lends NumPy's functions, and its arrays are a NumPy subclass, so the maths still runs) and
whose ``cuda.Device`` records which index was made current. Tests of device checks and device
activation use it on the CPU; the real thing is tested in tests/gpu/."""
from types import SimpleNamespace

import numpy as np

from autograd import Tensor
from autograd.device import Device


class ForeignArray(np.ndarray):
    """Stands in for another device's array type (a CuPy array where no GPU exists)."""


class CurrentDevice:
    """Stands in for cupy.cuda.Device: records which device index was made current."""
    entered = []

    def __init__(self, index):
        self.index = index

    def __enter__(self):
        CurrentDevice.entered.append(self.index)

    def __exit__(self, *exc):
        return False


class _ForeignModule:
    """NumPy's functions under another module's name: what ops call on ``device.xp`` runs."""
    ndarray = ForeignArray
    cuda = SimpleNamespace(Device=CurrentDevice)
    random = SimpleNamespace(default_rng=lambda seed=None: np.random.default_rng(seed))

    def __getattr__(self, name):
        return getattr(np, name)


FOREIGN_MODULE = _ForeignModule()
FOREIGN_DEVICE = Device("gpu", 7, FOREIGN_MODULE)


def tensor_on_a_foreign_device(values, dtype=np.float32):
    """A Tensor on ``gpu:7`` holding ``values``, outside any graph."""
    data = np.array(values, dtype).view(ForeignArray)
    return Tensor.from_operation(data, FOREIGN_DEVICE, None, 0)
