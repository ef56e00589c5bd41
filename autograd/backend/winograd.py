"""Winograd F(4x4, 3x3): the 3x3, stride-1 convolutions of wide layers with 4x fewer multiplies.

Lavin and Gray, "Fast Algorithms for Convolutional Neural Networks" (2016). A 4x4 tile of the
output is ``A^T [(G g G^T) * (B^T d B)] A``, where d is the 6x6 input tile under it and g the 3x3
kernel; the sum over input channels can move inside the elementwise product, so each of the 36
transformed positions t is one GEMM U[t] (O, C) @ V[t] (C, tiles). For a (32, 64, 32, 32) batch
with 64 output channels that is 0.6 GFLOP against im2col's 2.4 GFLOP. The transforms are GEMMs
too, with the Kronecker products kron(B^T, B^T) (36 x 36), kron(G, G) (36 x 9) and
kron(A^T, A^T) (16 x 36), so every pass over the data is a BLAS call or one strided copy.

Layouts: component t = 6 a + b (tile row a, column b); the tile index is (n, i, j), tile (i, j)
covering padded rows 4 i .. 4 i + 5 and columns 4 j .. 4 j + 5. Inputs are read and outputs
written through per-component strided views of the (N, C, H, W) arrays, so padding, ragged
edges (output sizes that are not multiples of 4) and the (N, C) -> (C, N) transposition cost no
pass of their own. The tiles are stored in x's layout: with the batch innermost, (C, i, j, N),
where x is batch-last (layout.py: the output of a column-path convolution and of
the ops after it), so that every strided view reads and writes runs of N contiguous elements,
and y and dx are batch-last too; else (C, N, i, j), and y and dx NCHW. The GEMMs take the tiles
in whichever order memory holds them. Measured on the ResNet block's two convolutions, fwd+bwd
at 2 threads, with x and dy batch-last against NCHW (two alternating pairs): the gathers
and scatters 15.0-16.4 against 29.2-32.0 ms, the whole block 98.7-108.5 against 112.3-119.1.
Large arrays come from autograd's reused host buffers (buffer_cache.py).

Accuracy: the transforms' constants (up to 8 and 1/24) cost float32 about 1e-5 of the output's
scale, against ~1e-6 for im2col: the level of cuDNN's and oneDNN's Winograd kernels.

>>> import numpy as np
>>> x, W = np.ones((1, 1, 6, 6)), np.ones((1, 1, 3, 3))
>>> y, V, U, _ = forward(x, W, (1, 1), (1, 1), (True, True))
>>> y[0, 0, :3, :3]
array([[4., 6., 6.],
       [6., 9., 9.],
       [6., 9., 9.]])
"""
import collections
import math
import threading

import numpy as np

from . import buffer_cache, native_pooling, threads
from .layout import BATCH_LAST, image_axis_order

__all__ = []     # internal: the convolution kernel chooses this path (see convolution.py)

_INPUT_TRANSFORM = np.array([[4, 0, -5, 0, 1, 0],        # B^T
                             [0, -4, -4, 1, 1, 0],
                             [0, 4, -4, -1, 1, 0],
                             [0, -2, -1, 2, 1, 0],
                             [0, 2, -1, -2, 1, 0],
                             [0, 4, 0, -5, 0, 1]], np.float64)
_KERNEL_TRANSFORM = np.array([[1 / 4, 0, 0],                # G
                              [-1 / 6, -1 / 6, -1 / 6],
                              [-1 / 6, 1 / 6, -1 / 6],
                              [1 / 24, 1 / 12, 1 / 6],
                              [1 / 24, -1 / 12, 1 / 6],
                              [0, 0, 1]], np.float64)
_OUTPUT_TRANSFORM = np.array([[1, 1, 1, 1, 1, 0],          # A^T
                              [0, 1, -1, 2, -2, 0],
                              [0, 1, 1, 4, 4, 0],
                              [0, 1, -1, 8, -8, 1]], np.float64)
_KRONECKER = {}
MIN_CHANNELS = 48
MIN_TILES = 128


def _matrices(dtype):
    """kron(B^T, B^T), kron(G, G) and kron(A^T, A^T) in ``dtype``: row-major vec(M d N^T) =
    kron(M, N) vec(d), so one GEMM transforms every tile at once."""
    if dtype not in _KRONECKER:
        _KRONECKER[dtype] = tuple(np.kron(m, m).astype(dtype) for m in
                                  (_INPUT_TRANSFORM, _KERNEL_TRANSFORM, _OUTPUT_TRANSFORM))
    return _KRONECKER[dtype]


def applies(x, W, stride, dilation, groups, pads_h, pads_w):
    """Whether conv2d should take this path: NumPy float32/float64 input, a 3x3 kernel, stride
    and dilation 1, one group, at least MIN_CHANNELS input and output channels and MIN_TILES
    tiles in the batch. Measured fwd+bwd at 2 threads against im2col: 64 -> 64 channels on
    (32, 64, 32, 32) 44-45 against 64-81 ms, 128 -> 128 on 16x16 30-32 against 54, 48 -> 48 on
    32x32 30 against 39; level for 32 -> 64 on 14x14 (the example CNN's second layer, whose
    16x16 of tiles wastes a quarter) and slower for 32 -> 32 there, and for 4x4 images, whose
    eight tiles make GEMMs too thin. The transforms cost a pass per element whatever the
    channels; the GEMM time they save grows with C * O."""
    return (type(x) is np.ndarray and x.dtype in (np.float32, np.float64)
            and W.shape[2:] == (3, 3) and stride == (1, 1) and dilation == (1, 1)
            and groups == 1 and min(W.shape[0], W.shape[1]) >= MIN_CHANNELS
            and x.shape[0] * _tiles(x.shape[2], pads_h) * _tiles(x.shape[3], pads_w) >= MIN_TILES)


def _tiles(size, pads):
    """Output tiles along an axis of ``size`` padded by ``pads``: ceil(output size / 4)."""
    return -(-(size + pads[0] + pads[1] - 2) // 4)


def forward(x, W, pads_h, pads_w, needs):
    """y (N, O, OH, OW) = conv2d(x (N, C, H, W), W (O, C, 3, 3)) padded by ``pads_h``/``pads_w``
    (before, after). Returns y and what :func:`backward` needs for the gradients flagged in
    ``needs`` (x's, W's), else None: the transformed tiles V (36, C, tiles) for dW, the
    transformed kernel U (36, O, C) for dx; and whether the tiles (hence y, and dx in
    backward) are batch-last, which backward needs back."""
    n, c, h, w = x.shape
    out_channels = W.shape[0]
    out_h, out_w = h + sum(pads_h) - 2, w + sum(pads_w) - 2
    grid = (-(-out_h // 4), -(-out_w // 4))
    tiles_count = n * grid[0] * grid[1]
    input_matrix, kernel_matrix, output_matrix = _matrices(x.dtype)
    if native_pooling.takes_images(x):
        batch_last_tiles = True
        tiles_matrix = _tiles_by_columns(x, 6, grid, pads_h[0], pads_w[0])
    else:
        batch_last_tiles = image_axis_order(x) == BATCH_LAST
        tiles, tiles_matrix = _tile_array((36,), c, n, grid, x.dtype, batch_last_tiles)
        _gather_tiles(tiles, x, pads_h, pads_w)
        del tiles
    V = buffer_cache.empty(np, (36, c, tiles_count), x.dtype)
    np.matmul(input_matrix, tiles_matrix, out=V.reshape(36, -1))
    del tiles_matrix
    U = _transformed_kernel(W, kernel_matrix, reuse=not any(needs))
    products = buffer_cache.empty(np, (36, out_channels, tiles_count), x.dtype)
    np.matmul(U, V, out=products)
    output_tiles, output_tiles_matrix = _tile_array((4, 4), out_channels, n, grid, x.dtype,
                                                    batch_last_tiles)
    np.matmul(output_matrix, products.reshape(36, -1), out=output_tiles_matrix)
    del products
    y = buffer_cache.empty(np, (n, out_channels, out_h, out_w), x.dtype,
                           BATCH_LAST if batch_last_tiles else None)
    _scatter_output(y, output_tiles)
    return y, (V if needs[1] else None), (U if needs[0] else None), batch_last_tiles


_transformed_kernels = collections.OrderedDict()   # id(W) -> (copy of W, U)
_transformed_kernels_lock = threading.Lock()
_TRANSFORMED_KERNELS_LIMIT_BYTES = 128 << 20


def _transformed_kernel(W, kernel_matrix, reuse=False):
    """U (36, O, C) = kron(G, G) W for each (o, c): the kernel's 36 transformed positions.

    With ``reuse`` (a forward that keeps nothing: inference), the U last computed for the array
    with W's id is returned instead while W holds the values it was computed from, bit for bit
    (compared with a copy: a fine-tuned or reloaded W, or a new array that took a freed one's
    id, is transformed again). An imported ResNet-50 at batch 8 spent 25.5 ms of each ~780 ms
    forward transforming unchanged weights, 4.8 ms comparing them. At most
    _TRANSFORMED_KERNELS_LIMIT_BYTES of copies and U are kept, the least recently used dropped
    first; ``autograd.empty_cache()`` drops them all."""
    out_channels, channels = W.shape[:2]
    if reuse:
        with _transformed_kernels_lock:
            entry = _transformed_kernels.get(id(W))
        # the dtype too: a float64 array of the same values must not get a float32 U
        if entry is not None and entry[0].dtype == W.dtype and np.array_equal(entry[0], W):
            with _transformed_kernels_lock:
                if id(W) in _transformed_kernels:
                    _transformed_kernels.move_to_end(id(W))
            return entry[1]
    U = (kernel_matrix @ W.reshape(out_channels * channels, 9).T).reshape(
        36, out_channels, channels)
    if reuse:
        with _transformed_kernels_lock:
            _transformed_kernels.pop(id(W), None)
            _transformed_kernels[id(W)] = (W.copy(), U)
            held = sum(copy.nbytes + kept.nbytes for copy, kept in _transformed_kernels.values())
            while held > _TRANSFORMED_KERNELS_LIMIT_BYTES and _transformed_kernels:
                copy, kept = _transformed_kernels.popitem(last=False)[1]
                held -= copy.nbytes + kept.nbytes
    return U


def forget_transformed_kernels():
    """Drop the kept kernel transforms (see _transformed_kernel); returns the bytes they held."""
    with _transformed_kernels_lock:
        held = sum(copy.nbytes + kept.nbytes for copy, kept in _transformed_kernels.values())
        _transformed_kernels.clear()
    return held


def backward(V, U, dy, input_shape, pads_h, pads_w, needs, batch_last_tiles=False):
    """(dx, dW) from dy (N, O, OH, OW), each None where ``needs`` says it is not wanted;
    ``batch_last_tiles`` as :func:`forward` returned it.
    dM = kron(A, A) dY per tile; dW = kron(G^T, G^T) (dM[t] @ V[t]^T); dV[t] = U[t]^T @ dM[t],
    dtiles = kron(B, B) dV, and dx sums each input pixel over the (up to four) tiles that read
    it."""
    n, c, h, w = input_shape
    out_channels, out_h, out_w = dy.shape[1:]
    grid = (-(-out_h // 4), -(-out_w // 4))
    tiles_count = n * grid[0] * grid[1]
    input_matrix, kernel_matrix, output_matrix = _matrices(dy.dtype)

    if batch_last_tiles and native_pooling.takes_images(dy):
        output_tiles_matrix = _tiles_by_columns(dy, 4, grid, 0, 0)     # zeros past an edge
    else:
        output_tiles, output_tiles_matrix = _tile_array((4, 4), out_channels, n, grid,
                                                        dy.dtype, batch_last_tiles)
        _gather_output_gradient(output_tiles, dy)
        del output_tiles
    dproducts = buffer_cache.empty(np, (36, out_channels, tiles_count), dy.dtype)
    np.matmul(output_matrix.T, output_tiles_matrix, out=dproducts.reshape(36, -1))
    del output_tiles_matrix
    dx = dW = None
    if needs[1]:
        dU = np.matmul(dproducts, V.transpose(0, 2, 1))
        dW = (kernel_matrix.T @ dU.reshape(36, -1)).reshape(3, 3, out_channels, c)
        dW = np.ascontiguousarray(dW.transpose(2, 3, 0, 1))
    if needs[0]:
        dV = buffer_cache.empty(np, (36, c, tiles_count), dy.dtype)
        np.matmul(U.transpose(0, 2, 1), dproducts, out=dV)
        del dproducts
        dtiles, dtiles_matrix = _tile_array((6, 6), c, n, grid, dy.dtype, batch_last_tiles)
        np.matmul(input_matrix.T, dV.reshape(36, -1), out=dtiles_matrix)
        del dV
        dx = buffer_cache.empty(np, input_shape, dy.dtype,
                                BATCH_LAST if batch_last_tiles else None)
        # one tile to the right along the tiles' memory order: N elements on when the batch
        # is innermost, else the next element
        _scatter_input_gradient(dx, dtiles, dtiles_matrix.reshape(6, 6, -1),
                                n if batch_last_tiles else 1, pads_h, pads_w)
    return dx, dW


def _tiles_by_columns(images, size, grid, top, left):
    """The (size * size, C * tiles) matrix of the size x size tiles of float32 ``images`` (N,
    C, H, W), 4 apart, tile grid ``grid`` from row -``top``, column -``left`` (zeros outside),
    stored batch-last: im2col with its rows by kernel offset first, written by the compiled
    kernel from any layout. It replaced 36 (forward) and 16 (backward) strided copies handed to
    the Python threads after zeroing the padding's tiles: 53 ms of an imported ResNet-50's
    forward at batch 8."""
    channels = images.shape[1]
    tiles_count = images.shape[0] * grid[0] * grid[1]
    matrix = buffer_cache.empty(np, (size * size, channels * tiles_count), images.dtype)
    native_pooling.columns(images, matrix.reshape(1, size * size * channels, tiles_count),
                           (size, size), grid, (4, 4), (1, 1), 1, top, left, offset_major=True)
    return matrix


def _tile_array(leading, channels, n, grid, dtype, batch_last_tiles):
    """An uninitialised tile array shaped ``leading + (channels, n) + grid`` (tile index (n, i,
    j)), stored with the batch innermost where ``batch_last_tiles``; and its (prod(leading),
    channels * tiles) matrix for the GEMMs, with the tiles in memory order."""
    if not batch_last_tiles:
        tiles = buffer_cache.empty(np, leading + (channels, n) + grid, dtype)
        return tiles, tiles.reshape(math.prod(leading), -1)
    stored = buffer_cache.empty(np, leading + (channels,) + grid + (n,), dtype)
    k = len(leading) + 1                     # the batch axis, after leading and channels
    view = stored.transpose(tuple(range(k)) + (k + 2, k, k + 1))
    return view, stored.reshape(math.prod(leading), -1)


def _tile_rows(offset, size, pad, count):
    """Tiles i whose row 4 i + offset (padded) lies inside the unpadded input of ``size`` rows
    with ``pad`` before it: (tile slice, input row slice), or None when there is none."""
    first = max(0, -(-(pad - offset) // 4))
    last = min(count - 1, (size - 1 + pad - offset) // 4)
    if last < first:
        return None
    start = 4 * first + offset - pad
    return slice(first, last + 1), slice(start, start + 4 * (last - first) + 1, 4)


def _for_each_component(count, width, body, array):
    """``body(a, b)`` for every component 0 <= t < count, (a, b) = divmod(t, width), the
    components split across the threads (each writes its own part of ``array``)."""
    def run(start, stop):
        for t in range(start, stop):
            body(*divmod(t, width))
    threads.parallel_for(run, count, array)


def _gather_tiles(tiles, x, pads_h, pads_w):
    """tiles[6 a + b][c, n, i, j] = x[n, c, 4 i + a - top, 4 j + b - left], 0 outside x."""
    n, c, h, w = x.shape
    grid = tiles.shape[3:]

    def gather(a, b):
        block = tiles[6 * a + b]
        rows = _tile_rows(a, h, pads_h[0], grid[0])
        columns = _tile_rows(b, w, pads_w[0], grid[1])
        if rows is None or columns is None:
            block[...] = 0
            return
        _zero_outside(block, rows[0], columns[0])
        block[:, :, rows[0], columns[0]] = x[:, :, rows[1], columns[1]].transpose(1, 0, 2, 3)
    _for_each_component(36, 6, gather, tiles)


def _zero_outside(block, rows, columns):
    """Zero block[..., i, j] outside the slices ``rows`` x ``columns`` (the padding's tiles)."""
    block[:, :, :rows.start] = 0
    block[:, :, rows.stop:] = 0
    block[:, :, :, :columns.start] = 0
    block[:, :, :, columns.stop:] = 0


def _scatter_output(y, output_tiles):
    """y[n, o, 4 i + p, 4 j + q] = output_tiles[p, q, o, n, i, j] where inside y (tiles past a
    ragged edge computed outputs that are dropped)."""
    def scatter(p, q):
        target = y[:, :, p::4, q::4]
        rows, columns = target.shape[2:]
        target[...] = output_tiles[p, q, :, :, :rows, :columns].transpose(1, 0, 2, 3)
    _for_each_component(16, 4, scatter, y)


def _gather_output_gradient(output_tiles, dy):
    """output_tiles[p, q, o, n, i, j] = dy[n, o, 4 i + p, 4 j + q], 0 past a ragged edge."""
    def gather(p, q):
        source = dy[:, :, p::4, q::4]
        rows, columns = source.shape[2:]
        block = output_tiles[p, q]
        _zero_outside(block, slice(0, rows), slice(0, columns))
        block[:, :, :rows, :columns] = source.transpose(1, 0, 2, 3)
    _for_each_component(16, 4, gather, output_tiles)


def _scatter_input_gradient(dx, dtiles, flat, shift, pads_h, pads_w):
    """dx[n, c, r, s] = the sum of dtiles[a, b, c, n, i, j] over the tiles with 4 i + a = r + top
    and 4 j + b = s + left. Neighbouring tiles overlap by two rows (and columns): rows a = 4, 5
    of tile i are rows 0, 1 of tile i + 1. Those are added into tile i + 1 first, in place, so
    that every pixel then has exactly one owner: (a < 4) of its tile, or a = 4, 5 of the last
    tile row; likewise for columns. ``flat`` is dtiles as (6, 6, elements) in memory order, in
    which the next tile to the right is ``shift`` elements on."""
    n, c, h, w = dx.shape
    grid = dtiles.shape[4:]
    # Fold columns, then rows. A slice along j would add runs of grid[1] - 1 tiles; over the
    # flattened axis it is one long contiguous add, whose stray terms (column 4, 5 of tile
    # j = last, added to tile j = 0 of the next row) are set aside first: they are the last
    # tile column's own pixels.
    last_columns = dtiles[:, 4:, :, :, :, -1].copy()
    dtiles[:, 4:, :, :, :, -1] = 0

    # Split over the 6 tile rows a only: a chunk of the flattened tiles would lose the terms
    # its first tile takes from the tile before it, in the previous chunk.
    def add_shifted(start, stop):
        flat[start:stop, :2, shift:] += flat[start:stop, 4:, :-shift]
    threads.parallel_for(add_shifted, 6, flat)
    dtiles[:2, :4, :, :, 1:] += dtiles[4:, :4, :, :, :-1]
    last_columns[:2, :, :, :, 1:] += last_columns[4:, :, :, :, :-1]

    def scatter(a, b):
        rows = _owned_rows(a, h, pads_h[0], grid[0])
        columns = _owned_rows(b, w, pads_w[0], grid[1])
        if rows is None or columns is None:
            return
        source = dtiles[a, b] if b < 4 else last_columns[a, b - 4][..., None]
        column_tiles = columns[0] if b < 4 else slice(0, 1)
        block = source[:, :, rows[0], column_tiles]
        dx[:, :, rows[1], columns[1]] = block.transpose(1, 0, 2, 3)
    _for_each_component(36, 6, scatter, dx)


def _owned_rows(offset, size, pad, count):
    """After the fold, the rows that tile row ``offset`` owns: every tile for offset < 4, only
    the last tile for offset 4 and 5 (its two extra rows reach past the other tiles)."""
    if offset < 4:
        return _tile_rows(offset, size, pad, count)
    row = 4 * (count - 1) + offset - pad
    if not 0 <= row < size:
        return None
    return slice(count - 1, count), slice(row, row + 1)
