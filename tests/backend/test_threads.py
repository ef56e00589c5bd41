"""Intra-op threads: the chunking helpers, and every threaded op checked again with threading
forced on tiny arrays against the same independent references (direct loops, NumPy formulas,
finite differences) as in its own test module."""
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from hypothesis import given, strategies as st

import autograd
from autograd.backend import buffer_cache, threads
from tests.opcase import check_case
from tests.backend import test_winograd
from tests.operations import test_activation, test_conv, test_normalization, test_pooling

pytestmark = pytest.mark.cpu_only     # intra-op threads of the CPU backend


@pytest.mark.parametrize("count", [0, -1, 1.5, True, "2"])
def test_set_num_threads_rejects_what_is_not_a_positive_int(count):
    with pytest.raises(ValueError, match="set_num_threads: expected a positive int"):
        autograd.set_num_threads(count)


@pytest.mark.parametrize("length", [1, 2, 3, 7, 100])
def test_parallel_for_covers_the_range_once_in_contiguous_chunks(forced_threads, length):
    calls, lock = [], threading.Lock()

    def record(start, stop):
        with lock:
            calls.append((start, stop, threading.get_ident()))

    threads.parallel_for(record, length, np.empty(length))
    covered = sorted(index for start, stop, _ in calls for index in range(start, stop))
    assert covered == list(range(length))
    assert len(calls) == min(3, length)
    assert threading.get_ident() in {ident for _, _, ident in calls}   # the caller takes a share


def test_parallel_for_waits_for_every_chunk_before_raising(forced_threads):
    finished = []

    def work(start, stop):
        if start == 0:
            raise RuntimeError("chunk 0 failed")
        time.sleep(0.05)
        finished.append(start)

    with pytest.raises(RuntimeError, match="chunk 0 failed"):
        threads.parallel_for(work, 3, np.empty(3))
    assert sorted(finished) == [1, 2]          # no chunk still running after the raise


def test_a_worker_error_is_raised_in_the_caller_after_every_chunk(forced_threads):
    finished = []

    def work(start, stop):
        if start > 0 and not finished:
            finished.append(start)
            raise ValueError(f"chunk at {start} failed")
        time.sleep(0.02)
        finished.append(start)

    with pytest.raises(ValueError, match="failed"):
        threads.parallel_for(work, 3, np.empty(3))
    assert len(finished) == 3
    covered = []                       # the threads serve the next pass as before
    threads.parallel_for(lambda a, b: covered.extend(range(a, b)), 9, np.empty(9))
    assert sorted(covered) == list(range(9))


def test_workers_keep_no_reference_to_a_finished_pass(forced_threads):
    """A pass's function (a closure over its arrays) is dropped once the pass returns, so a
    cached buffer it wrote is free for the next request at once."""
    import gc
    import weakref
    array = np.zeros(64)

    def fill(start, stop):
        array[start:stop] = 1

    threads.parallel_for(fill, 64, array)
    finished, watched = weakref.ref(fill), weakref.ref(array)
    del fill, array
    gc.disable()                       # reference counts alone must free them
    try:
        assert finished() is None and watched() is None
    finally:
        gc.enable()


def test_concurrent_callers_each_cover_their_range_once(forced_threads):
    """Two user threads splitting passes at once: whoever finds the workers busy runs its pass
    itself; every range is still covered exactly once and nothing waits for ever."""
    results, errors = {}, []

    def caller(name):
        try:
            for round_ in range(50):
                seen, lock = [], threading.Lock()

                def record(start, stop):
                    time.sleep(0.0005)
                    with lock:
                        seen.extend(range(start, stop))
                threads.parallel_for(record, 12, np.empty(12))
                assert sorted(seen) == list(range(12)), (name, round_, seen)
            results[name] = True
        except Exception as error:          # reported below
            errors.append(error)

    callers = [threading.Thread(target=caller, args=(name,)) for name in "ab"]
    for thread in callers:
        thread.start()
    for thread in callers:
        thread.join(timeout=60)
    assert not errors and results == {"a": True, "b": True}


def test_changing_the_thread_count_stops_the_old_workers(forced_threads):
    threads.parallel_for(lambda a, b: None, 6, np.empty(6))       # start the team of 3
    old_workers = [worker.thread for worker in threads._team.workers]
    autograd.set_num_threads(2)
    assert not any(thread.is_alive() for thread in old_workers)
    idents = set()
    threads.parallel_for(lambda a, b: idents.add(threading.get_ident()), 6, np.empty(6))
    assert len(idents) == 2


def test_small_passes_and_one_thread_run_in_the_calling_thread(monkeypatch):
    idents = []
    threads.parallel_for(lambda a, b: idents.append(threading.get_ident()), 8, np.empty(8))
    assert idents == [threading.get_ident()]          # below MIN_PARALLEL_ELEMENTS
    previous = autograd.get_num_threads()
    monkeypatch.setattr(threads, "MIN_PARALLEL_ELEMENTS", 1)
    autograd.set_num_threads(1)
    try:
        threads.parallel_for(lambda a, b: idents.append((a, b)), 8, np.empty(8))
    finally:
        autograd.set_num_threads(previous)
    assert idents[1:] == [(0, 8)]


def test_arrays_not_in_host_memory_run_in_one_call(forced_threads):
    class DeviceArray:              # stands in for a CuPy array: large, but not NumPy's
        size = 1 << 20

    calls = []
    threads.parallel_for(lambda a, b: calls.append((a, b)), 8, DeviceArray())
    assert calls == [(0, 8)]


def test_copy_and_ascontiguousarray_of_strided_views(forced_threads):
    source = np.arange(2 * 5 * 7, dtype=np.float32).reshape(2, 5, 7)
    for view in (source.transpose(2, 0, 1), source[:, ::2, 1:], source[::-1]):
        result = threads.ascontiguousarray(view)
        assert result.flags.c_contiguous and result.dtype == view.dtype
        np.testing.assert_array_equal(result, view)
        destination = np.zeros(view.shape, np.float32)
        threads.copy(destination, view)
        np.testing.assert_array_equal(destination, view)
    assert threads.ascontiguousarray(source) is source


def test_arrays_that_are_not_plain_ndarrays_go_to_their_own_module(forced_threads):
    class Subclass(np.ndarray):     # not NumPy's own type: the path CuPy arrays take
        pass

    view = np.arange(12.0).reshape(3, 4).view(Subclass).T
    result = threads.ascontiguousarray(view)
    assert result.flags.c_contiguous
    np.testing.assert_array_equal(result, view)
    out = threads.elementwise(lambda out, x: np.negative(x, out=out), np.empty_like(view), view)
    np.testing.assert_array_equal(out, -view)


def test_elementwise_matches_the_whole_array_call(forced_threads):
    x = np.random.default_rng(0).normal(size=(5, 4, 3)).transpose(1, 2, 0)
    out = threads.elementwise(lambda out, x: np.maximum(x, 0, out=out), np.empty_like(x), x)
    np.testing.assert_array_equal(out, np.maximum(x, 0))


def test_elementwise_on_a_transposed_block_runs_in_memory_order(forced_threads):
    """A dense but transposed out (a batch-last image array) is chunked along its outermost
    axis in memory, so every chunk the function sees is contiguous where out's layout is."""
    x = np.random.default_rng(1).normal(size=(4, 3, 5, 6)).transpose(3, 0, 1, 2)
    seen = []

    def relu(out, x):
        seen.append(out.flags.c_contiguous and x.flags.c_contiguous)
        np.maximum(x, 0, out=out)
    out = threads.elementwise(relu, buffer_cache.empty_like(x), x)
    assert out.shape == x.shape and out.strides == x.strides
    np.testing.assert_array_equal(out, np.maximum(x, 0))
    assert len(seen) == 3 and all(seen)
    mixed = threads.elementwise(lambda out, a, b: np.add(a, b, out=out),
                                buffer_cache.empty_like(x), x, np.ascontiguousarray(x))
    np.testing.assert_array_equal(mixed, 2 * x)


def test_split_axis_prefers_the_outermost_axis_with_a_chunk_for_every_thread():
    assert threads.split_axis((1, 3, 8, 2), threads=3) == 1
    assert threads.split_axis((4, 3), threads=3) == 0
    assert threads.split_axis((1, 2), threads=3) == 0


@given(data=st.data())
def _relu_case(data):
    check_case(next(case for case in test_activation.CASES if str(case) == "relu"), data)


@pytest.mark.parametrize("test", [
    _relu_case,
    test_activation.test_relu_gradient_is_zero_at_zero_and_keeps_dy_elsewhere,
    test_conv.test_forward_matches_direct_loops_and_float32_is_kept,
    test_conv.test_gradients_match_finite_differences,
    test_winograd.test_forward_and_gradients_match_direct_sums_with_any_padding,
    test_pooling.test_max_pool_matches_loops_and_gradcheck,
    test_pooling.test_max_pool_ties_give_the_gradient_once_to_the_first_maximum,
    test_normalization.test_batch_norm_training_output_and_running_statistics,
    test_normalization.test_batch_norm_eval_uses_running_statistics_and_leaves_them,
], ids=lambda test: test.__name__)
def test_threaded_ops_pass_their_own_reference_tests(forced_threads, test):
    test()


@pytest.mark.parametrize("first", ["autograd", "numpy, autograd"])
def test_importing_autograd_leaves_the_openblas_spin_alone_whatever_the_order(first):
    environment = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    code = (f"import os, {first}; "
            "print(os.environ.get('OPENBLAS_THREAD_TIMEOUT', 'unset'))")
    output = subprocess.run([sys.executable, "-c", code], env=environment, check=True,
                            capture_output=True, text=True).stdout
    assert output.strip() == "unset"


def test_default_thread_count_comes_from_the_environment():
    environment = dict(os.environ, AUTOGRAD_NUM_THREADS="3", OMP_NUM_THREADS="1")
    code = "import autograd; print(autograd.get_num_threads())"
    output = subprocess.run([sys.executable, "-c", code], env=environment, check=True,
                            capture_output=True, text=True).stdout
    assert output.strip() == "3"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork (POSIX)")
def test_a_forked_child_starts_its_own_pool(forced_threads):
    autograd.set_num_threads(2)      # one worker: the child's pool would think it idle and wait
    source = np.arange(64.0).reshape(8, 8)
    threads.ascontiguousarray(source.T)          # the parent's pool now has worker threads
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:                                  # the child: would hang on the parent's pool
        try:
            signal.alarm(10)                      # a hang fails the test instead of stalling it
            ok = bool((threads.ascontiguousarray(source.T) == source.T).all())
            os.write(write, b"ok" if ok else b"wrong")
        finally:
            os._exit(0)
    os.close(write)
    _, status = os.waitpid(pid, 0)
    assert os.read(read, 16) == b"ok" and status == 0
