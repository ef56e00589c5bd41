"""Where the backend's mutation run found autograd/backend/threads.py's tests blind
(docs/testing.md): the default thread count (computed at import, and tested before only in a
subprocess, which mutmut does not credit: called here in-process with the environment and the
CPU count set), the fork hook registered once, the team forgotten in a forked child, and the
worker threads' daemon flag (a non-daemon worker keeps the interpreter from exiting)."""
import os
import threading

import numpy as np
import pytest

import autograd
from autograd.backend import threads

pytestmark = pytest.mark.cpu_only     # intra-op threads of the CPU backend


@pytest.fixture
def environment(monkeypatch):
    """No thread-count variable set, and this many CPUs available to the process."""
    monkeypatch.delenv("AUTOGRAD_NUM_THREADS", raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)

    def cpus(count):
        monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(count)),
                            raising=False)
    cpus(4)
    return cpus


@pytest.mark.parametrize("autograd_value, omp_value, expected", [
    ("3", "1", 3),            # AUTOGRAD_NUM_THREADS first
    (" 5 ", None, 5),         # spaces around it are ignored
    ("1", "6", 1),            # 1 is a valid count (threading off)
    (None, "2", 2),           # else OMP_NUM_THREADS
    ("0", "2", 2),            # 0 is not a count: the next variable
    ("two", None, 4),         # nor a word: the CPUs (4 here)
    ("", "", 4),
    ("-3", None, 4),
])
def test_default_thread_count_from_the_environment(environment, monkeypatch, autograd_value,
                                                   omp_value, expected):
    for name, value in (("AUTOGRAD_NUM_THREADS", autograd_value),
                        ("OMP_NUM_THREADS", omp_value)):
        if value is not None:
            monkeypatch.setenv(name, value)
    assert threads._default_num_threads() == expected


@pytest.mark.parametrize("available, expected", [(1, 1), (3, 3), (8, 8), (12, 8)])
def test_default_thread_count_is_the_cpus_available_at_most_eight(environment, available,
                                                                  expected):
    environment(available)
    assert threads._default_num_threads() == expected


@pytest.mark.parametrize("cpu_count, expected", [(None, 1), (1, 1), (5, 5), (20, 8)])
def test_without_an_affinity_call_the_cpu_count_is_used(environment, monkeypatch, cpu_count,
                                                        expected):
    """macOS and Windows have no os.sched_getaffinity: os.cpu_count(), which may be None."""
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: cpu_count)
    assert threads._default_num_threads() == expected


def test_the_fork_hook_is_registered_once_with_the_team_reset(monkeypatch):
    registered = []
    monkeypatch.setattr(os, "register_at_fork", lambda **hooks: registered.append(hooks))
    monkeypatch.setattr(threads, "_fork_hook_registered", False)
    threads._register_fork_hook()
    threads._register_fork_hook()
    assert registered == [{"after_in_child": threads._forget_team_after_fork}]
    assert threads._fork_hook_registered is True


def test_no_fork_hook_where_the_platform_has_none(monkeypatch):
    monkeypatch.delattr(os, "register_at_fork", raising=False)
    monkeypatch.setattr(threads, "_fork_hook_registered", False)
    threads._register_fork_hook()            # nothing to call: no error
    assert threads._fork_hook_registered is False


def test_forgetting_the_team_after_fork_leaves_a_fresh_lock_and_no_team(monkeypatch):
    """What the forked child's hook does, done here in this process (the parent's team and lock
    are put back afterwards)."""
    monkeypatch.setattr(threads, "_team", threads._team)
    held = threading.Lock()
    held.acquire()                      # a parent's thread held it at the fork
    monkeypatch.setattr(threads, "_team_lock", held)
    threads._forget_team_after_fork()
    assert threads._team is None
    assert threads._team_lock is not held and not threads._team_lock.locked()
    held.release()


def test_worker_threads_are_named_daemons(monkeypatch):
    """The pool's threads must not keep the interpreter alive at exit (daemon), and carry a
    name that says what they are in a thread dump."""
    previous = autograd.get_num_threads()
    monkeypatch.setattr(threads, "MIN_PARALLEL_ELEMENTS", 1)
    autograd.set_num_threads(3)
    try:
        covered = []
        threads.parallel_for(lambda a, b: covered.extend(range(a, b)), 6, np.empty(6))
        assert sorted(covered) == list(range(6))
        workers = [worker.thread for worker in threads._team.workers]
        assert len(workers) == 2
        assert all(thread.daemon and thread.name == "autograd-intraop" for thread in workers)
    finally:
        autograd.set_num_threads(previous)
