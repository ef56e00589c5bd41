"""Fixtures of the kernel tests."""
import pytest

import autograd
from autograd.backend import threads
from tests.backend import native_helpers


@pytest.fixture
def forced_threads(monkeypatch):
    """Three threads and no size floor: every pass that can split does, even on 2x3 arrays."""
    previous = autograd.get_num_threads()
    monkeypatch.setattr(threads, "MIN_PARALLEL_ELEMENTS", 1)
    autograd.set_num_threads(3)
    yield
    autograd.set_num_threads(previous)


@pytest.fixture(scope="module", params=native_helpers.builds())
def instruction_set(request):
    """Each build of the compiled kernels that this CPU runs (AVX-512, AVX2, the baseline), in
    turn (module-scoped: hypothesis tests use it)."""
    from autograd.backend import native
    current = native._native.get_instruction_set()
    native._native.set_instruction_set(request.param)
    yield request.param
    native._native.set_instruction_set(current)
