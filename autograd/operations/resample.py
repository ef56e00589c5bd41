"""Spatial resampling and rearrangement: upsample (nearest), depth_to_space, space_to_depth.

>>> import numpy as np
>>> from autograd import Tensor
>>> x = Tensor(data=np.arange(4.0).reshape(1, 1, 2, 2))
>>> upsample(x, "nearest", [1, 1, 2, 2]).shape
(1, 1, 4, 4)
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence

import numpy as np

from ..device import get_array_module
from .base import Operation
from .utils import scatter_add

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = ["upsample", "depth_to_space", "space_to_depth"]


class UpsampleNearest(Operation):
    """y[i] = x[floor(i / scale)] along each axis (ONNX Resize/Upsample, nearest).
    dx = dy summed over the output elements that copied each input element"""

    def __init__(self, scales):
        self.scales = scales

    def forward(self, x):
        xp = get_array_module(x)
        self.input_shape = x.shape
        self.index = tuple(
            xp.minimum((xp.arange(int(np.floor(n * s))) / s).astype(np.int64), n - 1)
            for n, s in zip(x.shape, self.scales))
        return x[xp.ix_(*self.index)]

    def backward(self, dy):
        xp = get_array_module(dy)
        dx = xp.zeros(self.input_shape, dy.dtype)
        scatter_add(dx, xp.ix_(*self.index), dy)
        return dx


def upsample(x: Tensor, mode: str = "nearest", scales: Optional[Sequence[float]] = None) -> Tensor:
    """SINGA's Upsample: each axis stretched by ``scales`` (one float >= 1 per axis, e.g.
    [1, 1, 2, 2] for NCHW) with nearest-neighbour sampling."""
    if mode != "nearest":
        raise ValueError(f"upsample: only mode='nearest' is supported, got {mode!r}")
    if scales is None or len(scales) != x.ndim:
        raise ValueError(f"upsample: expected {x.ndim} scales (one per axis of {x.shape}), "
                         f"got {scales}")
    if any(s < 1 for s in scales):
        raise ValueError(f"upsample: scales must be >= 1, got {list(scales)}")
    return UpsampleNearest(tuple(float(s) for s in scales))(x)


def _depth_to_space_shapes(shape, block, mode):
    n, c, h, w = shape
    depth = c // (block * block)
    if mode == "DCR":
        return (n, block, block, depth, h, w), (0, 3, 4, 1, 5, 2), (n, depth, h * block, w * block)
    return (n, depth, block, block, h, w), (0, 1, 4, 2, 5, 3), (n, depth, h * block, w * block)


class DepthToSpace(Operation):
    """ONNX DepthToSpace: (N, C*b*b, H, W) -> (N, C, H*b, W*b), a reshape-transpose-reshape.
    dx = dy rearranged by the inverse permutation"""

    def __init__(self, block, mode):
        self.block, self.mode = block, mode

    def forward(self, x):
        self.input_shape = x.shape
        split, self.order, merged = _depth_to_space_shapes(x.shape, self.block, self.mode)
        self.split = split
        return x.reshape(split).transpose(self.order).reshape(merged)

    def backward(self, dy):
        permuted = tuple(self.split[a] for a in self.order)
        return dy.reshape(permuted).transpose(np.argsort(self.order)).reshape(self.input_shape)


class SpaceToDepth(Operation):
    """ONNX SpaceToDepth: (N, C, H*b, W*b) -> (N, C*b*b, H, W), the inverse of DepthToSpace
    in the same ``mode`` (SINGA's; "DCR" is ONNX's SpaceToDepth).   dx = dy rearranged back"""

    def __init__(self, block, mode="DCR"):
        self.block, self.mode = block, mode

    def forward(self, x):
        n, c, h, w = self.input_shape = x.shape
        b = self.block
        packed = (n, c * b * b, h // b, w // b)
        self.split, self.order, _ = _depth_to_space_shapes(packed, b, self.mode)
        permuted = tuple(self.split[a] for a in self.order)
        return x.reshape(permuted).transpose(np.argsort(self.order)).reshape(packed)

    def backward(self, dy):
        return dy.reshape(self.split).transpose(self.order).reshape(self.input_shape)


def _check_nchw(name, x):
    if x.ndim != 4:
        raise ValueError(f"{name}: expected a 4-d (N, C, H, W) tensor, got shape {x.shape}")


def _mode(name, mode):
    """SINGA's mode, upper-cased as SINGA does, else a ValueError."""
    upper = mode.upper() if isinstance(mode, str) else mode
    if upper not in ("DCR", "CRD"):
        raise ValueError(f"{name}: mode must be 'DCR' or 'CRD', got {mode!r}")
    return upper


def depth_to_space(x: Tensor, blocksize: int, mode: str = "DCR") -> Tensor:
    """Move blocks of channels into space: (N, C*b*b, H, W) -> (N, C, H*b, W*b); ``mode`` is
    ONNX's "DCR" (depth-column-row, the default) or "CRD" (column-row-depth)."""
    _check_nchw("depth_to_space", x)
    mode = _mode("depth_to_space", mode)
    if x.shape[1] % (blocksize * blocksize):
        raise ValueError(f"depth_to_space: channels ({x.shape[1]}) must be divisible by "
                         f"blocksize^2 ({blocksize * blocksize})")
    return DepthToSpace(int(blocksize), mode)(x)


def space_to_depth(x: Tensor, blocksize: int, mode: str = "DCR") -> Tensor:
    """Move blocks of space into channels: (N, C, H*b, W*b) -> (N, C*b*b, H, W), the inverse
    of :func:`depth_to_space` in the same ``mode`` ("DCR" or "CRD", as SINGA's).

    >>> import numpy as np
    >>> from autograd import Tensor
    >>> x = Tensor(data=np.arange(8, dtype=np.float32).reshape(1, 2, 2, 2))
    >>> space_to_depth(x, 2, "CRD").to_numpy().ravel()
    array([0., 1., 2., 3., 4., 5., 6., 7.], dtype=float32)
    >>> space_to_depth(x, 2).to_numpy().ravel()
    array([0., 4., 1., 5., 2., 6., 3., 7.], dtype=float32)
    """
    _check_nchw("space_to_depth", x)
    mode = _mode("space_to_depth", mode)
    if x.shape[2] % blocksize or x.shape[3] % blocksize:
        raise ValueError(f"space_to_depth: height and width {x.shape[2:]} must be divisible "
                         f"by blocksize {blocksize}")
    return SpaceToDepth(int(blocksize), mode)(x)
