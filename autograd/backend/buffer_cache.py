"""Host buffers kept for reuse: a small caching allocator for the large NumPy arrays of a step.

A large NumPy allocation comes from pages the kernel has not handed out yet: glibc returns
freed memory to the system once enough of it sits free at the top of its heap, and large
blocks come straight from mmap. The kernel then zero-fills each 4 KiB page on first touch,
measured here at 1.5-2 us a page: 2,300-3,800 page faults per step of the example CNN, more
time than some of its operations take. A training step allocates the same shapes every step,
so the large arrays that operations create (outputs, gradients, column matrices, padded
copies) come from buffers kept here, each handed out again once no array refers to it any more.
Measured on that CNN, alternating blocks of steps: 31.6 against 27.2 ms per step at 2 threads,
36.5 against 31.7 ms at 1 thread, and no page faults left.

CuPy arrays never come from here (CuPy has its own memory pool), nor arrays under
``MIN_BYTES``. At most ``MAX_KEPT_BYTES`` are kept, idle or not; past that, arrays are plain
``numpy.empty`` ones. :func:`empty_cache` gives the idle buffers back.

The smaller arrays, including NumPy's own temporaries inside expressions, stay with malloc;
``autograd.runtime`` tunes glibc's thresholds for them the first time this cache keeps a buffer
(see :func:`autograd.runtime.tune_allocator`), not at import.

>>> import numpy as np
>>> a = empty(np, (1 << 20,), np.float32)         # 4 MiB: kept
>>> address = a.ctypes.data
>>> del a
>>> empty(np, (1 << 20,), np.float32).ctypes.data == address    # the same buffer again
True
"""
import functools
import math
import sys
import threading

import numpy as np

from ..device import get_array_module

__all__ = ["empty_cache"]

MIN_BYTES = 1 << 20
MAX_KEPT_BYTES = 1 << 30       # the default of autograd.runtime.set_cache_limit
_kept = []                 # 1-D uint8 arrays; every array handed out is a view of one of them
_lock = threading.Lock()


def _reference_count(index):
    # A view's ``base`` is the buffer that owns the memory, so every living array made from a
    # kept buffer holds one reference to it: the count says whether any is left.
    return sys.getrefcount(_kept[index])


def _idle_reference_count():
    """What _reference_count gives for a buffer that no array refers to (the list's reference
    and the call's own, whatever the interpreter counts)."""
    _kept.append(np.empty(0, np.uint8))
    count = _reference_count(len(_kept) - 1)
    _kept.pop()
    return count


_IDLE = _idle_reference_count()
_first_use_hooks = []      # called once, before the first buffer is kept (autograd.runtime)


def _first_use():
    while _first_use_hooks:
        _first_use_hooks.pop(0)()


def _idle_indices():
    return [k for k in range(len(_kept)) if _reference_count(k) <= _IDLE]


def empty(xp, shape, dtype, axis_order=None):
    """An uninitialised array, as ``xp.empty(shape, dtype)``: C order, or with its axes laid out
    in memory outermost first as ``axis_order`` says (a permutation; see :func:`axis_order`).
    A large NumPy one is a view of a kept buffer that no array uses any more (never of one that
    a living array, or a view of it, still uses)."""
    if axis_order is not None and tuple(axis_order) != tuple(range(len(shape))):
        stored = empty(xp, tuple(shape[axis] for axis in axis_order), dtype)
        inverse = [0] * len(axis_order)      # the inverse permutation (np.argsort of a tuple
        for place, axis in enumerate(axis_order):        # converts it first: 4 us)
            inverse[axis] = place
        return stored.transpose(inverse)
    dtype = np.dtype(dtype)
    nbytes = dtype.itemsize * math.prod(shape)
    if xp is not np or nbytes < MIN_BYTES or dtype.hasobject:
        return xp.empty(shape, dtype)
    if _first_use_hooks:
        _first_use()
    with _lock:
        # the most recently used idle buffer of this size (likelier in cache); the size is
        # compared before the reference count, which a step's many other buffers then skip
        for k in range(len(_kept) - 1, -1, -1):
            if _kept[k].nbytes == nbytes and _reference_count(k) <= _IDLE:
                _kept.append(_kept.pop(k))      # most recently used last
                return _kept[-1].view(dtype).reshape(shape)
        idle = _idle_indices()
        kept_bytes = sum(buffer.nbytes for buffer in _kept)
        evicted = 0
        for k in idle:                          # make room: least recently used first
            if kept_bytes + nbytes <= MAX_KEPT_BYTES:
                break
            kept_bytes -= _kept.pop(k - evicted).nbytes
            evicted += 1
        if kept_bytes + nbytes > MAX_KEPT_BYTES:
            return np.empty(shape, dtype)
        _kept.append(aligned_bytes(nbytes))
        return _kept[-1].view(dtype).reshape(shape)


# Where the kept buffers start: a cache line, as PyTorch's CPU allocator aligns its tensors.
# NumPy's large arrays start 16 to 48 bytes into one, and then every 64-byte vector load of a
# row of a product's b straddles two lines: (32, 256) @ (256, 1024) on one core took 210 us
# where b was 16 bytes off a line, 157 us where it was on one (benchmarks/NOTES.md,
# twenty-fifth session).
ALIGNMENT = 64


def aligned_bytes(nbytes):
    """A new 1-D uint8 array of ``nbytes`` starting on an ``ALIGNMENT``-byte boundary, whose
    views name it as their ``base`` (what the reference counts above rely on).

    >>> aligned_bytes(100).ctypes.data % ALIGNMENT
    0
    """
    raw = np.empty(nbytes + ALIGNMENT, np.uint8)
    start = -raw.ctypes.data % ALIGNMENT
    # an array over a memoryview is the base of its views (a slice of `raw` would name `raw`)
    return np.frombuffer(memoryview(raw[start:start + nbytes]), np.uint8)


# A parameter's NumPy array (a Tensor made from a shape, or one that stores its gradient) from
# this size on starts on a cache line: products read a weight's rows every step. Under it, the
# extra allocation would cost more than a line split of a few rows; a Tensor wrapping a batch
# keeps NumPy's own copy (the aligned one took 3 us more, 5.6 against 2.4 for 25 KB).
ALIGNED_MIN_BYTES = 4096


def new_host_array(shape, dtype, source=None):
    """A new NumPy array of ``shape`` and ``dtype`` for a parameter to hold: zeros, or a copy of
    ``source`` as ``numpy.array(source, dtype)`` makes it (its layout kept); one in C order
    starts on a cache line from ``ALIGNED_MIN_BYTES`` on.

    >>> new_host_array((64, 64), np.float32).ctypes.data % ALIGNMENT
    0
    """
    dtype = np.dtype(dtype)
    nbytes = dtype.itemsize * math.prod(shape)
    if (nbytes < ALIGNED_MIN_BYTES or dtype.hasobject
            or source is not None and not source.flags.c_contiguous):
        return (np.zeros(shape, dtype) if source is None else
                np.array(source, dtype=dtype, copy=True))
    array = aligned_bytes(nbytes).view(dtype).reshape(shape)
    if source is None:
        array.fill(0)
    else:
        np.copyto(array, source, casting="unsafe")
    return array


def allocator(xp, shape, dtype, axis_order=None):
    """A function of no arguments returning :func:`empty` ``(xp, shape, dtype, axis_order)``
    each call, the rule decided once: for a NumPy array under ``MIN_BYTES`` in C order,
    ``numpy.empty`` itself (a forward plan's outputs: the rule took 0.4 us of a batch-1
    ReLU's 2.5)."""
    dtype = np.dtype(dtype)
    in_order = axis_order is None or tuple(axis_order) == tuple(range(len(shape)))
    if xp is np and in_order and dtype.itemsize * math.prod(shape) < MIN_BYTES:
        return functools.partial(np.empty, tuple(shape), dtype)
    return functools.partial(empty, xp, tuple(shape), dtype, axis_order)


def empty_like(array):
    """:func:`empty` with ``array``'s shape, dtype and array module, and its layout where it is
    dense (as NumPy's ``order="K"``), else C order.

    >>> empty_like(np.zeros((2, 3, 4)).transpose(2, 0, 1)).strides
    (8, 96, 32)
    """
    if array.flags.c_contiguous:
        return empty(get_array_module(array), array.shape, array.dtype)
    if type(array) is np.ndarray and array.nbytes < MIN_BYTES and not array.dtype.hasobject:
        # not kept: NumPy's own empty_like, which keeps a dense layout (order "K") in 0.3 us
        # where finding the axis order took 7 (a small batch's batch-last activations)
        out = np.empty_like(array)
        if out.strides == array.strides:
            return out
        return np.empty(array.shape, array.dtype)
    return empty(get_array_module(array), array.shape, array.dtype, axis_order(array))


def axis_order(array):
    """The axes of a dense ``array`` (a transpose of a C-contiguous block) from outermost to
    innermost in memory, or None when it is not dense. Axes of length 1 keep their place.

    >>> axis_order(np.zeros((2, 3, 4)).transpose(1, 2, 0))
    (2, 0, 1)
    """
    if array.flags.c_contiguous:
        return tuple(range(array.ndim))
    long_axes = iter(sorted((axis for axis in range(array.ndim) if array.shape[axis] > 1),
                            key=lambda axis: -array.strides[axis]))
    order = tuple(axis if array.shape[axis] == 1 else next(long_axes)
                  for axis in range(array.ndim))
    return order if array.transpose(order).flags.c_contiguous else None


def empty_cache():
    """Give back the host memory autograd keeps for reuse (the large buffers of earlier steps
    that no array uses any more); buffers still in use stay. Returns the bytes released.
    Training does not need this: the kept buffers are what the next step allocates anyway.

    >>> import autograd
    >>> autograd.empty_cache() >= 0
    True
    """
    with _lock:
        released = 0
        idle = _idle_indices()
        for k in reversed(idle):
            released += _kept.pop(k).nbytes
        return released


def new_lock_after_fork():
    """For a forked child: a thread of the parent may have held the lock when it forked, and
    the child's copy would then stay locked for ever (autograd.runtime registers this on first
    use, not at import)."""
    global _lock
    _lock = threading.Lock()


def kept_bytes():
    """Bytes kept for reuse, idle or in use (for tests and benchmarks)."""
    with _lock:
        return sum(buffer.nbytes for buffer in _kept)
