"""convolution.py where the full mutation run of autograd/backend/ found the suite blind
(docs/testing.md): inference_forward's branches (the bias in the GEMM or after it, a 1x1 window
read in place, no bias, float32), its default, the rule that sends a forward alone to Winograd
at its 3/4 boundary, and the column path's gradients in shapes the property tests rarely draw.
Every result is checked against the direct sum over kernel offsets written here."""
from fractions import Fraction

import numpy as np
import pytest

from autograd.backend import convolution, winograd
from autograd.backend.layout import is_batch_last
from autograd.geometry import ConvGeometry
from tests.backend.spies import record_ones_rows, record_scratch_dtypes
from tests.layouts import stored_batch_last


def direct_conv(x, W, b, stride, dilation, pads, groups):
    """y[n, o] = sum over c in o's group and the kernel offsets (i, j) of W[o, c, i, j] times
    x padded with zeros, read at (oh * stride + i * dilation, ow * stride + j * dilation)."""
    (top, bottom), (left, right) = pads
    padded = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    out_channels, group_channels, kh, kw = W.shape
    out_h = (padded.shape[2] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    out_w = (padded.shape[3] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    y = np.zeros((x.shape[0], out_channels, out_h, out_w))
    per_group = out_channels // groups
    for o in range(out_channels):
        first = (o // per_group) * group_channels
        for i in range(kh):
            for j in range(kw):
                top_i, left_j = i * dilation[0], j * dilation[1]
                window = padded[:, first:first + group_channels,
                                top_i:top_i + stride[0] * (out_h - 1) + 1:stride[0],
                                left_j:left_j + stride[1] * (out_w - 1) + 1:stride[1]]
                y[:, o] += np.einsum("nchw,c->nhw", window, W[o, :, i, j])
    if b is not None:
        y += np.asarray(b, np.float64).reshape(1, -1, 1, 1)
    return y


def _inputs(seed, x_shape, w_shape, bias, dtype=np.float64):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(x_shape).astype(dtype)
    W = rng.standard_normal(w_shape).astype(dtype)
    b = rng.standard_normal(w_shape[0]).astype(dtype) if bias else None
    return x, W, b


# --- inference_forward ------------------------------------------------------------------------

def test_inference_forward_applies_no_relu_unless_asked():
    """relu defaults to False: the mutant `relu=True` clamps every negative output to 0."""
    x, W, b = _inputs(0, (2, 3, 6, 5), (4, 3, 3, 3), True)
    pads = ((1, 1), (1, 1))
    y = convolution.inference_forward(x, W, b, ConvGeometry(3, 1, 1), pads)
    expected = direct_conv(x, W, b, (1, 1), (1, 1), pads, 1)
    assert (expected < 0).any()
    np.testing.assert_allclose(y, expected, atol=1e-10)


# (x shape, W shape, stride, groups, pads): each is checked with and without a bias, with and
# without relu. "large" outputs make 16 * (W.size + O) <= O * OH * OW * N hold, the rule that
# puts the bias in the GEMM of a non-pointwise window.
INFERENCE_CASES = {
    "pointwise, large": ((4, 6, 16, 16), (6, 6, 1, 1), (1, 1), 1, ((0, 0), (0, 0))),
    "pointwise, groups, padded": ((4, 6, 14, 14), (4, 3, 1, 1), (1, 1), 2, ((1, 0), (0, 2))),
    "3x3, large": ((4, 3, 16, 16), (4, 3, 3, 3), (1, 1), 1, ((1, 1), (1, 1))),
    "3x3, small": ((1, 3, 5, 4), (4, 3, 3, 3), (1, 1), 1, ((1, 1), (0, 1))),
    "1x1 with a stride": ((2, 4, 9, 9), (6, 2, 1, 1), (2, 2), 2, ((0, 0), (0, 0))),
}


@pytest.mark.parametrize("case", sorted(INFERENCE_CASES))
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("batch_last", [False, True])
def test_inference_forward_every_branch_matches_the_direct_sum(case, bias, relu, batch_last):
    """The bias in the GEMM or added after it, a 1x1 window read in place (its columns are
    the input itself: a bias row there would not fit), no bias at all: each branch's result."""
    x_shape, w_shape, stride, groups, pads = INFERENCE_CASES[case]
    x, W, b = _inputs(1, x_shape, w_shape, bias)
    geometry = ConvGeometry(w_shape[2:], stride, 0, 1, groups)
    laid_out = stored_batch_last(x) if batch_last else x
    y = convolution.inference_forward(laid_out, W, b, geometry, pads, relu)
    expected = direct_conv(x, W, b, stride, (1, 1), pads, groups)
    if relu:
        expected = np.maximum(expected, 0)
    assert y.shape == expected.shape and is_batch_last(y)
    np.testing.assert_allclose(y, expected, atol=1e-10)


@pytest.mark.parametrize("case", ["pointwise, large", "3x3, large", "3x3, small"])
def test_inference_forward_in_float32_stays_float32(case):
    """The output buffer takes x's dtype (a float64 buffer would return float64)."""
    x_shape, w_shape, stride, groups, pads = INFERENCE_CASES[case]
    x, W, b = _inputs(2, x_shape, w_shape, True, np.float32)
    geometry = ConvGeometry(w_shape[2:], stride, 0, 1, groups)
    y = convolution.inference_forward(x, W, b, geometry, pads, True)
    assert y.dtype == np.float32
    expected = np.maximum(direct_conv(x.astype(np.float64), W.astype(np.float64), b, stride,
                                      (1, 1), pads, groups), 0)
    np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("relu", [False, True])
def test_inference_forward_into_rows_of_a_larger_buffer_with_a_residual(relu):
    """``out`` given on the column path: y lands in those rows, batch-last, and nothing else
    of the buffer is written; the residual is added before the ReLU."""
    x, W, b = _inputs(3, (3, 4, 7, 6), (5, 4, 3, 3), True)
    pads = ((1, 1), (1, 1))
    residual = np.random.default_rng(4).standard_normal((3, 5, 7, 6))
    buffer = np.full((9, 7 * 6 * 3), np.nan)
    y = convolution.inference_forward(x, W, b, ConvGeometry(3, 1, 1), pads, relu,
                                      buffer[2:7], stored_batch_last(residual))
    expected = direct_conv(x, W, b, (1, 1), (1, 1), pads, 1) + residual
    if relu:
        expected = np.maximum(expected, 0)
    np.testing.assert_allclose(y, expected, atol=1e-10)
    np.testing.assert_array_equal(buffer[2:7].reshape(5, 7, 6, 3), y.transpose(1, 2, 3, 0))
    assert np.isnan(buffer[:2]).all() and np.isnan(buffer[7:]).all()


def _spy_on_winograd(monkeypatch):
    calls = []
    original = winograd.forward

    def spy(*args, **kwargs):
        calls.append(args[0].shape)
        return original(*args, **kwargs)
    monkeypatch.setattr(winograd, "forward", spy)
    return calls


def test_inference_forward_takes_winograd_where_the_rule_says(monkeypatch):
    """A wide 3x3 layer whose tiles cover the whole output goes through winograd.forward (the
    faster path, benchmarks/NOTES.md); 13x13 images (tiles cover 169/256) do not."""
    calls = _spy_on_winograd(monkeypatch)
    x, W, b = _inputs(5, (8, 48, 16, 16), (48, 48, 3, 3), True)
    pads = ((1, 1), (1, 1))
    y = convolution.inference_forward(x, W, b, ConvGeometry(3, 1, 1), pads, True)
    assert calls == [x.shape]
    np.testing.assert_allclose(y, np.maximum(direct_conv(x, W, b, (1, 1), (1, 1), pads, 1), 0),
                               atol=1e-9)
    x13 = np.zeros((8, 48, 13, 13))
    convolution.inference_forward(x13, W, b, ConvGeometry(3, 1, 1), pads)
    assert calls == [x.shape]


def _covers_three_quarters(out_h, out_w):
    """The rule's reference: the output covers at least 3/4 of its 4x4 tiles."""
    tiles = -(-out_h // 4) * -(-out_w // 4)
    return Fraction(out_h * out_w, 16 * tiles) >= Fraction(3, 4)


def test_winograd_for_inference_follows_the_three_quarter_rule_exactly():
    """Every size 3..20 per axis, with pads that differ between the axes and between before
    and after: Winograd exactly where 4 * OH * OW >= 3 * 16 * tiles (e.g. 12x3 outputs: 36 of 48
    tiled pixels, exactly 3/4, taken; 14x14: 196/256 taken; 13x13: 169/256 not)."""
    W = np.broadcast_to(np.float32(0), (48, 48, 3, 3))
    geometry = ConvGeometry(3, 1, 1)
    disagreements = []
    for pads in (((1, 1), (1, 1)), ((0, 0), (2, 1)), ((2, 1), (0, 0)), ((0, 1), (1, 2))):
        for h in range(3, 21):
            for w in range(3, 21):
                x = np.broadcast_to(np.float32(0), (128, 48, h, w))
                assert winograd.applies(x, W, (1, 1), (1, 1), 1, *pads)
                out_h, out_w = h + sum(pads[0]) - 2, w + sum(pads[1]) - 2
                expected = _covers_three_quarters(out_h, out_w)
                if convolution._winograd_for_inference(x, W, geometry, pads) != expected:
                    disagreements.append((pads, h, w))
    assert disagreements == []
    assert _covers_three_quarters(12, 3) and _covers_three_quarters(14, 14)
    assert not _covers_three_quarters(13, 13)


def test_winograd_for_inference_is_false_where_winograd_does_not_apply():
    W = np.broadcast_to(np.float32(0), (48, 48, 3, 3))
    x = np.broadcast_to(np.float32(0), (128, 48, 16, 16))
    pads = ((1, 1), (1, 1))
    assert convolution._winograd_for_inference(x, W, ConvGeometry(3, 1, 1), pads)
    assert not convolution._winograd_for_inference(x, W, ConvGeometry(3, 2, 1), pads)
    narrow = np.broadcast_to(np.float32(0), (8, 48, 3, 3))
    assert not convolution._winograd_for_inference(x, narrow, ConvGeometry(3, 1, 1), pads)


@pytest.mark.parametrize("x_shape, expected", [
    ((1, 2, 16, 19), True),      # 16 * (72 + 4) = 1216 = 4 * 16 * 19 * 1: exactly at the rule
    ((3, 2, 1, 101), False),     # 4 * 1 * 101 * 3 = 1212 < 1216
    ((2, 2, 16, 19), True),
    ((1, 2, 152, 2), True),      # 4 * 152 * 2 = 1216 again: a tall thin output
    ((1, 2, 3, 3), False),
])
def test_the_bias_rides_in_the_gemm_exactly_where_the_rule_says(monkeypatch, x_shape, expected):
    """16 * (W.size + O) <= O * OH * OW * N (the copy of W with b costs less than a pass
    over y), for a 3x3 window of 4 outputs padded by 1; the result either way is the sum."""
    asked = record_ones_rows(monkeypatch)
    x, W, b = _inputs(6, x_shape, (4, 2, 3, 3), True)
    pads = ((1, 1), (1, 1))
    y = convolution.inference_forward(x, W, b, ConvGeometry(3, 1, 1), pads)
    assert asked == [expected]
    np.testing.assert_allclose(y, direct_conv(x, W, b, (1, 1), (1, 1), pads, 1), atol=1e-10)


def test_a_forward_alone_keeps_nothing_for_a_backward(monkeypatch):
    """needs=(): neither the transformed tiles nor the transformed kernel is kept (Winograd),
    nor the columns or W (the column path); y is the convolution either way."""
    monkeypatch.setattr(winograd, "MIN_CHANNELS", 1)
    monkeypatch.setattr(winograd, "MIN_TILES", 1)
    x, W, b = _inputs(7, (2, 3, 8, 8), (4, 3, 3, 3), True)
    pads = ((1, 1), (1, 1))
    for geometry, is_winograd in ((ConvGeometry(3, 1, 1), True), (ConvGeometry(3, 2, 1), False)):
        y, context = convolution.forward(x, W, b, geometry, pads, ())
        assert context.winograd == is_winograd
        if is_winograd:
            assert context.saved == (None, None)
        else:
            assert not hasattr(context, "saved") or context.saved == (None, None)
        np.testing.assert_allclose(y, direct_conv(x, W, b, geometry.stride, (1, 1), pads, 1),
                                   atol=1e-10)


@pytest.mark.parametrize("case", ["3x3, large", "3x3, small", "pointwise, large"])
def test_a_float64_bias_of_a_float32_layer_is_cast_first(case):
    """b is cast to the layer's dtype before it meets the float32 GEMM (in it, or added
    after): the same bits as passing b in float32 (a float64 b left uncast makes the GEMM or
    the addition float64 and rounds differently)."""
    x_shape, w_shape, stride, groups, pads = INFERENCE_CASES[case]
    x, W, b = _inputs(8, x_shape, w_shape, True, np.float32)
    b64 = b.astype(np.float64) + np.random.default_rng(9).uniform(-1e-3, 1e-3, b.shape)
    geometry = ConvGeometry(w_shape[2:], stride, 0, 1, groups)
    y = convolution.inference_forward(x, W, b64, geometry, pads)
    y_cast = convolution.inference_forward(x, W, b64.astype(np.float32), geometry, pads).copy()
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y, y_cast)


# --- forward and backward on the column path ------------------------------------------------

def direct_gradients(x, W, dy, stride, dilation, pads, groups):
    """dx, dW, db of y = conv(x, W) + b: for each output channel o and offset (i, j), dW takes
    the sum of dy[:, o] times the inputs it read, and dx gets dy[:, o] * W[o, :, i, j] back
    at those inputs."""
    (top, bottom), (left, right) = pads
    padded = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    dpadded = np.zeros(padded.shape)
    out_channels, group_channels, kh, kw = W.shape
    out_h, out_w = dy.shape[2:]
    dW = np.zeros(W.shape)
    per_group = out_channels // groups
    for o in range(out_channels):
        first = (o // per_group) * group_channels
        for i in range(kh):
            for j in range(kw):
                rows = slice(i * dilation[0], i * dilation[0] + stride[0] * (out_h - 1) + 1,
                             stride[0])
                cols = slice(j * dilation[1], j * dilation[1] + stride[1] * (out_w - 1) + 1,
                             stride[1])
                window = padded[:, first:first + group_channels, rows, cols]
                dW[o, :, i, j] = np.einsum("nhw,nchw->c", dy[:, o], window)
                dpadded[:, first:first + group_channels, rows, cols] += np.einsum(
                    "nhw,c->nchw", dy[:, o], W[o, :, i, j])
    dx = dpadded[:, :, top:top + x.shape[2], left:left + x.shape[3]]
    return dx, dW, dy.sum(axis=(0, 2, 3))


# name: (x shape, W shape, stride, dilation, groups, pads, dx by convolution (else col2im))
COLUMN_CASES = {
    "O == C, stride 1": ((2, 4, 7, 6), (4, 4, 3, 3), (1, 1), (1, 1), 1, ((1, 1), (1, 1)), True),
    "O > C, stride 1": ((2, 3, 7, 6), (4, 3, 3, 3), (1, 1), (1, 1), 1, ((1, 1), (1, 1)), False),
    "stride (2, 1)": ((2, 4, 9, 6), (3, 4, 3, 3), (2, 1), (1, 1), 1, ((1, 1), (1, 1)), False),
    "stride (1, 2)": ((2, 4, 6, 9), (3, 4, 3, 3), (1, 2), (1, 1), 1, ((1, 1), (1, 1)), False),
    "pad at the span": ((2, 4, 6, 7), (2, 4, 2, 3), (1, 1), (1, 1), 1, ((1, 1), (2, 2)), True),
    "pad past the span, rows": ((2, 4, 5, 6), (2, 4, 2, 3), (1, 1), (1, 1), 1,
                                ((2, 0), (0, 0)), False),
    "pad past the span, after": ((2, 4, 5, 6), (2, 4, 3, 2), (1, 1), (1, 1), 1,
                                 ((0, 0), (0, 2)), False),
    "dilated": ((2, 3, 9, 8), (3, 3, 3, 2), (1, 1), (2, 3), 1, ((2, 4), (3, 0)), True),
    "groups, O == C": ((2, 4, 6, 6), (4, 2, 3, 3), (1, 1), (1, 1), 2, ((1, 0), (0, 2)), True),
    "groups, O > C": ((2, 4, 6, 6), (6, 2, 3, 3), (1, 1), (1, 1), 2, ((1, 0), (0, 2)), False),
    "groups, strided": ((3, 6, 8, 7), (6, 2, 2, 3), (2, 2), (1, 2), 3, ((0, 1), (2, 1)), False),
    "1x1": ((3, 4, 5, 4), (5, 4, 1, 1), (1, 1), (1, 1), 1, ((0, 0), (0, 0)), False),
}
NEEDS = [(True, True, True), (True, True), (True, False, True), (False, True, True),
         (False, False, True), (True, False), (False, True)]


def _run_column_case(name, needs, batch_last, seed=20):
    x_shape, w_shape, stride, dilation, groups, pads, _ = COLUMN_CASES[name]
    x, W, b = _inputs(seed, x_shape, w_shape, len(needs) == 3)
    geometry = ConvGeometry(w_shape[2:], stride, 0, dilation, groups)
    layout = stored_batch_last if batch_last else (lambda array: array)
    y, context = convolution.forward(layout(x), W, b, geometry, pads, needs)
    assert not context.winograd
    np.testing.assert_allclose(y, direct_conv(x, W, b, stride, dilation, pads, groups),
                               atol=1e-10)
    dy = np.random.default_rng(seed + 1).standard_normal(y.shape)
    gradients = convolution.backward(context, layout(dy), needs)
    expected = direct_gradients(x, W, dy, stride, dilation, pads, groups)
    for got, wanted, want in zip(gradients, needs + (False,) * (3 - len(needs)), expected):
        if wanted:
            assert got.shape == want.shape
            np.testing.assert_allclose(got, want, atol=1e-10)
        else:
            assert got is None
    return y, gradients


@pytest.mark.parametrize("name", sorted(COLUMN_CASES))
@pytest.mark.parametrize("needs", NEEDS)
@pytest.mark.parametrize("batch_last", [False, True])
def test_column_path_gradients_match_the_direct_sums(name, needs, batch_last):
    """Every wanted gradient (dx by convolution or by col2im, dW from the GEMM, db from the
    bias row of the GEMM or summed from dy in either layout) and None for the others."""
    _run_column_case(name, needs, batch_last)


@pytest.mark.parametrize("name", sorted(COLUMN_CASES))
def test_dx_is_a_convolution_of_dy_exactly_where_the_rule_says(monkeypatch, name):
    """Stride 1, no more outputs than inputs (per group) and no pad past the kernel's span:
    dx by the convolution of dy; otherwise by col2im (benchmarks/NOTES.md)."""
    taken = []
    for path in ("_input_gradient_by_convolution", "_input_gradient_by_col2im"):
        original = getattr(convolution, path)
        monkeypatch.setattr(convolution, path, lambda *args, _path=path, _original=original: (
            taken.append(_path), _original(*args))[1])
    _run_column_case(name, (True, True), False)
    by_convolution = COLUMN_CASES[name][-1]
    assert taken == ["_input_gradient_by_convolution" if by_convolution
                     else "_input_gradient_by_col2im"]


@pytest.mark.parametrize("name", sorted(COLUMN_CASES))
@pytest.mark.parametrize("batch_last", [False, True])
def test_column_path_split_over_three_threads(forced_threads, name, batch_last):
    """Padding, the columns' copy, col2im's adds and the bias pass, each thread on its own
    part: the same results, repeated (a race shows only sometimes)."""
    for seed in (30, 31, 32):
        _run_column_case(name, (True, True, True), batch_last, seed)
        _run_column_case(name, (True, True), batch_last, seed)


@pytest.mark.parametrize("winograd_path", [False, True])
def test_a_float32_convolution_takes_only_float32_scratch(monkeypatch, winograd_path):
    """Padding, columns, GEMM outputs, dcolumns and dx of a float32 layer are float32 buffers:
    a float64 one doubles their memory and returns float64 or rounds differently."""
    if winograd_path:
        monkeypatch.setattr(winograd, "MIN_CHANNELS", 1)
        monkeypatch.setattr(winograd, "MIN_TILES", 1)
    asked = record_scratch_dtypes(monkeypatch)
    for name in ("O == C, stride 1", "O > C, stride 1", "stride (2, 1)"):
        x_shape, w_shape, stride, dilation, groups, pads, _ = COLUMN_CASES[name]
        x, W, b = _inputs(40, x_shape, w_shape, True, np.float32)
        geometry = ConvGeometry(w_shape[2:], stride, 0, dilation, groups)
        for needs in ((), (True, True, True)):
            y, context = convolution.forward(x, W, b, geometry, pads, needs)
            assert y.dtype == np.float32
            np.testing.assert_allclose(y, direct_conv(x, W, b, stride, dilation, pads, groups),
                                       rtol=1e-4, atol=1e-4)
        dy = np.random.default_rng(41).standard_normal(y.shape).astype(np.float32)
        dx, dW, db = convolution.backward(context, stored_batch_last(dy), (True, True, True))
        assert dx.dtype == dW.dtype == db.dtype == np.float32
        for got, want in zip((dx, dW, db), direct_gradients(x, W, dy, stride, dilation, pads,
                                                             groups)):
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    assert asked and set(asked) == {np.dtype(np.float32)}


@pytest.mark.parametrize("needs", [(True, False), (False, True), (True, False, True),
                                   (False, True, True)])
def test_the_column_path_keeps_only_what_the_wanted_gradients_read(needs):
    """dW reads the columns, dx reads W: each is kept only for its gradient (the columns are
    the largest array of the layer)."""
    x, W, b = _inputs(50, (2, 3, 6, 6), (4, 3, 3, 3), len(needs) == 3)
    y, context = convolution.forward(x, W, b, ConvGeometry(3, 2, 1), ((1, 1), (1, 1)), needs)
    cols, kept_W = context.saved
    assert (cols is not None) == needs[1] and (kept_W is not None) == needs[0]


def test_a_forward_alone_adds_the_bias_after_the_gemm(monkeypatch):
    """needs=(): no row of ones under the columns (W is not copied with b into every call);
    y is the convolution plus b."""
    asked = record_ones_rows(monkeypatch)
    x, W, b = _inputs(51, (2, 3, 6, 6), (4, 3, 3, 3), True)
    geometry, pads = ConvGeometry(3, 2, 1), ((1, 1), (1, 1))
    y, _ = convolution.forward(x, W, b, geometry, pads, ())
    np.testing.assert_allclose(y, direct_conv(x, W, b, (2, 2), (1, 1), pads, 1), atol=1e-10)
    convolution.forward(x, W, b, geometry, pads, (False, True, True))
    assert asked == [False, True]


def test_a_forward_alone_casts_a_float64_bias_to_the_float32_layer_first():
    """The bias added after the GEMM is cast to x's dtype first: the same bits as a float32 b."""
    x, W, b = _inputs(52, (2, 3, 6, 6), (4, 3, 3, 3), True, np.float32)
    b64 = b.astype(np.float64) + np.random.default_rng(53).uniform(-1e-3, 1e-3, b.shape)
    geometry, pads = ConvGeometry(3, 2, 1), ((1, 1), (1, 1))
    y, _ = convolution.forward(x, W, b64, geometry, pads, ())
    y_cast = convolution.forward(x, W, b64.astype(np.float32), geometry, pads, ())[0].copy()
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y, y_cast)
