"""Devices: where a Tensor's array lives, and the array module (NumPy or CuPy) that computes on it.

CuPy is optional and imported only when a GPU is asked for, so ``import autograd`` works on any
machine. Every operation finds its array module from its inputs with :func:`get_array_module`,
so one implementation serves both devices.

>>> cpu().kind, cpu() is cpu()
('cpu', True)
"""
from __future__ import annotations

import numpy as np

__all__ = [
    "Device", "cpu", "gpu", "create_cuda_gpu", "create_cuda_gpu_on", "get_default_device",
    "set_default_device", "get_array_module", "device_of_array", "move_array", "manual_seed",
    "get_rng_state", "set_rng_state",
]


class Device:
    """A place where arrays live: ``cpu`` or ``gpu:N``. Compare with ``==``; one object per place.

    ``xp`` is the array module (``numpy`` or ``cupy``); ``random`` is this device's generator,
    reseeded by :func:`manual_seed`, which initialisers and dropout draw from.
    """

    __slots__ = ("kind", "index", "xp", "random")

    def __init__(self, kind, index, xp):
        self.kind = kind
        self.index = index
        self.xp = xp
        self.random = xp.random.default_rng()

    def __repr__(self):
        return "cpu" if self.kind == "cpu" else f"gpu:{self.index}"

    def seed(self, seed: int | None) -> None:
        """Restart this device's random generator from ``seed``. On the CPU the generator
        object stays the same (its state is reset), so what holds it, such as an op a
        captured step replays, draws from the new seed too."""
        with self.activate():
            fresh = self.xp.random.default_rng(seed)
            if self.kind == "cpu":
                self.random.bit_generator.state = fresh.bit_generator.state
            else:
                self.random = fresh

    # SINGA's C++ Device methods that its example drivers call.
    def SetRandSeed(self, seed):
        """SINGA's spelling of :meth:`seed`."""
        self.seed(seed)

    def id(self):
        """SINGA's device id: -1 for the host, the GPU's index otherwise."""
        return -1 if self.kind == "cpu" else self.index

    def SetVerbosity(self, verbosity):
        """Accepted and ignored: SINGA's verbosity only controls graph-mode profiling."""

    def PrintTimeProfiling(self):
        """Prints nothing: SINGA profiles only buffered graph runs, which do not exist here."""

    def SetSkipIteration(self, iterations):
        """Accepted and ignored: SINGA skips that many graph runs before profiling."""

    def Sync(self):
        """Wait until this device has finished its queued work (a no-op on the CPU)."""
        if self.kind != "cpu":
            with self.activate():
                self.xp.cuda.Device(self.index).synchronize()

    def graph_enabled(self):
        """Always False: every operation runs eagerly (there is no buffered graph)."""
        return False

    def activate(self):
        """A context manager that makes this device current for CuPy (a no-op on the CPU)."""
        if self.kind == "cpu":
            return _NullContext()
        return self.xp.cuda.Device(self.index)


class _NullContext:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


_CPU = Device("cpu", 0, np)
_gpus: dict = {}
_default = _CPU
_seed = None          # the last manual_seed, applied to GPUs created after it
_cupy = None          # the cupy module once a GPU has been asked for


def cpu() -> Device:
    """The host device (NumPy arrays)."""
    return _CPU


def _import_cupy():
    global _cupy
    if _cupy is None:
        try:
            import cupy
        except ImportError as error:
            raise RuntimeError(
                "gpu: CuPy is not installed; install the GPU extra "
                "(pip install -e \".[gpu]\") on a machine with an NVIDIA GPU") from error
        _cupy = cupy
    return _cupy


def gpu(index: int = 0) -> Device:
    """The NVIDIA GPU number ``index`` (CuPy arrays). Raises RuntimeError naming what is missing."""
    device = _gpus.get(index)
    if device is not None:
        return device
    cupy = _import_cupy()
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as error:   # CUDA driver missing or broken: say so instead of a CUDA trace
        raise RuntimeError(f"gpu: CuPy is installed but no CUDA GPU is usable ({error})") from error
    if not 0 <= index < count:
        raise RuntimeError(f"gpu: asked for gpu:{index} but this machine has {count} GPU(s)")
    with cupy.cuda.Device(index):
        device = Device("gpu", index, cupy)
    if _seed is not None:
        device.seed(_seed + index)
    _gpus[index] = device
    return device


def create_cuda_gpu() -> Device:
    """SINGA's spelling of ``gpu(0)``."""
    return gpu(0)


def create_cuda_gpu_on(index: int) -> Device:
    """SINGA's spelling of ``gpu(index)``."""
    return gpu(index)


def get_default_device() -> Device:
    """The device new Tensors go to when none is given (the CPU unless changed)."""
    return _default


def set_default_device(device: Device) -> None:
    """Make ``device`` the one new Tensors go to when none is given."""
    global _default
    if not isinstance(device, Device):
        raise TypeError(f"set_default_device: expected a Device, got {type(device).__name__}")
    _default = device


def get_array_module(array):
    """``numpy`` for a NumPy array (or scalar), ``cupy`` for a CuPy array."""
    if _cupy is not None and isinstance(array, _cupy.ndarray):
        return _cupy
    return np


def device_of_array(array):
    """The Device an array lives on."""
    if _cupy is not None and isinstance(array, _cupy.ndarray):
        return gpu(array.device.id)
    return _CPU


def manual_seed(seed: int) -> None:
    """Seed the random generator of every device, present and future, so runs repeat.

    >>> manual_seed(0); a = cpu().random.random(); manual_seed(0); a == cpu().random.random()
    True
    """
    global _seed
    _seed = seed
    _CPU.seed(seed)
    for index, device in _gpus.items():
        device.seed(seed + index)


def get_rng_state() -> dict[str, dict]:
    """The state of every device's random generator, ``{"cpu": state, "gpu:0": ...}``, for a
    checkpoint: :func:`set_rng_state` puts it back, so dropout masks and random initialisers
    continue exactly where they were (PyTorch's ``torch.get_rng_state``). Plain dicts and ints,
    which ``autograd.io.save`` stores. A GPU whose CuPy generator cannot export its state is
    left out (its draws after a resume differ from an uninterrupted run's).

    >>> state = get_rng_state(); a = cpu().random.random()
    >>> set_rng_state(state); a == cpu().random.random()
    True
    """
    states = {"cpu": _CPU.random.bit_generator.state}
    for index, device in _gpus.items():
        state = getattr(getattr(device.random, "bit_generator", None), "state", None)
        if isinstance(state, dict):
            states[repr(device)] = state
    return states


def set_rng_state(states: dict[str, dict]) -> None:
    """Restore what :func:`get_rng_state` returned (devices not named keep their state)."""
    if not isinstance(states, dict):
        raise TypeError(f"set_rng_state: expected the dict get_rng_state returned, got "
                        f"{type(states).__name__}")
    devices = {"cpu": _CPU, **{repr(d): d for d in _gpus.values()}}
    unknown = sorted(set(states) - set(devices))
    if unknown:
        raise ValueError(f"set_rng_state: no device {unknown[0]!r} in this process (have "
                         f"{sorted(devices)})")
    for name, state in states.items():
        devices[name].random.bit_generator.state = state


def move_array(array, device):
    """``array`` on ``device``: the same object if it is already there, else a copy."""
    if device_of_array(array) is device:
        return array
    if device.kind == "cpu":
        return array.get()
    with device.activate():
        return device.xp.asarray(array)
