"""2-D convolution on NCHW images: im2col through a strided view plus one GEMM per group.

The column matrix holds the whole batch, (C/groups * kh * kw, N * OH * OW) per group, so forward,
dW and dx are each one large GEMM; the price is a transpose of y and dy between NCHW and
channels-first (small next to the columns). The backward pass reuses the saved columns for dW.
With stride 1 and no more output than input channels, dx is the convolution of dy (padded) with
the flipped kernel, through the same columns-and-GEMM path; otherwise dcolumns = W^T @ dy are
scattered back with one strided add per kernel offset (col2im). Large arrays come from reused
host buffers (see autograd/memory.py).

Narrow layers (C * kh * kw <= PER_IMAGE_MAX_K, e.g. a first layer on 1 or 3 channels) keep each
image's columns apart, (N, K, OH * OW), so that one batched GEMM writes NCHW directly: their
GEMM is cheap and the transposing copy of its large output was most of the cost. Measured
(2 threads): a 1 -> 32 channel 3x3 forward on (64, 1, 28, 28) 1.2 against 5 ms, 3 -> 64 on
(64, 3, 32, 32) 5 against 11 ms; the example CNN's whole step 34 against 40 ms (alternating
blocks, busy machine).

Wide 3x3, stride-1 layers on NumPy take Winograd F(4x4, 3x3) instead (winograd.py): 4x fewer
multiplications, measured fwd+bwd 44 against 64-81 ms for 64 -> 64 channels on a (32, 64, 32, 32)
batch (2 threads). The rule that picks it is :func:`winograd.applies`.

Measured alternatives (float32, 1 BLAS thread, CPU time): per-image batched GEMMs were 10-15%
slower; one GEMM per kernel offset on the flat padded image (no column matrix) was 10-35% slower
because its GEMMs have a short inner dimension (C) and it multiplies the padding too; Winograd
F(2x2, 3x3) (2.25x fewer multiplications) with its tile transforms as NumPy passes over strided
tiles cost more than the GEMM time it saved (55 against 45 ms for that forward); F(4x4, 3x3)
with the transforms as GEMMs is the one that pays.

>>> import numpy as np
>>> from autograd import Tensor
>>> x = Tensor(data=np.ones((1, 1, 3, 3), np.float32))
>>> conv2d(x, Tensor(data=np.ones((1, 1, 2, 2), np.float32))).to_numpy()[0, 0]
array([[4., 4.],
       [4., 4.]], dtype=float32)
"""
import numbers

from ..device import get_array_module
from .. import memory, threads
from .base import Operation
from . import winograd
from .im2col import (pair, output_size, same_pads, pad2d, offset_slice, columns,
                     image_columns)

__all__ = ["conv2d"]

_PAD_MODES = ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")
BATCH_LAST_MAX_WIDTH = 16     # col2im with the batch innermost below this output width
PER_IMAGE_MAX_K = 32       # largest C/groups * kh * kw given per-image columns (groups=1)


class Conv2d(Operation):
    """y[n, o] = sum over c in o's group, i, j of W[o, c, i, j] * xpad[n, c, oh*s + i*d,
    ow*s + j*d] (+ b[o]); x (N, C, H, W), W (O, C/G, kh, kw), b (O,), y (N, O, OH, OW).
    dW = dy @ cols^T, dx = col2im(W^T @ dy) (with stride 1: dy convolved with W flipped),
    db = dy summed over N, OH, OW. ``winograd`` says whether the Winograd path ran."""

    def __init__(self, stride, pads_h, pads_w, dilation, groups):
        self.stride, self.dilation, self.groups = stride, dilation, groups
        self.pads_h, self.pads_w = pads_h, pads_w

    def forward(self, x, W, b=None):
        self.winograd = winograd.applies(x, W, self.stride, self.dilation, self.groups,
                                         self.pads_h, self.pads_w)
        y = self._forward_by_winograd(x, W) if self.winograd else self._forward_by_columns(x, W)
        if b is not None:
            # split over the threads: one serial pass over the CNN's first output was 0.35 ms
            bias = get_array_module(y).broadcast_to(b.reshape(1, -1, 1, 1), y.shape)
            threads.elementwise(_add, y, y, bias)
        return y

    def _forward_by_winograd(self, x, W):
        needs = self.needs_input_grad if self.recording else (False, False)
        y, V, U = winograd.forward(x, W, self.pads_h, self.pads_w, needs)
        self.save_for_backward(V, U)
        self.input_shape = x.shape
        return y

    def _forward_by_columns(self, x, W):
        xp = get_array_module(x)
        n, c, h, w = x.shape
        out_channels, group_channels, kh, kw = W.shape
        out_h = output_size(h, kh, self.stride[0], self.dilation[0], self.pads_h)
        out_w = output_size(w, kw, self.stride[1], self.dilation[1], self.pads_w)
        padded = pad2d(x, self.pads_h, self.pads_w)
        self.per_image = self.groups == 1 and c * kh * kw <= PER_IMAGE_MAX_K
        if self.per_image:
            cols = image_columns(padded, (kh, kw), (out_h, out_w), self.stride, self.dilation)
            # OpenBLAS runs GEMMs this small on one thread: the threads take a chunk of images
            # each (CNN step 24.3 against 25.2 ms at 2 threads).
            y = memory.empty(xp, (n, out_channels, out_h * out_w), x.dtype)
            weights = W.reshape(out_channels, -1)

            def product(start, stop):
                xp.matmul(weights, cols[start:stop], out=y[start:stop])
            threads.parallel_for(product, n, y)
            y = y.reshape(n, out_channels, out_h, out_w)
        else:
            cols = columns(padded, (kh, kw), (out_h, out_w), self.stride, self.dilation,
                           self.groups)
            y = _grouped_product(xp, W.reshape(self.groups, out_channels // self.groups, -1),
                                 cols, (out_channels, n, out_h, out_w))
        if self.recording:
            needs = self.needs_input_grad
            self.save_for_backward(cols if needs[1] else None, W if needs[0] else None)
            self.input_shape, self.weight_shape = x.shape, W.shape
            self.padded_shape = padded.shape
            self.out_size = (out_h, out_w)
        return y

    def backward(self, dy):
        needs = self.needs_input_grad
        xp = get_array_module(dy)
        out_channels = dy.shape[1]
        dx = dW = db = None
        if self.winograd:
            V, U = self.saved
            dx, dW = winograd.backward(V, U, dy, self.input_shape, self.pads_h, self.pads_w,
                                       needs)
        else:
            dx, dW = self._gradients_by_columns(xp, dy, needs)
        if len(needs) > 2 and needs[2]:
            # einsum sums each channel in one pass: 2-3x faster than sum over axes (0, 2, 3)
            db = xp.einsum("ncl->c", dy.reshape(dy.shape[0], out_channels, -1))
        return (dx, dW) if len(needs) == 2 else (dx, dW, db)

    def _gradients_by_columns(self, xp, dy, needs):
        cols, W = self.saved
        out_channels, group_channels = self.weight_shape[:2]
        groups = self.groups
        dx = dW = None
        if needs[1] and self.per_image:
            # One partial sum per chunk of images, added in image order (so dW does not depend
            # on which thread finished first).
            dy_images = dy.reshape(dy.shape[0], out_channels, -1)
            partial_sums = {}

            def weight_gradient(start, stop):
                partial_sums[start] = xp.matmul(dy_images[start:stop],
                                                cols[start:stop].transpose(0, 2, 1)).sum(axis=0)
            threads.parallel_for(weight_gradient, dy.shape[0], cols)
            ordered = [partial_sums[start] for start in sorted(partial_sums)]
            dW = sum(ordered[1:], ordered[0]).reshape(self.weight_shape)
        # dx as a convolution of dy builds columns of dy (out_channels * kh * kw rows); col2im
        # builds dcols of x's size (in_channels * kh * kw rows) and adds them back: measured
        # (2 threads, fwd+bwd), the convolution is 5-25% faster where out_channels <= in_channels
        # (64 -> 64 on 32x32: 40 against 43 ms; 64 -> 32: 23 against 31), col2im 8-20% faster
        # where there are more outputs (32 -> 64 on 14x14: 9.9 against 11.8 ms; 32 -> 64 on
        # 32x32: 22.4 against 24.7).
        by_convolution = (out_channels <= group_channels * groups
                          and self._transposed_pads() is not None)
        dy_channels_first = None
        if needs[1] and not self.per_image:
            dy_channels_first = _channels_first(dy, groups)
            dW = xp.matmul(dy_channels_first, cols.transpose(0, 2, 1))
            dW = dW.reshape(self.weight_shape)
        if needs[0] and by_convolution:
            dx = self._input_gradient_by_convolution(xp, dy, W)
        elif needs[0]:
            # col2im's kh * kw adds run along rows of OW elements; with the batch innermost
            # instead they run along OW * N (stride 1). Measured backward at 2 threads: 15-35%
            # faster for OW of 7-14 (32 -> 64 on 14x14: 8.9-9.1 against 9.5 ms; 64 -> 128 on
            # 7x7: 2.0 against 3.0), 8% slower at 16 and beyond, and with a stride (the extra
            # layout copies win).
            batch_last = self.stride[1] == 1 and self.out_size[1] < BATCH_LAST_MAX_WIDTH
            if dy_channels_first is not None and not batch_last:
                dy_channels = dy_channels_first        # dW's copy serves col2im too
            else:
                dy_channels = _channels_first(dy, groups, batch_last)
            dx = self._input_gradient_by_col2im(xp, dy_channels, W, batch_last)
        return dx, dW

    def _transposed_pads(self):
        """With stride 1, dx is itself a convolution: dy padded by span - 1 - pad on each side,
        with the kernel flipped and its channel axes swapped. The pads, or None where that does
        not apply (a stride, or a pad wider than the kernel's span, which would crop dy)."""
        if self.stride != (1, 1):
            return None
        kh, kw = self.weight_shape[2:]
        pads = []
        for (before, after), kernel, dilation in ((self.pads_h, kh, self.dilation[0]),
                                                   (self.pads_w, kw, self.dilation[1])):
            reach = dilation * (kernel - 1)
            if before > reach or after > reach:
                return None
            pads.append((reach - before, reach - after))
        return pads

    def _input_gradient_by_convolution(self, xp, dy, W):
        out_channels, group_channels, kh, kw = W.shape
        groups = self.groups
        n, c, h, w = self.input_shape
        pads_h, pads_w = self._transposed_pads()
        flipped = W[:, :, ::-1, ::-1].reshape(groups, out_channels // groups, group_channels,
                                               kh, kw)
        weights = threads.ascontiguousarray(flipped.transpose(0, 2, 1, 3, 4)).reshape(
            groups, group_channels, -1)
        dy_cols = columns(pad2d(dy, pads_h, pads_w), (kh, kw), (h, w), (1, 1), self.dilation,
                          groups)
        return _grouped_product(xp, weights, dy_cols, (c, n, h, w))

    def _input_gradient_by_col2im(self, xp, dy_channels, W, batch_last):
        """dcols = W^T @ dy, then col2im: windows overlap, so each kernel offset's block is
        added into the padded dx in turn (kh * kw strided adds over the whole batch, each
        thread on its own channels). ``dy_channels`` is dy channels first, (G, O/G, ...), with
        the batch first, (N, OH, OW), or last, (OH, OW, N); dcols and the padded dx follow,
        (C, N, Hp, Wp) or (C, Hp, Wp, N)."""
        out_channels, group_channels, kh, kw = W.shape
        groups = self.groups
        n, c, padded_h, padded_w = self.padded_shape
        h, w = self.input_shape[2:]
        out_h, out_w = self.out_size
        weights = W.reshape(groups, out_channels // groups, group_channels * kh * kw)
        dcols = memory.empty(xp, (groups, group_channels * kh * kw, dy_channels.shape[2]),
                             dy_channels.dtype)
        xp.matmul(weights.transpose(0, 2, 1), dy_channels, out=dcols)
        if batch_last:
            dcols = dcols.reshape(c, kh, kw, out_h, out_w, n)
            dpadded = memory.empty(xp, (c, padded_h, padded_w, n), dcols.dtype)
        else:
            dcols = dcols.reshape(c, kh, kw, n, out_h, out_w)
            dpadded = memory.empty(xp, (c, n, padded_h, padded_w), dcols.dtype)

        def add_channels(start, stop):
            part = dpadded[start:stop]
            part.fill(0)                   # each thread zeroes its own channels
            for i in range(kh):
                for j in range(kw):
                    rows, columns_ = offset_slice(i, j, out_h, out_w, self.stride,
                                                  self.dilation)[2:]
                    window = ((slice(None), rows, columns_) if batch_last
                              else (slice(None), slice(None), rows, columns_))
                    part[window] += dcols[start:stop, i, j]
        threads.parallel_for(add_channels, c, dpadded)
        top, left = self.pads_h[0], self.pads_w[0]
        if batch_last:
            interior = dpadded[:, top:top + h, left:left + w].transpose(3, 0, 1, 2)
        else:
            interior = dpadded[:, :, top:top + h, left:left + w].transpose(1, 0, 2, 3)
        return threads.ascontiguousarray(interior)


def _add(out, a, b):
    get_array_module(out).add(a, b, out=out)


def _channels_first(dy, groups, batch_last=False):
    """dy (N, O, OH, OW) as (G, O/G, N * OH * OW), the columns' layout, or with the batch last,
    (G, O/G, OH * OW * N) (a small copy)."""
    order = (1, 2, 3, 0) if batch_last else (1, 0, 2, 3)
    channels_first = threads.ascontiguousarray(dy.transpose(order))
    return channels_first.reshape(groups, dy.shape[1] // groups, -1)


def _grouped_product(xp, weights, cols, channels_first_shape):
    """weights (G, O/G, K) @ cols (G, K, N*OH*OW), one GEMM per group, returned as NCHW
    (N, O, OH, OW) from ``channels_first_shape`` (O, N, OH, OW) with one transposing copy."""
    product = memory.empty(xp, weights.shape[:2] + cols.shape[2:], cols.dtype)
    xp.matmul(weights, cols, out=product)
    product = product.reshape(channels_first_shape)
    return threads.ascontiguousarray(product.transpose(1, 0, 2, 3))


def conv2d(x, W, b=None, stride=1, padding=0, dilation=1, groups=1, pad_mode="NOTSET"):
    """2-D convolution (cross-correlation, as in PyTorch and SINGA) of x (N, C, H, W) with
    W (out_channels, C / groups, kh, kw) and an optional bias b (out_channels,).

    ``stride``, ``dilation`` and ``padding`` are ints or (height, width) pairs; ``padding`` is
    also ``"valid"`` (none) or ``"same"`` (output size ceil(H / stride), any odd pixel after, as
    ONNX's SAME_UPPER). SINGA's ``pad_mode`` ("SAME_UPPER", "SAME_LOWER", "VALID"; the default
    "NOTSET" uses ``padding``) overrides ``padding``. Returns (N, out_channels, OH, OW) with
    OH = (H + pads - dilation * (kh - 1) - 1) // stride + 1.

    >>> import numpy as np
    >>> from autograd import Tensor
    >>> conv2d(Tensor(shape=(2, 3, 8, 8)), Tensor(shape=(4, 3, 3, 3)), stride=2, padding="same").shape
    (2, 4, 4, 4)
    >>> conv2d(Tensor(shape=(8, 4, 5, 5)), Tensor(shape=(2, 3, 3, 3)))
    Traceback (most recent call last):
    ...
    ValueError: conv2d: expected x of shape (N, 3, H, W), got (8, 4, 5, 5)
    """
    stride = pair(stride, "conv2d", "stride")
    dilation = pair(dilation, "conv2d", "dilation")
    if min(stride) < 1 or min(dilation) < 1:
        raise ValueError(f"conv2d: stride and dilation must be positive, got stride {stride} "
                         f"and dilation {dilation}")
    groups = check_conv_arguments("conv2d", x, W, b, groups, ("kh", "kw"), ("H", "W"))
    kh, kw = W.shape[2:]
    pads_h, pads_w = _resolve_padding(padding, pad_mode, x.shape[2:], (kh, kw), stride, dilation)
    for axis, size, kernel, d, pads in (("height", x.shape[2], kh, dilation[0], pads_h),
                                        ("width", x.shape[3], kw, dilation[1], pads_w)):
        span = d * (kernel - 1) + 1
        if span > size + pads[0] + pads[1]:
            raise ValueError(
                f"conv2d: kernel {(kh, kw)} with dilation {dilation} spans {span} pixels, more "
                f"than the padded input {axis} {size + pads[0] + pads[1]} (x {tuple(x.shape)}, "
                f"padding {pads})")
    op = Conv2d(stride, pads_h, pads_w, dilation, groups)
    return op(x, W) if b is None else op(x, W, b)


def check_conv_arguments(op, x, W, b, groups, kernel_axes, input_axes):
    """The checks conv2d and conv1d share, each message naming ``op`` and its own axes: groups
    a positive int dividing out_channels, W (out_channels, in_channels / groups, *kernel_axes),
    x (N, in_channels, *input_axes), b (out_channels,) or None. Returns groups as an int."""
    if isinstance(groups, bool) or not isinstance(groups, numbers.Integral) or groups < 1:
        raise ValueError(f"{op}: groups must be a positive int, got {groups!r}")
    groups = int(groups)
    ndim = 2 + len(kernel_axes)
    if W.ndim != ndim:
        raise ValueError(f"{op}: expected W of shape (out_channels, in_channels / groups, "
                         f"{', '.join(kernel_axes)}), got {tuple(W.shape)}")
    out_channels, group_channels = W.shape[:2]
    if out_channels % groups:
        raise ValueError(f"{op}: groups={groups} must divide out_channels={out_channels} "
                         f"(W of shape {tuple(W.shape)})")
    if x.ndim != ndim or x.shape[1] != group_channels * groups:
        raise ValueError(f"{op}: expected x of shape (N, {group_channels * groups}, "
                         f"{', '.join(input_axes)}), got {tuple(x.shape)}"
                         + (f" (W {tuple(W.shape)} with groups={groups})" if groups > 1 else ""))
    if b is not None and tuple(b.shape) != (out_channels,):
        raise ValueError(f"{op}: expected b of shape ({out_channels},), got {tuple(b.shape)}")
    return groups


def _resolve_padding(padding, pad_mode, size, kernel, stride, dilation):
    """((top, bottom), (left, right)) from ``padding`` and SINGA's ``pad_mode``."""
    mode = pad_mode.upper() if isinstance(pad_mode, str) else pad_mode
    if mode not in _PAD_MODES:
        raise ValueError(f"conv2d: pad_mode must be one of {_PAD_MODES}, got {pad_mode!r}")
    if mode == "NOTSET" and isinstance(padding, str):
        mode = {"same": "SAME_UPPER", "valid": "VALID"}.get(padding.lower())
        if mode is None:
            raise ValueError(f"conv2d: padding must be an int, a pair, 'same' or 'valid', got "
                             f"{padding!r}")
    if mode == "VALID":
        return (0, 0), (0, 0)
    if mode in ("SAME_UPPER", "SAME_LOWER"):
        lower = mode == "SAME_LOWER"
        return tuple(same_pads(size[a], kernel[a], stride[a], dilation[a], lower)
                     for a in (0, 1))
    ph, pw = pair(padding, "conv2d", "padding")
    if ph < 0 or pw < 0:
        raise ValueError(f"conv2d: padding must be non-negative, got {padding!r}")
    return (ph, ph), (pw, pw)
