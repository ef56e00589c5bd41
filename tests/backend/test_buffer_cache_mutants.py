"""Where the backend's mutation run found autograd/backend/buffer_cache.py's tests blind
(docs/testing.md): the idle reference count (computed at import, so called here in-process),
the first-use hooks' order, the bytes empty_cache reports for several idle buffers, and the
lock a forked child gets (called here in-process: the fork test's child is not credited)."""
import threading

import numpy as np
import pytest

from autograd.backend import buffer_cache as memory

pytestmark = pytest.mark.cpu_only     # host buffers: the GPU's memory is CuPy's pool

LARGE = (2, 1 << 18)          # 2 MiB of float32: above memory.MIN_BYTES


@pytest.fixture
def fresh_cache(monkeypatch):
    """An empty list of kept buffers for the test, the suite's own put back afterwards."""
    monkeypatch.setattr(memory, "_kept", [])


def test_the_idle_count_is_that_of_a_buffer_no_array_uses(fresh_cache, monkeypatch):
    """_idle_reference_count() (run at import for _IDLE) measured again beside a buffer that a
    living view still uses: the same count as at import, and with it an idle buffer is handed
    out again while the used one is not."""
    idle = memory.empty(np, LARGE, np.float32)
    in_use = memory.empty(np, LARGE, np.float32)[:, 0]    # kept last, next to the probe
    idle_address = idle.ctypes.data
    del idle
    count = memory._idle_reference_count()
    assert count == memory._IDLE
    assert len(memory._kept) == 2                          # its probe taken out again
    monkeypatch.setattr(memory, "_IDLE", count)
    assert memory._reference_count(1) > count             # in_use's buffer
    again = memory.empty(np, LARGE, np.float32)
    assert again.ctypes.data == idle_address and not np.shares_memory(again, in_use)


def test_first_use_hooks_run_once_in_the_order_they_were_added(fresh_cache, monkeypatch):
    ran = []
    monkeypatch.setattr(memory, "_first_use_hooks", [lambda: ran.append("a"),
                                                     lambda: ran.append("b"),
                                                     lambda: ran.append("c")])
    first = memory.empty(np, LARGE, np.float32)
    second = memory.empty(np, LARGE, np.float32)
    assert ran == ["a", "b", "c"] and memory._first_use_hooks == []
    assert first.shape == second.shape == LARGE


def test_empty_cache_reports_the_bytes_of_every_idle_buffer(fresh_cache):
    """Three idle buffers of three sizes and one in use: the sum of the three comes back."""
    sizes = [1 << 20, 3 << 20, 5 << 20]
    arrays = [memory.empty(np, (size,), np.uint8) for size in sizes]
    in_use = memory.empty(np, (7 << 20,), np.uint8)
    del arrays
    assert memory.empty_cache() == sum(sizes)
    assert memory.kept_bytes() == in_use.nbytes


def test_a_new_lock_after_fork_is_a_fresh_unlocked_lock(fresh_cache, monkeypatch):
    """What the forked child's hook does, done here in this process: the lock is replaced by
    one nobody holds, and allocation works with it."""
    monkeypatch.setattr(memory, "_lock", threading.Lock())
    held = memory._lock
    held.acquire()                       # as if a thread of the parent held it at the fork
    try:
        memory.new_lock_after_fork()
        assert memory._lock is not held and not memory._lock.locked()
        assert memory.empty(np, LARGE, np.float32).shape == LARGE
        assert memory.kept_bytes() == np.prod(LARGE) * 4
    finally:
        held.release()


def test_making_room_evicts_the_least_recently_used_idle_buffers_in_order(fresh_cache,
                                                                          monkeypatch):
    """Three evictions in one request (the index shifts by one per buffer popped): a, b and c
    go, d (the most recently used) stays and is handed out again."""
    size = 1 << 20
    monkeypatch.setattr(memory, "MAX_KEPT_BYTES", 4 * size)
    arrays = [memory.empty(np, (size,), np.uint8) for _ in range(4)]
    d_address = arrays[3].ctypes.data
    del arrays                                             # all idle, a least recently used
    large = memory.empty(np, (3 * size,), np.uint8)
    assert memory.kept_bytes() == 4 * size
    again = memory.empty(np, (size,), np.uint8)
    assert again.ctypes.data == d_address and not np.shares_memory(again, large)
