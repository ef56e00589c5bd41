"""A convolution's forward that nothing will differentiate, by the compiled shifted products
(native_convolution.py: no im2col columns, the bias and ReLU fused), and the rule that picks
them: convolution.py asks :func:`plan_for` first, for a no_grad forward (:func:`forward`)
and an inference step (:func:`forward_into`), then Winograd, one small image's gather, or
the columns. The measurements behind the rule are in benchmarks/NOTES.md (twentieth
session); against Winograd where both apply, the shifted products measured 0.75-1.00x its
time ((1, 64, 56, 56) -> 64: 1.16 against 1.53 ms; (8, 128, 28, 28) -> 128 level).
"""
import functools
import math

import numpy as np

from . import buffer_cache, native_convolution
from .layout import from_batch_last

__all__ = []     # used by convolution.py


@functools.lru_cache(maxsize=512)
def plan_for(x_shape, W_shape, geometry, pads):
    """(output size, the kernel's scratch: native_convolution.scratch_of) where the shifted
    products' rule takes this convolution, else None: decided once per shapes and geometry
    (a batch-1 forward of a few microseconds of arithmetic spent as long again deciding)."""
    out_size = geometry.output_size(x_shape[2:], pads)
    if not rule(x_shape, W_shape, geometry, out_size):
        return None
    return out_size, native_convolution.scratch_of(x_shape, W_shape, out_size,
                                                   geometry.stride, geometry.dilation)


def rule(x_shape, W_shape, geometry, out_size):
    """The shifted products' rule (native_convolution.py), measured at 2 threads against the
    columns path (benchmarks/NOTES.md, twentieth session): one group; a 1x1 kernel only at
    stride 1 and unpadded (its input read in place: 0.62-0.99x the GEMM's time), with 32
    output channels or more unless its input stays in a core's cache (16 from 128 channels on
    55x55 at batch 8 read 12 MB of input for every two tiles of 8 channels: 1.39x); and
    weights that stay in a core's cache (1 MiB) or are read at most 32 MiB in all, once per
    block of 32-output tiles of a row (512 -> 512 channels 3x3 on 7x7 at batch 8: 9.4 MB 16
    times, 1.08x the columns' time)."""
    if geometry.groups != 1:
        return False
    if geometry.kernel == (1, 1) and (
            geometry.stride != (1, 1) or tuple(out_size) != tuple(x_shape[2:])
            or (W_shape[0] < 32 and 4 * math.prod(x_shape) > CACHED_INPUT)):
        return False
    products = W_shape[1] * W_shape[2] * W_shape[3]
    tiles = native_convolution.shifted_tiles(x_shape, W_shape, out_size, geometry.stride,
                                             geometry.dilation)
    reads = -(-tiles // native_convolution.block_of(products, tiles))
    weight_bytes = 4 * W_shape[0] * products
    return weight_bytes <= CACHED_WEIGHTS or weight_bytes * reads <= WEIGHT_TRAFFIC


WEIGHT_TRAFFIC = 32 << 20
CACHED_WEIGHTS = 1 << 20
CACHED_INPUT = 2 << 20


def forward(context, x, W, b):
    """A forward that nothing will differentiate by the compiled shifted products
    (native_convolution.py) where their rule takes it; None where not (nothing done)."""
    if type(x) is not np.ndarray:
        return None
    geometry = context.geometry
    plan = plan_for(x.shape, W.shape, geometry, context.pads)
    if plan is None:
        return None
    out_size, scratch = plan
    out_channels, n = W.shape[0], x.shape[0]
    y = buffer_cache.empty(np, (out_channels, out_size[0] * out_size[1] * n), x.dtype)
    if not native_convolution.shifted_forward(x, W, b, out_size, geometry.stride,
                                              geometry.dilation, context.pads, False, y,
                                              scratch):
        return None
    context.winograd = context.small_image = False
    context.out_size = out_size
    return from_batch_last(y.reshape(out_channels, *out_size, n))


def forward_into(x, W, b, geometry, pads, relu, out, plan):
    """y (O, OH * OW * N) batch-last rows, into ``out`` where given, by the shifted products of
    ``plan`` (:func:`plan_for`), + b, ReLU'd where ``relu``; None where the kernel does
    not apply (nothing written)."""
    (out_h, out_w), scratch = plan
    target = (buffer_cache.empty(np, (W.shape[0], out_h * out_w * x.shape[0]), x.dtype)
              if out is None else out)
    if native_convolution.shifted_forward(x, W, b, (out_h, out_w), geometry.stride,
                                          geometry.dilation, pads, relu, target, scratch):
        return target
    return None
