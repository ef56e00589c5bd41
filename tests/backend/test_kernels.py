"""Every kernel of the CPU backend against a plain NumPy reference written here, in both image
layouts, forward and backward; the GPU backend against the CPU one."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from autograd.backend import kernels_for, numpy_kernels
from autograd.backend.layout import is_batch_last
from autograd.backend.pooling import Windows
from autograd.geometry import ConvGeometry
from tests.backend.test_normalization_mutants import reference_batch_norm
from tests.layouts import stored_batch_last

kernels = numpy_kernels


def _layouts(array, batch_last):
    return stored_batch_last(array) if batch_last else array


def _windows_of(xpad, kernel, out_size, stride, dilation):
    """(N, C, OH, OW, kh, kw) windows of a padded array, by plain indexing."""
    n, c = xpad.shape[:2]
    result = np.empty((n, c, out_size[0], out_size[1], kernel[0], kernel[1]), xpad.dtype)
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            rows = i * dilation[0] + stride[0] * np.arange(out_size[0])
            cols = j * dilation[1] + stride[1] * np.arange(out_size[1])
            result[..., i, j] = xpad[:, :, rows[:, None], cols[None, :]]
    return result, rows, cols


def reference_conv(x, W, b, stride, dilation, pads, groups, dy):
    """y, dx, dW, db of a grouped convolution, by windows and einsum."""
    (top, bottom), (left, right) = pads
    xpad = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    kernel = W.shape[2:]
    out_size = tuple((xpad.shape[2 + a] - dilation[a] * (kernel[a] - 1) - 1) // stride[a] + 1
                     for a in (0, 1))
    windows, _, _ = _windows_of(xpad, kernel, out_size, stride, dilation)
    per_group_in, per_group_out = W.shape[1], W.shape[0] // groups
    y = np.empty((x.shape[0], W.shape[0]) + out_size)
    dW = np.empty(W.shape)
    dwindows = np.zeros(windows.shape)
    for g in range(groups):
        ins = slice(g * per_group_in, (g + 1) * per_group_in)
        outs = slice(g * per_group_out, (g + 1) * per_group_out)
        y[:, outs] = np.einsum("ncpqij,ocij->nopq", windows[:, ins], W[outs])
        dW[outs] = np.einsum("nopq,ncpqij->ocij", dy[:, outs], windows[:, ins])
        dwindows[:, ins] = np.einsum("nopq,ocij->ncpqij", dy[:, outs], W[outs])
    dxpad = np.zeros(xpad.shape)
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            for p in range(out_size[0]):
                for q in range(out_size[1]):
                    dxpad[:, :, p * stride[0] + i * dilation[0],
                          q * stride[1] + j * dilation[1]] += dwindows[:, :, p, q, i, j]
    dx = dxpad[:, :, top:top + x.shape[2], left:left + x.shape[3]]
    if b is not None:
        y += b.reshape(1, -1, 1, 1)
    return y, dx, dW, dy.sum(axis=(0, 2, 3))


@st.composite
def conv_cases(draw):
    groups = draw(st.sampled_from([1, 2]))
    c = groups * draw(st.integers(1, 2))
    o = groups * draw(st.integers(1, 3))
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    stride = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    dilation = (draw(st.integers(1, 2)), 1)
    pads = ((draw(st.integers(0, 2)), draw(st.integers(0, 2))), (draw(st.integers(0, 1)),) * 2)
    size = tuple(dilation[a] * (kernel[a] - 1) + 1 + draw(st.integers(0, 3)) for a in (0, 1))
    return dict(n=draw(st.integers(1, 3)), c=c, o=o, kernel=kernel, stride=stride,
                dilation=dilation, pads=pads, size=size, groups=groups,
                bias=draw(st.booleans()), batch_last=draw(st.booleans()),
                seed=draw(st.integers(0, 1000)))


@given(conv_cases())
def test_conv2d_kernels_match_windows_and_einsum(case):
    rng = np.random.default_rng(case["seed"])
    x = rng.standard_normal((case["n"], case["c"]) + case["size"])
    W = rng.standard_normal((case["o"], case["c"] // case["groups"]) + case["kernel"])
    b = rng.standard_normal(case["o"]) if case["bias"] else None
    geometry = ConvGeometry(case["kernel"], case["stride"], 0, case["dilation"], case["groups"])
    needs = (True, True, True) if case["bias"] else (True, True)
    y, context = kernels.conv2d_forward(_layouts(x, case["batch_last"]), W, b, geometry,
                                        case["pads"], needs)
    dy = rng.standard_normal(y.shape)
    expected = reference_conv(x, W, b, case["stride"], case["dilation"], case["pads"],
                              case["groups"], dy)
    np.testing.assert_allclose(y, expected[0], atol=1e-10)
    dx, dW, db = kernels.conv2d_backward(context, _layouts(dy, case["batch_last"]), needs)
    np.testing.assert_allclose(dx, expected[1], atol=1e-10)
    np.testing.assert_allclose(dW, expected[2], atol=1e-10)
    if case["bias"]:
        np.testing.assert_allclose(db, expected[3], atol=1e-10)


@given(conv_cases())
def test_conv2d_forward_alone_matches_windows_and_einsum(case):
    """needs=() (inference): the bias added after the GEMM, 1x1 windows read in place."""
    rng = np.random.default_rng(case["seed"])
    x = rng.standard_normal((case["n"], case["c"]) + case["size"])
    W = rng.standard_normal((case["o"], case["c"] // case["groups"]) + case["kernel"])
    b = rng.standard_normal(case["o"]) if case["bias"] else None
    geometry = ConvGeometry(case["kernel"], case["stride"], 0, case["dilation"], case["groups"])
    y, _ = kernels.conv2d_forward(_layouts(x, case["batch_last"]), W, b, geometry,
                                  case["pads"], ())
    expected = reference_conv(x, W, b, case["stride"], case["dilation"], case["pads"],
                              case["groups"], np.zeros(y.shape))[0]
    np.testing.assert_allclose(y, expected, atol=1e-10)


@pytest.mark.parametrize("batch_last", [False, True])
@pytest.mark.parametrize("groups, pads", [(1, ((0, 0), (0, 0))), (2, ((1, 0), (0, 2)))])
def test_pointwise_conv2d_forward_alone_reads_the_input_in_place(batch_last, groups, pads):
    rng = np.random.default_rng(3)
    x, W, b = rng.standard_normal((3, 4, 5, 6)), rng.standard_normal((6, 4 // groups, 1, 1)), \
        rng.standard_normal(6)
    geometry = ConvGeometry((1, 1), 1, 0, 1, groups)
    y, _ = kernels.conv2d_forward(_layouts(x, batch_last), W, b, geometry, pads, ())
    expected = reference_conv(x, W, b, (1, 1), (1, 1), pads, groups, np.zeros(y.shape))[0]
    np.testing.assert_allclose(y, expected, atol=1e-10)
    assert is_batch_last(y)


def test_conv2d_winograd_path_matches_the_reference_and_keeps_batch_last():
    rng = np.random.default_rng(0)
    x, W = rng.standard_normal((32, 48, 8, 8)), rng.standard_normal((48, 48, 3, 3))
    y, context = kernels.conv2d_forward(stored_batch_last(x), W, None, ConvGeometry(3),
                                        ((1, 1), (1, 1)), (True, True))
    assert context.winograd and is_batch_last(y)
    dy = rng.standard_normal(y.shape)
    expected = reference_conv(x, W, None, (1, 1), (1, 1), ((1, 1), (1, 1)), 1, dy)
    np.testing.assert_allclose(y, expected[0], atol=1e-8)
    dx, dW, _ = kernels.conv2d_backward(context, dy, (True, True))
    np.testing.assert_allclose(dx, expected[1], atol=1e-8)
    np.testing.assert_allclose(dW, expected[2], atol=1e-8)


def reference_pool(x, windows, mode, divisor=None):
    (top, bottom), (left, right) = windows.pads
    fill = -np.inf if mode == "max" else 0.0
    xpad = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)), constant_values=fill)
    view, _, _ = _windows_of(xpad, windows.kernel, windows.out_size, windows.stride, (1, 1))
    flat = view.reshape(view.shape[:4] + (-1,))
    if mode == "max":
        return flat.max(axis=-1), flat.argmax(axis=-1)
    return flat.sum(axis=-1) / divisor, None


@st.composite
def pool_cases(draw):
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    pads = tuple((draw(st.integers(0, k // 2)),) * 2 for k in kernel)
    size = tuple(k + draw(st.integers(0, 4)) for k in kernel)
    out = tuple((s + p[0] + p[1] - k) // st_ + 1 for s, p, k, st_ in
                zip(size, pads, kernel, stride))
    return dict(windows=Windows(kernel, stride, pads, out), size=size,
                batch_last=draw(st.booleans()), seed=draw(st.integers(0, 1000)))


@given(pool_cases())
def test_max_pool_forward_alone_takes_the_window_maxima_in_the_input_layout(case):
    rng = np.random.default_rng(case["seed"])
    x = rng.standard_normal((2, 3) + case["size"])
    y, winner = kernels.max_pool2d_forward(_layouts(x, case["batch_last"]), case["windows"],
                                           with_winner=False)
    np.testing.assert_array_equal(y, reference_pool(x, case["windows"], "max")[0])
    assert winner is None
    assert is_batch_last(y) or not case["batch_last"]


@given(pool_cases())
def test_max_pool_kernels_route_dy_to_the_first_maximum(case):
    rng = np.random.default_rng(case["seed"])
    x = rng.permutation(2 * 3 * np.prod(case["size"])).reshape((2, 3) + case["size"]) * 1.0
    windows = case["windows"]
    y, winner = kernels.max_pool2d_forward(_layouts(x, case["batch_last"]), windows)
    expected, first = reference_pool(x, windows, "max")
    np.testing.assert_array_equal(y, expected)
    np.testing.assert_array_equal(winner, first)
    dy = rng.standard_normal(y.shape)
    dx = kernels.max_pool2d_backward(_layouts(dy, case["batch_last"]), winner, windows, x.shape)
    # the reference: autodiff of max is the gradient at the argmax
    (top, _), (left, _) = windows.pads
    dxpad = np.zeros((2, 3, x.shape[2] + sum(windows.pads[0]), x.shape[3] + sum(windows.pads[1])))
    kw = windows.kernel[1]
    for index in np.ndindex(y.shape):
        n, c, p, q = index
        i, j = divmod(int(first[index]), kw)
        dxpad[n, c, p * windows.stride[0] + i, q * windows.stride[1] + j] += dy[index]
    np.testing.assert_allclose(dx, dxpad[:, :, top:top + x.shape[2], left:left + x.shape[3]])


@given(pool_cases())
def test_avg_pool_kernels_divide_each_window_and_spread_dy_back(case):
    rng = np.random.default_rng(case["seed"])
    x = rng.standard_normal((2, 3) + case["size"])
    windows = case["windows"]
    divisor = float(np.prod(windows.kernel))
    y, order = kernels.avg_pool2d_forward(_layouts(x, case["batch_last"]), windows, divisor)
    np.testing.assert_allclose(y, reference_pool(x, windows, "avg", divisor)[0])
    dy = rng.standard_normal(y.shape)
    dx = kernels.avg_pool2d_backward(dy, windows, divisor, x.shape, order)
    # <dx, v> == <dy, pool(v)> for every v: the backward is the forward's transpose
    v = rng.standard_normal(x.shape)
    np.testing.assert_allclose((dx * v).sum(),
                               (dy * reference_pool(v, windows, "avg", divisor)[0]).sum())


@pytest.mark.parametrize("shape", [(4, 3), (3, 2, 5, 4), (2, 2, 130, 130)])   # the last: >16,384
@pytest.mark.parametrize("batch_last", [False, True])
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_kernels_match_the_formulas(shape, batch_last, training):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape) * 3 + 1
    channels = shape[1]
    scale, bias = rng.standard_normal(channels), rng.standard_normal(channels)
    given_mean = given_var = None
    if not training:
        given_mean, given_var = rng.standard_normal(channels), rng.random(channels) + 0.5
    laid_out = _layouts(x, batch_last and len(shape) == 4)
    y, mean, var, saved = kernels.batch_norm_forward(laid_out, scale, bias, 1e-3, given_mean,
                                                     given_var)
    dy = rng.standard_normal(shape)
    (expect_y, expect_mean, expect_var, expect_dx, expect_dscale,
     expect_dbias) = reference_batch_norm(x, scale, bias, 1e-3, dy, training, given_mean,
                                          given_var)
    np.testing.assert_allclose(mean, expect_mean, rtol=1e-10)
    np.testing.assert_allclose(var, expect_var, rtol=1e-10)
    np.testing.assert_allclose(y, expect_y, atol=1e-10)
    dx, dscale, dbias = kernels.batch_norm_backward(dy, scale, saved, training,
                                                    (True, True, True))
    np.testing.assert_allclose(dx, expect_dx, atol=1e-10)
    np.testing.assert_allclose(dscale, expect_dscale, atol=1e-9)
    np.testing.assert_allclose(dbias, expect_dbias, atol=1e-9)


@pytest.mark.parametrize("size", [5, 512, 513, 5000])
@pytest.mark.parametrize("batch_last", [False, True])
def test_relu_kernels_match_maximum_and_keep_the_layout(size, batch_last):
    rng = np.random.default_rng(size)
    x = rng.standard_normal((2, 3, 2, size)).astype(np.float32)
    x[0, 0, 0, 0] = 0.0
    laid_out = _layouts(x, batch_last)
    y = kernels.relu(laid_out)
    np.testing.assert_array_equal(y, np.maximum(x, 0))
    assert is_batch_last(y) == batch_last and (batch_last or y.flags.c_contiguous)
    dy = rng.standard_normal(x.shape).astype(np.float32)
    np.testing.assert_array_equal(kernels.relu_backward(dy, y), np.where(x > 0, dy, 0))


@pytest.mark.parametrize("layout", ["NCHW", "CHWN"])
def test_as_layout_gives_the_order_asked_for_and_copies_only_when_needed(layout):
    x = np.arange(2 * 3 * 4 * 5.0).reshape(2, 3, 4, 5)
    for stored in (x, stored_batch_last(x)):
        result = kernels.as_layout(stored, layout)
        np.testing.assert_array_equal(result, x)
        assert is_batch_last(result) == (layout == "CHWN")
        already = is_batch_last(stored) == (layout == "CHWN")
        assert (result.ctypes.data == stored.ctypes.data) == already
    with pytest.raises(ValueError, match="as_layout: layout must be one of"):
        kernels.as_layout(x, "NHWC")


def test_kernels_for_picks_by_array_kind():
    assert kernels_for(np.zeros(2)) is numpy_kernels
    with pytest.raises(TypeError, match="kernels_for: expected a NumPy or CuPy array, got list"):
        kernels_for([1.0])


@pytest.mark.gpu
def test_gpu_kernels_match_the_cpu_kernels():
    import cupy
    rng = np.random.default_rng(0)
    x, W = rng.standard_normal((4, 4, 9, 9)), rng.standard_normal((6, 2, 3, 3))
    geometry, pads = ConvGeometry(3, groups=2), ((1, 1), (1, 1))
    gpu = kernels_for(cupy.asarray(x))
    assert gpu.name == "cupy"
    y_cpu, context_cpu = kernels.conv2d_forward(x, W, None, geometry, pads, (True, True))
    y_gpu, context_gpu = gpu.conv2d_forward(cupy.asarray(x), cupy.asarray(W), None, geometry,
                                            pads, (True, True))
    np.testing.assert_allclose(y_gpu.get(), y_cpu, atol=1e-10)
    dy = rng.standard_normal(y_cpu.shape)
    for cpu, gpu_grad in zip(kernels.conv2d_backward(context_cpu, dy, (True, True)),
                             gpu.conv2d_backward(context_gpu, cupy.asarray(dy), (True, True))):
        if cpu is not None:
            np.testing.assert_allclose(gpu_grad.get(), cpu, atol=1e-10)
    windows = Windows((2, 2), (2, 2), ((0, 0), (0, 0)), (4, 4))
    np.testing.assert_array_equal(gpu.max_pool2d_forward(cupy.asarray(x), windows)[0].get(),
                                  kernels.max_pool2d_forward(x, windows)[0])
    np.testing.assert_array_equal(gpu.relu(cupy.asarray(x)).get(), kernels.relu(x))
