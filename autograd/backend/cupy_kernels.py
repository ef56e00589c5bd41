"""The GPU backend: the kernels of numpy_kernels.py for CuPy arrays. CuPy parallelises each
array operation on the GPU and pools its own memory, so these are the portable algorithms
(the same convolution, pooling and normalization code, whose thread splits and host buffers
step aside for non-NumPy arrays) without the CPU-only paths: no Winograd (its transforms are
tuned for CPU caches), no zero-row ReLU. A GPU-only kernel goes here, beside the portable one
that its test compares with.
"""
from . import convolution
from .numpy_kernels import (as_layout, pad2d, conv2d_backward, max_pool2d_forward,   # noqa: F401
                            max_pool2d_backward, avg_pool2d_forward, avg_pool2d_backward,
                            batch_norm_forward, batch_norm_backward,
                            layer_norm_forward, layer_norm_backward, gelu_forward,
                            gelu_backward, masked_softmax,
                            softmax_backward, softmax_rows,
                            attention_forward, attention_backward,    # None: not NumPy
                            softmax_rows_backward)                         # portable already
from .numpy_kernels import axpy, sgd_update, adam_update     # noqa: F401  (NumPy forms for CuPy)
from .numpy_kernels import (conv2d_forward_plan, relu_plan,              # noqa: F401  (None:
                            max_pool2d_plan, matmul_add_plan)            # not NumPy)
from ..device import get_array_module

name = "cupy"


def matmul(a, b):
    """a @ b (cuBLAS picks its own kernel for degenerate shapes)."""
    return a @ b


def repeated_operand(b, rows, uses):
    """b as it is: cuBLAS reads a transposed operand at full speed."""
    return b


def matmul_add(a, b, c):
    """a @ b + c, c broadcast."""
    y = a @ b
    y += c
    return y


def lstm_sequence_forward(x_gates, h0, c0, W_hh):
    """None: on the GPU an LSTM layer's steps run one kernel per array operation."""
    return None


def lstm_sequence_backward(saved, dhs, dh_last, dc_last, W_hh_T):
    """None, as lstm_sequence_forward."""
    return None


def sum_rows(x):
    """x (r, c) summed over its rows: (c,)."""
    return x.sum(axis=0)


def spatial_mean(x):
    """The mean of each (n, c) plane of x (N, C, H, W), shaped (N, C, 1, 1)."""
    return x.mean(axis=(2, 3), keepdims=True)


def add(x, b):
    """x + b, b broadcast against x."""
    return x + b


def zeros(shape, dtype):
    """A zero-filled array on the current GPU."""
    import cupy
    return cupy.zeros(shape, dtype)


def relu(x):
    """max(x, 0)."""
    return get_array_module(x).maximum(x, 0)


def relu_backward(dy, y):
    """dy where y > 0, else 0."""
    return dy * (y > 0)


def conv2d_forward(x, W, b, geometry, pads, needs):
    """y and the backward context of a 2-D convolution by im2col and one GEMM per group."""
    return convolution.forward(x, W, b, geometry, pads, needs, allow_winograd=False)
