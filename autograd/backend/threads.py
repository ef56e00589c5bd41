"""Intra-op threads: the memory-bound NumPy passes of large arrays (strided copies, elementwise
arithmetic, per-channel sums) split into chunks that run at once on a small pool of threads.

NumPy releases the GIL inside its copy and ufunc loops, so two threads copying two halves of an
array take about half the time of one. OpenBLAS already threads the GEMMs; everything around
them (im2col copies, layout transposes, pooling, BatchNorm and activation passes) is
single-threaded NumPy, which on 2 cores left one core idle for half of a convolutional step.
CuPy arrays never go through here: the GPU parallelises each kernel itself.

The thread count is :func:`get_num_threads` (from ``AUTOGRAD_NUM_THREADS``, else
``OMP_NUM_THREADS``, else the CPUs this process may use, at most 8: copies stop scaling well
before that); :func:`set_num_threads` changes it, and 1 turns intra-op threading off.

>>> import numpy as np
>>> source = np.arange(12.0).reshape(3, 4)
>>> destination = np.empty((4, 3))
>>> _ = copy(destination, source.T)      # a transposing copy, in chunks when large
>>> bool((destination == source.T).all())
True
"""
import os
import threading

import numpy as np

from ..device import get_array_module
from . import buffer_cache

__all__ = ["set_num_threads", "get_num_threads"]

# Below this many elements a pass takes under ~0.1 ms, and handing a chunk to a thread (~20-50 us
# round trip) would eat what splitting saves.
MIN_PARALLEL_ELEMENTS = 1 << 17
_MAX_DEFAULT_THREADS = 8


def _default_num_threads():
    for variable in ("AUTOGRAD_NUM_THREADS", "OMP_NUM_THREADS"):
        value = os.environ.get(variable, "").strip()
        if value.isdigit() and int(value) > 0:
            return int(value)
    try:
        available = len(os.sched_getaffinity(0))
    except AttributeError:                      # macOS and Windows have no affinity call
        available = os.cpu_count() or 1
    return max(1, min(available, _MAX_DEFAULT_THREADS))


_num_threads = _default_num_threads()
_team = None                         # the worker threads (a _Team), started on first use
_team_lock = threading.Lock()
_inside = threading.local()          # set in pool workers: a nested split runs serially


def set_num_threads(count):
    """Use ``count`` threads (a positive int) for autograd's own CPU passes; 1 turns them off.
    BLAS threads are set apart (``OPENBLAS_NUM_THREADS`` & co.); set both to the same count.

    >>> import autograd
    >>> previous = autograd.get_num_threads()
    >>> autograd.set_num_threads(1); autograd.get_num_threads()
    1
    >>> autograd.set_num_threads(previous)
    """
    global _num_threads, _team
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 1:
        raise ValueError(f"set_num_threads: expected a positive int, got {count!r}")
    with _team_lock:
        if int(count) != _num_threads and _team is not None:
            with _team.busy:                    # no caller is using its threads
                for worker in _team.workers:
                    worker.stop()
                _team.stopped = True
            _team = None
        _num_threads = int(count)


def get_num_threads():
    """How many threads autograd's own CPU passes use (see :func:`set_num_threads`)."""
    return _num_threads


def _forget_team_after_fork():
    # A forked child has none of the parent's threads: a team inherited from the parent would
    # hand chunks to threads that do not exist there, so the child starts its own on first use.
    global _team_lock, _team
    _team_lock, _team = threading.Lock(), None


_fork_hook_registered = False
first_split_hooks = []     # called once, before the first team starts (autograd.runtime)


def _register_fork_hook():
    """Registered when the first team starts, not at import: a process that never splits a
    pass gets no hook of ours."""
    global _fork_hook_registered
    if not _fork_hook_registered and hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_forget_team_after_fork)
        _fork_hook_registered = True


def parallel_for(function, length, array):
    """Call ``function(start, stop)`` over ``range(length)`` cut into contiguous chunks, one per
    thread, at once; the calling thread runs the first chunk. ``array`` is the largest array the
    pass touches: when it is small, or not a NumPy array (CuPy kernels are parallel already, and
    CuPy's current device is per thread), or with one thread, or from inside a worker, this
    makes one call over the whole range; so it does while another thread's pass holds the
    workers. Every chunk has finished when this returns; the first exception raised is raised
    again (the calling thread's own first)."""
    parts = min(_num_threads, length)
    if (parts < 2 or type(array) is not np.ndarray or array.size < MIN_PARALLEL_ELEMENTS
            or getattr(_inside, "worker", False)):
        function(0, length)
        return
    bounds = [length * k // parts for k in range(parts + 1)]
    team = _team or _get_team()
    acquired = team.busy.acquire(blocking=False)   # else another caller's chunks hold them
    if acquired and team.stopped:                 # set_num_threads replaced the team meanwhile
        team.busy.release()
        acquired = False
    if not acquired:
        function(0, length)
        return
    try:
        workers = team.workers[:parts - 1]
        for k, worker in enumerate(workers, 1):
            worker.start(function, bounds[k], bounds[k + 1])
        try:
            function(bounds[0], bounds[1])
        finally:
            errors = [worker.wait() for worker in workers]   # no chunk may still be writing
    finally:
        team.busy.release()
    for error in errors:
        if error is not None:
            raise error


_STOP = object()


class _Worker:
    """One pool thread: waits on ``go``, runs its chunk, reports on ``done``. A lock handed from
    thread to thread costs ~15 us, a ThreadPoolExecutor round trip ~37."""

    def __init__(self):
        self.go, self.done = threading.Lock(), threading.Lock()
        self.go.acquire()
        self.done.acquire()
        self.task, self.error = None, None
        self.thread = threading.Thread(target=self._run, name="autograd-intraop", daemon=True)
        self.thread.start()

    def _run(self):
        _inside.worker = True
        while True:
            self.go.acquire()
            if self.task is _STOP:
                return
            function, start, stop = self.task
            try:
                function(start, stop)
            except BaseException as error:     # handed to the caller, raised there
                self.error = error
            # Not held while waiting for the next chunk: a pass's closure refers to its arrays,
            # which would stay alive (their cached buffers not reusable) until then.
            del function
            self.done.release()

    def start(self, function, start, stop):
        self.task, self.error = (function, start, stop), None
        self.go.release()

    def wait(self):
        self.done.acquire()
        error, self.error, self.task = self.error, None, None
        return error

    def stop(self):
        self.task = _STOP
        self.go.release()
        self.thread.join()


class _Team:
    """The worker threads; one caller at a time holds ``busy`` and hands each a chunk."""

    def __init__(self, size):
        self.busy = threading.Lock()
        self.stopped = False
        self.workers = [_Worker() for _ in range(size)]


def run_first_split_hooks():
    """Apply what the runtime applies when work first splits over threads (the compiled
    kernels' own thread pool calls this too)."""
    while first_split_hooks:
        first_split_hooks.pop(0)()


def _get_team():
    global _team
    run_first_split_hooks()
    with _team_lock:
        if _team is None:
            _register_fork_hook()
            _team = _Team(_num_threads - 1)
        return _team


def split_axis(shape, threads=None):
    """The first axis of ``shape`` long enough to give every thread a chunk (the outermost such
    axis, so chunks are large contiguous blocks), or 0 when none is."""
    threads = threads or _num_threads
    for axis, size in enumerate(shape):
        if size >= threads:
            return axis
    return 0


def copy(destination, source):
    """``destination[...] = source`` (same shape; NumPy or CuPy), split across the threads along
    the destination's outermost long-enough axis when both are large NumPy arrays. Returns
    ``destination``."""
    return elementwise(_assign, destination, source)


def _assign(out, source):
    out[...] = source


def ascontiguousarray(array):
    """A C-contiguous copy of ``array`` (``array`` itself when already contiguous), as
    ``xp.ascontiguousarray``, with the copy split across the threads when large."""
    if type(array) is not np.ndarray:
        return get_array_module(array).ascontiguousarray(array)
    if array.flags.c_contiguous:
        return array
    result = buffer_cache.empty(np, array.shape, array.dtype)
    copy(result, array)
    return result


def elementwise(function, out, *arrays):
    """Run ``function(out, *arrays)``, which writes an elementwise result into ``out``, on
    matching chunks of ``out`` and ``arrays`` (all of ``out``'s shape) along the outermost
    long-enough axis, split across the threads when ``out`` is a large NumPy array. Returns out.

    >>> x = np.arange(-3.0, 3.0)
    >>> elementwise(lambda out, x: np.maximum(x, 0, out=out), np.empty_like(x), x)
    array([0., 0., 0., 0., 1., 2.])
    """
    if type(out) is np.ndarray and not out.flags.c_contiguous:
        order = buffer_cache.axis_order(out)
        if order is not None:
            # Work on the arrays in out's memory order: each chunk is then one dense block (a
            # batch-last image array chunked along its logical first axis, the batch, would be
            # all strides), and ``function`` sees contiguous arrays where they share out's layout.
            elementwise(function, out.transpose(order),
                        *(array.transpose(order) for array in arrays))
            return out
    if (type(out) is not np.ndarray or out.size < MIN_PARALLEL_ELEMENTS or _num_threads < 2
            or out.ndim == 0):
        function(out, *arrays)
        return out
    axis = split_axis(out.shape)
    prefix = (slice(None),) * axis

    def run_chunk(start, stop):
        index = prefix + (slice(start, stop),)
        function(out[index], *(array[index] for array in arrays))

    parallel_for(run_chunk, out.shape[axis], out)
    return out
