"""The forward alone of one small image (convolution._forward_small_image: one copy into the
columns and one GEMM) against the direct sum over kernel offsets, on every geometry, layout and
dtype; and the rule that sends a forward there: one NumPy image, one group, nothing to
differentiate, at most SMALL_IMAGE_COLUMNS elements of columns."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from autograd.backend import convolution
from autograd.geometry import ConvGeometry
from tests.backend.test_convolution_mutants import direct_conv
from tests.layouts import stored_batch_last


@pytest.fixture
def small_calls(monkeypatch):
    """The shapes of x every call of _forward_small_image got, passed through."""
    calls = []
    real = convolution._forward_small_image

    def recorded(x, *args):
        calls.append(x.shape)
        return real(x, *args)
    monkeypatch.setattr(convolution, "_forward_small_image", recorded)
    return calls


def _stored(x, how):
    if how == "batch-last":
        return stored_batch_last(x)
    if how == "strided":                   # every other column of a wider image
        wide = np.zeros(x.shape[:3] + (2 * x.shape[3],), x.dtype)
        wide[..., ::2] = x
        return wide[..., ::2]
    return x


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
    assert convolution._small_single_image(x, W, geometry, pads)
    y, _ = convolution.forward(_stored(x, layout), W, b, geometry, pads, ())
    expected = direct_conv(x.astype(np.float64), W.astype(np.float64), b, stride, dilation,
                           pads, 1)
    assert y.shape == expected.shape and y.dtype == dtype
    tolerance = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(y, expected, rtol=tolerance, atol=tolerance)


def test_the_rule_sends_only_small_single_image_inference_there(small_calls):
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
    assert not run(small, W, needs=(False, True))                    # dW wanted
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
