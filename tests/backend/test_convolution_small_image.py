"""One small image's convolution (convolution_small_image.py: its columns gathered by a cached
index, one GEMM, the columns' gradient scattered back by the same index) against the direct sums written here, forward and
gradients, on every geometry, layout and dtype; and the rule that sends a convolution there:
one NumPy image, one group, at most SMALL_IMAGE_COLUMNS elements of columns."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from autograd.backend import convolution, convolution_small_image
from autograd.geometry import ConvGeometry
from tests.backend.test_convolution_mutants import direct_conv
from tests.layouts import stored_batch_last


@pytest.fixture
def small_calls(monkeypatch):
    """The shapes of x every call of the small-image forward got, passed through."""
    calls = []
    real = convolution_small_image.forward

    def recorded(x, *args):
        calls.append(x.shape)
        return real(x, *args)
    monkeypatch.setattr(convolution_small_image, "forward", recorded)
    return calls


def _stored(x, how):
    if how == "batch-last":
        return stored_batch_last(x)
    if how == "strided":                   # every other column of a wider image
        wide = np.zeros(x.shape[:3] + (2 * x.shape[3],), x.dtype)
        wide[..., ::2] = x
        return wide[..., ::2]
    return x


geometries = dict(
    channels=st.integers(1, 4), out_channels=st.integers(1, 5),
    kernel=st.tuples(st.integers(1, 3), st.integers(1, 3)),
    stride=st.tuples(st.integers(1, 3), st.integers(1, 3)),
    dilation=st.tuples(st.integers(1, 2), st.integers(1, 2)),
    pads=st.tuples(st.tuples(st.integers(0, 2), st.integers(0, 2)),
                   st.tuples(st.integers(0, 2), st.integers(0, 2))),
    extra=st.tuples(st.integers(0, 5), st.integers(0, 5)), seed=st.integers(0, 99))


def _image_size(kernel, dilation, pads, extra):
    spans = [d * (k - 1) + 1 for d, k in zip(dilation, kernel)]
    return tuple(max(1, span - sum(pad)) + more for span, pad, more in zip(spans, pads, extra))


@settings(max_examples=60, deadline=None)
@given(needs=st.sampled_from([(True, True, True), (True, False), (False, True, False),
                              (False, True, True)]),
       dtype=st.sampled_from([np.float64, np.float32]), **geometries)
def test_one_small_image_has_the_gradients_of_the_direct_convolution(
        channels, out_channels, kernel, stride, dilation, pads, extra, seed, needs, dtype):
    """dW[o, c, i, j] = sum of dy[o] * xpad[c] at the window offset (i, j); dx = each offset's
    W[o, c, i, j] * dy[o] added back at its strided place of xpad, the padding cut; db = dy
    summed per channel. Against loops over o, c, i, j in float64 (float32's dx is the compiled
    col2im where it is built)."""
    height, width = _image_size(kernel, dilation, pads, extra)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((1, channels, height, width)).astype(dtype)
    W = rng.standard_normal((out_channels, channels) + kernel).astype(dtype)
    b = rng.standard_normal(out_channels).astype(dtype) if len(needs) > 2 else None
    tolerance = 1e-12 if dtype == np.float64 else 2e-5
    geometry = ConvGeometry(kernel, stride, 0, dilation)
    assert convolution._small_image_output(x, W, geometry, pads) is not None
    y, context = convolution.forward(x, W, b, geometry, pads, needs)
    np.testing.assert_allclose(y, direct_conv(x, W, b, stride, dilation, pads, 1),
                               rtol=tolerance, atol=tolerance)
    columns, weights, _ = context.saved    # each kept only for the gradient that needs it
    assert (columns is not None) == needs[1] and (weights is not None) == needs[0]
    dy = rng.standard_normal(y.shape).astype(dtype)
    dx, dW, db = convolution.backward(context, dy, needs)
    x, W, dy = x.astype(np.float64), W.astype(np.float64), dy.astype(np.float64)
    (top, bottom), (left, right) = pads
    xpad = np.pad(x[0], ((0, 0), (top, bottom), (left, right)))
    out_h, out_w = y.shape[2:]
    expected_dW = np.zeros(W.shape)
    expected_dxpad = np.zeros(xpad.shape)
    for o in range(out_channels):
        for c in range(channels):
            for i in range(kernel[0]):
                for j in range(kernel[1]):
                    rows = slice(i * dilation[0], i * dilation[0] + stride[0] * (out_h - 1) + 1,
                                 stride[0])
                    cols = slice(j * dilation[1], j * dilation[1] + stride[1] * (out_w - 1) + 1,
                                 stride[1])
                    expected_dW[o, c, i, j] = (dy[0, o] * xpad[c, rows, cols]).sum()
                    expected_dxpad[c, rows, cols] += W[o, c, i, j] * dy[0, o]
    expected_dx = expected_dxpad[None, :, top:top + height, left:left + width]
    for got, wanted, expected in ((dx, needs[0], expected_dx), (dW, needs[1], expected_dW)):
        if wanted:
            assert got.shape == expected.shape and got.dtype == dtype
            np.testing.assert_allclose(got, expected, rtol=tolerance, atol=tolerance)
        else:
            assert got is None
    if len(needs) > 2 and needs[2]:
        np.testing.assert_allclose(db, dy.sum(axis=(0, 2, 3)), rtol=tolerance, atol=tolerance)


@settings(max_examples=60, deadline=None)
@given(channels=st.integers(1, 4), out_channels=st.integers(1, 5),
       kernel=st.tuples(st.integers(1, 3), st.integers(1, 3)),
       stride=st.tuples(st.integers(1, 3), st.integers(1, 3)),
       dilation=st.tuples(st.integers(1, 2), st.integers(1, 2)),
       pads=st.tuples(st.tuples(st.integers(0, 2), st.integers(0, 2)),
                      st.tuples(st.integers(0, 2), st.integers(0, 2))),
       extra=st.tuples(st.integers(0, 5), st.integers(0, 5)),
       bias=st.booleans(), dtype=st.sampled_from([np.float32, np.float64]),
       layout=st.sampled_from(["c", "batch-last", "strided"]), seed=st.integers(0, 99))
def test_one_small_image_is_the_direct_convolution(channels, out_channels, kernel, stride,
                                                   dilation, pads, extra, bias, dtype, layout,
                                                   seed):
    spans = [d * (k - 1) + 1 for d, k in zip(dilation, kernel)]
    height, width = (max(1, span - sum(pad)) + more
                     for span, pad, more in zip(spans, pads, extra))
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((1, channels, height, width)).astype(dtype)
    W = rng.standard_normal((out_channels, channels) + kernel).astype(dtype)
    b = rng.standard_normal(out_channels).astype(dtype) if bias else None
    geometry = ConvGeometry(kernel, stride, 0, dilation)
    assert convolution._small_image_output(x, W, geometry, pads) is not None
    y, _ = convolution.forward(_stored(x, layout), W, b, geometry, pads, ())
    expected = direct_conv(x.astype(np.float64), W.astype(np.float64), b, stride, dilation,
                           pads, 1)
    assert y.shape == expected.shape and y.dtype == dtype
    tolerance = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(y, expected, rtol=tolerance, atol=tolerance)


def test_the_rule_sends_only_one_small_single_group_image_there(small_calls):
    rng = np.random.default_rng(1)
    geometry = ConvGeometry(3, 1, 0, 1)
    pads = ((1, 1), (1, 1))

    def run(x, W, needs=(), geometry=geometry, pads=pads):
        y, _ = convolution.forward(x, W, None, geometry, pads, needs)
        taken = bool(small_calls)
        small_calls.clear()
        np.testing.assert_allclose(y, direct_conv(x, W, None, geometry.stride, (1, 1), pads,
                                                  geometry.groups), rtol=1e-9, atol=1e-9)
        return taken

    limit = convolution.SMALL_IMAGE_COLUMNS
    assert limit == 1 << 14
    # a 1x1 window over 16 channels: 16 elements per pixel, 1,024 pixels exactly the limit
    pointwise, no_pads = ConvGeometry(1, 1, 0, 1), ((0, 0), (0, 0))
    W1 = rng.standard_normal((4, 16, 1, 1))
    assert run(rng.standard_normal((1, 16, 32, 32)), W1, geometry=pointwise, pads=no_pads)
    assert not run(rng.standard_normal((1, 16, 1, 1025)), W1, geometry=pointwise, pads=no_pads)
    # 16 channels * 9 offsets = 144 per pixel: 113 pixels fit under the limit, 114 do not
    W = rng.standard_normal((8, 16, 3, 3))
    assert run(rng.standard_normal((1, 16, 1, 113)), W)              # 16,272 elements
    assert not run(rng.standard_normal((1, 16, 1, 114)), W)          # 16,416
    small = rng.standard_normal((1, 16, 4, 4))
    assert run(small, W)
    assert not run(rng.standard_normal((2, 16, 4, 4)), W)            # two images
    assert run(small, W, needs=(True, True))                         # training too
    grouped = ConvGeometry(3, 1, 0, 1, groups=2)
    assert not run(small, rng.standard_normal((8, 8, 3, 3)), geometry=grouped)


def test_an_integer_image_with_a_float_bias_takes_the_image_dtype():
    """As the batched path: b is cast to y's dtype before it is added."""
    x = np.arange(16, dtype=np.int64).reshape(1, 1, 4, 4)
    W = np.ones((2, 1, 2, 2), np.int64)
    b = np.array([0.75, -1.25])
    y, _ = convolution.forward(x, W, b, ConvGeometry(2), ((0, 0), (0, 0)), ())
    reference, _ = convolution.forward(np.concatenate([x, x]), W, b, ConvGeometry(2),
                                       ((0, 0), (0, 0)), ())
    assert y.dtype == np.int64
    np.testing.assert_array_equal(y[0], reference[0])


def test_a_layer_that_takes_winograd_keeps_it_for_one_small_image(monkeypatch):
    """Winograd's rule comes first (in practice its wide layers are past the small limit);
    with its thresholds lowered, one small image still goes to Winograd."""
    from autograd.backend import winograd
    monkeypatch.setattr(winograd, "MIN_CHANNELS", 1)
    monkeypatch.setattr(winograd, "MIN_TILES", 1)
    rng = np.random.default_rng(3)
    x, W = rng.standard_normal((1, 2, 8, 8)), rng.standard_normal((3, 2, 3, 3))
    pads = ((1, 1), (1, 1))
    assert convolution._small_image_output(x, W, ConvGeometry(3), pads) is not None
    y, context = convolution.forward(x, W, None, ConvGeometry(3), pads, (True, True))
    assert context.winograd and not context.small_image
    np.testing.assert_allclose(y, direct_conv(x, W, None, (1, 1), (1, 1), pads, 1), rtol=1e-10,
                               atol=1e-10)


def test_the_window_index_is_built_once_per_geometry_and_read_only():
    """Entry [(c, i, j), (oh, ow)] is where offset (i, j) of output (oh, ow) reads channel c
    (C order), or C * H * W (the zero after the values) in the padding; one read-only array
    per geometry, reused by every call."""
    index = convolution_small_image.window_index((2, 3, 3), (2, 2), (2, 2), (2, 2), (1, 1),
                                                 ((1, 0), (1, 0)))
    zero = 2 * 3 * 3
    # output (0, 0) of channel 0 reads rows -1..0 and columns -1..0: padding but (0, 0)
    np.testing.assert_array_equal(index[0:4, 0], [zero, zero, zero, 0])
    # output (1, 1) of channel 1 reads rows 1..2, columns 1..2 of the second plane
    np.testing.assert_array_equal(index[4:8, 3], [9 + 4, 9 + 5, 9 + 7, 9 + 8])
    again = convolution_small_image.window_index((2, 3, 3), (2, 2), (2, 2), (2, 2), (1, 1),
                                                 ((1, 0), (1, 0)))
    assert again is index and not index.flags.writeable
