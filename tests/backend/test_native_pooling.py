"""The compiled max pooling (csrc/kernel_pooling.h, pooling_bindings.h) against the portable
NumPy passes of pooling.py: the same maxima and the same winners (the first maximum in row-major
kernel order, ties kept, a NaN propagated, padding never a maximum) for every instruction-set
build, every layout and any windows; backward's routing against the portable code; the same
bits on any number of threads; the binding's errors."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from autograd.backend import native, native_pooling, pooling
from autograd.backend.pooling import Windows
from tests.backend import native_helpers

pytestmark = pytest.mark.skipif(not native.available(),
                                reason="the compiled kernels are not built in this install")


def _stored(x, layout):
    """The values of x as C order, batch-last memory (N last), or a strided view."""
    if layout == "batch last":
        return np.ascontiguousarray(x.transpose(1, 2, 3, 0)).transpose(3, 0, 1, 2)
    if layout == "strided":
        wide = np.full(x.shape[:3] + (2 * x.shape[3] + 1,), np.nan, x.dtype)
        wide[..., 1::2] = x
        return wide[..., 1::2]
    return x


def _portable(function, *arguments):
    previous = native.set_enabled(False)
    try:
        return function(*arguments)
    finally:
        native.set_enabled(previous)


def _windows(data, height, width):
    kernel = (data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4)))
    stride = (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)))
    pads = tuple((data.draw(st.integers(0, k - 1)), data.draw(st.integers(0, k)))
                 for k in kernel)
    out = tuple((size + before + after - k) // s + 1
                for size, (before, after), k, s in zip((height, width), pads, kernel, stride))
    return Windows(kernel, stride, pads, out)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), batch=st.integers(1, 3), channels=st.integers(1, 3),
       height=st.integers(1, 9), width=st.sampled_from([1, 3, 8, 17, 40]),
       layout=st.sampled_from(["c", "batch last", "strided"]),
       values=st.sampled_from(["normal", "ties", "special"]), seed=st.integers(0, 2 ** 16))
def test_maxima_and_winners_match_the_portable_code(instruction_set, data, batch, channels,
                                                    height, width, layout, values, seed):
    windows = _windows(data, height, width)
    if min(windows.out_size) < 1:
        return
    rng = np.random.default_rng(seed)
    shape = (batch, channels, height, width)
    if values == "ties":
        x = rng.integers(-2, 3, shape).astype(np.float32)
    else:
        x = rng.standard_normal(shape).astype(np.float32)
    if values == "special":
        x.flat[::5] = -np.inf
        x.flat[3::13] = np.nan
        x.flat[1::17] = np.inf
    x = _stored(x, layout)
    y, winner = pooling.max_pool2d_forward(x, windows)
    want_y, want_winner = _portable(pooling.max_pool2d_forward, x, windows)
    np.testing.assert_array_equal(y, want_y)
    np.testing.assert_array_equal(winner, want_winner)
    assert y.dtype == np.float32 and winner.dtype == np.uint8
    alone = np.full(y.shape, 7.0, np.float32)          # the separable kernel: no winners
    (kh, kw), (sh, sw) = windows.kernel, windows.stride
    native._native.max_pool_forward(x, alone, None, kh, kw, sh, sw, windows.pads[0][0],
                                    windows.pads[1][0], 2)
    np.testing.assert_array_equal(alone, want_y)

    dy = rng.standard_normal(y.shape).astype(np.float32)
    dx = pooling.max_pool2d_backward(dy, winner, windows, shape)
    want_dx = _portable(pooling.max_pool2d_backward, dy, want_winner, windows, shape)
    # overlapping windows add several gradients into one input, in another order
    np.testing.assert_allclose(dx, want_dx, rtol=1e-6, atol=1e-6)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), width=st.integers(16, 90), height=st.integers(1, 6),
       values=st.sampled_from(["normal", "ties", "special"]), seed=st.integers(0, 2 ** 16),
       threads=st.sampled_from([1, 3]), batch=st.sampled_from([1, 2, 3, 8, 9]),
       layout=st.sampled_from(["c", "batch last"]))
def test_wide_rows_at_stride_two_without_winners(instruction_set, data, width, height, values,
                                                 seed, threads, batch, layout):
    """Rows of 32 or more (and 16 to 31, at the rule's edge) at stride 2 along them and no
    winners: their maxima by the halves of
    each row (kernel_pooling.h's max_pool_plane_halves, whole chunks of 16, the last moved
    back), any kernel, pads (output rows all in the padding too) and special values; and a
    batch-last batch channel by channel, each pixel's values together."""
    if layout == "batch last" and batch == 1:
        width = max(width, 32)
    kernel = (data.draw(st.integers(1, 4)), data.draw(st.integers(1, 5)))
    stride = (data.draw(st.integers(1, 3)), 2)
    pads = tuple((data.draw(st.integers(0, k - 1)), data.draw(st.integers(0, k)))
                 for k in kernel)
    out = tuple((size + before + after - k) // s + 1
                for size, (before, after), k, s in zip((height, width), pads, kernel, stride))
    if out[0] < 1:
        return
    windows = Windows(kernel, stride, pads, out)
    rng = np.random.default_rng(seed)
    shape = (batch, 3, height, width)
    x = (rng.integers(-2, 3, shape) if values == "ties" else rng.standard_normal(shape))
    x = x.astype(np.float32)
    if values == "special":
        x.flat[::5] = -np.inf
        x.flat[3::13] = np.nan
        x.flat[1::17] = np.inf
        x.flat[2::7] = -0.0         # ties of zeros: which one is kept shows in its sign
        x.flat[4::9] = 0.0
    x = _stored(x, layout)
    want, _ = _portable(pooling.max_pool2d_forward, x, windows)
    y = _stored(np.full(want.shape, 7.0, np.float32), layout)
    native._native.max_pool_forward(x, y, None, *kernel, *stride, pads[0][0], pads[1][0],
                                    threads)
    np.testing.assert_array_equal(y, want)
    # the kernels' order shows in which of two zeros is kept: 2x2 pairs in the windows'
    # row-major order, other windows rows then columns
    in_order = _in_order(x, windows, native_pooling.pairs_tile(x.shape, windows))
    np.testing.assert_array_equal(_bits(y), _bits(in_order))
    y, _ = pooling.max_pool2d_forward(x, windows, with_winner=False)
    np.testing.assert_array_equal(y, want)


def _bits(y):
    return np.ascontiguousarray(y).view(np.int32)


def _in_order(x, windows, row_major):
    """Max pooling without winners in one of the compiled kernels' orders, a value kept where
    strictly greater or NaN, -inf for the padding: over each window in row-major order, or
    each kernel row in turn over the window's rows and then each kernel column over those
    maxima."""
    (kh, kw), (sh, sw), ((top, bottom), (left, right)) = (windows.kernel, windows.stride,
                                                          windows.pads)
    oh, ow = windows.out_size
    n, c, h, w = x.shape
    padded = np.full((n, c, max(h + top + bottom, (oh - 1) * sh + kh),
                      max(w + left + right, (ow - 1) * sw + kw)), -np.inf, np.float32)
    padded[:, :, top:top + h, left:left + w] = x

    def max_or_nan(value, best):
        return np.where((value > best) | np.isnan(value), value, best)

    if row_major:
        y = np.full((n, c, oh, ow), -np.inf, np.float32)
        for i in range(kh):
            for j in range(kw):
                y = max_or_nan(padded[:, :, i:i + (oh - 1) * sh + 1:sh,
                                      j:j + (ow - 1) * sw + 1:sw], y)
        return y
    rows = np.full((n, c, oh, padded.shape[3]), -np.inf, np.float32)
    for i in range(kh):
        rows = max_or_nan(padded[:, :, i:i + (oh - 1) * sh + 1:sh], rows)
    y = np.full((n, c, oh, ow), -np.inf, np.float32)
    for j in range(kw):
        y = max_or_nan(rows[..., j:j + (ow - 1) * sw + 1:sw], y)
    return y


@pytest.mark.parametrize("width", [7, 1100])
def test_a_row_past_the_chunk_and_a_narrow_one(width):
    """Output rows wider than the kernel's 512-output chunk, and narrower than its row passes
    (each output whole), against the portable code."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 2, 5, width)).astype(np.float32)
    windows = Windows((3, 2), (1, 2), ((1, 1), (1, 1)), (5, width // 2 + 1))
    y, winner = pooling.max_pool2d_forward(x, windows)
    want_y, want_winner = _portable(pooling.max_pool2d_forward, x, windows)
    np.testing.assert_array_equal(y, want_y)
    np.testing.assert_array_equal(winner, want_winner)


@pytest.mark.parametrize("shape, kernel, stride, pad", [
    ((4, 16, 30, 30), 3, 2, 1),            # plane by plane
    ((2, 8, 64, 64), 2, 2, 0)])            # 2x2 pairs: rows of the batch, 4096 outputs a part
def test_the_planes_split_over_the_threads_give_the_same_bits(shape, kernel, stride, pad):
    rng = np.random.default_rng(4)
    x = rng.standard_normal(shape).astype(np.float32)
    out_size = tuple((size + 2 * pad - kernel) // stride + 1 for size in shape[2:])
    windows = Windows((kernel,) * 2, (stride,) * 2, ((pad, pad),) * 2, out_size)
    arguments = (kernel, kernel, stride, stride, pad, pad)
    y = {}
    for threads in (1, 3):
        out = np.full(shape[:2] + out_size, np.nan, np.float32)
        winner = np.full(out.shape, 255, np.uint8)
        native._native.max_pool_forward(x, out, winner, *arguments, threads)
        dx = np.full(x.shape, np.nan, np.float32)
        native._native.max_pool_backward(out, winner, dx, *arguments, threads)
        y[threads] = out, winner, dx
    for one, split in zip(y[1], y[3]):
        np.testing.assert_array_equal(one, split)
    want_y, want_winner = _portable(pooling.max_pool2d_forward, x, windows)
    np.testing.assert_array_equal(y[3][0], want_y)
    np.testing.assert_array_equal(y[3][1], want_winner)


@pytest.mark.parametrize("shape, out, compiled", [
    ((1, 2, 4, 4), (2, 2), True),           # few outputs in all: the compiled kernel
    ((8, 40, 8, 8), (4, 4), True),          # 2x2 pairs tiling a C-contiguous batch: its rows
    ((8, 40, 9, 9), (4, 4), False),         # many tiny planes otherwise: NumPy's passes
    ((1, 16, 20, 20), (10, 10), True),      # planes of 64 outputs or more: compiled
    ((2, 16, 20, 20), (10, 10), True),      # the same batch-last: pairs rows, N deep
    ((2, 16, 21, 21), (10, 10), True),      # batch-last, not tiled: by halves, 2 deep
    ((2, 16, 9, 9), (4, 4), False)])        # ... with rows of 8 pixels: NumPy
def test_without_winners_the_faster_path_runs(shape, out, compiled, monkeypatch):
    """Inference (no winner wanted): the compiled kernel, or NumPy's passes for many tiny
    planes (unless 2x2 windows tile the C-contiguous batch) and for rows that are not
    contiguous; the same maxima either way."""
    calls = native_helpers.record_calls(monkeypatch, ("max_pool_forward",))
    x = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
    if shape[0] == 2:
        x = _stored(x, "batch last")
    windows = Windows((2, 2), (2, 2), ((0, 0), (0, 0)), out)
    y, winner = pooling.max_pool2d_forward(x, windows, with_winner=False)
    assert winner is None and bool(calls) is compiled
    tiled = x[:, :, :2 * out[0], :2 * out[1]]
    want = tiled.reshape(shape[:2] + (out[0], 2, out[1], 2)).max(axis=(3, 5))
    np.testing.assert_array_equal(y, want)


def test_the_binding_names_the_kernel_and_the_operand():
    x = np.zeros((1, 1, 4, 4), np.float32)
    y = np.zeros((1, 1, 2, 2), np.float32)
    winner = np.zeros((1, 1, 2, 2), np.uint8)
    with pytest.raises(ValueError, match="max_pool_forward: expected a kernel of 1 to 256"):
        native._native.max_pool_forward(x, y, winner, 0, 2, 2, 2, 0, 0, 1)
    with pytest.raises(ValueError, match="max_pool_forward: expected y of shape "
                                         r"\(1, 1, -?\d+, -?\d+\)|max_pool_forward: expected y"):
        native._native.max_pool_forward(x, np.zeros((1, 2, 2, 2), np.float32), None, 2, 2, 2,
                                        2, 0, 0, 1)
    with pytest.raises(ValueError, match="max_pool_forward: expected winner as a 4-D uint8"):
        native._native.max_pool_forward(x, y, winner.astype(np.int32), 2, 2, 2, 2, 0, 0, 1)
    with pytest.raises(ValueError, match="max_pool_backward: expected dx of shape"):
        native._native.max_pool_backward(y, winner, np.zeros((1, 2, 4, 4), np.float32), 2, 2,
                                         2, 2, 0, 0, 1)
    with pytest.raises(ValueError, match="max_pool_backward: expected dy as a 4-D float32"):
        native._native.max_pool_backward(y.astype(np.float64), winner, x, 2, 2, 2, 2, 0, 0, 1)
    assert native_pooling.max_pool_forward(x.astype(np.float64), y, winner, Windows(
        (2, 2), (2, 2), ((0, 0), (0, 0)), (2, 2))) is None
    assert native_pooling.max_pool_forward(x, y, winner, Windows((16, 16), (1, 1), ((0, 0), (0, 0)),
                                                         (2, 2))) is None      # 256 offsets


@settings(max_examples=60, deadline=None)
@given(batch=st.integers(1, 3), channels=st.integers(1, 5), half=st.tuples(
           st.integers(1, 6), st.sampled_from([1, 2, 3, 8, 17])),
       values=st.sampled_from(["normal", "ties", "special"]), threads=st.sampled_from([1, 3]),
       layout=st.sampled_from(["c", "batch last"]), seed=st.integers(0, 2 ** 16))
def test_pairs_pooled_as_rows_match_the_portable_code(instruction_set, batch, channels, half,
                                                      values, threads, layout, seed):
    """2x2 windows of stride 2 tiling a C-contiguous or batch-last batch (pooling_bindings.h
    pools them as rows of the whole batch, a batch-last pixel's N values side by side): the
    maxima, the first maximum's offset (ties keep the earlier one, a NaN stays) and the
    backward's routing, as the portable NumPy passes."""
    rng = np.random.default_rng(seed)
    shape = (batch, channels, 2 * half[0], 2 * half[1])
    if values == "ties":
        x = rng.integers(-2, 3, shape).astype(np.float32)
    else:
        x = rng.standard_normal(shape).astype(np.float32)
        if values == "special":
            x.flat[rng.integers(0, x.size, 3)] = [np.nan, np.inf, -np.inf]
    x = _stored(x, layout)
    windows = Windows((2, 2), (2, 2), ((0, 0), (0, 0)), half)
    assert native_pooling.tiles_by_pairs(x, windows)
    y = _stored(np.full((batch, channels) + half, 7.0, np.float32), layout)
    winner = _stored(np.full(y.shape, 255, np.uint8), layout)
    native._native.max_pool_forward(x, y, winner, 2, 2, 2, 2, 0, 0, threads)
    want_y, want_winner = _portable(pooling.max_pool2d_forward, x, windows)
    np.testing.assert_array_equal(y, want_y)
    np.testing.assert_array_equal(winner, want_winner)
    alone = _stored(np.full(y.shape, 7.0, np.float32), layout)
    native._native.max_pool_forward(x, alone, None, 2, 2, 2, 2, 0, 0, threads)
    np.testing.assert_array_equal(alone, want_y)
    dy = _stored(rng.standard_normal(y.shape).astype(np.float32), layout)
    dx = _stored(np.full(shape, np.nan, np.float32), layout)
    native._native.max_pool_backward(dy, winner, dx, 2, 2, 2, 2, 0, 0, threads)
    want_dx = _portable(pooling.max_pool2d_backward, dy, want_winner, windows, shape)
    np.testing.assert_array_equal(dx, want_dx)


@pytest.mark.parametrize("layouts", [("strided", "c"), ("batch last", "c"),
                                     ("c", "batch last")])
def test_pairs_windows_on_other_layouts_pool_plane_by_plane(layouts):
    """2x2 windows of stride 2 where x is neither C-contiguous nor batch-last, or where x and
    y are laid out differently: the rows kernel would read or write the wrong elements, so
    the planes' kernel runs; the same results as NumPy's."""
    rng = np.random.default_rng(4)
    layout, out_layout = layouts
    x = _stored(rng.standard_normal((3, 2, 4, 6)).astype(np.float32), layout)
    windows = Windows((2, 2), (2, 2), ((0, 0), (0, 0)), (2, 3))
    y = _stored(np.empty((3, 2, 2, 3), np.float32), out_layout)
    winner = _stored(np.empty(y.shape, np.uint8), out_layout)
    native._native.max_pool_forward(x, y, winner, 2, 2, 2, 2, 0, 0, 1)
    want_y, want_winner = _portable(pooling.max_pool2d_forward, x, windows)
    np.testing.assert_array_equal(y, want_y)
    alone = _stored(np.empty(y.shape, np.float32), out_layout)
    native._native.max_pool_forward(x, alone, None, 2, 2, 2, 2, 0, 0, 1)
    np.testing.assert_array_equal(alone, want_y)
    np.testing.assert_array_equal(winner, want_winner)
    dy = _stored(rng.standard_normal(y.shape).astype(np.float32), layout)
    dx = _stored(np.full(x.shape, np.nan, np.float32), out_layout)
    native._native.max_pool_backward(dy, winner, dx, 2, 2, 2, 2, 0, 0, 1)
    np.testing.assert_array_equal(dx, _portable(pooling.max_pool2d_backward, dy, want_winner,
                                                windows, x.shape))


@pytest.mark.parametrize("batch, compiled", [(8, True), (16, False)])
def test_wide_batch_last_rows_take_numpys_passes_for_other_windows(monkeypatch, batch,
                                                                   compiled):
    """With winners, 3x3 windows over a batch-last batch: plane by plane in C up to 15
    images (a row's values within a cache line or two), NumPy's whole-batch passes from 16;
    2x2 pairs stay compiled at any batch; the same results either way."""
    calls = native_helpers.record_calls(monkeypatch, ("max_pool_forward", "max_pool_backward"))
    rng = np.random.default_rng(batch)
    x = _stored(rng.standard_normal((batch, 3, 9, 9)).astype(np.float32), "batch last")
    windows = Windows((3, 3), (2, 2), ((1, 1), (1, 1)), (5, 5))
    y, winner = pooling.max_pool2d_forward(x, windows)
    dy = _stored(rng.standard_normal(y.shape).astype(np.float32), "batch last")
    dx = pooling.max_pool2d_backward(dy, winner, windows, x.shape)
    assert bool(calls) is compiled
    want_y, want_winner = _portable(pooling.max_pool2d_forward, x, windows)
    np.testing.assert_array_equal(y, want_y)
    np.testing.assert_array_equal(winner, want_winner)
    # overlapping windows: an input's gradients summed in another order where compiled
    np.testing.assert_allclose(dx, _portable(pooling.max_pool2d_backward, dy, want_winner,
                                             windows, x.shape), rtol=1e-6, atol=1e-6)
    calls.clear()
    pairs = Windows((2, 2), (2, 2), ((0, 0), (0, 0)), (4, 4))
    y, winner = pooling.max_pool2d_forward(
        _stored(rng.standard_normal((batch, 3, 8, 8)).astype(np.float32), "batch last"), pairs)
    pooling.max_pool2d_backward(y, winner, pairs, (batch, 3, 8, 8))
    assert calls == ["max_pool_forward", "max_pool_backward"]
