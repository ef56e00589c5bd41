"""The hand-written NumPy floor: forward and backward of each layer written directly on arrays.

This is what a NumPy framework could reach with no tape at all, written the plain way a careful
NumPy programmer would (in-place where it is natural, float32 throughout). The convolution is
the textbook im2col + one GEMM, with a col2im of kh*kw strided adds for the input gradient; the
2x2 max-pool keeps a boolean mask. Both are deliberately *plain*: a faster convolution in
autograd beats this floor, which is the point of comparing with PyTorch as well.
"""
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

__all__ = ["relu", "relu_backward", "softmax_cross_entropy", "conv2d", "conv2d_backward",
           "max_pool2", "max_pool2_backward", "batch_norm", "batch_norm_backward"]


def relu(x):
    return np.maximum(x, 0)


def relu_backward(dy, y):
    """dx = dy where y > 0; writes into dy (the caller owns it)."""
    dy[y <= 0] = 0
    return dy


def softmax_cross_entropy(logits, labels):
    """Mean cross-entropy of integer ``labels`` under softmax(logits), and d loss / d logits."""
    n = logits.shape[0]
    rows = np.arange(n)
    shifted = logits - logits.max(axis=1, keepdims=True)
    exp = np.exp(shifted)
    total = exp.sum(axis=1, keepdims=True)
    loss = (np.log(total[:, 0]) - shifted[rows, labels]).mean()
    grad = exp
    grad /= total
    grad[rows, labels] -= 1
    grad *= 1.0 / n
    return loss, grad


def _im2col(x, kernel, pad):
    """(N, C, H, W) -> columns (N*H*W, C*k*k) for a stride-1 'same' k x k convolution."""
    padded = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    windows = sliding_window_view(padded, (kernel, kernel), axis=(2, 3))  # (N, C, H, W, k, k)
    n, c, h, w = x.shape
    return windows.transpose(0, 2, 3, 1, 4, 5).reshape(n * h * w, c * kernel * kernel)


def conv2d(x, weight, bias, pad):
    """Stride-1 convolution of x (N, C, H, W) with weight (O, C, k, k), 'same' padding.
    Returns y (N, O, H, W), contiguous, and the columns."""
    n, _, h, w = x.shape
    out_channels = weight.shape[0]
    columns = _im2col(x, weight.shape[2], pad)
    y = columns @ weight.reshape(out_channels, -1).T            # (N*H*W, O)
    if bias is not None:
        y += bias
    # Back to contiguous NCHW: the layers after it (batch norm, pooling) stream over it.
    return np.ascontiguousarray(y.reshape(n, h, w, out_channels).transpose(0, 3, 1, 2)), columns


def conv2d_backward(dy, x_shape, columns, weight, pad, need_dx, need_dbias=True):
    """Gradients (dx or None, dweight, dbias or None) of :func:`conv2d`."""
    n, c, h, w = x_shape
    out_channels, _, kernel, _ = weight.shape
    dy2 = dy.transpose(0, 2, 3, 1).reshape(-1, out_channels)  # (N*H*W, O)
    dweight = (dy2.T @ columns).reshape(weight.shape)
    dbias = dy2.sum(axis=0) if need_dbias else None
    if not need_dx:
        return None, dweight, dbias
    dcolumns = (dy2 @ weight.reshape(out_channels, -1)).reshape(n, h, w, c, kernel, kernel)
    dpadded = np.zeros((n, c, h + 2 * pad, w + 2 * pad), dy.dtype)
    for i in range(kernel):                 # col2im: one strided add per kernel offset
        for j in range(kernel):
            dpadded[:, :, i:i + h, j:j + w] += dcolumns[..., i, j].transpose(0, 3, 1, 2)
    return dpadded[:, :, pad:pad + h, pad:pad + w], dweight, dbias


def max_pool2(x):
    """2x2 max-pool, stride 2, of x (N, C, H, W) with even H and W; returns y and the mask."""
    n, c, h, w = x.shape
    blocks = x.reshape(n, c, h // 2, 2, w // 2, 2)
    y = blocks.max(axis=(3, 5))
    return y, blocks == y[:, :, :, None, :, None]


def max_pool2_backward(dy, mask):
    n, c, h2, _, w2, _ = mask.shape
    return (mask * dy[:, :, :, None, :, None]).reshape(n, c, 2 * h2, 2 * w2)


def batch_norm(x, scale, bias, running_mean, running_var, momentum=0.9, eps=1e-5):
    """Training-mode batch norm over (N, H, W) per channel; updates the running statistics in
    place (running = momentum * running + (1 - momentum) * batch). Returns y, x_hat, 1/std."""
    axes = (0, 2, 3)
    mean = x.mean(axis=axes, keepdims=True)
    centred = x - mean
    var = np.square(centred).mean(axis=axes, keepdims=True)
    inv_std = 1.0 / np.sqrt(var + eps)
    x_hat = centred
    x_hat *= inv_std
    y = x_hat * scale[:, None, None]
    y += bias[:, None, None]
    count = x.size // x.shape[1]
    running_mean *= momentum
    running_mean += (1 - momentum) * mean.reshape(-1)
    running_var *= momentum
    running_var += (1 - momentum) * count / max(count - 1, 1) * var.reshape(-1)
    return y, x_hat, inv_std


def batch_norm_backward(dy, x_hat, inv_std, scale):
    """(dx, dscale, dbias) of :func:`batch_norm` in closed form."""
    axes = (0, 2, 3)
    count = dy.size // dy.shape[1]
    dbias = dy.sum(axis=axes)
    dscale = (dy * x_hat).sum(axis=axes)
    dx = x_hat * dscale[:, None, None]
    dx += dbias[:, None, None]
    dx *= -1.0 / count
    dx += dy
    dx *= (scale[:, None, None] * inv_std)
    return dx, dscale, dbias
