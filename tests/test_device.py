"""SINGA's C++ Device methods that drivers call (autograd/device.py)."""
import numpy as np

import autograd
from autograd import device


def test_set_rand_seed_restarts_the_device_generator():
    dev = device.cpu()
    dev.SetRandSeed(7)
    first = autograd.Tensor(shape=(4,)).gaussian(0.0, 1.0).to_numpy()
    dev.seed(7)                             # the method it spells
    again = autograd.Tensor(shape=(4,)).gaussian(0.0, 1.0).to_numpy()
    np.testing.assert_array_equal(first, again)
    dev.SetRandSeed(8)
    assert not np.array_equal(first, autograd.Tensor(shape=(4,)).gaussian(0.0, 1.0).to_numpy())


def test_driver_methods_that_mean_nothing_here():
    dev = device.cpu()
    assert dev.id() == -1                   # SINGA's host device id
    assert dev.graph_enabled() is False
    assert dev.SetVerbosity(3) is None and dev.PrintTimeProfiling() is None
    assert dev.SetSkipIteration(5) is None and dev.Sync() is None
