"""Forward plans: a forward that records nothing (no_grad, inference) with what its kernel path
decides per call (which kernel, the output's layout, the kernel's arguments) decided once, for
inputs shaped, typed and laid out as the ones given. Graph mode replays such a call through
its plan (``Operation.forward_plan``), after checking at capture that the plan gives the
forward's outputs bit for bit.

Why: a batch-1 CNN's forwards are a few microseconds of arithmetic each, and the Python that
decides per call (the op's checks, the backend's rules, the argument lists) cost about as much
again: the digits CNN's replayed no_grad forward took 48 us, 30 through its plans
(benchmarks/NOTES.md, twenty-first session).

Each function returns a plan, a function of the same arguments as the forward's arrays, or
None where no plan applies (not float32 NumPy arrays, a kernel path with nothing to decide
once, the compiled kernels switched off). A plan allocates its outputs on every call, as the
forward does, and reads the thread count when it runs.

>>> import numpy as np
>>> x = np.array([[-1.0, 2.0]], np.float32)
>>> plan = relu_plan(x)
>>> plan(np.array([[3.0, -4.0]], np.float32))
array([[3., 0.]], dtype=float32)
"""
import numpy as np

from . import buffer_cache, native, native_convolution, native_pooling, pooling
from . import convolution_shifted
from .layout import from_batch_last
from .matmul import FUSED_ADD_MIN_SIZE
from .native import _FLOAT32, _native, _split_threads

__all__ = []     # reached through the kernels of numpy_kernels.py / cupy_kernels.py


def conv2d_forward_plan(x, W, b, geometry, pads):
    """conv2d's no_grad forward (convolution.forward with nothing needed) where the shifted
    products take it: the plan runs the compiled kernel straight into a batch-last y."""
    planned = shifted_rows_plan(x, W, b, geometry, pads, relu=False)
    if planned is None:
        return None
    (out_h, out_w), rows = planned
    out_channels, n = W.shape[0], x.shape[0]

    def conv2d_forward(x, W, b=None):
        return from_batch_last(rows(x, W, b).reshape(out_channels, out_h, out_w, n))

    return conv2d_forward


def shifted_rows_plan(x, W, b, geometry, pads, relu):
    """convolution.inference_forward's shifted products (+ b, then the ReLU where ``relu``):
    ((OH, OW), plan), the plan a function of (x, W, b, out=None) returning the batch-last
    rows (O, OH * OW * N) it wrote, into ``out`` where given (a Concat's channels)."""
    if not (native_convolution.applies(x, W, b) and W.flags.c_contiguous):
        return None
    plan = convolution_shifted.plan_for(x.shape, W.shape, geometry, pads)
    if plan is None or not x.shape[0] or 0 in plan[0]:
        return None
    out_size, (size, columns) = plan
    rows = buffer_cache.allocator(np, (W.shape[0], out_size[0] * out_size[1] * x.shape[0]),
                                  _FLOAT32)
    scratch = buffer_cache.allocator(np, (size,), _FLOAT32)
    arguments = native_convolution.shifted_arguments(out_size, geometry.stride,
                                                     geometry.dilation, pads, relu)
    minimum_work = native_convolution.MIN_WORK_PER_THREAD

    def shifted_rows(x, W, b=None, out=None):
        y = rows() if out is None else out
        padded = scratch()
        _native.shifted_convolution(x, W, None if b is None else b.reshape(-1), y, padded,
                                    *arguments, _split_threads(), columns, minimum_work)
        return y

    return out_size, shifted_rows


def relu_plan(x):
    """max(x, 0) of a dense float32 x by the compiled pass, y laid out as elementwise.relu lays
    it out (as x, a batch-last batch's activations too)."""
    if not (native.enabled() and type(x) is np.ndarray and x.dtype == _FLOAT32 and x.size):
        return None
    if x.flags.c_contiguous:             # whatever the strides of its length-1 axes
        allocate = buffer_cache.allocator(np, x.shape, _FLOAT32)

        def relu(x):
            y = allocate()
            _native.relu_forward(x, y, _split_threads())
            return y
        return relu
    order = tuple(sorted(range(x.ndim), key=lambda axis: -x.strides[axis]))
    if not (x.transpose(order).flags.c_contiguous
            and buffer_cache.empty_like(x).strides == x.strides):
        return None         # not dense, or elementwise.relu's y is not laid out as x: NumPy's

    def relu_in_order(x):
        y = buffer_cache.empty_like(x)
        _native.relu_forward(x.transpose(order), y.transpose(order), _split_threads())
        return y
    return relu_in_order


def max_pool2d_plan(x, windows):
    """Max pooling without winners where the compiled kernel takes it (pooling.py's
    ``compiled_layout``): the plan runs it into y of the layout it chose."""
    order = pooling.compiled_layout(x, windows, False)
    if order is None:
        return None
    allocate = buffer_cache.allocator(np, x.shape[:2] + tuple(windows.out_size), _FLOAT32,
                                      order or None)
    arguments = native_pooling.window_arguments(windows)

    def max_pool2d(x):
        y = allocate()
        _native.max_pool_forward(x, y, None, *arguments, _split_threads())
        return y

    return max_pool2d


def matmul_add_plan(a, b, c):
    """a @ b + c for a bias row c where matmul.matmul_add adds it in the compiled product
    (a small product, or many rows by a wide b: native.product): the plan runs that product."""
    if not (native.enabled() and type(c) is np.ndarray and c.ndim == 1 and c.dtype == _FLOAT32
            and type(a) is np.ndarray and a.ndim == 2 and type(b) is np.ndarray
            and b.ndim == 2 and (a.shape[0] * b.shape[1] < FUSED_ADD_MIN_SIZE
                                 or native.takes_many_rows(a, b))):
        return None
    shape = (a.shape[0], b.shape[1])
    if not native.product(a, b, np.empty(shape, _FLOAT32), c):    # its rules, decided once
        return None
    minimum_work = native.PRODUCT_MIN_WORK_PER_THREAD
    allocate = buffer_cache.allocator(np, shape, _FLOAT32)

    def matmul_add(a, b, c):
        out = allocate()
        _native.product(a, b, out, _split_threads(), minimum_work, c)
        return out

    return matmul_add

