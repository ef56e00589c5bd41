"""Forward plans (backend/forward_plans.py): each plan, made for one set of arrays and run on
others shaped and laid out alike, gives what the kernel path it stands for gives, bit for bit
(shapes, dtypes, strides and bytes): the no_grad convolution by shifted products, the
compiled ReLU, max pooling without winners and the small product with its bias row; drawn
shapes, layouts and thread counts. Where the path has nothing to decide once (float64, CuPy-less
other arrays, the kernels switched off, a rule that sends the call elsewhere) there is no
plan."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import autograd
from autograd.backend import convolution, convolution_shifted, forward_plans, matmul, native
from autograd.backend import elementwise, pooling
from autograd.geometry import ConvGeometry
from tests.backend.native_helpers import on_lines

pytestmark = pytest.mark.skipif(not native.available(),
                                reason="the compiled kernels are not built in this install")

LAYOUTS = {"plain": (0, 1, 2, 3), "batch last": (1, 2, 3, 0)}


def laid_out(x, layout):
    axes = LAYOUTS[layout]
    return np.ascontiguousarray(x.transpose(axes)).transpose(np.argsort(axes))


def assert_same(planned, computed):
    assert planned.shape == computed.shape and planned.dtype == computed.dtype
    assert planned.strides == computed.strides
    assert planned.tobytes() == computed.tobytes()


def with_threads(count, function, *arguments):
    previous = autograd.get_num_threads()
    autograd.set_num_threads(count)
    try:
        return function(*arguments)
    finally:
        autograd.set_num_threads(previous)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 4), channels=st.integers(1, 9), out_channels=st.integers(1, 20),
       size=st.integers(3, 12), kernel=st.sampled_from([1, 2, 3]), stride=st.integers(1, 2),
       padding=st.integers(0, 1), bias=st.booleans(),
       layout=st.sampled_from(sorted(LAYOUTS)), threads=st.sampled_from([1, 3]),
       seed=st.integers(0, 99))
def test_the_convolution_plan_is_the_no_grad_forward(n, channels, out_channels, size, kernel,
                                                      stride, padding, bias, layout, threads,
                                                      seed):
    rng = np.random.default_rng(seed)
    geometry = ConvGeometry(kernel, stride, padding)
    pads = geometry.pads((size, size))
    x = laid_out(rng.standard_normal((n, channels, size, size)).astype(np.float32), layout)
    W = rng.standard_normal((out_channels, channels, kernel, kernel)).astype(np.float32)
    b = rng.standard_normal(out_channels).astype(np.float32) if bias else None
    plan = forward_plans.conv2d_forward_plan(x, W, b, geometry, pads)
    shifted = convolution_shifted.plan_for(x.shape, W.shape, geometry, pads) is not None
    assert (plan is not None) == shifted
    if plan is None:
        return
    x2 = laid_out(rng.standard_normal(x.shape).astype(np.float32), layout)
    W[...] = rng.standard_normal(W.shape)           # the same arrays, new values
    expected, _ = with_threads(threads, convolution.forward, x2, W, b, geometry, pads, ())
    assert_same(with_threads(threads, plan, x2, W, b), expected)


def test_a_convolution_with_nothing_to_plan_has_no_plan():
    x = np.ones((1, 4, 8, 8), np.float32)
    W = np.ones((8, 4, 3, 3), np.float32)
    geometry = ConvGeometry(3, padding=1)
    pads = geometry.pads((8, 8))
    assert forward_plans.conv2d_forward_plan(x, W, None, geometry, pads) is not None
    assert forward_plans.conv2d_forward_plan(x.astype(np.float64), W.astype(np.float64), None,
                                             geometry, pads) is None
    assert forward_plans.conv2d_forward_plan(x, np.asfortranarray(W), None, geometry,
                                             pads) is None         # W copied per call
    grouped = ConvGeometry(3, padding=1, groups=2)
    assert forward_plans.conv2d_forward_plan(x, W[:, :2], None, grouped, pads) is None
    assert forward_plans.conv2d_forward_plan(x[:0], W, None, geometry, pads) is None
    previous = native.set_enabled(False)
    try:
        assert forward_plans.conv2d_forward_plan(x, W, None, geometry, pads) is None
    finally:
        native.set_enabled(previous)


@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(1, 40), min_size=1, max_size=4), data=st.data(),
       threads=st.sampled_from([1, 3]), seed=st.integers(0, 99))
def test_the_relu_plan_is_the_compiled_relu_in_the_layout_of_x(shape, data, threads, seed):
    rng = np.random.default_rng(seed)
    order = data.draw(st.permutations(range(len(shape))))

    def dense(values):          # laid out in memory as ``order`` says, outermost first
        stored = values.reshape([shape[axis] for axis in order]).copy()
        return stored.transpose(np.argsort(order))

    x = dense(rng.standard_normal(int(np.prod(shape))).astype(np.float32))
    plan = forward_plans.relu_plan(x)
    x2 = dense(rng.standard_normal(int(np.prod(shape))).astype(np.float32))
    x2.flat[::7] = np.nan
    x2.flat[1::5] = -0.0
    expected = elementwise.relu(x2)
    if plan is None:      # length-1 axes NumPy's empty_like lays out otherwise: NumPy's pass
        assert expected.strides != x2.strides and 1 in shape
        return
    planned = with_threads(threads, plan, x2)
    assert_same(planned, expected)
    np.testing.assert_array_equal(planned, np.maximum(x2, 0))


def test_relu_has_no_plan_where_x_is_not_dense_float32():
    x = np.ones((4, 6), np.float32)
    assert forward_plans.relu_plan(x) is not None
    assert forward_plans.relu_plan(x[:, ::2]) is None
    assert forward_plans.relu_plan(x.astype(np.float64)) is None
    assert forward_plans.relu_plan(x[:0]) is None
    previous = native.set_enabled(False)
    try:
        assert forward_plans.relu_plan(x) is None
    finally:
        native.set_enabled(previous)


@settings(max_examples=50, deadline=None)
@given(n=st.integers(1, 5), channels=st.integers(1, 6), size=st.integers(2, 14),
       kernel=st.sampled_from([2, 3]), stride=st.integers(1, 2), padding=st.integers(0, 1),
       layout=st.sampled_from(sorted(LAYOUTS)), threads=st.sampled_from([1, 3]),
       seed=st.integers(0, 99))
def test_the_pooling_plan_is_the_compiled_pooling(n, channels, size, kernel, stride, padding,
                                                  layout, threads, seed):
    if 2 * padding > kernel or size + 2 * padding < kernel:
        return
    rng = np.random.default_rng(seed)
    out = (size + 2 * padding - kernel) // stride + 1
    windows = pooling.Windows((kernel,) * 2, (stride,) * 2, ((padding, padding),) * 2,
                              (out, out))
    x = laid_out(rng.standard_normal((n, channels, size, size)).astype(np.float32), layout)
    plan = forward_plans.max_pool2d_plan(x, windows)
    assert (plan is None) == (pooling.compiled_layout(x, windows, False) is None)
    if plan is None:
        return
    x2 = laid_out(rng.standard_normal(x.shape).astype(np.float32), layout)
    x2.flat[::11] = np.nan
    expected, winner = with_threads(threads, pooling.max_pool2d_forward, x2, windows, False)
    assert winner is None
    assert_same(with_threads(threads, plan, x2), expected)


@settings(max_examples=40, deadline=None)
@given(rows=st.integers(1, 40), inner=st.integers(1, 300), columns=st.integers(1, 300),
       transposed=st.booleans(), threads=st.sampled_from([1, 3]), seed=st.integers(0, 99))
def test_the_product_plan_is_matmul_add(rows, inner, columns, transposed, threads, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((rows, inner)).astype(np.float32)
    b = (rng.standard_normal((columns, inner)).astype(np.float32).T if transposed
         else rng.standard_normal((inner, columns)).astype(np.float32))
    c = rng.standard_normal(columns).astype(np.float32)
    plan = forward_plans.matmul_add_plan(a, b, c)
    probe = np.empty((rows, columns), np.float32)
    takes = (rows * columns < matmul.FUSED_ADD_MIN_SIZE
             and bool(native.product(a, b, probe, c)))
    assert (plan is not None) == takes
    if plan is None:
        return
    a2 = rng.standard_normal(a.shape).astype(np.float32)
    expected = with_threads(threads, matmul.matmul_add, a2, b, c)
    assert_same(with_threads(threads, plan, a2, b, c), expected)


def test_a_product_with_nothing_to_plan_has_no_plan():
    a, b = np.ones((1, 64), np.float32), np.ones((64, 10), np.float32)
    assert forward_plans.matmul_add_plan(a, b, np.ones(10, np.float32)) is not None
    assert forward_plans.matmul_add_plan(a, b, np.ones((1, 10), np.float32)) is None
    assert forward_plans.matmul_add_plan(a, b, np.ones(10)) is None
    # many rows by a b off its cache lines: the fused GEMM's
    big_a = np.ones((128, 64), np.float32)
    big_b = on_lines(np.random.default_rng(0), (64, 128), 16)
    assert forward_plans.matmul_add_plan(big_a, big_b, np.ones(128, np.float32)) is None
    # one row the compiled product would take, but matmul_add's fused GEMM takes first
    wide = np.ones((64, matmul.FUSED_ADD_MIN_SIZE), np.float32)
    assert native.product(a, wide, np.empty((1, wide.shape[1]), np.float32))
    assert forward_plans.matmul_add_plan(a, wide, np.ones(wide.shape[1], np.float32)) is None
