"""Layer.to_device asks every parameter and every buffer, nested layers included, to move.

Moving CPU to CPU changes nothing visible, and CI has no GPU (tests/gpu covers the real move),
so this records which tensors ``Tensor.to_device`` was called on, then lets the real method run:
the set must be exactly the layer's parameters and buffers."""
import numpy as np

import autograd
from autograd import Tensor


def _model():
    return autograd.Sequential(
        autograd.Conv2d(2, 3, 3, padding=1), autograd.BatchNorm2d(3), autograd.ReLU(),
        autograd.Flatten(), autograd.Linear(3 * 4 * 4, 5), autograd.BatchNorm1d(5))


def test_to_device_moves_every_parameter_and_buffer(monkeypatch):
    model = _model()
    moved = []
    real = Tensor.to_device

    def recording(tensor, device):
        moved.append((tensor, device))
        return real(tensor, device)

    monkeypatch.setattr(Tensor, "to_device", recording)
    device = autograd.device.cpu()
    assert model.to_device(device) is model
    expected = model.parameters() + model.buffers()
    assert len(model.buffers()) == 4                       # two BatchNorms, two buffers each
    assert {id(t) for t, _ in moved} == {id(t) for t in expected}
    assert len(moved) == len(expected) and all(d is device for _, d in moved)
    # in place: the same Tensor objects, still holding their values
    for name, tensor in model.get_states().items():
        assert tensor.device is device, name
    np.testing.assert_array_equal(model[1].running_var.to_numpy(), np.ones(3, np.float32))
