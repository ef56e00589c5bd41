"""The runtime: how autograd uses this machine, in one explicit place.

``import autograd`` changes nothing in the process: no environment variable, no memory mapped,
no fork hook, no allocator setting. What the CPU backend needs is applied on its first use, and
every setting here can also be made by hand, before or after:

========================  =======================================  ===========================
setting                   default                                  applied
========================  =======================================  ===========================
intra-op threads          ``AUTOGRAD_NUM_THREADS``, else           when a large pass first
(:func:`set_num_threads`) ``OMP_NUM_THREADS``, else the usable     splits (the worker threads
                          CPUs, at most 8                          and a fork hook start then)
buffer cache              1 GiB of reused host buffers for the     first large array kept
(:func:`set_cache_limit`) large arrays of a step
glibc malloc thresholds   grown as after freeing one 32 MiB        the first time the buffer
(:func:`tune_allocator`)  block (keeps up to 64 MiB of freed       cache keeps a buffer, unless
                          heap instead of re-faulting pages)       ``configure(allocator_tuning
                                                                   =False)`` came first
========================  =======================================  ===========================

What the runtime cannot do for you: OpenBLAS reads ``OPENBLAS_THREAD_TIMEOUT`` once, when NumPy
loads it, and its idle GEMM threads spin for about 0.1 s by default, taking cores from the
intra-op passes. Export ``OPENBLAS_THREAD_TIMEOUT=4`` before starting Python if you want that
(benchmarks/NOTES.md has what it changes); autograd never sets it.

>>> import autograd
>>> sorted(autograd.runtime.describe())
['allocator_tuned', 'blas_thread_timeout', 'cache_bytes', 'cache_limit_bytes', 'threads']
"""
import os
import threading

from .backend import buffer_cache, threads

__all__ = ["set_num_threads", "get_num_threads", "set_cache_limit", "get_cache_limit",
           "empty_cache", "tune_allocator", "configure", "describe"]

set_num_threads = threads.set_num_threads
get_num_threads = threads.get_num_threads
empty_cache = buffer_cache.empty_cache

_GLIBC_MMAP_THRESHOLD_MAX = 32 << 20      # on 64-bit systems (mallopt(3), M_MMAP_THRESHOLD)
_state = {"tune_allocator": True, "allocator_tuned": False}
_lock = threading.Lock()


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


def _is_glibc():
    try:
        return os.confstr("CS_GNU_LIBC_VERSION").startswith("glibc")
    except (AttributeError, ValueError, OSError):
        return False


def configure(num_threads=None, cache_limit_bytes=None, allocator_tuning=None):
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


def describe():
    """What the runtime is using now, as a dict (for bug reports and ``python -m autograd``)."""
    return {
        "threads": get_num_threads(),
        "cache_limit_bytes": get_cache_limit(),
        "cache_bytes": buffer_cache.kept_bytes(),
        "allocator_tuned": _state["allocator_tuned"],
        "blas_thread_timeout": os.environ.get("OPENBLAS_THREAD_TIMEOUT"),
    }


def _on_first_buffer():
    """The buffer cache's first use: the fork hook for its lock, and the allocator tuning."""
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=buffer_cache.new_lock_after_fork)
    if _state["tune_allocator"]:
        tune_allocator()


buffer_cache._first_use_hooks.append(_on_first_buffer)
