"""One small image's convolution (batch 1, one group, few columns: convolution.py sends it
here): the latency path of a CNN serving or learning one example at a time.

The columns (C * kh * kw, OH * OW) are gathered from the image's values by one ``take`` of a
cached index (:func:`window_index`; a padded position reads a zero kept after the values), so
no padded copy of the image and no strided window view is built per call; y = W (O, C * kh *
kw) @ columns. Backward: dW = dy @ columns^T, dcolumns = W^T @ dy, and dx is dcolumns added
back into the image by the same index (``bincount``, summed in float64 and rounded once). At
batch 1 a convolution of an 8x8 image is a few microseconds of arithmetic, so what it costs is
the number of NumPy calls (benchmarks/NOTES.md, seventeenth session).

>>> x = np.arange(9, dtype=np.float32).reshape(1, 1, 3, 3)
>>> y, cols, index = forward(x, np.ones((1, 1, 2, 2), np.float32), None, ((0, 0), (0, 0)),
...                          (2, 2), (2, 2), (1, 1), (1, 1))
>>> y[0, 0]
array([[ 8., 12.],
       [20., 24.]], dtype=float32)
"""
import functools

import numpy as np

from . import native, native_pooling
from .matmul import matmul as _product

__all__ = []     # used by convolution.py


@functools.lru_cache(maxsize=256)
def window_index(image_shape, kernel, out_size, stride, dilation, pads):
    """(C * kh * kw, OH * OW) indices into an image's C * H * W values (C order) followed by a
    zero: entry [(c, i, j), (oh, ow)] is where kernel offset (i, j) of output (oh, ow) reads
    channel c, or C * H * W (the zero) where that falls in the padding. Read-only, cached per
    geometry."""
    channels, height, width = image_shape
    (kernel_h, kernel_w), (out_h, out_w) = kernel, out_size
    rows = (np.arange(kernel_h)[:, None, None, None] * dilation[0]
            + np.arange(out_h)[None, None, :, None] * stride[0] - pads[0][0])
    columns = (np.arange(kernel_w)[None, :, None, None] * dilation[1]
               + np.arange(out_w)[None, None, None, :] * stride[1] - pads[1][0])
    inside = (rows >= 0) & (rows < height) & (columns >= 0) & (columns < width)
    plane = height * width
    offsets = np.where(inside, rows * width + columns, -1)              # (kh, kw, OH, OW)
    index = np.arange(channels)[:, None, None, None, None] * plane + offsets
    index = np.where(offsets >= 0, index, channels * plane).astype(np.intp)
    index = index.reshape(channels * kernel_h * kernel_w, out_h * out_w)
    index.flags.writeable = False
    return index


def forward(x, W, b, pads, out_size, kernel, stride, dilation):
    """y = conv2d(x, W) + b of one image x (1, C, H, W) in any layout, W (O, C, kh, kw), b
    (O,) or None: y (1, O, OH, OW) in C order, and what :func:`gradients` needs (the columns
    and the index)."""
    values = np.empty(x.size + 1, x.dtype)
    values[:-1].reshape(x.shape)[...] = x
    values[-1] = 0
    index = window_index(x.shape[1:], kernel, out_size, stride, dilation, pads)
    cols = values[index]                 # fancy indexing: half the time of take() here
    weights = W.reshape(W.shape[0], -1)
    # the compiled small products where their shape rule takes it (matmul); else BLAS, with
    # no refusal to pay first
    y = (_product(weights, cols) if native.product_shape_fits(*weights.shape, cols.shape[1])
         else np.matmul(weights, cols))
    if b is not None:
        y += b.reshape(-1, 1).astype(y.dtype, copy=False)       # b cast first, as the batch
    return y.reshape((1, W.shape[0]) + tuple(out_size)), cols, index


def gradients(cols, W, index, dy, input_shape, weight_shape, needs, geometry, pads):
    """dx and dW (None where not wanted; ``cols`` is needed for dW, ``W`` for dx) of
    :func:`forward`'s convolution from dy (1, O, OH, OW): dW = rows @ columns^T with dy as rows
    (O, OH * OW); dcolumns = W^T @ rows, added back at the image positions the columns were
    gathered from (the padding's share dropped): float32 by the compiled col2im (summed in
    float32, each offset in turn), else by ``bincount`` (summed in float64, rounded once)."""
    out_channels = weight_shape[0]
    rows = dy.reshape(out_channels, -1)
    dW = np.matmul(rows, cols.T).reshape(weight_shape) if needs[1] else None
    if not needs[0]:
        return None, dW
    dcols = np.matmul(W.reshape(out_channels, -1).T, rows)
    dx = np.empty(input_shape, dcols.dtype)
    if native_pooling.col2im(dcols, dx, geometry.kernel, dy.shape[2:], geometry.stride,
                             geometry.dilation, pads[0][0], pads[1][0]):
        return dx, dW
    sums = np.bincount(index.reshape(-1), weights=dcols.reshape(-1),
                       minlength=int(np.prod(input_shape)) + 1)
    return sums[:-1].astype(dcols.dtype).reshape(input_shape), dW
