"""winograd.py where the full mutation run of autograd/backend/ found the suite blind
(docs/testing.md): the rule that picks the path at each of its boundaries, and forward and
backward over every small size and padding (ragged edges, tiles wholly in the padding), in
both layouts and both float dtypes, which the property tests draw only 12 of. References:
the direct sums over the nine kernel offsets of tests/backend/test_winograd.py."""
import itertools

import numpy as np
import pytest

import autograd
from autograd.backend import threads, winograd
from autograd.backend.layout import is_batch_last
from tests.backend.spies import record_scratch_dtypes
from tests.backend.test_winograd import reference_gradients
from tests.layouts import stored_batch_last
from tests.operations.test_conv import reference_conv2d


def _zeros(*shape, dtype=np.float32):
    return np.broadcast_to(dtype(0), shape)      # an ndarray of the shape, no memory


def _applies(x_shape, w_shape=(48, 48, 3, 3), pads=((1, 1), (1, 1)), stride=(1, 1),
             dilation=(1, 1), groups=1, dtype=np.float32):
    return winograd.applies(_zeros(*x_shape, dtype=dtype), _zeros(*w_shape, dtype=dtype),
                            stride, dilation, groups, *pads)


def test_applies_at_its_channel_boundary():
    """At least MIN_CHANNELS (48) input and output channels: 48 -> 48 yes, 47 on either no."""
    assert winograd.MIN_CHANNELS == 48
    assert _applies((8, 48, 16, 16))
    assert not _applies((8, 47, 16, 16), (48, 47, 3, 3))
    assert not _applies((8, 48, 16, 16), (47, 48, 3, 3))
    assert _applies((8, 64, 16, 16), (48, 64, 3, 3)) and _applies((8, 48, 16, 16), (64, 48, 3, 3))


def test_applies_at_its_tile_boundary_with_uneven_pads():
    """At least MIN_TILES (128) 4x4 tiles in the batch, counted per axis from the padded size:
    ceil((H + top + bottom - 2) / 4) rows of tiles."""
    assert winograd.MIN_TILES == 128
    # 16 rows of output (4 tiles) by 8 columns (2 tiles): 8 tiles an image
    pads = ((0, 2), (1, 0))
    assert _applies((16, 48, 16, 9), pads=pads)
    assert not _applies((15, 48, 16, 9), pads=pads)
    # one more output row or column makes one more row or column of tiles
    assert _applies((13, 48, 17, 8), pads=((0, 0), (3, 0)))      # 15 x 9 out: 4 x 3 tiles
    assert not _applies((10, 48, 17, 8), pads=((0, 0), (3, 0)))
    assert _applies((128, 48, 3, 3), pads=((0, 0), (0, 0)))      # 1 x 1 out: 1 tile
    assert not _applies((127, 48, 3, 3), pads=((0, 0), (0, 0)))
    assert not _applies((127, 48, 3, 4), pads=((0, 0), (0, 0)))
    assert _applies((64, 48, 3, 7), pads=((0, 0), (0, 0)))        # 1 x 5 out: 2 tiles


def test_tiles_counts_the_padded_output_per_axis():
    for size, pads in itertools.product(range(1, 14), [(0, 0), (1, 1), (2, 0), (0, 3)]):
        out = size + sum(pads) - 2
        if out >= 1:
            assert winograd._tiles(size, pads) == -(-out // 4), (size, pads)


@pytest.mark.parametrize("stride, dilation, groups, w_shape, dtype", [
    ((2, 1), (1, 1), 1, (48, 48, 3, 3), np.float32),
    ((1, 2), (1, 1), 1, (48, 48, 3, 3), np.float32),
    ((1, 1), (2, 1), 1, (48, 48, 3, 3), np.float32),
    ((1, 1), (1, 2), 1, (48, 48, 3, 3), np.float32),
    ((1, 1), (1, 1), 2, (48, 24, 3, 3), np.float32),
    ((1, 1), (1, 1), 1, (48, 48, 3, 2), np.float32),
    ((1, 1), (1, 1), 1, (48, 48, 2, 3), np.float32),
    ((1, 1), (1, 1), 1, (48, 48, 3, 3), np.float16),
    ((1, 1), (1, 1), 1, (48, 48, 3, 3), np.int64),
])
def test_applies_to_nothing_but_3x3_stride_1_ungrouped_float_layers(stride, dilation, groups,
                                                                    w_shape, dtype):
    assert not _applies((8, 48, 16, 16), w_shape, stride=stride, dilation=dilation,
                        groups=groups, dtype=dtype)


def test_applies_in_float64_but_not_to_an_array_subclass():
    assert _applies((8, 48, 16, 16), dtype=np.float64)
    x = np.zeros((8, 48, 16, 16), np.float32).view(np.memmap)      # not exactly an ndarray
    assert not winograd.applies(x, _zeros(48, 48, 3, 3), (1, 1), (1, 1), 1, (1, 1), (1, 1))


# every padding of 0..3 before and after against output sizes 1..9 (tiles that end inside the
# image, at its edge, past it; tiles wholly in the padding), per axis
SWEEP = [(h, pads_h, w, pads_w)
         for h, pads_h in itertools.product(range(1, 10), itertools.product(range(4), repeat=2))
         if h + sum(pads_h) >= 3
         for w, pads_w in [(max(1, 4 - sum(pads_h)) + h % 5, pads_h[::-1])]]


@pytest.mark.parametrize("batch_last", [False, True])
def test_forward_and_backward_over_every_small_size_and_padding(monkeypatch, batch_last):
    # the transforms are cached per dtype: built afresh here, from the constants
    monkeypatch.setattr(winograd, "_KRONECKER", {})
    rng = np.random.default_rng(11)
    failures = []
    for h, pads_h, w, pads_w in SWEEP:
        x = rng.uniform(-1, 1, (2, 2, h, w))
        W = rng.uniform(-1, 1, (3, 2, 3, 3))
        laid_out = stored_batch_last(x) if batch_last else x
        y, V, U, tiles_batch_last = winograd.forward(laid_out, W, pads_h, pads_w, (True, True))
        assert tiles_batch_last == batch_last
        expected = reference_conv2d(x, W, None, (1, 1), pads_h, pads_w, (1, 1), 1)
        dy = rng.uniform(-1, 1, y.shape)
        dx, dW = winograd.backward(V, U, stored_batch_last(dy) if batch_last else dy, x.shape,
                                   pads_h, pads_w, (True, True), tiles_batch_last)
        expected_dx, expected_dW = reference_gradients(x, W, dy, pads_h, pads_w)
        for got, want in ((y, expected), (dx, expected_dx), (dW, expected_dW)):
            if got.shape != want.shape or not np.allclose(got, want, rtol=1e-10, atol=1e-12):
                failures.append((h, pads_h, w, pads_w))
        assert is_batch_last(y) == batch_last and is_batch_last(dx) == batch_last
    assert failures == []


@pytest.mark.parametrize("needs", [(True, False), (False, True), (False, False)])
def test_backward_returns_none_for_each_gradient_not_wanted(needs):
    rng = np.random.default_rng(12)
    x, W = rng.uniform(-1, 1, (2, 2, 6, 5)), rng.uniform(-1, 1, (3, 2, 3, 3))
    y, V, U, tiles_batch_last = winograd.forward(x, W, (1, 1), (1, 1), needs)
    dy = rng.uniform(-1, 1, y.shape)
    dx, dW = winograd.backward(V, U, dy, x.shape, (1, 1), (1, 1), needs, tiles_batch_last)
    expected_dx, expected_dW = reference_gradients(x, W, dy, (1, 1), (1, 1))
    for got, wanted, expected in ((dx, needs[0], expected_dx), (dW, needs[1], expected_dW)):
        if wanted:
            np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
        else:
            assert got is None


@pytest.mark.parametrize("batch_last", [False, True])
def test_a_float32_layer_takes_only_float32_scratch(monkeypatch, batch_last):
    """Tiles, transformed tiles, products and gradients of a float32 pass are float32 buffers
    (a float64 one doubles the 36-component arrays' memory and changes the rounding), and y,
    dx and dW are float32 within the float32 error of test_winograd.py."""
    rng = np.random.default_rng(13)
    x, W = rng.uniform(-1, 1, (2, 3, 9, 7)), rng.uniform(-1, 1, (4, 3, 3, 3))
    asked = record_scratch_dtypes(monkeypatch)
    monkeypatch.setattr(winograd, "_KRONECKER", {})         # the float32 transforms afresh
    x32 = x.astype(np.float32)
    y, V, U, tiles_batch_last = winograd.forward(stored_batch_last(x32) if batch_last else x32,
                                                 W.astype(np.float32), (1, 1), (1, 1),
                                                 (True, True))
    dy = rng.uniform(-1, 1, y.shape)
    dx, dW = winograd.backward(V, U, dy.astype(np.float32), x.shape, (1, 1), (1, 1),
                               (True, True), tiles_batch_last)
    assert len(asked) >= 8 and set(asked) == {np.dtype(np.float32)}
    assert y.dtype == dx.dtype == dW.dtype == np.float32
    assert V.dtype == U.dtype == np.float32          # kept from forward to backward
    expected = reference_conv2d(x, W, None, (1, 1), (1, 1), (1, 1), (1, 1), 1)
    expected_dx, expected_dW = reference_gradients(x, W, dy, (1, 1), (1, 1))
    for got, want in ((y, expected), (dx, expected_dx), (dW, expected_dW)):
        np.testing.assert_allclose(got, want, atol=5e-5 * np.abs(want).max())


def test_the_transforms_are_built_once_per_dtype_from_the_constants(monkeypatch):
    """kron(B^T, B^T), kron(G, G), kron(A^T, A^T) in the dtype asked, kept for the next call."""
    monkeypatch.setattr(winograd, "_KRONECKER", {})
    for dtype in (np.float32, np.float64):
        matrices = winograd._matrices(np.dtype(dtype))
        assert [m.shape for m in matrices] == [(36, 36), (36, 9), (16, 36)]
        for matrix, small in zip(matrices, (winograd._INPUT_TRANSFORM,
                                            winograd._KERNEL_TRANSFORM,
                                            winograd._OUTPUT_TRANSFORM)):
            assert matrix.dtype == dtype
            np.testing.assert_array_equal(matrix, np.kron(small, small).astype(dtype))
        assert winograd._matrices(np.dtype(dtype)) is matrices


@pytest.mark.parametrize("batch_last", [False, True])
def test_components_split_over_three_threads(forced_threads, batch_last):
    """The gathers and scatters run their 36 (or 16) components in three chunks, and the fold
    of overlapping tiles is split too: every fourth size of the sweep, twice."""
    rng = np.random.default_rng(15)
    for h, pads_h, w, pads_w in SWEEP[::4] * 2:
        x = rng.uniform(-1, 1, (3, 2, h, w + 3))
        W = rng.uniform(-1, 1, (3, 2, 3, 3))
        laid_out = stored_batch_last(x) if batch_last else x
        y, V, U, tiles_batch_last = winograd.forward(laid_out, W, pads_h, pads_w, (True, True))
        np.testing.assert_allclose(
            y, reference_conv2d(x, W, None, (1, 1), pads_h, pads_w, (1, 1), 1),
            rtol=1e-10, atol=1e-12)
        dy = rng.uniform(-1, 1, y.shape)
        dx, dW = winograd.backward(V, U, stored_batch_last(dy) if batch_last else dy, x.shape,
                                   pads_h, pads_w, (True, True), tiles_batch_last)
        expected_dx, expected_dW = reference_gradients(x, W, dy, pads_h, pads_w)
        np.testing.assert_allclose(dx, expected_dx, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(dW, expected_dW, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("count", [4, 6, 7, 8])
@pytest.mark.parametrize("batch_last", [False, True])
def test_dx_is_right_at_every_thread_count(monkeypatch, count, batch_last):
    """The fold of overlapping tiles adds each tile's rows 4, 5 into the next tile's, ``shift``
    elements on along the flattened tiles. Bug (fixed): the fold was split over the threads
    along whatever axis had a part for each; past 6 threads that was the flattened tiles
    themselves, and a chunk's first tile lost the rows of the tile before it, in another
    chunk: with 7 threads, a (32, 64, 16, 16) layer's dx was off by 5 on a scale of 20."""
    previous = autograd.get_num_threads()
    monkeypatch.setattr(threads, "MIN_PARALLEL_ELEMENTS", 1)
    autograd.set_num_threads(count)
    try:
        rng = np.random.default_rng(16)
        for shape in ((2, 3, 9, 10), (3, 5, 13, 6)):
            x, W = rng.uniform(-1, 1, shape), rng.uniform(-1, 1, (4, shape[1], 3, 3))
            y, V, U, tiles_batch_last = winograd.forward(
                stored_batch_last(x) if batch_last else x, W, (1, 1), (1, 1), (True, True))
            dy = rng.uniform(-1, 1, y.shape)
            dx, dW = winograd.backward(V, U, dy, x.shape, (1, 1), (1, 1), (True, True),
                                       tiles_batch_last)
            expected_dx, expected_dW = reference_gradients(x, W, dy, (1, 1), (1, 1))
            np.testing.assert_allclose(dx, expected_dx, rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(dW, expected_dW, rtol=1e-10, atol=1e-12)
    finally:
        autograd.set_num_threads(previous)


@pytest.mark.parametrize("pads", [((0, 0), (0, 0)), ((0, 1), (1, 0)), ((2, 0), (0, 2))])
def test_components_may_run_in_any_order(monkeypatch, pads):
    """parallel_for promises no order between chunks: run here one after another, last chunk
    first, in 6 chunks (one per tile row a of the 36 components). Rows 4 and 5 of the last
    tile row each own one row of dx (output sizes that are multiples of 4, unpadded after):
    a component that wrote past its own row would be overwritten, or overwrite, by order."""
    def last_chunk_first(function, length, array):
        parts = min(6, length)
        bounds = [length * k // parts for k in range(parts + 1)]
        for k in reversed(range(parts)):
            function(bounds[k], bounds[k + 1])
    monkeypatch.setattr(threads, "parallel_for", last_chunk_first)
    rng = np.random.default_rng(17)
    pads_h, pads_w = pads
    for out_h, out_w in ((8, 8), (4, 12), (9, 8)):
        x = rng.uniform(-1, 1, (2, 3, out_h + 2 - sum(pads_h), out_w + 2 - sum(pads_w)))
        W = rng.uniform(-1, 1, (2, 3, 3, 3))
        y, V, U, tiles_batch_last = winograd.forward(x, W, pads_h, pads_w, (True, True))
        dy = rng.uniform(-1, 1, y.shape)
        dx, dW = winograd.backward(V, U, dy, x.shape, pads_h, pads_w, (True, True),
                                   tiles_batch_last)
        expected_dx, expected_dW = reference_gradients(x, W, dy, pads_h, pads_w)
        np.testing.assert_allclose(dx, expected_dx, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(dW, expected_dW, rtol=1e-10, atol=1e-12)
