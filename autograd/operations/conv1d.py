"""1-D convolution and pooling on (N, C, L) sequences.

A sequence is an image of height 1: each op checks its arguments in 1-D terms, views x (N, C, L)
as (N, C, 1, L) (and W (O, C/G, k) as (O, C/G, 1, k)), runs the 2-D op of
:mod:`autograd.operations.conv` or :mod:`autograd.operations.pooling` with (1, k) kernels,
(1, stride) strides and (0, padding) paddings, and views the result back as (N, O, OL). The
views are recorded reshapes (no copies), so the gradients are the 2-D ops' gradients.

>>> import numpy as np
>>> from autograd import Tensor
>>> x = Tensor(data=np.arange(6, dtype=np.float32).reshape(1, 1, 6))
>>> conv1d(x, Tensor(data=np.ones((1, 1, 2), np.float32))).to_numpy()
array([[[1., 3., 5., 7., 9.]]], dtype=float32)
>>> max_pool1d(x, 2).to_numpy(), avg_pool1d(x, 3).to_numpy()
(array([[[1., 3., 5.]]], dtype=float32), array([[[1., 4.]]], dtype=float32))
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import numpy as np

from . import conv as conv_ops
from . import pooling as pooling_ops
from ..geometry import ConvGeometry, output_size, per_axis
from .shape import reshape
from .._types import Padding

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = ["conv1d", "max_pool1d", "avg_pool1d"]

def _single(value, op, name):
    """``value`` (an int or a 1-element sequence of one, as PyTorch accepts) as an int."""
    return per_axis(value, 1, op, name)[0]


def _positive(value, op, name):
    result = _single(value, op, name)
    if result < 1:
        raise ValueError(f"{op}: {name} must be positive, got {value!r}")
    return result


def _check_sequence(x, op, channels="C"):
    if x.ndim != 3 or (channels != "C" and x.shape[1] != channels):
        raise ValueError(f"{op}: expected x of shape (N, {channels}, L), got {tuple(x.shape)}")


def conv1d(x: Tensor, W: Tensor, b: Optional[Tensor] = None, stride: int = 1,
           padding: Padding = 0, dilation: int = 1, groups: int = 1,
           pad_mode: str = "NOTSET") -> Tensor:
    """1-D convolution (cross-correlation) of x (N, C, L) with W (out_channels, C / groups, k)
    and an optional bias b (out_channels,): :func:`conv2d` on x viewed as (N, C, 1, L).

    ``stride``, ``dilation`` and ``padding`` are ints; ``padding`` is also ``"valid"`` or
    ``"same"`` (ceil(L / stride) outputs, any odd element after), and SINGA's ``pad_mode``
    ("SAME_UPPER", "SAME_LOWER", "VALID"; "NOTSET" uses ``padding``) overrides it, as in
    :func:`conv2d`. Returns (N, out_channels, OL), OL = (L + pads - dilation * (k - 1) - 1) //
    stride + 1.

    >>> from autograd import Tensor
    >>> conv1d(Tensor(shape=(2, 4, 9)), Tensor(shape=(6, 2, 3)), stride=2, groups=2).shape
    (2, 6, 4)
    >>> conv1d(Tensor(shape=(2, 3, 9, 9)), Tensor(shape=(6, 3, 3)))
    Traceback (most recent call last):
    ...
    ValueError: conv1d: expected x of shape (N, 3, L), got (2, 3, 9, 9)
    """
    stride = _positive(stride, "conv1d", "stride")
    dilation = _positive(dilation, "conv1d", "dilation")
    groups = conv_ops.check_conv_arguments("conv1d", x, W, b, groups, ("k",), ("L",))
    if not isinstance(padding, str):
        padding = _single(padding, "conv1d", "padding")
    out_channels, group_channels, kernel = W.shape
    n, _, length = x.shape
    geometry = ConvGeometry(kernel, stride, padding, dilation, groups, pad_mode, dims=1,
                            name="conv1d")
    (pads,) = geometry.pads((length,))
    (span,) = geometry.spans()
    if span > length + pads[0] + pads[1]:
        raise ValueError(f"conv1d: kernel {kernel} with dilation {dilation} spans {span} "
                         f"elements, more than the padded input length "
                         f"{length + pads[0] + pads[1]} (x {tuple(x.shape)}, padding {pads})")
    (out_length,) = geometry.output_size((length,), (pads,))
    image_geometry = ConvGeometry((1, kernel), (1, stride), (0, 0) + pads, (1, dilation),
                                  groups, name="conv1d")
    y = conv_ops.convolve(reshape(x, (n, x.shape[1], 1, length)),
                          reshape(W, (out_channels, group_channels, 1, kernel)), b,
                          image_geometry)
    return reshape(y, (n, out_channels, out_length))


def _pool_geometry(name, x, kernel_size, stride, padding, ceil_mode):
    """Checked kernel, stride, padding and output length, in 1-D terms."""
    _check_sequence(x, name)
    kernel = _positive(kernel_size, name, "kernel_size")
    stride = kernel if stride is None else _positive(stride, name, "stride")
    padding = _single(padding, name, "padding")
    if not 0 <= padding <= kernel // 2:
        raise ValueError(f"{name}: padding must be between 0 and half the kernel size "
                         f"{kernel}, got {padding}")
    length = x.shape[2]
    out_length = output_size(length, kernel, stride, 1, (padding, padding), ceil_mode)
    if out_length < 1:
        raise ValueError(f"{name}: kernel {kernel} is longer than the padded input length "
                         f"{length + 2 * padding} (x {tuple(x.shape)}, padding {padding})")
    return kernel, stride, padding, out_length


def max_pool1d(x: Tensor, kernel_size: int, stride: Optional[int] = None, padding: int = 0,
               ceil_mode: bool = False) -> Tensor:
    """Max pooling of x (N, C, L) over windows of kernel_size moving by stride (default:
    kernel_size), -inf padding of at most half the kernel, ``ceil_mode`` as :func:`max_pool2d`
    (which it runs on x viewed as (N, C, 1, L)). Returns (N, C, OL).

    >>> from autograd import Tensor
    >>> max_pool1d(Tensor(shape=(2, 3, 7)), 3, 2, padding=1, ceil_mode=True).shape
    (2, 3, 4)
    """
    kernel, stride, padding, out_length = _pool_geometry("max_pool1d", x, kernel_size, stride,
                                                         padding, ceil_mode)
    n, channels, length = x.shape
    y = pooling_ops.max_pool2d(reshape(x, (n, channels, 1, length)), (1, kernel), (1, stride),
                               (0, padding), ceil_mode)
    return reshape(y, (n, channels, out_length))


def avg_pool1d(x: Tensor, kernel_size: int, stride: Optional[int] = None, padding: int = 0,
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    """Average pooling of x (N, C, L), arguments as :func:`max_pool1d` with zero padding; each
    window is divided by its elements inside the padded input or, with
    ``count_include_pad=False``, inside the input itself (:func:`avg_pool2d` on (N, C, 1, L)).

    >>> import numpy as np
    >>> from autograd import Tensor
    >>> x = Tensor(data=np.ones((1, 1, 3), np.float32))
    >>> avg_pool1d(x, 2, 1, padding=1).to_numpy().tolist()
    [[[0.5, 1.0, 1.0, 0.5]]]
    >>> avg_pool1d(x, 2, 1, padding=1, count_include_pad=False).to_numpy().tolist()
    [[[1.0, 1.0, 1.0, 1.0]]]
    """
    kernel, stride, padding, out_length = _pool_geometry("avg_pool1d", x, kernel_size, stride,
                                                         padding, ceil_mode)
    n, channels, length = x.shape
    y = pooling_ops.avg_pool2d(reshape(x, (n, channels, 1, length)), (1, kernel), (1, stride),
                               (0, padding), ceil_mode, count_include_pad)
    return reshape(y, (n, channels, out_length))
