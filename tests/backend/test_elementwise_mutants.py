"""The elementwise CPU kernels (autograd/backend/elementwise.py) on the paths the rest of the
suite leaves out, each against a NumPy formula written here: the zero-row ReLU building its
zero rows in a fresh process, ReLU's chunks when the threads cut an inner axis, the bias add
into a reused (dirty) buffer, and the add's result dtype."""
import numpy as np
import pytest

import autograd
from autograd.backend import buffer_cache, elementwise, native, numpy_kernels, threads

# the compiled kernels and the portable code they stand in for: both tested
pytestmark = pytest.mark.usefixtures("compiled_and_portable")


@pytest.fixture
def three_threads():
    previous = autograd.get_num_threads()
    autograd.set_num_threads(3)
    yield
    autograd.set_num_threads(previous)


@pytest.fixture
def fresh_zero_rows(monkeypatch):
    """An empty zero-row cache, as in a new process: the first ReLU of each dtype builds its
    row. (Any earlier ReLU in this process has filled the module's own cache.)"""
    rows = {}
    monkeypatch.setattr(elementwise, "_zero_rows", rows)
    return rows


def test_relu_builds_a_zero_row_for_each_new_dtype_and_matches_maximum(fresh_zero_rows):
    """Catches the first-call branch of ``_relu_into`` built wrong (no row: ``zeros = None``,
    ``setdefault(x.dtype, None)``, ``np.zeros(None, ...)``, ``if zeros is not None``), or keyed
    or typed wrong (one row under ``None`` for every dtype, a float64 row for every dtype):
    an integer array then meets a float row, which NumPy refuses to cast back to int."""
    rng = np.random.default_rng(4)
    # 3 x length over ZERO_ROW_MIN_SIZE (the zero rows' path): whole rows and a ragged tail
    length = elementwise.ZERO_ROW_MIN_SIZE // 3 + 52
    assert (3 * length) % elementwise.ZERO_ROW_LENGTH
    for dtype in (np.float32, np.int32, np.float64, np.int64):
        x = (rng.standard_normal((3, length)) * 100).astype(dtype)
        x[0, :5] = 0
        for _ in range(2):                                 # built, then taken from the cache
            y = numpy_kernels.relu(x)
            assert y.dtype == x.dtype
            np.testing.assert_array_equal(y, np.where(x > 0, x, 0).astype(dtype))
    # float32 takes the compiled ReLU where it is built and on (native_elementwise.py)
    compiled_float32 = native.enabled()
    assert sorted(np.dtype(d).name for d in fresh_zero_rows) == (
        ["float64", "int32", "int64"] if compiled_float32 else
        ["float32", "float64", "int32", "int64"])


def test_relu_of_chunks_cut_along_an_inner_axis_writes_every_element(three_threads):
    """(2, L) cut over three threads along its second axis: each chunk is a non-contiguous
    (2, L/3) view of x and of the output. The zero-row path must not take them (its reshape
    would write a copy, leaving the output unwritten): caught with ``x.size >= ... or`` and
    ``... and xp is np or ...`` in ``_relu_into``'s test. The output is a reused buffer that
    held NaN, so an element left unwritten shows."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, threads.MIN_PARALLEL_ELEMENTS // 2 + 7))    # 1 MiB of float64
    assert threads.split_axis(x.shape, 3) == 1 and x.nbytes >= buffer_cache.MIN_BYTES
    for _ in range(2):
        y = numpy_kernels.relu(x)
        np.testing.assert_array_equal(y, np.where(x > 0, x, 0))
        y.fill(np.nan)                  # dirty, then released: the next call gets it back
        del y


@pytest.mark.parametrize("shape, bias_shape", [((1200, 300), (1, 300)), ((600, 900), (600, 1))])
def test_a_large_add_writes_every_element_of_a_reused_buffer(shape, bias_shape):
    """The threaded add (``_add_into``) must write into ``out``: with ``out=None`` (or no out)
    it leaves the cached buffer as it was, which a test repeating the same sum may find holding
    that very sum from an earlier run. Here the buffer held NaN."""
    rng = np.random.default_rng(6)
    x = rng.standard_normal(shape).astype(np.float32)
    b = rng.standard_normal(bias_shape).astype(np.float32)
    assert x.size >= threads.MIN_PARALLEL_ELEMENTS
    for _ in range(2):
        y = numpy_kernels.add(x, b)
        np.testing.assert_array_equal(y, x + b)
        y.fill(np.nan)
        del y


@pytest.mark.parametrize("rows", [3, threads.MIN_PARALLEL_ELEMENTS // 64 + 1])   # one pass; split
@pytest.mark.parametrize("x_dtype, b_dtype", [(np.float64, np.float32), (np.float32, np.float64),
                                              (np.float32, np.float32)])
def test_add_takes_numpys_result_dtype_of_both_operands(rows, x_dtype, b_dtype):
    """x + b as NumPy gives it, dtype included: caught with the result dtype taken from b
    alone (``np.result_type(b)``) or from x alone (``np.result_type(x, )``), which round a
    float64 sum to float32."""
    rng = np.random.default_rng(rows)
    x = rng.standard_normal((rows, 64)).astype(x_dtype)
    b = rng.standard_normal((1, 64)).astype(b_dtype)
    y = numpy_kernels.add(x, b)
    assert y.dtype == (x + b).dtype
    np.testing.assert_array_equal(y, x + b)


@pytest.mark.parametrize("shape", [(10000, 64), (7,), (300, 1, 5), (0, 3)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_zeros_clears_a_reused_buffer(shape, dtype, thread_count):
    """zeros hands out a cached buffer: one filled with NaN and given back comes out all zero,
    however the threads cut it."""
    dirty = buffer_cache.empty(np, shape, dtype)
    dirty.fill(np.nan)
    del dirty
    out = numpy_kernels.zeros(shape, dtype)
    assert out.shape == shape and out.dtype == dtype
    np.testing.assert_array_equal(out, np.zeros(shape, dtype))
