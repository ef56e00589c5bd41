"""The CPU backend: every kernel an operation may call, on NumPy arrays, with the speed
machinery of this package: intra-op threads (threads.py), reused host buffers
(buffer_cache.py), batch-last image layouts (layout.py), im2col columns with the bias in the
GEMM and Winograd F(4x4, 3x3) (convolution.py, winograd.py), the zero-row ReLU
(elementwise.py), the outer product and GEMV for degenerate matrix products (matmul.py),
one-pass optimizer updates (update.py), the head's softmax cross-entropy
(cross_entropy.py).
cupy_kernels.py has the same names for GPU arrays.

>>> import numpy as np
>>> relu(np.array([-1.0, 1.0]))
array([0., 1.])
"""
from . import attention, convolution, cross_entropy, elementwise, forward_plans
from . import normalization, pooling
from . import matmul as _matmul
from . import native_sequence, update
from .layout import as_layout                                             # noqa: F401
from .im2col import pad2d                                                 # noqa: F401

name = "numpy"
matmul = _matmul.matmul
matmul_add = _matmul.matmul_add
repeated_operand = _matmul.repeated_operand
sum_rows = _matmul.sum_rows
add = elementwise.add
zeros = elementwise.zeros
relu = elementwise.relu
relu_backward = elementwise.relu_backward
gelu_forward = elementwise.gelu_forward
gelu_backward = elementwise.gelu_backward
conv2d_backward = convolution.backward
max_pool2d_forward = pooling.max_pool2d_forward
max_pool2d_backward = pooling.max_pool2d_backward
avg_pool2d_forward = pooling.avg_pool2d_forward
avg_pool2d_backward = pooling.avg_pool2d_backward
spatial_mean = pooling.spatial_mean
batch_norm_forward = normalization.batch_norm_forward
batch_norm_backward = normalization.batch_norm_backward
layer_norm_forward = normalization.layer_norm_forward
layer_norm_backward = normalization.layer_norm_backward
masked_softmax = attention.masked_softmax
softmax_backward = attention.softmax_backward
attention_forward = attention.fused_forward
attention_backward = attention.fused_backward
# no_grad forwards with their per-call decisions made once (graph mode's replay)
conv2d_forward_plan = forward_plans.conv2d_forward_plan
relu_plan = forward_plans.relu_plan
max_pool2d_plan = forward_plans.max_pool2d_plan
matmul_add_plan = forward_plans.matmul_add_plan
softmax_rows = cross_entropy.softmax_rows
softmax_rows_backward = cross_entropy.softmax_rows_backward
lstm_sequence_forward = native_sequence.lstm_sequence_forward
lstm_sequence_backward = native_sequence.lstm_sequence_backward
axpy = update.axpy
sgd_update = update.sgd_update
adam_update = update.adam_update


def conv2d_forward(x, W, b, geometry, pads, needs):
    """y and the backward context of a 2-D convolution (Winograd where it pays)."""
    return convolution.forward(x, W, b, geometry, pads, needs, allow_winograd=True)
