"""2-D convolution on NCHW images: im2col through a strided view plus one GEMM per group.

The column matrix holds the whole batch, (C/groups * kh * kw, OH * OW * N) per group, so
forward, dW and dx are each one large GEMM. It is batch-last (operations/layout.py): the padded
input is stored (C, Hp, Wp, N), so every copy into the columns runs along OW * N contiguous
elements, and the GEMM writes y as (O, OH, OW, N), which conv2d returns as it is: an (N, O, OH,
OW) view. ReLU, pooling and BatchNorm keep that layout, and the dy that comes back through them
is batch-last too, which is again the columns' layout: dW = dy @ cols^T with no copy. With
stride 1 and no more output than input channels, dx is the convolution of dy (padded) with the
flipped kernel, through the same columns-and-GEMM path; otherwise dcolumns = W^T @ dy are
scattered back with one strided add per kernel offset (col2im), each along OW * N elements.
Large arrays come from reused host buffers (see autograd/memory.py).

Measured (2 threads) against the layouts this replaced, NCHW in and out of every convolution
(the batch first in the columns and transposing copies of y and dy, per-image columns for narrow
layers, col2im batch-last only below 16 output columns): the example CNN's step 20.3-24.4
against 22.4-27.6 ms (three alternating pairs on a busy machine).

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
from .im2col import pair, output_size, same_pads, pad2d, offset_slice, columns
from .layout import BATCH_LAST, batch_last, from_batch_last, is_batch_last

__all__ = ["conv2d"]

_PAD_MODES = ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")


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
        if not self.winograd:
            return self._forward_by_columns(x, W, b)
        y = self._forward_by_winograd(x, W)
        if b is not None:
            # split over the threads: one serial pass over the CNN's first output was 0.35 ms
            bias = get_array_module(y).broadcast_to(b.reshape(1, -1, 1, 1), y.shape)
            threads.elementwise(_add, y, y, bias)
        return y

    def _forward_by_winograd(self, x, W):
        needs = self.needs_input_grad if self.recording else (False, False)
        y, V, U, self.batch_last_tiles = winograd.forward(x, W, self.pads_h, self.pads_w,
                                                          needs)
        self.save_for_backward(V, U)
        self.input_shape = x.shape
        return y

    def _forward_by_columns(self, x, W, b):
        xp = get_array_module(x)
        n, c, h, w = x.shape
        out_channels, group_channels, kh, kw = W.shape
        groups = self.groups
        out_h = output_size(h, kh, self.stride[0], self.dilation[0], self.pads_h)
        out_w = output_size(w, kw, self.stride[1], self.dilation[1], self.pads_w)
        padded = _padded_batch_last(x, self.pads_h, self.pads_w)
        # The bias rides in the GEMM: a row of ones under each group's columns and b as an extra
        # column of the weights, so y needs no pass of its own, and backward's dW GEMM gives db
        # as its last column. K grows by one (288 -> 289 for the CNN's conv2: GEMM time level);
        # the bias add and db's sum were two passes over y and dy, 0.5-0.9 ms of that step.
        cols = columns(padded, (kh, kw), (out_h, out_w), self.stride, self.dilation, groups,
                       ones_row=b is not None)
        weights = W.reshape(groups, out_channels // groups, -1)
        if b is not None:
            bias = b.reshape(groups, -1, 1).astype(weights.dtype, copy=False)
            weights = xp.concatenate([weights, bias], axis=2)
        product = memory.empty(xp, (groups, out_channels // groups, cols.shape[2]), x.dtype)
        xp.matmul(weights, cols, out=product)
        if self.recording:
            needs = self.needs_input_grad
            self.save_for_backward(cols if needs[1] else None, W if needs[0] else None)
            self.input_shape, self.weight_shape = x.shape, W.shape
            self.padded_shape = padded.shape
            self.out_size = (out_h, out_w)
        return from_batch_last(product.reshape(out_channels, out_h, out_w, n))

    def backward(self, dy):
        needs = self.needs_input_grad
        xp = get_array_module(dy)
        out_channels = dy.shape[1]
        dx = dW = db = None
        if self.winograd:
            V, U = self.saved
            dx, dW = winograd.backward(V, U, dy, self.input_shape, self.pads_h, self.pads_w,
                                       needs, self.batch_last_tiles)
        else:
            dy_rows = batch_last(dy).reshape(self.groups, out_channels // self.groups, -1)
            dx, dW, db = self._gradients_by_columns(xp, dy_rows, needs)
        if len(needs) > 2 and needs[2] and db is None:
            # einsum sums each channel in one pass: 2-3x faster than sum over axes (0, 2, 3)
            if is_batch_last(dy):
                db = xp.einsum("cl->c", batch_last(dy).reshape(out_channels, -1))
            else:
                db = xp.einsum("ncl->c", dy.reshape(dy.shape[0], out_channels, -1))
        return (dx, dW) if len(needs) == 2 else (dx, dW, db)

    def _gradients_by_columns(self, xp, dy_rows, needs):
        """dx, dW and db (None where not computed) from ``dy_rows``, dy batch-last as
        (G, O/G, OH * OW * N): the columns' layout, so dW is one GEMM per group with no copy;
        over the bias's row of ones it gives db too."""
        cols, W = self.saved
        out_channels, group_channels = self.weight_shape[:2]
        dx = dW = db = None
        if needs[1]:
            dW = xp.matmul(dy_rows, cols.transpose(0, 2, 1))
            if len(needs) > 2:             # b rode in the GEMM: its column is db
                db = dW[:, :, -1].reshape(out_channels)
                dW = dW[:, :, :-1]
            dW = dW.reshape(self.weight_shape)
        if not needs[0]:
            return dx, dW, db
        # dx as a convolution of dy builds columns of dy (out_channels * kh * kw rows); col2im
        # builds dcols of x's size (in_channels * kh * kw rows) and adds them back: measured
        # (2 threads, fwd+bwd, with the earlier NCHW layouts), the convolution is 5-25% faster
        # where out_channels <= in_channels (64 -> 64 on 32x32: 40 against 43 ms; 64 -> 32: 23
        # against 31), col2im 8-20% faster where there are more outputs (32 -> 64 on 14x14: 9.9
        # against 11.8 ms; 32 -> 64 on 32x32: 22.4 against 24.7).
        if (out_channels <= group_channels * self.groups
                and self._transposed_pads() is not None):
            return self._input_gradient_by_convolution(xp, dy_rows, W), dW, db
        return self._input_gradient_by_col2im(xp, dy_rows, W), dW, db

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

    def _input_gradient_by_convolution(self, xp, dy_rows, W):
        out_channels, group_channels, kh, kw = W.shape
        groups = self.groups
        n, c, h, w = self.input_shape
        out_h, out_w = self.out_size
        pads_h, pads_w = self._transposed_pads()
        flipped = W[:, :, ::-1, ::-1].reshape(groups, out_channels // groups, group_channels,
                                               kh, kw)
        weights = threads.ascontiguousarray(flipped.transpose(0, 2, 1, 3, 4)).reshape(
            groups, group_channels, -1)
        dy = from_batch_last(dy_rows.reshape(out_channels, out_h, out_w, n))
        dy_cols = columns(_padded_batch_last(dy, pads_h, pads_w), (kh, kw), (h, w), (1, 1),
                          self.dilation, groups)
        dx = memory.empty(xp, (groups, group_channels, dy_cols.shape[2]), dy_cols.dtype)
        xp.matmul(weights, dy_cols, out=dx)
        return from_batch_last(dx.reshape(c, h, w, n))

    def _input_gradient_by_col2im(self, xp, dy_rows, W):
        """dcols = W^T @ dy, then col2im: windows overlap, so each kernel offset's block is
        added into the padded dx in turn (kh * kw strided adds over the whole batch, each
        thread on its own channels). Batch-last throughout: dy_rows (G, O/G, OH * OW * N),
        dcols (C, kh, kw, OH, OW, N), the padded dx (C, Hp, Wp, N), so each add runs along
        OW * N contiguous elements."""
        out_channels, group_channels, kh, kw = W.shape
        groups = self.groups
        n, c, padded_h, padded_w = self.padded_shape
        h, w = self.input_shape[2:]
        out_h, out_w = self.out_size
        weights = W.reshape(groups, out_channels // groups, group_channels * kh * kw)
        dcols = memory.empty(xp, (groups, group_channels * kh * kw, dy_rows.shape[2]),
                             dy_rows.dtype)
        xp.matmul(weights.transpose(0, 2, 1), dy_rows, out=dcols)
        dcols = dcols.reshape(c, kh, kw, out_h, out_w, n)
        dpadded = memory.empty(xp, (c, padded_h, padded_w, n), dcols.dtype)

        def add_channels(start, stop):
            part = dpadded[start:stop]
            part.fill(0)                   # each thread zeroes its own channels
            for i in range(kh):
                for j in range(kw):
                    rows, columns_ = offset_slice(i, j, out_h, out_w, self.stride,
                                                  self.dilation)[2:]
                    part[:, rows, columns_] += dcols[start:stop, i, j]
        threads.parallel_for(add_channels, c, dpadded)
        top, left = self.pads_h[0], self.pads_w[0]
        interior = threads.ascontiguousarray(dpadded[:, top:top + h, left:left + w])
        return from_batch_last(interior)


def _add(out, a, b):
    get_array_module(out).add(a, b, out=out)


def _padded_batch_last(x, pads_h, pads_w):
    """``x`` (N, C, H, W) padded, as an (N, C, Hp, Wp) view of a batch-last (C, Hp, Wp, N)
    array (no copy where x is batch-last already and needs no padding)."""
    if pads_h[0] or pads_h[1] or pads_w[0] or pads_w[1]:
        return pad2d(x, pads_h, pads_w, axis_order=BATCH_LAST)
    return from_batch_last(batch_last(x))


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
