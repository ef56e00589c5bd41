"""Device survivors of the full mutation run. gpu() and the generator states of GPUs are
driven through a stand-in CuPy module (sys.modules["cupy"]: a device count, a recorded
``cuda.Device``, NumPy's generator), as tests/opt drives MPI through a stand-in; messages are
checked word for word and draws against ``numpy.random.default_rng`` with the documented seed."""
import re
import sys
import types

import numpy as np
import pytest

from autograd import device
from autograd.device import Device


class _StandInArray(np.ndarray):
    """A "CuPy array" of the stand-in: a NumPy subclass, so arithmetic still runs; it lives on
    ``gpu:<on>`` and ``get()`` copies it to the host."""
    on = 1

    @property
    def device(self):
        return types.SimpleNamespace(id=self.on)

    def get(self):
        return np.array(self).view(np.ndarray)


def _stand_in_cupy(count):
    entered, synchronized = [], []

    class CudaDevice:
        def __init__(self, index):
            self.index = index

        def __enter__(self):
            entered.append(self.index)

        def __exit__(self, *exc):
            return False

        def synchronize(self):
            synchronized.append(self.index)

    def device_count():
        if isinstance(count, Exception):
            raise count
        return count
    cupy = types.ModuleType("cupy")
    cupy.ndarray = _StandInArray
    cupy.asarray = lambda array: np.array(array).view(_StandInArray)
    cupy.random = types.SimpleNamespace(default_rng=np.random.default_rng)
    cupy.cuda = types.SimpleNamespace(Device=CudaDevice, runtime=types.SimpleNamespace(
        getDeviceCount=device_count))
    cupy.entered, cupy.synchronized = entered, synchronized
    return cupy


@pytest.fixture
def machine(monkeypatch):
    """A process that has asked for no GPU yet; ``machine(count)`` installs the stand-in."""
    monkeypatch.setattr(device, "_gpus", {})
    monkeypatch.setattr(device, "_cupy", None)
    monkeypatch.setattr(device, "_seed", None)
    saved = device.cpu().random.bit_generator.state

    def install(count):
        cupy = _stand_in_cupy(count)
        monkeypatch.setitem(sys.modules, "cupy", cupy)
        return cupy
    yield install
    device.cpu().random.bit_generator.state = saved


def test_without_cupy_gpu_says_what_to_install_word_for_word(machine, monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)
    with pytest.raises(RuntimeError) as info:
        device.gpu()
    assert str(info.value) == ('gpu: CuPy is not installed; install the GPU extra '
                               '(pip install -e ".[gpu]") on a machine with an NVIDIA GPU')


def test_gpu_makes_one_device_per_index_made_current_while_built(machine):
    cupy = machine(2)
    for index in (0, 1):
        made = device.gpu(index)
        assert (made.kind, made.index, made.xp, repr(made), made.id()) == \
            ("gpu", index, cupy, f"gpu:{index}", index)
        assert device.gpu(index) is made
    assert cupy.entered == [0, 1]
    assert device.create_cuda_gpu() is device.gpu(0) is device.gpu()
    assert device.create_cuda_gpu_on(1) is device.gpu(1)
    array = np.ones(3).view(_StandInArray)
    assert device.get_array_module(array) is cupy            # CuPy is remembered once asked


@pytest.mark.parametrize("index", [2, -1])
def test_an_index_the_machine_lacks_is_refused_word_for_word(machine, index):
    machine(2)
    with pytest.raises(RuntimeError) as info:
        device.gpu(index)
    assert str(info.value) == f"gpu: asked for gpu:{index} but this machine has 2 GPU(s)"


def test_a_broken_cuda_is_named_word_for_word(machine):
    machine(RuntimeError("cudaErrorInsufficientDriver"))
    with pytest.raises(RuntimeError) as info:
        device.gpu(0)
    assert str(info.value) == ("gpu: CuPy is installed but no CUDA GPU is usable "
                               "(cudaErrorInsufficientDriver)")


def _draws(generator):
    return generator.standard_normal(4)


def test_manual_seed_seeds_each_gpu_with_seed_plus_index_before_and_after_it_exists(machine):
    machine(2)
    device.manual_seed(11)
    later = device.gpu(1)                                      # made after the seed
    np.testing.assert_array_equal(_draws(later.random), _draws(np.random.default_rng(12)))
    device.manual_seed(5)                                      # and reseeded by the next one
    np.testing.assert_array_equal(_draws(later.random), _draws(np.random.default_rng(6)))
    np.testing.assert_array_equal(_draws(device.cpu().random),
                                  _draws(np.random.default_rng(5)))


def test_a_gpu_made_before_any_manual_seed_is_built_unseeded(machine):
    machine(1)
    assert _draws(device.gpu(0).random).shape == (4,)


def test_cpu_seed_resets_the_same_generator_object():
    # what holds cpu().random (an op a captured step replays) draws from the new seed too
    generator = device.cpu().random
    saved = generator.bit_generator.state
    try:
        device.cpu().seed(3)
        assert device.cpu().random is generator
        np.testing.assert_array_equal(_draws(generator), _draws(np.random.default_rng(3)))
    finally:
        generator.bit_generator.state = saved


def test_a_fresh_device_seeds_syncs_and_reports_its_place(machine):
    cupy = machine(4)
    made = Device("gpu", 3, cupy)
    made.seed(9)
    assert cupy.entered == [3]                                 # seeded with gpu:3 current
    np.testing.assert_array_equal(_draws(made.random), _draws(np.random.default_rng(9)))
    made.Sync()
    assert cupy.synchronized == [3] and made.id() == 3 and repr(made) == "gpu:3"
    host = Device("cpu", 0, np)
    assert repr(host) == "cpu" and host.id() == -1 and host.xp is np
    host.seed(4)
    np.testing.assert_array_equal(_draws(host.random), _draws(np.random.default_rng(4)))


def test_rng_state_round_trips_every_device_and_skips_a_stateless_generator(machine):
    machine(3)
    one, two = device.gpu(1), device.gpu(2)
    device.manual_seed(0)
    two.random = types.SimpleNamespace()                      # a CuPy generator: no state
    state = device.get_rng_state()
    assert sorted(state) == ["cpu", "gpu:1"]
    assert state["gpu:1"] == np.random.default_rng(1).bit_generator.state
    expected = _draws(one.random), _draws(device.cpu().random)
    device.set_rng_state(state)
    np.testing.assert_array_equal(_draws(one.random), expected[0])
    np.testing.assert_array_equal(_draws(device.cpu().random), expected[1])


def test_set_rng_state_refuses_what_get_rng_state_cannot_have_made(machine):
    machine(2)
    device.gpu(1)
    with pytest.raises(TypeError) as info:
        device.set_rng_state([("cpu", {})])
    assert str(info.value) == "set_rng_state: expected the dict get_rng_state returned, got list"
    state = device.get_rng_state()
    with pytest.raises(ValueError) as info:
        device.set_rng_state({**state, "gpu:3": state["cpu"], "gpu:7": state["cpu"]})
    assert str(info.value) == ("set_rng_state: no device 'gpu:3' in this process "
                               "(have ['cpu', 'gpu:1'])")


def test_activating_the_cpu_lets_an_error_through():
    with pytest.raises(ValueError, match="inside"):
        with device.cpu().activate() as context:
            assert context is not None
            raise ValueError("inside")


def test_move_array_keeps_an_array_in_place_and_copies_between_host_and_gpu(machine):
    cupy = machine(2)
    on_gpu = np.arange(3.0).view(_StandInArray)
    device.gpu(1)                                              # CuPy asked for first
    assert device.device_of_array(on_gpu) is device.gpu(1)
    assert device.move_array(on_gpu, device.gpu(1)) is on_gpu
    host = device.move_array(on_gpu, device.cpu())
    assert type(host) is np.ndarray and host.tolist() == [0.0, 1.0, 2.0]
    assert not np.shares_memory(host, on_gpu)                  # a copy, made by get()
    cupy.entered.clear()
    back = device.move_array(host, device.gpu(1))
    assert type(back) is _StandInArray and back.tolist() == [0.0, 1.0, 2.0]
    assert cupy.entered == [1]                                 # copied with gpu:1 current
