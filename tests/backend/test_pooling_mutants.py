"""pooling.py where the full mutation run of autograd/backend/ found the suite blind
(docs/testing.md): the winners' dtype at the 256-offset boundary, the layouts of the outputs
and gradients, a winner array that is not dense, and float32 sums kept in float32 in the
documented separable order. References: NumPy argmax/max over explicit windows, and the
separable float32 sums written out here."""
import numpy as np
import pytest

from autograd.backend import pooling
from autograd.backend.layout import is_batch_last
from autograd.backend.pooling import Windows
from tests.layouts import stored_batch_last


def windows_of(x, kernel, stride, pads, fill):
    """(N, C, OH, OW, kh * kw) windows of x padded with ``fill``, row-major offsets last."""
    (top, bottom), (left, right) = pads
    padded = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)), constant_values=fill)
    out_h = (padded.shape[2] - kernel[0]) // stride[0] + 1
    out_w = (padded.shape[3] - kernel[1]) // stride[1] + 1
    result = np.empty(x.shape[:2] + (out_h, out_w, kernel[0] * kernel[1]), x.dtype)
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            result[..., i * kernel[1] + j] = padded[:, :, i:i + stride[0] * (out_h - 1) + 1:stride[0],
                                                    j:j + stride[1] * (out_w - 1) + 1:stride[1]]
    return result, (out_h, out_w)


def routed(dy, first, x_shape, kernel, stride, pads):
    """dx of max pooling: each dy added to the input its window's first maximum came from."""
    (top, bottom), (left, right) = pads
    dpadded = np.zeros(x_shape[:2] + (x_shape[2] + top + bottom, x_shape[3] + left + right))
    for index in np.ndindex(dy.shape):
        n, c, p, q = index
        i, j = divmod(int(first[index]), kernel[1])
        dpadded[n, c, p * stride[0] + i, q * stride[1] + j] += dy[index]
    return dpadded[:, :, top:top + x_shape[2], left:left + x_shape[3]]


@pytest.mark.parametrize("kernel, dtype", [((15, 17), np.uint8), ((16, 16), np.int32),
                                           ((17, 17), np.int32)])
def test_winners_are_uint8_below_256_offsets_and_int32_from_256(kernel, dtype):
    """The docstring's rule; from 256 offsets a uint8 cannot name the offset (k >= 256)."""
    rng = np.random.default_rng(sum(kernel))
    shape = (2, 3, kernel[0] + 1, kernel[1])
    x = rng.permutation(np.prod(shape)).reshape(shape) * 1.0
    # the maximum of the last window sits at its last offset, past 255 for the 17x17 kernel
    x[1, 2, -kernel[0]:, -kernel[1]:][-1, -1] = x.max() + 1
    windows = Windows(kernel, (1, 1), ((0, 0), (0, 0)), (2, 1))
    y, winner = pooling.max_pool2d_forward(x, windows)
    assert winner.dtype == dtype
    flat, _ = windows_of(x, kernel, (1, 1), ((0, 0), (0, 0)), -np.inf)
    np.testing.assert_array_equal(y, flat.max(axis=-1))
    np.testing.assert_array_equal(winner, flat.argmax(axis=-1))
    assert winner[1, 2, 1, 0] == kernel[0] * kernel[1] - 1
    dy = rng.standard_normal(y.shape)
    dx = pooling.max_pool2d_backward(dy, winner, windows, x.shape)
    np.testing.assert_array_equal(dx, routed(dy, flat.argmax(axis=-1), x.shape, kernel, (1, 1),
                                             ((0, 0), (0, 0))))


# (kernel, stride, pads): overlapping windows, disjoint ones with a gap, ones that tile the
# input exactly (no zeroing needed), and padded ones
POOL_CASES = [((3, 3), (1, 1), ((1, 1), (1, 1))), ((2, 2), (3, 3), ((0, 0), (0, 0))),
              ((2, 3), (2, 3), ((0, 0), (0, 0))), ((3, 2), (2, 2), ((1, 1), (0, 0)))]


@pytest.mark.parametrize("kernel, stride, pads", POOL_CASES)
@pytest.mark.parametrize("x_batch_last", [False, True])
@pytest.mark.parametrize("dy_batch_last", [False, True])
def test_max_pool_outputs_and_gradient_keep_the_input_layout(kernel, stride, pads,
                                                             x_batch_last, dy_batch_last):
    """y, the winners and dx are laid out as x is (the batch-last chain of layout.py), whatever
    dy's layout; and dx routes each dy to its window's first maximum."""
    rng = np.random.default_rng(7)
    x = rng.permutation(3 * 4 * 8 * 9).reshape(3, 4, 8, 9) * 1.0
    flat, out_size = windows_of(x, kernel, stride, pads, -np.inf)
    windows = Windows(kernel, stride, pads, out_size)
    y, winner = pooling.max_pool2d_forward(stored_batch_last(x) if x_batch_last else x, windows)
    np.testing.assert_array_equal(y, flat.max(axis=-1))
    np.testing.assert_array_equal(winner, flat.argmax(axis=-1))
    for array in (y, winner):
        assert is_batch_last(array) == x_batch_last and (x_batch_last or array.flags.c_contiguous)
    dy = rng.standard_normal(y.shape)
    dx = pooling.max_pool2d_backward(stored_batch_last(dy) if dy_batch_last else dy, winner,
                                     windows, x.shape)
    np.testing.assert_allclose(dx, routed(dy, flat.argmax(axis=-1), x.shape, kernel, stride,
                                          pads), rtol=1e-13, atol=1e-15)
    # dx may be the interior of the padded gradient: which axis is innermost says the layout
    innermost = 0 if x_batch_last else 3
    assert dx.strides[innermost] == dx.itemsize


@pytest.mark.parametrize("kernel, stride, pads", POOL_CASES)
def test_max_pool_backward_takes_winners_that_are_not_dense(kernel, stride, pads):
    """The winners of the first two images of a batch-last batch (a view with no dense
    layout): dx is C order and routes every dy as the full batch's winners say."""
    rng = np.random.default_rng(8)
    x = rng.permutation(4 * 3 * 7 * 8).reshape(4, 3, 7, 8) * 1.0
    flat, out_size = windows_of(x, kernel, stride, pads, -np.inf)
    windows = Windows(kernel, stride, pads, out_size)
    _, winner = pooling.max_pool2d_forward(stored_batch_last(x), windows)
    part = winner[:2]
    assert not is_batch_last(part) and not part.flags.c_contiguous
    dy = rng.standard_normal(part.shape)
    dx = pooling.max_pool2d_backward(dy, part, windows, (2,) + x.shape[1:])
    np.testing.assert_allclose(dx, routed(dy, flat.argmax(axis=-1)[:2], (2,) + x.shape[1:],
                                          kernel, stride, pads), rtol=1e-13, atol=1e-15)


def separable_sums_in_float32(x, kernel, stride, pads):
    """The window sums of float32 x as pooling.py documents them: over the kernel's rows first
    (row 0 + row 1, then + row 2, ...), then over its columns, every sum rounded to float32."""
    (top, bottom), (left, right) = pads
    padded = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    out_h = (padded.shape[2] - kernel[0]) // stride[0] + 1
    out_w = (padded.shape[3] - kernel[1]) // stride[1] + 1
    rows = padded[:, :, 0:stride[0] * (out_h - 1) + 1:stride[0]].copy()
    for i in range(1, kernel[0]):
        rows = rows + padded[:, :, i:i + stride[0] * (out_h - 1) + 1:stride[0]]
    sums = rows[..., 0:stride[1] * (out_w - 1) + 1:stride[1]].copy()
    for j in range(1, kernel[1]):
        sums = sums + rows[..., j:j + stride[1] * (out_w - 1) + 1:stride[1]]
    assert sums.dtype == np.float32
    return sums, (out_h, out_w)


@pytest.mark.parametrize("batch_last", [False, True])
def test_float32_avg_pool_sums_in_float32_in_the_documented_order(batch_last):
    """Bit for bit: the intermediate row sums are float32 buffers, as x (a float64 one would
    round differently; on 2 * 3 * 9 * 10 random values many outputs differ in the last bit)."""
    rng = np.random.default_rng(9)
    x = rng.standard_normal((2, 3, 9, 10)).astype(np.float32) * np.float32(3.3)
    kernel, stride, pads = (3, 3), (1, 2), ((1, 1), (1, 1))
    sums, out_size = separable_sums_in_float32(x, kernel, stride, pads)
    y, order = pooling.avg_pool2d_forward(stored_batch_last(x) if batch_last else x,
                                          Windows(kernel, stride, pads, out_size), np.float32(9))
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y, sums / np.float32(9))


def test_float32_avg_pool_backward_spreads_in_float32():
    """dx sums the shares of the (up to 3 x 3) windows over each input in float32: along the
    rows first, then the columns, bit for bit as written out here."""
    rng = np.random.default_rng(10)
    kernel, stride, pads = (3, 3), (1, 1), ((1, 1), (1, 1))
    x_shape = (2, 3, 7, 8)
    out_size = (7, 8)
    dy = rng.standard_normal(x_shape[:2] + out_size).astype(np.float32) * np.float32(3.3)
    divisor = np.float32(9)
    dx = pooling.avg_pool2d_backward(dy, Windows(kernel, stride, pads, out_size), divisor,
                                     x_shape, None)
    assert dx.dtype == np.float32
    share = dy / divisor
    padded_h, padded_w = x_shape[2] + 2, x_shape[3] + 2
    rows = np.zeros(x_shape[:2] + (padded_h, out_size[1]), np.float32)
    for i in range(kernel[0]):
        rows[:, :, i:i + out_size[0]] += share
    dpadded = np.zeros(x_shape[:2] + (padded_h, padded_w), np.float32)
    for j in range(kernel[1]):
        dpadded[..., j:j + out_size[1]] += rows
    np.testing.assert_array_equal(dx, dpadded[:, :, 1:-1, 1:-1])


@pytest.mark.parametrize("kernel, stride, pads", POOL_CASES)
@pytest.mark.parametrize("batch_last", [False, True])
def test_pooling_split_over_three_threads_matches_the_windows(forced_threads, kernel, stride,
                                                             pads, batch_last):
    """Each thread pools its own images (or channels): a thread given the wrong block, or a
    block that reaches into another thread's, gives wrong or racing results. Repeated, since
    a race shows only sometimes."""
    rng = np.random.default_rng(14)
    x = rng.permutation(6 * 5 * 30 * 31).reshape(6, 5, 30, 31) * 1.0
    laid_out = stored_batch_last(x) if batch_last else x
    flat, out_size = windows_of(x, kernel, stride, pads, -np.inf)
    windows = Windows(kernel, stride, pads, out_size)
    zero_flat, _ = windows_of(x, kernel, stride, pads, 0.0)
    dy = rng.standard_normal(flat.shape[:4])
    expected_dx = routed(dy, flat.argmax(axis=-1), x.shape, kernel, stride, pads)
    for _ in range(5):
        y, winner = pooling.max_pool2d_forward(laid_out, windows)
        np.testing.assert_array_equal(y, flat.max(axis=-1))
        np.testing.assert_array_equal(winner, flat.argmax(axis=-1))
        dx = pooling.max_pool2d_backward(stored_batch_last(dy) if batch_last else dy, winner,
                                         windows, x.shape)
        np.testing.assert_allclose(dx, expected_dx, rtol=1e-13, atol=1e-15)
        y, _ = pooling.max_pool2d_forward(laid_out, windows, with_winner=False)
        np.testing.assert_array_equal(y, flat.max(axis=-1))
        y, _ = pooling.avg_pool2d_forward(laid_out, windows, 7.0)
        np.testing.assert_allclose(y, zero_flat.sum(axis=-1) / 7.0, rtol=1e-13)
