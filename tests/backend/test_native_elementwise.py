"""The compiled ReLU and its gradient (csrc/kernel_rows.h, elementwise_bindings.h,
native_elementwise.py) against NumPy's ``maximum(x, 0)`` and ``multiply(dy, y > 0)`` bit for
bit, for every instruction-set build: drawn shapes in C order, transposed and batch-last
layouts, NaN, infinities and signed zeros, sizes around the vector width and past the split
over threads; what the kernels refuse (strided, mixed layouts, other dtypes) takes the portable
code, and the binding's errors name the kernel and the operand."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import autograd
from autograd.backend import elementwise, native, native_elementwise
from tests.backend import native_helpers

pytestmark = pytest.mark.skipif(not native.available(),
                                reason="the compiled kernels are not built in this install")

# around the vector width (16 float32), and past the split (2^15 elements a thread)
SIZES = [1, 15, 16, 17, 1000, 3 * 2 ** 15 + 31]
SPECIALS = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45], np.float32)


@pytest.fixture
def calls(monkeypatch):
    """The compiled passes that ran, by name."""
    return native_helpers.record_calls(monkeypatch, ("relu_forward", "relu_backward"))


def laid_out(values, shape, order):
    """``values`` (at least prod(shape) of them) as an array of ``shape`` whose axes lie in
    memory in ``order`` (outermost first), so a dense array that is not C-contiguous."""
    stored = values[:int(np.prod(shape))].reshape([shape[axis] for axis in order]).copy()
    return stored.transpose(np.argsort(order))


def drawn(rng, size):
    values = rng.standard_normal(size + len(SPECIALS)).astype(np.float32)
    values[rng.permutation(values.size)[:len(SPECIALS)]] = SPECIALS
    return values


@settings(max_examples=40, deadline=None)
@given(size=st.sampled_from(SIZES), order=st.permutations([0, 1, 2]),
       seed=st.integers(0, 99), threads=st.sampled_from([1, 3]))
def test_relu_and_its_gradient_are_numpys_bits_in_any_dense_layout(instruction_set, size,
                                                                  order, seed, threads):
    rng = np.random.default_rng(seed)
    shape = (size, 2, 1)          # an axis of length 1: its stride is the layout's own
    x = laid_out(drawn(rng, 2 * size), shape, order)
    dy = laid_out(drawn(rng, 2 * size), shape, order)
    previous = autograd.get_num_threads()
    autograd.set_num_threads(threads)
    try:
        y = laid_out(np.empty(2 * size, np.float32), shape, order)
        assert native_elementwise.relu(x, y)
        dx = laid_out(np.empty(2 * size, np.float32), shape, order)
        assert native_elementwise.relu_backward(dy, y, dx)
    finally:
        autograd.set_num_threads(previous)
    expected = np.maximum(x, 0)
    np.testing.assert_array_equal(y, expected)                   # NaN where NumPy has NaN
    assert np.array_equal(np.signbit(y), np.signbit(expected))   # -0.0 stays -0.0
    expected_dx = np.multiply(dy, expected > 0)
    np.testing.assert_array_equal(dx, expected_dx)
    assert np.array_equal(np.signbit(dx), np.signbit(expected_dx))


def test_the_backend_relu_runs_compiled_on_a_batch_last_batch_and_keeps_its_layout(calls):
    rng = np.random.default_rng(3)
    x = laid_out(rng.standard_normal(8 * 32 * 64).astype(np.float32), (8, 32, 8, 8),
                 (1, 2, 3, 0))
    y = elementwise.relu(x)
    dy = np.ascontiguousarray(rng.standard_normal(x.shape).astype(np.float32))
    dx = elementwise.relu_backward(dy, y)          # dy in C order, y batch-last: NumPy's pass
    assert calls == ["relu_forward"]
    assert y.strides == x.strides
    np.testing.assert_array_equal(y, np.maximum(x, 0))
    np.testing.assert_array_equal(dx, dy * (y > 0))
    dy_batch_last = np.empty_like(x)
    dy_batch_last[...] = dy
    dx = elementwise.relu_backward(dy_batch_last, y)
    assert calls == ["relu_forward", "relu_backward"]
    np.testing.assert_array_equal(dx, dy * (y > 0))


def test_one_batch_last_image_runs_compiled_whatever_its_batch_strides(calls):
    """A batch of one image in the batch-last layout is C-contiguous, but the stride of its
    batch axis is not C order's, nor is its gradient's: the kernels take it all the same."""
    rng = np.random.default_rng(5)
    x = laid_out(rng.standard_normal(32 * 64).astype(np.float32), (1, 32, 8, 8),
                 (1, 2, 3, 0))
    assert x.flags.c_contiguous and x.strides[0] != 32 * 64 * 4
    y = elementwise.relu(x)
    dy = rng.standard_normal(x.shape).astype(np.float32)
    dx = elementwise.relu_backward(dy, y)
    assert calls == ["relu_forward", "relu_backward"]
    np.testing.assert_array_equal(y, np.maximum(x, 0))
    np.testing.assert_array_equal(dx, dy * (y > 0))


def test_what_the_kernels_refuse_takes_numpy(calls):
    x = np.linspace(-2, 2, 40, dtype=np.float32)
    strided = np.linspace(-2, 2, 80, dtype=np.float32)[::2]
    for refused in (strided, x.astype(np.float64), x.reshape(5, 8)[:, :4]):
        np.testing.assert_array_equal(elementwise.relu(refused), np.maximum(refused, 0))
    assert native_elementwise.relu(x, np.empty(40, np.float32)[::-1]) is None
    assert native_elementwise.relu(x.reshape(5, 8), np.empty((8, 5), np.float32).T) is None
    assert native_elementwise.relu(x, np.empty(0, np.float32)) is None
    previous = native.set_enabled(False)
    try:
        assert native_elementwise.relu(x, np.empty_like(x)) is None
    finally:
        native.set_enabled(previous)
    assert calls == []


def test_the_binding_names_the_kernel_and_the_operand():
    x = np.ones(32, np.float32)
    with pytest.raises(ValueError, match="relu_forward: y overlaps x"):
        native._native.relu_forward(x, x, 1)
    with pytest.raises(ValueError, match="relu_backward: dx overlaps dy"):
        native._native.relu_backward(x[:16], x[16:], x[8:24], 1)
    with pytest.raises(ValueError, match="relu_backward: expected y of 32 elements, got 16"):
        native._native.relu_backward(x, x[:16], np.empty(32, np.float32), 1)
    with pytest.raises(ValueError, match="relu_forward: expected y as a C-contiguous float32"):
        native._native.relu_forward(x, np.empty(32), 1)
    read_only = np.ones(32, np.float32)
    read_only.flags.writeable = False
    with pytest.raises(ValueError, match="relu_forward: y: .*read-only"):
        native._native.relu_forward(x, read_only, 1)


def _row_means_in_order(x, scale):
    """kernel_rows.h's row_means written out in float32: value j of a row in partial j % 16,
    lane k + 8 added into k, then k + 4, k + 2, k + 1, times scale."""
    rows, count = x.shape
    padded = np.zeros((rows, -(-count // 16) * 16), np.float32)
    padded[:, :count] = x
    partial = np.zeros((rows, 16), np.float32)
    for block in range(padded.shape[1] // 16):
        partial += padded[:, 16 * block:16 * block + 16]
    for width in (8, 4, 2, 1):
        partial[:, :width] += partial[:, width:2 * width]
    return partial[:, 0] * np.float32(scale)


@pytest.mark.parametrize("rows, count", [(1, 1), (3, 15), (5, 16), (7, 17), (1000, 169),
                                         (2048, 49), (40, 3000)])
def test_row_means_are_their_partial_sums_in_order_at_any_thread_count(instruction_set,
                                                                        rows, count):
    rng = np.random.default_rng(count)
    x = (rng.standard_normal((rows, count)) * rng.choice([1e-3, 1.0, 1e3], (rows, count))
         ).astype(np.float32)
    expected = _row_means_in_order(x, 1.0 / count)
    previous = autograd.get_num_threads()
    try:
        for threads in (1, 3):
            autograd.set_num_threads(threads)
            means = native_elementwise.row_means(x, np.float32(1.0 / count))
            np.testing.assert_array_equal(means.view(np.int32), expected.view(np.int32))
    finally:
        autograd.set_num_threads(previous)
    np.testing.assert_allclose(means, x.astype(np.float64).mean(axis=1), rtol=1e-5, atol=1e-3)


def test_row_means_refuse_what_they_do_not_take():
    x = np.ones((4, 6), np.float32)
    for refused in (x[:, ::2], x.astype(np.float64), x[:0], np.ones((4, 0), np.float32),
                    np.ones(6, np.float32)):
        assert native_elementwise.row_means(refused, 1.0) is None
    with pytest.raises(ValueError, match="row_means: expected x of a multiple of out's 4"):
        native._native.row_means(np.ones(10, np.float32), np.empty(4, np.float32), 1.0, 1)
    with pytest.raises(ValueError, match="row_means: out overlaps x"):
        native._native.row_means(x, x.reshape(-1)[:4], 1.0, 1)
    previous = native.set_enabled(False)
    try:
        assert native_elementwise.row_means(x, 1.0) is None
    finally:
        native.set_enabled(previous)
