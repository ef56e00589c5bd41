"""The compiled parameter updates (csrc/kernel_update.h, update_bindings.h) against the formulas
written here in float64 NumPy: axpy and a whole Adam/AdamW step, for every instruction-set
build, sizes that are and are not a multiple of the vector width, split over several threads
(the same bits as on one); what they refuse (overlapping, strided, other dtypes) falls back to
the portable code; the binding's errors name the kernel and the operand."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import autograd
from autograd.backend import native, native_update, numpy_kernels
from tests.backend import native_helpers
from tests.backend.test_update import adam_reference, adam_steps, assert_adam_close, cancelled

pytestmark = pytest.mark.skipif(not native.available(),
                                reason="the compiled kernels are not built in this install")

# sizes around the vector width, and past the split (update_bindings.h: 2^15 per thread)
SIZES = [0, 1, 15, 16, 17, 1000, 2 ** 16 + 5, 3 * 2 ** 15 + 31]


@pytest.fixture
def calls(monkeypatch):
    """Which kernels the updates ran: the names of the compiled ones called."""
    return native_helpers.record_calls(monkeypatch, ("axpy", "adam"))


@pytest.fixture(params=[1, 3])
def thread_count(request):
    previous = autograd.get_num_threads()
    autograd.set_num_threads(request.param)
    yield request.param
    autograd.set_num_threads(previous)


@settings(max_examples=30, deadline=None)
@given(size=st.sampled_from(SIZES), alpha=st.floats(-3, 3), seed=st.integers(0, 99))
def test_axpy_is_y_plus_alpha_x(instruction_set, size, alpha, seed):
    rng = np.random.default_rng(seed)
    x0 = rng.standard_normal(size).astype(np.float32)
    y0 = rng.standard_normal(size).astype(np.float32)
    y = y0.copy()
    assert native_update.axpy(alpha, x0, y)
    expected = y0.astype(np.float64) + np.float64(np.float32(alpha)) * x0
    scale = np.abs(y0) + abs(alpha) * np.abs(x0) + 1e-30
    assert np.all(np.abs(y - expected) <= 2 ** -23 * 2 * scale)


def test_axpy_split_over_threads_gives_the_bits_of_one_and_writes_only_y(thread_count,
                                                                          calls):
    rng = np.random.default_rng(thread_count)
    size = 3 * 2 ** 15 + 7
    x = rng.standard_normal(size).astype(np.float32)
    memory = np.full(size + 64, 7.0, np.float32)
    y = memory[32:32 + size]
    y[:] = rng.standard_normal(size)
    alone = y.copy()
    autograd.set_num_threads(1)
    native_update.axpy(-0.3, x, alone)
    autograd.set_num_threads(thread_count)
    numpy_kernels.axpy(-0.3, x, y)
    assert calls == ["axpy", "axpy"]
    np.testing.assert_array_equal(y, alone)
    assert np.all(memory[:32] == 7) and np.all(memory[32 + size:] == 7)


@settings(max_examples=30, deadline=None)
@given(size=st.sampled_from(SIZES[1:]), lr=st.floats(1e-4, 0.1),
       weight_decay=st.sampled_from([0.0, 0.05, 1.0]), decoupled=st.booleans(),
       seed=st.integers(0, 99))
def test_adam_step_is_the_formula(instruction_set, size, lr, weight_decay, decoupled, seed):
    p0, gradients, p, state = adam_steps(size, 4, seed, lr, weight_decay, decoupled)
    expected, m, v = adam_reference(p0, gradients, lr, 0.9, 0.999, 1e-8, weight_decay,
                                    decoupled)
    mask = cancelled(p0, gradients, lr, weight_decay, decoupled)
    assert_adam_close(p, expected, mask, lr, rtol=2e-6, atol=2e-6 * lr * 4)
    np.testing.assert_allclose(state["m"], m, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(state["v"], v, rtol=1e-5, atol=1e-7)
    assert state["step"] == 4


def test_adam_runs_compiled_and_matches_the_portable_passes(thread_count, calls):
    rng = np.random.default_rng(5)
    size = 2 ** 17 + 3
    p0 = rng.standard_normal(size).astype(np.float32)
    gradients = [rng.standard_normal(size).astype(np.float32) for _ in range(3)]
    results = []
    for enabled in (True, False):
        previous = native.set_enabled(enabled)
        p, state = p0.copy(), {}
        for g in gradients:
            numpy_kernels.adam_update(p, g, state, 1e-2, 0.9, 0.999, 1e-8, 0.1, True)
        native.set_enabled(previous)
        results.append((p, state["m"], state["v"]))
    assert calls == ["adam"] * 3
    for compiled, portable in zip(*results):
        np.testing.assert_allclose(compiled, portable, rtol=1e-6, atol=1e-7)


def test_what_the_kernels_refuse_takes_the_portable_code(calls):
    x = np.arange(100, dtype=np.float32)
    overlapping = np.ones(120, np.float32)
    numpy_kernels.axpy(1.0, overlapping[10:110], overlapping[:100])     # x overlaps y
    strided = np.ones(200, np.float32)[::2]
    numpy_kernels.axpy(2.0, x, strided)
    doubles = np.ones(100)
    numpy_kernels.axpy(2.0, x, doubles)
    assert calls == []
    np.testing.assert_array_equal(overlapping[:10], 2.0)
    np.testing.assert_array_equal(strided, 1 + 2 * x)
    np.testing.assert_array_equal(doubles, 1 + 2 * x.astype(np.float64))
    read_only = np.ones(100, np.float32)
    read_only.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        numpy_kernels.axpy(1.0, x, read_only)
    assert calls == []


def test_switched_off_nothing_is_compiled(calls):
    previous = native.set_enabled(False)
    try:
        y = np.zeros(1000, np.float32)
        numpy_kernels.axpy(0.5, np.ones(1000, np.float32), y)
        numpy_kernels.adam_update(y, np.ones(1000, np.float32), {}, 0.1, 0.9, 0.999, 1e-8,
                                  0.0, False)
    finally:
        native.set_enabled(previous)
    assert calls == []
    np.testing.assert_allclose(y, 0.5 - 0.1, rtol=1e-6)


@pytest.mark.parametrize("arguments, message", [
    ((1.0, np.ones(3, np.float32), np.ones(3), 1), "axpy: expected y as a C-contiguous float32"),
    ((1.0, np.ones(4, np.float32), np.ones(3, np.float32), 1),
     "axpy: expected x of 3 elements, got 4"),
    ((1.0, np.ones(3, np.float32), np.ones(6, np.float32)[::2], 1), "axpy: y"),
])
def test_axpy_binding_errors_name_the_kernel_and_the_operand(arguments, message):
    with pytest.raises((ValueError, BufferError), match=message):
        native._native.axpy(*arguments)


def test_adam_binding_errors_name_the_operand():
    data = np.ones(4, np.float32)
    settings_tuple = (0.9, 0.999, 0.1, 0.001, 1e-8, 0.0, 1.0, 1.0, -0.1)
    with pytest.raises(ValueError, match="adam: expected v of 4 elements, got 3"):
        native._native.adam(data, np.ones(4, np.float32), np.zeros(4, np.float32),
                            np.zeros(3, np.float32), settings_tuple, 1)
    kept = data.copy()
    with pytest.raises(ValueError, match="adam: expected m as a C-contiguous float32"):
        native._native.adam(data, np.ones(4, np.float32), np.zeros(4), np.zeros(4, np.float32),
                            settings_tuple, 1)
    np.testing.assert_array_equal(data, kept)


def _squares_in_order(x):
    """kernel_update.h's sum_of_squares, written out: by blocks of 2^14 elements, element i of
    a block in partial sum i % 16, the partials and then the blocks' sums added in order."""
    total = 0.0
    for start in range(0, x.size, 2 ** 14):
        block = x[start:start + 2 ** 14].astype(np.float64)
        padded = np.zeros(-(-block.size // 16) * 16)
        padded[:block.size] = block * block
        partial = np.zeros(16)
        for row in padded.reshape(-1, 16):
            partial += row
        block_total = 0.0
        for value in partial:
            block_total += value
        total += block_total
    return total


@pytest.mark.parametrize("size", [0, 1, 15, 16, 17, 1000, 2 ** 14 - 1, 2 ** 14 + 1,
                                  3 * 2 ** 15 + 31])
def test_sum_of_squares_is_the_float64_sum_in_its_order_at_any_thread_count(
        instruction_set, thread_count, size):
    rng = np.random.default_rng(size)
    x = (rng.standard_normal(size) * rng.choice([1e-20, 1.0, 1e15], size)).astype(np.float32)
    total = native_update.sum_of_squares(x)
    assert total == _squares_in_order(x)
    np.testing.assert_allclose(total, np.sum(x.astype(np.float64) ** 2), rtol=1e-13)


@pytest.mark.parametrize("size", SIZES)
def test_scale_is_numpys_product_and_writes_only_y(instruction_set, thread_count, size):
    rng = np.random.default_rng(size)
    x = rng.standard_normal(size).astype(np.float32)
    x[::7] = np.nan
    x[1::9] = -0.0
    memory = np.full(size + 64, 7.0, np.float32)
    y = memory[32:32 + size]
    assert native_update.scale(np.float32(-0.37), x, y)
    np.testing.assert_array_equal(y.view(np.int32), (x * np.float32(-0.37)).view(np.int32))
    assert np.all(memory[:32] == 7) and np.all(memory[32 + size:] == 7)


def test_sum_of_squares_and_scale_refuse_what_they_do_not_take():
    strided = np.ones(20, np.float32)[::2]
    assert native_update.sum_of_squares(strided) is None
    assert native_update.sum_of_squares(np.ones(4)) is None
    x = np.ones(8, np.float32)
    assert native_update.scale(2.0, x, x[::-1].copy()[::2]) is None      # y strided
    assert native_update.scale(2.0, x, x) is None                         # y is x
    read_only = np.ones(8, np.float32)
    read_only.flags.writeable = False
    assert native_update.scale(2.0, x, read_only) is None
    previous = native.set_enabled(False)
    try:
        assert native_update.sum_of_squares(x) is None
    finally:
        native.set_enabled(previous)
    with pytest.raises(ValueError, match="scale: expected x of 8 elements, got 4"):
        native._native.scale(1.0, np.ones(4, np.float32), x, 1)
    with pytest.raises(ValueError, match="sum_of_squares: expected x as a C-contiguous float32"):
        native._native.sum_of_squares(np.ones(4), 1)
