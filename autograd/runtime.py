"""The runtime: how autograd uses this machine, in one explicit place.

``import autograd`` changes nothing in the process: no environment variable, no memory mapped,
no fork hook, no allocator setting. What the CPU backend needs is applied on its first use, and
every setting here can also be made by hand, before or after:

==============================  =======================================  =============================
setting                         default                                  applied
==============================  =======================================  =============================
intra-op threads                ``AUTOGRAD_NUM_THREADS``, else           when a large pass first
(:func:`set_num_threads`)       ``OMP_NUM_THREADS``, else the usable     splits (the worker threads
                                CPUs, at most 8; the compiled kernels'   and a fork hook start then;
                                C thread pool uses the same count        the C pool's, on its first
                                                                         split product)
buffer cache                    1 GiB of reused host buffers for the     first large array kept
(:func:`set_cache_limit`)       large arrays of a step
glibc malloc thresholds         grown as after freeing one 32 MiB        the first time the buffer
(:func:`tune_allocator`)        block (keeps up to 64 MiB of freed       cache keeps a buffer, unless
                                heap instead of re-faulting pages)       ``configure(allocator_tuning
                                                                         =False)`` came first
compiled kernels                on where ``pip install`` built them      when the module loads
(:func:`use_native_kernels`)    (``backend/csrc``, for float32 NumPy     (nothing else changes)
                                arrays), else the portable NumPy code
the C pool's spin               a worker that finished a kernel's chunk  at once (its workers start
(:func:`set_pool_spin`)         spins 1 ms for the next before it        on its first split)
                                sleeps
==============================  =======================================  =============================

OpenBLAS's spinning threads: after each GEMM, OpenBLAS's idle threads spin for about 0.1 s
(2^28 cycles) and take the cores that the intra-op passes need (a CNN step 34 against 54 ms at 2
threads, benchmarks/NOTES.md). OpenBLAS reads ``OPENBLAS_THREAD_TIMEOUT`` when NumPy loads it,
so setting the variable later does nothing. :func:`shorten_blas_spin` therefore asks NumPy's own
OpenBLAS to read it again and restarts its (idle) thread pool with a 2^4-cycle spin; the
environment is left as it was. It runs once, when the CPU backend first splits a pass over its
threads, unless the user set ``OPENBLAS_THREAD_TIMEOUT`` (their value stands) or called
``configure(blas_spin_tuning=False)`` first.

>>> import autograd
>>> sorted(autograd.runtime.describe())
['allocator_tuned', 'blas_spin_shortened', 'blas_thread_timeout', 'cache_bytes', 'cache_limit_bytes', 'native_kernels', 'pool_spin_seconds', 'threads']
"""
import os
import threading

from .backend import buffer_cache, native, threads, winograd

__all__ = ["set_num_threads", "get_num_threads", "set_cache_limit", "get_cache_limit",
           "empty_cache", "tune_allocator", "shorten_blas_spin", "use_native_kernels",
           "set_pool_spin", "get_pool_spin", "configure", "describe"]

set_num_threads = threads.set_num_threads
get_num_threads = threads.get_num_threads

_GLIBC_MMAP_THRESHOLD_MAX = 32 << 20      # on 64-bit systems (mallopt(3), M_MMAP_THRESHOLD)
_state = {"tune_allocator": True, "allocator_tuned": False, "shorten_blas_spin": True,
          "blas_spin_shortened": False, "pool_spin": 0.001}     # the last: without the kernels
_SPIN_TIMEOUT = 4          # OpenBLAS's minimum: 2^4 cycles
_lock = threading.Lock()


def empty_cache():
    """Give back the host memory autograd keeps for reuse: the large buffers of earlier steps
    that no array uses any more (buffers still in use stay), and the Winograd transforms of
    convolution kernels kept for inference. Returns the bytes released. Training does not need
    this: the kept buffers are what the next step allocates anyway.

    >>> import autograd
    >>> autograd.empty_cache() >= 0
    True
    """
    return buffer_cache.empty_cache() + winograd.forget_transformed_kernels()


def set_cache_limit(limit_bytes):
    """Keep at most ``limit_bytes`` of host buffers for reuse (0 turns the cache off; idle
    buffers beyond the new limit are given back at once). Returns the previous limit.

    >>> import autograd
    >>> previous = autograd.runtime.set_cache_limit(0)
    >>> autograd.runtime.get_cache_limit(), autograd.runtime.set_cache_limit(previous) == 0
    (0, True)
    """
    if isinstance(limit_bytes, bool) or not isinstance(limit_bytes, int) or limit_bytes < 0:
        raise ValueError(f"set_cache_limit: expected a non-negative int of bytes, got "
                         f"{limit_bytes!r}")
    previous = buffer_cache.MAX_KEPT_BYTES
    buffer_cache.MAX_KEPT_BYTES = limit_bytes
    if buffer_cache.kept_bytes() > limit_bytes:
        buffer_cache.empty_cache()
    return previous


def get_cache_limit():
    """The most bytes of host buffers kept for reuse (see :func:`set_cache_limit`)."""
    return buffer_cache.MAX_KEPT_BYTES


def tune_allocator():
    """Grow glibc's malloc thresholds now, as any program that once freed a large block would:
    allocate and free one block just under glibc's largest dynamic mmap threshold, after which
    glibc serves medium arrays (max pooling's temporaries, say) from its heap rather than
    mapping and zero-filling fresh pages each step (1,300 page faults per step of the example
    CNN; 33-41 -> 29-30 ms). The process may then keep up to 64 MiB of freed heap. Does
    nothing off glibc. Returns whether it tuned (False when done already or not glibc)."""
    with _lock:
        if _state["allocator_tuned"] or not _is_glibc():
            return False
        _state["allocator_tuned"] = True
    import numpy as np
    np.empty(_GLIBC_MMAP_THRESHOLD_MAX - (1 << 16), np.uint8)    # mapped, then freed at once
    return True


def shorten_blas_spin():
    """Make NumPy's OpenBLAS threads stop spinning almost at once after a GEMM (see the module
    docstring). Returns whether it did: not where the user set ``OPENBLAS_THREAD_TIMEOUT``
    (theirs stands), where NumPy's OpenBLAS is not found, or when done already."""
    with _lock:
        if _state["blas_spin_shortened"] or "OPENBLAS_THREAD_TIMEOUT" in os.environ:
            return False
        library = _numpy_openblas()
        if library is None:
            return False
        _state["blas_spin_shortened"] = True
        os.environ["OPENBLAS_THREAD_TIMEOUT"] = str(_SPIN_TIMEOUT)
        try:
            library.openblas_read_env()         # OpenBLAS keeps what it reads
        finally:
            del os.environ["OPENBLAS_THREAD_TIMEOUT"]     # the environment as it was
        library.blas_thread_shutdown_()          # idle now: restarts with the new timeout
        library.blas_thread_init()
    return True


def _numpy_openblas():
    """NumPy's bundled OpenBLAS as a ctypes library, if it is loaded and exports what
    :func:`shorten_blas_spin` needs; else None."""
    import ctypes
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if "openblas" in line.lower()
                     and line.rstrip().endswith(".so") or "openblas" in line.lower() and
                     ".so" in line.split()[-1]}
    except OSError:
        return None
    for path in sorted(paths):
        try:
            library = ctypes.CDLL(path)
        except OSError:
            continue
        if all(hasattr(library, name) for name in
               ("openblas_read_env", "blas_thread_shutdown_", "blas_thread_init")):
            return library
    return None


def _is_glibc():
    try:
        return os.confstr("CS_GNU_LIBC_VERSION").startswith("glibc")
    except (AttributeError, ValueError, OSError):
        return False


def use_native_kernels(flag):
    """Run the compiled float32 CPU kernels (True, the default where ``pip install`` built
    them) or the portable NumPy code (False); returns the previous setting. True where they
    are not built is a RuntimeError; ``describe()["native_kernels"]`` says which is in use.

    >>> import autograd
    >>> previous = autograd.runtime.use_native_kernels(False)
    >>> autograd.runtime.describe()["native_kernels"]
    'off'
    >>> _ = autograd.runtime.use_native_kernels(previous)
    """
    return native.set_enabled(flag)


def set_pool_spin(seconds):
    """How long the compiled kernels' pool workers spin, watching for the next kernel, before
    they sleep (1 ms by default; 0 sleeps at once); returns the previous value. A kernel that
    finds them spinning starts on all threads in about a microsecond, one that must wake them
    waits for the system, long after an idle pause (a batch-1 forward's Python between kernels
    often takes more than 50 us). Spinning uses the cores it waits on; a machine shared with
    other work may want less.

    >>> import autograd
    >>> previous = autograd.runtime.set_pool_spin(0.002)
    >>> autograd.runtime.get_pool_spin()
    0.002
    >>> _ = autograd.runtime.set_pool_spin(previous)
    """
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not (
            0 <= seconds <= _MOST_POOL_SPIN):
        raise ValueError(f"set_pool_spin: expected seconds from 0 to {_MOST_POOL_SPIN}, got "
                         f"{seconds!r}")
    previous = get_pool_spin()
    if native.available():
        native._native.pool_spin(round(seconds * 1e9))
    else:
        _state["pool_spin"] = seconds
    return previous


def get_pool_spin():
    """Seconds the compiled kernels' pool workers spin before they sleep (:func:`set_pool_spin`)."""
    if native.available():
        return native._native.pool_spin(-1) / 1e9
    return _state["pool_spin"]


_MOST_POOL_SPIN = 1.0


def configure(num_threads=None, cache_limit_bytes=None, allocator_tuning=None,
              blas_spin_tuning=None, native_kernels=None, pool_spin=None):
    """Set several things at once; ``None`` leaves one as it is. ``allocator_tuning=False``
    before the first training step keeps glibc's thresholds untouched for good (a server that
    tunes malloc itself, say); True tunes now.

    >>> import autograd
    >>> autograd.runtime.configure(num_threads=autograd.runtime.get_num_threads())
    """
    if num_threads is not None:
        set_num_threads(num_threads)
    if cache_limit_bytes is not None:
        set_cache_limit(cache_limit_bytes)
    if allocator_tuning is not None:
        _state["tune_allocator"] = bool(allocator_tuning)
        if allocator_tuning:
            tune_allocator()
    if blas_spin_tuning is not None:
        _state["shorten_blas_spin"] = bool(blas_spin_tuning)
        if blas_spin_tuning:
            shorten_blas_spin()
    if native_kernels is not None:
        use_native_kernels(native_kernels)
    if pool_spin is not None:
        set_pool_spin(pool_spin)


def describe():
    """What the runtime is using now, as a dict (for bug reports and ``python -m autograd``)."""
    return {
        "threads": get_num_threads(),
        "cache_limit_bytes": get_cache_limit(),
        "cache_bytes": buffer_cache.kept_bytes(),
        "allocator_tuned": _state["allocator_tuned"],
        "blas_spin_shortened": _state["blas_spin_shortened"],
        "blas_thread_timeout": os.environ.get("OPENBLAS_THREAD_TIMEOUT"),
        "native_kernels": native.instruction_set(),
        "pool_spin_seconds": get_pool_spin(),
    }


def _on_first_buffer():
    """The buffer cache's first use: the fork hook for its lock, and the allocator tuning."""
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=buffer_cache.new_lock_after_fork)
    if _state["tune_allocator"]:
        tune_allocator()


def _on_first_split():
    """The intra-op threads' first use: OpenBLAS's spin would take their cores."""
    if _state["shorten_blas_spin"]:
        shorten_blas_spin()


buffer_cache._first_use_hooks.append(_on_first_buffer)
threads.first_split_hooks.append(_on_first_split)
