"""The reused host buffers (autograd/memory.py): a buffer is handed out again only once no array
refers to it, the byte cap holds, empty_cache gives back only idle buffers, and training with
the buffers gives exactly what training with plain allocations gives."""
import threading

import numpy as np
import pytest

import autograd
from autograd import Tensor
from autograd.backend import buffer_cache as memory

pytestmark = pytest.mark.cpu_only     # host buffers: the GPU's memory is CuPy's pool

LARGE = (2, 1 << 18)          # 2 MiB of float32: above memory.MIN_BYTES


@pytest.fixture
def fresh_cache(monkeypatch):
    """An empty list of kept buffers for the test, the suite's own put back afterwards."""
    monkeypatch.setattr(memory, "_kept", [])


def test_a_buffer_is_reused_only_once_nothing_refers_to_it(fresh_cache):
    first = memory.empty(np, LARGE, np.float32)
    first_column = first[:, 0]
    del first
    second = memory.empty(np, LARGE, np.float32)
    assert not np.shares_memory(second, first_column)     # a living view still holds it
    del first_column
    third = memory.empty(np, LARGE, np.float32)           # the first buffer, free again
    assert not np.shares_memory(third, second)
    address = third.ctypes.data
    del third
    fourth = memory.empty(np, (1 << 19,), np.float32)     # same bytes, another shape
    assert fourth.shape == (1 << 19,) and fourth.dtype == np.float32
    assert fourth.ctypes.data == address and fourth.flags.c_contiguous


def test_small_arrays_and_other_array_modules_are_not_kept(fresh_cache):
    small = memory.empty(np, (16,), np.float64)
    assert small.shape == (16,) and memory.kept_bytes() == 0

    class OtherModule:                  # stands for CuPy: its own allocator, untouched
        @staticmethod
        def empty(shape, dtype):
            return ("other", shape, dtype)

    assert memory.empty(OtherModule, LARGE, np.float32) == ("other", LARGE, np.float32)
    assert memory.kept_bytes() == 0


def test_object_arrays_are_not_kept(fresh_cache):
    array = memory.empty(np, (1 << 18,), object)          # 2 MiB of pointers
    assert array.dtype == object and memory.kept_bytes() == 0


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs os.fork")
def test_a_child_forked_while_a_thread_held_the_lock_can_still_allocate(fresh_cache):
    import os
    import signal
    import time

    memory._lock.acquire()              # as if another thread were inside memory.empty
    try:
        pid = os.fork()
        if pid == 0:                    # the child: allocate, then leave at once
            os._exit(0 if memory.empty(np, LARGE, np.float32).shape == LARGE else 1)
    finally:
        memory._lock.release()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        finished, status = os.waitpid(pid, os.WNOHANG)
        if finished:
            assert os.waitstatus_to_exitcode(status) == 0
            return
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    pytest.fail("the forked child hung on memory's lock")


def test_the_byte_cap_evicts_idle_buffers_least_recently_used_first(fresh_cache, monkeypatch):
    size = 2 * (1 << 20)
    monkeypatch.setattr(memory, "MAX_KEPT_BYTES", 2 * size + 1)
    a = memory.empty(np, (size,), np.uint8)
    b = memory.empty(np, (size,), np.uint8)
    over = memory.empty(np, (size + 2,), np.uint8)        # both in use: a plain array
    assert memory.kept_bytes() == 2 * size
    assert not any(np.shares_memory(over, kept) for kept in (a, b))
    b_address = b.ctypes.data
    del a, b                                               # a is the least recently used
    c = memory.empty(np, (size + 1,), np.uint8)            # room for it: a's buffer goes
    assert memory.kept_bytes() == 2 * size + 1
    d = memory.empty(np, (size,), np.uint8)                # b's buffer, kept
    assert d.ctypes.data == b_address and not np.shares_memory(c, d)


def test_empty_cache_gives_back_only_idle_buffers(fresh_cache):
    in_use = memory.empty(np, LARGE, np.float32)
    idle = memory.empty(np, (3,) + LARGE[1:], np.float32)
    del idle
    assert autograd.empty_cache() == 3 * LARGE[1] * 4
    assert memory.kept_bytes() == in_use.nbytes
    in_use[...] = 1                                        # still its own memory
    assert autograd.empty_cache() == 0


def test_threads_never_share_a_buffer(fresh_cache):
    held, lock, errors = [], threading.Lock(), []

    def allocate():
        try:
            for _ in range(20):
                array = memory.empty(np, LARGE, np.float32)
                with lock:
                    held.append(array)
        except Exception as error:          # pragma: no cover - reported below
            errors.append(error)

    workers = [threading.Thread(target=allocate) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert not errors and len(held) == 80
    addresses = [array.ctypes.data for array in held]
    assert len(set(addresses)) == len(addresses)


def _train(steps, seed=0):
    """A few SGD steps of conv-BN-ReLU-pool-conv(wide, Winograd)-ReLU-pool-linear on a batch
    large enough for every intermediate to come from kept buffers; returns each step's loss,
    the first step's kept output, and the final weights."""
    autograd.manual_seed(seed)
    rng = np.random.default_rng(seed)
    x = Tensor(data=rng.standard_normal((16, 3, 24, 24)).astype(np.float32))
    labels = Tensor(data=np.eye(10, dtype=np.float32)[rng.integers(0, 10, 16)])
    model = [autograd.Conv2d(3, 48, 3, padding=1), autograd.BatchNorm2d(48), autograd.ReLU(),
             autograd.MaxPool2d(2), autograd.Conv2d(48, 48, 3, padding=1), autograd.ReLU(),
             autograd.MaxPool2d(2)]
    head = autograd.Linear(48 * 6 * 6, 10)
    sgd = autograd.opt.SGD(lr=0.01)
    losses, first_output = [], None
    for _ in range(steps):
        h = x
        for layer in model:
            h = layer(h)
        if first_output is None:
            first_output, first_copy = h, h.to_numpy().copy()
        loss = autograd.softmax_cross_entropy(head(autograd.reshape(h, (16, -1))), labels)
        for param, grad in autograd.backward(loss):
            sgd.update(param, grad)
        losses.append(loss.to_numpy().item())
    np.testing.assert_array_equal(first_output.to_numpy(), first_copy)   # never overwritten
    return losses, model[4].W.to_numpy()


def test_training_with_kept_buffers_equals_training_with_plain_arrays(fresh_cache, monkeypatch):
    losses, weights = _train(4)
    assert memory.kept_bytes() > 0
    monkeypatch.setattr(memory, "_kept", [])
    monkeypatch.setattr(memory, "MAX_KEPT_BYTES", 0)       # every array a plain numpy.empty
    plain_losses, plain_weights = _train(4)
    assert memory.kept_bytes() == 0
    assert losses == plain_losses
    np.testing.assert_array_equal(weights, plain_weights)


@pytest.mark.parametrize("order", [(0, 1, 2), (2, 0, 1), (1, 2, 0), (2, 1, 0)])
@pytest.mark.parametrize("shape", [(3, 4, 5), (1 << 9, 2, 1 << 9)])     # small and kept
def test_empty_lays_the_axes_out_in_the_order_asked_for(fresh_cache, order, shape):
    array = memory.empty(np, shape, np.float32, order)
    assert array.shape == shape and array.dtype == np.float32
    assert array.transpose(order).flags.c_contiguous       # outermost axis first in memory
    assert memory.axis_order(array) == order
    like = memory.empty_like(array)
    assert like.shape == shape and like.strides == array.strides


def test_axis_order_of_dense_and_strided_arrays():
    block = np.zeros((2, 3, 4))
    assert memory.axis_order(block) == (0, 1, 2)
    assert memory.axis_order(block.transpose(2, 0, 1)) == (1, 2, 0)
    # an axis of length 1 has no place in memory of its own: it keeps its logical one
    assert memory.axis_order(np.zeros((3, 1, 4)).transpose(2, 1, 0)) == (2, 1, 0)
    broadcast = np.broadcast_to(block[:1], (5, 3, 4))
    for strided in (block[:, ::2], block[::-1], block[..., 1:], broadcast):
        assert memory.axis_order(strided) is None
        assert memory.empty_like(strided).flags.c_contiguous


@pytest.mark.parametrize("shape, dtype, order", [
    ((16,), np.float32, None), ((3, 5), np.float64, (0, 1)), (LARGE, np.float32, None),
    ((2, 3, 1 << 16), np.float32, (2, 0, 1)), ((4, 3), np.float32, (1, 0)),
    ((1 << 18,), object, None)])
def test_an_allocator_hands_out_what_empty_would(fresh_cache, shape, dtype, order):
    """Each call a new array of the shape, dtype and layout :func:`empty` gives, from the
    kept buffers exactly where empty keeps them (large NumPy arrays, not object ones)."""
    allocate = memory.allocator(np, shape, dtype, order)
    first, second = allocate(), allocate()
    want = memory.empty(np, shape, dtype, order)
    for array in (first, second):
        assert (array.shape, array.dtype, array.strides) == (want.shape, want.dtype,
                                                             want.strides)
    assert not np.shares_memory(first, second)
    kept = np.dtype(dtype).itemsize * np.prod(shape) >= memory.MIN_BYTES and dtype != object
    assert memory.kept_bytes() == (3 * first.nbytes if kept else 0)


@pytest.mark.parametrize("shape, dtype", [(LARGE, np.float32), ((3, 1 << 17), np.float64),
                                          (((1 << 20) + 3,), np.uint8)])
def test_kept_buffers_start_on_a_cache_line_and_are_kept_as_before(fresh_cache, shape, dtype):
    first = memory.empty(np, shape, dtype)
    assert first.ctypes.data % memory.ALIGNMENT == 0
    assert first.shape == shape and first.dtype == dtype and first.flags.writeable
    address = first.ctypes.data
    first.fill(1)
    view = first[1:]
    del first
    second = memory.empty(np, shape, dtype)
    assert not np.shares_memory(second, view)            # a view holds the first
    assert second.ctypes.data % memory.ALIGNMENT == 0
    del view
    again = memory.empty(np, shape, dtype)
    assert again.ctypes.data == address                 # free again: the same buffer
    assert memory.kept_bytes() == 2 * again.nbytes      # the bytes asked, not the padding


@pytest.mark.parametrize("nbytes", [1, 63, 64, 65, 4096 + 17])
def test_aligned_bytes_are_their_views_base_and_outlive_the_padded_block(nbytes):
    block = memory.aligned_bytes(nbytes)
    assert block.ctypes.data % memory.ALIGNMENT == 0 and block.nbytes == nbytes
    block[:] = np.arange(nbytes) % 251
    view = block[nbytes // 2:]
    assert view.base is block                            # what the reference counts rely on
    del block
    np.testing.assert_array_equal(view, np.arange(nbytes // 2, nbytes) % 251)


@pytest.mark.parametrize("shape, dtype", [((64, 64), np.float32), ((3, 500), np.float64),
                                          ((10,), np.float32), ((2, 3, 256), np.int64)])
def test_new_host_arrays_are_zeros_or_copies_aligned_from_a_page(shape, dtype):
    zeros = memory.new_host_array(shape, dtype)
    assert zeros.shape == shape and zeros.dtype == dtype and not zeros.any()
    source = np.random.default_rng(0).standard_normal(shape) * 100
    copy = memory.new_host_array(shape, dtype, source)
    np.testing.assert_array_equal(copy, source.astype(dtype))       # converted as astype
    source[...] = 0
    assert copy.any()                                    # a copy, not a view
    large = zeros.nbytes >= memory.ALIGNED_MIN_BYTES
    for array in (zeros, copy):
        assert array.flags.c_contiguous and array.flags.writeable
        assert (array.ctypes.data % memory.ALIGNMENT == 0) or not large


def test_new_host_arrays_keep_a_strided_sources_layout():
    source = np.asfortranarray(np.arange(40000, dtype=np.float32).reshape(200, 200))
    copy = memory.new_host_array(source.shape, np.float32, source)
    assert copy.flags.f_contiguous and not np.shares_memory(copy, source)
    np.testing.assert_array_equal(copy, source)
