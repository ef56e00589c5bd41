"""Normalization: batch_norm (per channel, batch statistics in training, running ones in eval)
and layer_norm (over the trailing dimensions of each sample).

Momentum follows SINGA, the opposite of PyTorch: ``running = momentum * running + (1 - momentum)
* batch_statistic``, so SINGA's default momentum=0.9 is PyTorch's momentum=0.1.

>>> import numpy as np
>>> from autograd import Tensor
>>> x = Tensor(data=np.array([[1.0, 10.0], [3.0, 30.0]], np.float32))
>>> mean, var = np.zeros(2, np.float32), np.ones(2, np.float32)
>>> y = batch_norm(x, Tensor(data=[1.0, 1.0]), Tensor(data=[0.0, 0.0]), mean, var, training=True)
>>> y.to_numpy().round(3).tolist(), mean    # 0.9 * 0 + 0.1 * batch mean
([[-1.0, -1.0], [1.0, 1.0]], array([0.2, 2. ], dtype=float32))
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import numbers

from ..backend import kernels_for
from ..device import get_array_module
from ..recording import config
from .base import Operation
from .._types import Shape

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = ["batch_norm", "layer_norm"]


class BatchNorm(Operation):
    """y = scale * (x - mean) / sqrt(var + eps) + bias per channel (axis 1); x (N, C) or
    (N, C, H, W), scale and bias (C,); mean/var over N (and H, W) in training, the running
    statistics in eval.   With xhat the normalised x, M values per channel and
    g = dy * scale: dx = invstd * (g - mean(g) - xhat * mean(g * xhat)) in training,
    invstd * g in eval; dscale = sum(dy * xhat), dbias = sum(dy)"""

    replay_keeps = ("running_mean", "running_var")   # updated in place: graph mode keeps them

    def __init__(self, eps, training, momentum, running_mean, running_var):
        self.eps, self.training, self.momentum = eps, training, momentum
        self.running_mean, self.running_var = running_mean, running_var

    def forward(self, x, scale, bias):
        if self.training:
            mean = var = None
        else:
            mean = self.running_mean.astype(x.dtype, copy=False)
            var = self.running_var.astype(x.dtype, copy=False)
        y, mean, var, saved = kernels_for(x).batch_norm_forward(x, scale, bias, self.eps,
                                                                mean, var)
        if self.training:
            self._update_running(mean, var, x.size // x.shape[1])
        self.save_for_backward(saved, scale)
        return y

    def _update_running(self, mean, var, count):
        if self.running_mean is None:
            return
        momentum = self.momentum
        unbiased = var * (count / (count - 1))
        for running, batch in ((self.running_mean, mean), (self.running_var, unbiased)):
            running *= momentum
            running += (1.0 - momentum) * batch.astype(running.dtype, copy=False)

    def backward(self, dy):
        saved, scale = self.saved
        return kernels_for(dy).batch_norm_backward(dy, scale, saved, self.training,
                                                   self.needs_input_grad)


def _raw(value):
    return value.data if hasattr(value, "creator") else value


def batch_norm(x: Tensor, scale: Tensor, bias: Tensor, running_mean: Tensor,
               running_var: Tensor, momentum: float = 0.9, eps: float = 1e-5,
               training: Optional[bool] = None) -> Tensor:
    """Batch normalization of x (N, C) or (N, C, H, W) per channel, then ``scale`` and ``bias``
    (Tensors of shape (C,)).

    ``training`` (default: follow ``autograd.training``) normalises with the batch mean and
    (biased) variance and updates ``running_mean`` / ``running_var`` (arrays or Tensors of
    shape (C,), changed in place; None for both to keep none) as SINGA does:
    ``running = momentum * running + (1 - momentum) * batch``, with the unbiased batch variance.
    This momentum is PyTorch's ``1 - momentum``. Eval mode normalises with the running ones.
    Every argument is checked before any running statistic changes.
    """
    if training is None:
        training = config.training
    if x.ndim not in (2, 4):
        raise ValueError(f"batch_norm: expected x of shape (N, C) or (N, C, H, W), got "
                         f"{tuple(x.shape)}")
    channels = x.shape[1]
    for name, value in (("scale", scale), ("bias", bias)):
        if tuple(value.shape) != (channels,):
            raise ValueError(f"batch_norm: expected {name} of shape ({channels},) for x of shape "
                             f"{tuple(x.shape)}, got {tuple(value.shape)}")
    running_mean, running_var = _raw(running_mean), _raw(running_var)
    if (running_mean is None) != (running_var is None):
        raise ValueError("batch_norm: give both running_mean and running_var, or neither")
    if running_mean is None and not training:
        raise ValueError("batch_norm: eval mode needs running_mean and running_var")
    xp = get_array_module(x.data)
    for name, value in (("running_mean", running_mean), ("running_var", running_var)):
        if value is None:
            continue
        if not hasattr(value, "shape") or get_array_module(value) is not xp:
            raise TypeError(f"batch_norm: {name} must be an array on the device of x "
                            f"({x.device}), got {type(value).__name__}")
        if tuple(value.shape) != (channels,) or value.dtype.kind != "f":
            raise ValueError(f"batch_norm: expected {name} of shape ({channels},), floating, for "
                             f"x of shape {tuple(x.shape)}, got {tuple(value.shape)} "
                             f"{value.dtype}")
    if not isinstance(momentum, numbers.Real) or not 0.0 <= momentum <= 1.0:
        raise ValueError(f"batch_norm: momentum must be in [0, 1], got {momentum!r}")
    if training and x.size // channels < 2:
        raise ValueError(f"batch_norm: training needs more than one value per channel, got x of "
                         f"shape {tuple(x.shape)}")
    op = BatchNorm(float(eps), bool(training), float(momentum), running_mean, running_var)
    return op(x, scale, bias)


class LayerNorm(Operation):
    """y = scale * (x - mean) / sqrt(var + eps) + bias, mean and var over the last k axes of
    x; scale and bias (optional) have the shape of those axes.   With g = dy * scale:
    dx = invstd * (g - mean(g) - xhat * mean(g * xhat)) over those axes; dscale = sum(dy *
    xhat), dbias = sum(dy) over the leading axes. One pass a block of rows at a time
    (``kernels_for(x).layer_norm_forward`` / ``layer_norm_backward``)."""

    def __init__(self, dims, eps, has_scale, has_bias):
        self.dims, self.eps = dims, eps
        self.has_scale, self.has_bias = has_scale, has_bias

    def forward(self, x, *affine):
        width = 1
        for size in x.shape[x.ndim - self.dims:]:
            width *= size
        rows = get_array_module(x).ascontiguousarray(x).reshape(-1, width)
        scale = affine[0].reshape(-1) if self.has_scale else None
        bias = affine[-1].reshape(-1) if self.has_bias else None
        y, xhat, invstd = kernels_for(x).layer_norm_forward(rows, scale, bias, self.eps)
        self.save_for_backward(xhat, invstd, scale)
        return y.reshape(x.shape)

    def backward(self, dy):
        xhat, invstd, scale = self.saved
        needs = self.needs_input_grad
        flags = (needs[0], self.has_scale and needs[1], self.has_bias and needs[-1])
        rows = get_array_module(dy).ascontiguousarray(dy).reshape(xhat.shape)
        dx, dscale, dbias = kernels_for(dy).layer_norm_backward(rows, xhat, invstd, scale,
                                                                flags)
        affine_shape = dy.shape[dy.ndim - self.dims:]
        grads = [None if dx is None else dx.reshape(dy.shape)]
        if self.has_scale:
            grads.append(None if dscale is None else dscale.reshape(affine_shape))
        if self.has_bias:
            grads.append(None if dbias is None else dbias.reshape(affine_shape))
        return tuple(grads)


def layer_norm(x: Tensor, normalized_shape: Shape, scale: Optional[Tensor] = None,
               bias: Optional[Tensor] = None, eps: float = 1e-5) -> Tensor:
    """Layer normalization over the trailing dimensions of x given by ``normalized_shape`` (an
    int or a tuple; as in PyTorch it must equal x.shape[-len(normalized_shape):]), then the
    optional elementwise ``scale`` and ``bias`` of that shape.

    >>> import numpy as np
    >>> from autograd import Tensor
    >>> layer_norm(Tensor(data=[[1.0, 3.0], [0.0, 10.0]]), 2).to_numpy().round(3).tolist()
    [[-1.0, 1.0], [-1.0, 1.0]]
    """
    shape = (normalized_shape,) if isinstance(normalized_shape, numbers.Integral) else \
        tuple(normalized_shape)     # type: ignore[arg-type]  # not narrowed by Integral
    dims = len(shape)
    if dims == 0 or dims > x.ndim or tuple(x.shape[x.ndim - dims:]) != shape:
        raise ValueError(f"layer_norm: expected x of shape (..., {', '.join(map(str, shape))}) "
                         f"for normalized_shape {shape}, got {tuple(x.shape)}")
    for name, value in (("scale", scale), ("bias", bias)):
        if value is not None and tuple(value.shape) != shape:
            raise ValueError(f"layer_norm: expected {name} of shape {shape}, got "
                             f"{tuple(value.shape)}")
    inputs = [x] + [t for t in (scale, bias) if t is not None]
    return LayerNorm(dims, float(eps), scale is not None, bias is not None)(*inputs)
