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


def test_a_pass_nested_in_the_callers_own_chunk_runs_serially(forced_threads):
    """The caller's first chunk splitting a pass of its own finds the workers busy (its own
    pass holds them) and must run that pass itself, not wait for them: a blocking acquire
    would wait for ever on the caller's own lock. Run in a helper thread to see a hang."""
    inner_calls, outer = [], []

    def inner(start, stop):
        inner_calls.append((start, stop))

    def outer_chunk(start, stop):
        if start == 0:
            threads.parallel_for(inner, 9, np.empty(9))
        outer.extend(range(start, stop))

    runner = threading.Thread(target=threads.parallel_for, args=(outer_chunk, 6, np.empty(6)),
                              daemon=True)
    runner.start()
    runner.join(timeout=10)
    hung = runner.is_alive()
    if hung:                      # let it finish (a Lock may be released by any thread), so
        threads._team.busy.release()      # that the tests after this one are not stuck too
        runner.join(timeout=10)
    assert not hung, "the nested pass waited for the workers its caller holds"
    assert sorted(outer) == list(range(6)) and inner_calls == [(0, 9)]


class _Unusable:
    """A worker of a stopped team: handing it a chunk is the bug."""
    def start(self, *args):
        raise AssertionError("a chunk went to a worker of a stopped team")

    def wait(self):
        return None


def test_a_team_stopped_meanwhile_is_not_used(forced_threads):
    """set_num_threads may replace the team between parallel_for taking it and locking it;
    a stopped team's workers have ended, so the pass runs in the caller."""
    stopped = threads._Team(0)
    stopped.workers = [_Unusable(), _Unusable()]
    stopped.stopped = True
    team, threads._team = threads._team, stopped
    try:
        calls = []
        threads.parallel_for(lambda a, b: calls.append((a, b)), 6, np.empty(6))
    finally:
        threads._team = team
    assert calls == [(0, 6)]
    assert stopped.busy.acquire(blocking=False)          # released again
    stopped.busy.release()


def test_two_threads_split_an_elementwise_pass(monkeypatch):
    """set_num_threads(2) (this project's 2-core machines) splits a large pass in two."""
    previous = autograd.get_num_threads()
    monkeypatch.setattr(threads, "MIN_PARALLEL_ELEMENTS", 1)
    autograd.set_num_threads(2)
    try:
        chunks = []

        def negate(out, x):
            chunks.append(out.shape)
            np.negative(x, out=out)
        x = np.arange(12.0).reshape(6, 2)
        out = threads.elementwise(negate, np.empty_like(x), x)
        vector = np.arange(7.0)
        out_1d = threads.elementwise(negate, np.empty_like(vector), vector)
    finally:
        autograd.set_num_threads(previous)
    np.testing.assert_array_equal(out, -x)
    np.testing.assert_array_equal(out_1d, -vector)
    assert sorted(chunks) == [(3,), (3, 2), (3, 2), (4,)]


@pytest.mark.parametrize("shape", [(7,), (5, 4), (2, 9, 3)])
def test_an_in_place_elementwise_pass_touches_each_element_once(forced_threads, shape):
    """out is also an input (the convolution's bias add, ``y += bias``): the chunks must not
    overlap, or an element would be added twice."""
    rng = np.random.default_rng(6)
    y0, bias = rng.standard_normal(shape), rng.standard_normal(shape)
    y = y0.copy()
    threads.elementwise(lambda out, a, b: np.add(a, b, out=out), y, y, bias)
    np.testing.assert_array_equal(y, y0 + bias)


def test_a_0d_output_is_computed_in_one_call(forced_threads):
    """A 0-d out has no axis to split (MIN_PARALLEL_ELEMENTS forced to 1 lets it through)."""
    out = threads.elementwise(lambda out, x: np.multiply(x, 2, out=out), np.empty(()),
                              np.array(1.5))
    assert out.shape == () and out == 3.0


def test_a_pass_that_took_the_team_before_set_num_threads_replaced_it_runs_itself(
        forced_threads):
    """The race set_num_threads leaves open, made deterministic: the old team (its workers
    stopped) is what a pass read before the change; it must be marked stopped, and the pass
    must run in its caller rather than hand chunks to threads that have ended."""
    threads.parallel_for(lambda a, b: None, 6, np.empty(6))      # the team of 3 exists
    old = threads._team
    autograd.set_num_threads(2)
    assert old.stopped is True and not any(w.thread.is_alive() for w in old.workers)
    current, threads._team = threads._team, old
    calls = []
    try:
        runner = threading.Thread(target=threads.parallel_for,
                                  args=(lambda a, b: calls.append((a, b)), 6, np.empty(6)),
                                  daemon=True)
        runner.start()
        runner.join(timeout=10)
        hung = runner.is_alive()
    finally:
        threads._team = current
    assert not hung, "a chunk went to a stopped worker"
    assert calls == [(0, 6)]


def test_stopping_the_workers_raises_nothing_in_them(forced_threads, monkeypatch):
    """A worker told to stop ends cleanly (no exception reported from its thread)."""
    reported = []
    monkeypatch.setattr(threading, "excepthook", lambda args: reported.append(args))
    threads.parallel_for(lambda a, b: None, 6, np.empty(6))
    workers = [worker.thread for worker in threads._team.workers]
    autograd.set_num_threads(2)
    assert not any(thread.is_alive() for thread in workers)
    assert reported == []


def test_first_split_hooks_run_once_in_the_order_they_were_added(monkeypatch):
    ran = []
    monkeypatch.setattr(threads, "first_split_hooks", [lambda: ran.append("a"),
                                                       lambda: ran.append("b"),
                                                       lambda: ran.append("c")])
    first = threads._get_team()
    assert threads._get_team() is first
    assert ran == ["a", "b", "c"] and threads.first_split_hooks == []


def test_a_small_pass_runs_in_one_call_at_two_threads(monkeypatch):
    """Below MIN_PARALLEL_ELEMENTS a pass is not split, whatever the thread count (mutmut's
    runs set OMP_NUM_THREADS=1, so the suite's own test of this ran at one thread)."""
    previous = autograd.get_num_threads()
    autograd.set_num_threads(2)
    try:
        calls = []
        threads.parallel_for(lambda a, b: calls.append((a, b, threading.get_ident())), 8,
                             np.empty(8))
    finally:
        autograd.set_num_threads(previous)
    assert calls == [(0, 8, threading.get_ident())]


def test_ascontiguousarray_copies_a_numpy_view_through_the_split_copy(monkeypatch):
    """A strided NumPy view is copied by threads.copy into a cached buffer (split across the
    threads when large); a contiguous one comes back as itself."""
    copies = []
    real = threads.copy

    def recorded(destination, source):
        copies.append(source.shape)
        return real(destination, source)
    monkeypatch.setattr(threads, "copy", recorded)
    source = np.arange(24.0).reshape(4, 6)
    result = threads.ascontiguousarray(source.T)
    assert copies == [(6, 4)] and result.flags.c_contiguous
    np.testing.assert_array_equal(result, source.T)
    assert threads.ascontiguousarray(source) is source and copies == [(6, 4)]
