"""2-D convolution on NCHW images: what it computes; the backend's kernels say how (im2col
with one GEMM per group, or Winograd for wide 3x3 layers; see autograd/backend/convolution.py).

>>> import numpy as np
>>> from autograd import Tensor
>>> x = Tensor(data=np.ones((1, 1, 3, 3), np.float32))
>>> conv2d(x, Tensor(data=np.ones((1, 1, 2, 2), np.float32))).to_numpy()[0, 0]
array([[4., 4.],
       [4., 4.]], dtype=float32)
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import numbers

from ..backend import kernels_for
from ..geometry import ConvGeometry
from .base import Operation
from .._types import IntOrPair, Padding

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = ["conv2d"]


class Conv2d(Operation):
    """y[n, o] = sum over c in o's group, i, j of W[o, c, i, j] * xpad[n, c, oh*s + i*d,
    ow*s + j*d] (+ b[o]); x (N, C, H, W), W (O, C/G, kh, kw), b (O,), y (N, O, OH, OW).
    dW[o, c, i, j] = sum of dy[n, o] * xpad[n, c, oh*s + i*d, ow*s + j*d], dx = the transposed
    convolution of dy with W, db = dy summed over N, OH, OW."""

    def __init__(self, geometry, pads):
        self.geometry, self.pads = geometry, pads

    def forward(self, x, W, b=None):
        needs = self.needs_input_grad if self.recording else ()
        y, context = kernels_for(x).conv2d_forward(x, W, b, self.geometry, self.pads, needs)
        self.save_for_backward(context)
        return y

    def forward_plan(self, x, W, b=None):
        return kernels_for(x).conv2d_forward_plan(x, W, b, self.geometry, self.pads)

    def forward_plan_key(self):
        return self.geometry, self.pads

    def backward(self, dy):
        (context,) = self.saved
        needs = self.needs_input_grad
        dx, dW, db = kernels_for(dy).conv2d_backward(context, dy, needs)
        return (dx, dW) if len(needs) == 2 else (dx, dW, db)


def conv2d(x: Tensor, W: Tensor, b: Optional[Tensor] = None, stride: IntOrPair = 1,
           padding: Padding = 0, dilation: IntOrPair = 1, groups: int = 1,
           pad_mode: str = "NOTSET") -> Tensor:
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
    key = _plan_key(x, W, b, stride, padding, dilation, groups, pad_mode)
    plan = _plans.get(key) if key is not None else None
    if plan is None:
        groups = check_conv_arguments("conv2d", x, W, b, groups, ("kh", "kw"), ("H", "W"))
        geometry = ConvGeometry(W.shape[2:], stride, padding, dilation, groups, pad_mode,
                                name="conv2d")
        plan = geometry, checked_pads(x, W, geometry)
        if key is not None and len(_plans) < _PLANS_LIMIT:
            _plans[key] = plan
    op = Conv2d(*plan)
    return op(x, W) if b is None else op(x, W, b)


# The checked geometry and pads of the calls seen, by their shapes and plain arguments: a
# small image's convolution is a few microseconds, and checking its arguments and resolving
# its geometry again took 4 of its 16 (a batch-1 CNN's inference).
_plans: dict[tuple, tuple] = {}
_PLANS_LIMIT = 1024


def _plan_key(x, W, b, stride, padding, dilation, groups, pad_mode):
    """The key of a call's plan, or None where an argument is not a plain int, a tuple of
    them or a str (a bool is an int to ``==``, and must meet the checks every time)."""
    if not (type(stride) is int and type(padding) is int and type(dilation) is int):
        for value in (stride, padding, dilation):     # (all ints: the commonest call)
            if type(value) is tuple:
                for item in value:
                    if type(item) is not int:
                        return None
            elif type(value) is not int and type(value) is not str:
                return None
    if type(groups) is not int or type(pad_mode) is not str:
        return None
    try:
        return (x.shape, W.shape, None if b is None else b.shape, stride, padding, dilation,
                groups, pad_mode)
    except AttributeError:          # not Tensors: the checks name what was given
        return None


def convolve(x, W, b, geometry):
    """:func:`conv2d` with its window arguments as a :class:`~autograd.geometry.ConvGeometry`
    (what the Conv2d layer builds once); checks that the kernel fits the padded input."""
    op = Conv2d(geometry, checked_pads(x, W, geometry))
    return op(x, W) if b is None else op(x, W, b)


def checked_pads(x, W, geometry):
    """``geometry``'s pads for x, after checking that the kernel fits the padded input."""
    pads = geometry.pads(x.shape[2:])
    for axis, size, span, (before, after) in zip(("height", "width"), x.shape[2:],
                                                 geometry.spans(), pads):
        if span > size + before + after:
            raise ValueError(
                f"conv2d: kernel {tuple(W.shape[2:])} with dilation {geometry.dilation} spans "
                f"{span} pixels, more than the padded input {axis} {size + before + after} "
                f"(x {tuple(x.shape)}, padding {(before, after)})")
    return pads


def check_conv_arguments(op, x, W, b, groups, kernel_axes, input_axes):
    """The checks conv2d and conv1d share, each message naming ``op`` and its own axes: groups
    a positive int dividing out_channels, W (out_channels, in_channels / groups, *kernel_axes),
    x (N, in_channels, *input_axes), b (out_channels,) or None. Returns groups as an int."""
    if type(groups) is not int and (isinstance(groups, bool) or      # int: the usual case
                                    not isinstance(groups, numbers.Integral)) or groups < 1:
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
