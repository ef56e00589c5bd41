"""Fixtures of the kernel tests."""
import pytest

import autograd
from autograd.backend import threads


@pytest.fixture
def forced_threads(monkeypatch):
    """Three threads and no size floor: every pass that can split does, even on 2x3 arrays."""
    previous = autograd.get_num_threads()
    monkeypatch.setattr(threads, "MIN_PARALLEL_ELEMENTS", 1)
    autograd.set_num_threads(3)
    yield
    autograd.set_num_threads(previous)



@pytest.fixture(params=[1, 3], ids=["one thread", "three threads"])
def thread_count(request, monkeypatch):
    """One thread, or three with no size floor (every pass that can split does)."""
    previous = autograd.get_num_threads()
    monkeypatch.setattr(threads, "MIN_PARALLEL_ELEMENTS", 1)
    autograd.set_num_threads(request.param)
    yield request.param
    autograd.set_num_threads(previous)
