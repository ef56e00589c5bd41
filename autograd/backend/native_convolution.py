"""A convolution's inference forward without im2col columns, compiled
(csrc/kernel_convolution.h, convolution_bindings.h): the input is copied once into a padded
batch-last buffer, and each row of the columns a GEMM would read is a run of that buffer at a
shift, read in place by a register tile over the C pool. The columns path writes kh * kw times
the input and reads it back; at batch 1 that memory traffic took as long as the GEMM itself
(a 3x3 convolution of 16 channels on 55x55: 470 against 335 us, benchmarks/NOTES.md).
As in native.py, the function returns True, or None where the kernel does not apply (nothing
written), and the caller runs the columns path.
"""
import numpy as np

from . import buffer_cache
from .native import _native, _split_threads, _takes

__all__ = []     # used by convolution.py

_FLOAT32 = np.dtype(np.float32)
TILE_COLUMNS = 32    # the tile's width (SHIFT_COLUMNS)
MIN_WORK_PER_THREAD = 1 << 17    # multiply-adds a thread takes at least (the C default)
_SLACK = TILE_COLUMNS    # the last tile's runs may read that far past the end


def block_of(products, tiles):
    """Tiles whose outputs one read of the weights serves, for ``products`` (C * kh * kw)
    per output and ``tiles`` in all: the kernel's blocks (convolution_bindings.h), their runs
    of the input within 256 KB, 1 to 16 tiles; all of them where they are 16 or fewer and
    their runs fit in 1 MB."""
    if tiles <= _MOST_BLOCK and products * tiles * TILE_COLUMNS <= 1 << 18:
        return max(1, tiles)
    return max(1, min(_MOST_BLOCK, (1 << 16) // (products * TILE_COLUMNS)))


_MOST_BLOCK = 16    # SHIFT_BLOCK


def phases(W_shape, out_size, stride, dilation):
    """(Hq, Wq): the rows and columns of each of the padded input's stride phases, the output's
    plus the kernel's reach in phase pixels (convolution_bindings.h)."""
    return tuple(size + (kernel - 1) * step // jump for size, kernel, jump, step
                 in zip(out_size, W_shape[2:], stride, dilation))


def shifted_tiles(x_shape, W_shape, out_size, stride, dilation):
    """Tiles of TILE_COLUMNS outputs the kernel computes reading the input at shifts: OH rows
    of Wq phase columns (the Wq - OW past the output dropped) for each image."""
    return -(-_shifted_length(x_shape, W_shape, out_size, stride, dilation) // TILE_COLUMNS)


def _shifted_length(x_shape, W_shape, out_size, stride, dilation):
    return out_size[0] * phases(W_shape, out_size, stride, dilation)[1] * x_shape[0]


def half_tiles(length):
    """The kernel's cost of ``length`` flat outputs in half tiles: whole tiles, and a last
    one of half a tile or less computed at half the width (kernel_convolution.h)."""
    whole, rest = divmod(length, TILE_COLUMNS)
    return 2 * whole + (rest > 0) + (rest > TILE_COLUMNS // 2)


def compact(x_shape, W_shape, out_size, stride, dilation):
    """Whether the kernel builds the columns themselves (im2col) rather than read the padded
    input at shifts, each output row's dropped columns computed too: where that saves an
    eighth of the tiles' work or more (in :func:`half_tiles`) and there are 64 outputs or
    more in all, or the columns fit in a core's first-level cache (ONNX SqueezeNet's 13x13
    layers, 5.5 tiles against 6.5: its batch-1 forward 0.96-0.99x; ResNet-50's 14x14 ones are
    6.5 against 7, and built their columns for nothing: 1.02x; the digits CNN's 32 -> 64
    channels on a 4x4 output at batch 1, one half tile against a whole one: 10.5 us on one
    thread against 11.7 on two without the columns; the binding keeps a built product whose
    columns are that small on one thread under 128 output channels)."""
    outputs = out_size[0] * out_size[1] * x_shape[0]
    shifted = half_tiles(_shifted_length(x_shape, W_shape, out_size, stride, dilation))
    built = half_tiles(outputs)
    small = 4 * outputs * W_shape[1] * W_shape[2] * W_shape[3] <= CACHED_COLUMNS
    return (outputs >= 64 or small) and 8 * (shifted - built) >= shifted


# bytes of built columns in a core's L1 (Zen 4: 32 KB); the binding's SHIFT_CACHED_COLUMNS
CACHED_COLUMNS = 32 << 10


def padded_size(x_shape, W_shape, out_size, stride, dilation):
    """The values of :func:`shifted_forward`'s scratch: the padded input split into its
    stride's phases (convolution_bindings.h), and the columns built from them where
    :func:`compact`, each with the tile's slack."""
    n, channels = x_shape[:2]
    phase_h, phase_w = phases(W_shape, out_size, stride, dilation)
    size = channels * stride[0] * stride[1] * phase_h * phase_w * n + _SLACK
    if compact(x_shape, W_shape, out_size, stride, dilation):     # the columns, built from it
        size += channels * W_shape[2] * W_shape[3] * out_size[0] * out_size[1] * n + _SLACK
    return size


def shifted_forward(x, W, b, out_size, stride, dilation, pads, relu, out, scratch=None):
    """``out`` (O, OH * OW * N), batch-last rows with contiguous columns, = conv2d(x, W) with
    one group, + b (O,) where given, then max(·, 0) where ``relu``: x (N, C, H, W)
    float32 NumPy in any layout, W (O, C, kh, kw), ``pads`` ((top, bottom), (left, right)),
    ``scratch`` (:func:`padded_size`, :func:`compact`) where the caller has them. True, or
    None where the kernel does not apply (not float32 NumPy arrays, switched off, an empty
    output or input)."""
    if not (applies(x, W, b) and type(out) is np.ndarray and out.dtype == _FLOAT32
            and out.size):
        return None
    if scratch is None:
        scratch = scratch_of(x.shape, W.shape, out_size, stride, dilation)
    size, columns = scratch
    padded = buffer_cache.empty(np, (size,), _FLOAT32)
    _native.shifted_convolution(
        x, W if W.flags.c_contiguous else np.ascontiguousarray(W),
        None if b is None else b.reshape(-1), out, padded,
        *shifted_arguments(out_size, stride, dilation, pads, relu), _split_threads(), columns,
        MIN_WORK_PER_THREAD)
    return True


def applies(x, W, b):
    """Whether the kernel takes these operands: switched on, float32 NumPy x (N, C, H, W) of
    one channel or more in any layout, W (O, C, kh, kw), b (O,) contiguous or None."""
    return (_takes((x, W), 4, any_layout=True) and x.shape[1] > 0
            and (b is None or (type(b) is np.ndarray and b.dtype == _FLOAT32
                               and b.flags.c_contiguous)))


def shifted_arguments(out_size, stride, dilation, pads, relu):
    """The binding's arguments after the arrays, up to the thread count: the stride, the pads
    before, the dilation, the output's size and whether to apply the ReLU."""
    return (stride[0], stride[1], pads[0][0], pads[1][0], dilation[0], dilation[1],
            out_size[0], out_size[1], relu)


def scratch_of(x_shape, W_shape, out_size, stride, dilation):
    """(:func:`padded_size`, :func:`compact`) of a convolution."""
    return (padded_size(x_shape, W_shape, out_size, stride, dilation),
            compact(x_shape, W_shape, out_size, stride, dilation))
