"""The compiled windows over float32 NumPy images (N, C, H, W) in any layout, split over the
compiled kernels' threads: max pooling (csrc/kernel_pooling.h, pooling_bindings.h) for
pooling.py, the (n, c) planes over the threads, and a convolution's im2col columns read from
its unpadded input (columns_bindings.h) for im2col.py. As in native.py, the pooling functions
return True, or None where the kernel does not apply (nothing written), and the caller runs
its portable NumPy code; for the columns the caller asks :func:`takes_images` first.
"""
import numpy as np

from .layout import is_batch_last
from .native import _native, _split_threads, _takes

__all__ = []     # used by pooling.py


def takes_images(*arrays):
    """Whether the pooling kernels may apply: switched on, and float32 NumPy arrays of 4-D
    images (N, C, H, W) in any layout."""
    return _takes(arrays, 4, any_layout=True)


def tiles_by_pairs(x, windows):
    """Whether the pooling is 2x2 windows of stride 2 that tile x exactly (the commonest
    pooling) and x is C-contiguous or batch-last: the kernels then pool every plane at once as
    rows of the batch (pooling_bindings.h), at any size faster than plane by plane ((8, 32, 8,
    8): 40 against 166 us with winners, 33 without; (8, 64, 112, 112): 5.7 against 6.0 ms)."""
    return pairs_tile(x.shape, windows) and (x.flags.c_contiguous or is_batch_last(x))


def pools_by_halves(x, windows):
    """Whether the kernel pools x without winners channel by channel, each pixel's batch of
    values together (kernel_pooling_halves.h): stride 2 along the rows of a batch-last batch
    of 2 or more images, rows of 32 values or more. NumPy's whole-batch passes took 2-4x as
    long ((8, 64, 111, 111) 3x3: 4.7 against 1.7 ms; (32, 64, 56, 56): 6.1 against 1.5 ms)."""
    n = x.shape[0]
    return (windows.stride[1] == 2 and n > 1 and is_batch_last(x) and x.shape[3] * n >= 32
            and windows.out_size[1] * n >= 16)


def steps_past_lines(x):
    """Whether x's rows step a cache line of float32 values or more from one element to the
    next (a batch-last layout of 16 images or more; counted in elements, so that the uint8
    winners of such a layout count too): the per-plane kernels then touch a line for each
    value, and NumPy's whole-batch passes are faster (with winners, 3x3 stride 2 on a
    batch-last (64, 32, 28, 28): 29.4 against 7.6 ms forward, 13.3 against 8.3 backward; at a
    batch of 8, 8.4 against 9.2 and 8.1 against 12.5)."""
    return x.strides[3] // x.itemsize >= _LINE_FLOATS


_LINE_FLOATS = 16     # float32 values in a 64-byte cache line


def pairs_tile(input_shape, windows):
    """Whether ``windows`` are 2x2 of stride 2, without padding, tiling ``input_shape``."""
    return (tuple(windows.kernel) == (2, 2) and tuple(windows.stride) == (2, 2)
            and tuple(map(tuple, windows.pads)) == ((0, 0), (0, 0))
            and input_shape[2] == 2 * windows.out_size[0]
            and input_shape[3] == 2 * windows.out_size[1])


def max_pool_forward(x, y, winner, windows):
    """Max pooling of x (N, C, H, W) into y and, where given, winner (uint8, y's shape: the
    offset of each window's first maximum) by ``windows`` (kernel, stride, pads; the pads after
    are implied by y's size)."""
    if not (takes_images(x, y) and (winner is None or _winners(winner))):
        return None
    return max_pool_forward_into(x, y, winner, windows)


def max_pool_forward_into(x, y, winner, windows):
    """:func:`max_pool_forward` for an x that :func:`takes_images` took and y and winner that
    the caller made for it (float32 and uint8 NumPy arrays of the output's shape): only the
    windows are checked (a small image's pool is a few microseconds, its checks were two)."""
    if not fits(windows):
        return None
    _native.max_pool_forward(x, y, winner, *window_arguments(windows), _split_threads())
    return True


def max_pool_backward(dy, winner, dx, windows):
    """Its backward: dx (N, C, H, W) written, each output's gradient added at the input its
    winner names."""
    if not (takes_images(dy, dx) and _winners(winner)):
        return None
    return max_pool_backward_into(dy, winner, dx, windows)


def max_pool_backward_into(dy, winner, dx, windows):
    """:func:`max_pool_backward` for a dy that :func:`takes_images` took, the winners of
    :func:`max_pool_forward` and a dx the caller made (float32, the input's shape)."""
    if not fits(windows):
        return None
    _native.max_pool_backward(dy, winner, dx, *window_arguments(windows), _split_threads())
    return True


def fits(windows):
    """Windows the C kernels take: fewer than 256 offsets (a uint8 winner)."""
    kernel_h, kernel_w = windows.kernel
    return kernel_h * kernel_w < 256


def _winners(winner):
    return (type(winner) is np.ndarray and winner.dtype == np.uint8 and winner.ndim == 4
            and min(winner.strides) >= 0)


def window_arguments(windows):
    """The bindings' arguments after the arrays: kernel, stride, the pads before (the thread
    count follows them)."""
    (kernel_h, kernel_w), (stride_h, stride_w) = windows.kernel, windows.stride
    return (kernel_h, kernel_w, stride_h, stride_w, windows.pads[0][0], windows.pads[1][0])


def columns(x, cols, kernel, out_size, stride, dilation, groups, top, left, offset_major=False):
    """cols[g, r, :] = im2col row r of group g of the unpadded images x (N, C, H, W) padded by
    ``top`` rows and ``left`` columns (im2col.columns's layout: column (oh, ow, n)), the rows
    split over the compiled kernels' threads, the padding written as zeros; for x that
    :func:`takes_images` takes (any layout: runs of values where the batch is innermost or
    there is one image, else value by value), and cols a C-contiguous float32 (groups, rows, OH * OW * N)
    array. Rows (c, i, j), or with ``offset_major`` (i, j, c): winograd.py's input tiles."""
    _native.columns(x, cols, kernel[0], kernel[1], stride[0], stride[1], dilation[0],
                    dilation[1], top, left, out_size[0], out_size[1], groups, _split_threads(),
                    offset_major)


def col2im(dcols, dx, kernel, out_size, stride, dilation, top, left):
    """dx (N, C, H, W), written whole: the columns' adjoint of ``dcols`` (C * kh * kw rows of
    OH * OW * N, im2col.columns's layout, C-contiguous), each value added at the input position
    its row's kernel offset read, padding positions dropped; the channels split over the
    compiled kernels' threads. True, or None where the kernel does not apply (dx or dcols not
    float32 NumPy arrays; nothing written)."""
    if not (takes_images(dx) and type(dcols) is np.ndarray and dcols.dtype == dx.dtype):
        return None
    _native.col2im(dcols, dx, kernel[0], kernel[1], stride[0], stride[1], dilation[0],
                   dilation[1], top, left, out_size[0], out_size[1], _split_threads())
    return True
