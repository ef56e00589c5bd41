"""A convolution's inference forward by shifted products (csrc/kernel_convolution.h,
convolution_bindings.h, native_convolution.shifted_forward), against the definition summed in
float64: any kernel, stride, dilation and padding, x in any layout, output channels across the
tile's rows, the bias and ReLU fused, NaN kept; y written as rows of a larger block and nothing
around it; each build of the kernels, one thread or three; convolution.inference_forward
through it equals the columns path; the rule that picks it; the binding's errors name the
kernel and the operand."""
import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

import autograd
from autograd.backend import convolution, convolution_shifted, native, native_convolution
from autograd.geometry import ConvGeometry
from autograd.operations import plan_cache
from tests.backend import native_helpers

pytestmark = pytest.mark.skipif(not native.available(),
                                reason="the compiled kernels are not built in this install")

LAYOUTS = {"plain": (0, 1, 2, 3), "batch last": (1, 2, 3, 0), "channels last": (0, 2, 3, 1)}


def laid_out(x, layout):
    axes = LAYOUTS[layout]
    return np.ascontiguousarray(x.transpose(axes)).transpose(np.argsort(axes))


def output_size(size, pads, kernel, stride, dilation):
    return (size + sum(pads) - (kernel - 1) * dilation - 1) // stride + 1


def reference(x, W, b, pads_h, pads_w, dilation, relu, stride=(1, 1)):
    """conv2d(x, W) + b, in float64, and |x| * |W| summed the same way (the scale of the
    float32 rounding); (N, O, OH, OW)."""
    kernel_h, kernel_w = W.shape[2:]
    padded = np.pad(x.astype(np.float64), ((0, 0), (0, 0), pads_h, pads_w))
    out_h = output_size(x.shape[2], pads_h, kernel_h, stride[0], dilation[0])
    out_w = output_size(x.shape[3], pads_w, kernel_w, stride[1], dilation[1])
    y = np.zeros((x.shape[0], W.shape[0], out_h, out_w))
    scale = np.zeros_like(y)
    for i in range(kernel_h):
        for j in range(kernel_w):
            window = padded[:, :, i * dilation[0]:, j * dilation[1]:][
                :, :, :stride[0] * (out_h - 1) + 1:stride[0],
                :stride[1] * (out_w - 1) + 1:stride[1]]
            y += np.einsum("nchw,oc->nohw", window, W[:, :, i, j].astype(np.float64))
            scale += np.einsum("nchw,oc->nohw", np.abs(window), np.abs(W[:, :, i, j]))
    if b is not None:
        y += b.reshape(1, -1, 1, 1)
        scale += np.abs(b).reshape(1, -1, 1, 1)
    return (np.maximum(y, 0) if relu else y), scale


def run(x, W, b, pads_h, pads_w, dilation, relu, rows_around=(0, 0), stride=(1, 1),
        columns=None):
    """y from the kernel as (N, O, OH, OW), written into rows of a larger NaN block (the rows
    around it returned to be checked); by the im2col columns or the shifted runs as
    ``columns`` says (None: as native_convolution.compact says)."""
    kernel_h, kernel_w = W.shape[2:]
    out_h = output_size(x.shape[2], pads_h, kernel_h, stride[0], dilation[0])
    out_w = output_size(x.shape[3], pads_w, kernel_w, stride[1], dilation[1])
    n, out_channels = x.shape[0], W.shape[0]
    block = np.full((rows_around[0] + out_channels + rows_around[1], out_h * out_w * n),
                    np.nan, np.float32)
    out = block[rows_around[0]:rows_around[0] + out_channels]
    scratch = None
    if columns is not None:          # the phases, and the columns where built
        phases = (x.shape[1] * stride[0] * stride[1] * n
                  * (out_h + (kernel_h - 1) * dilation[0] // stride[0])
                  * (out_w + (kernel_w - 1) * dilation[1] // stride[1]))
        size = phases + 32 + (x.shape[1] * kernel_h * kernel_w * out_h * out_w * n + 32
                              if columns else 0)
        scratch = (size, columns)
    assert native_convolution.shifted_forward(x, W, b, (out_h, out_w), stride, dilation,
                                              (pads_h, pads_w), relu, out, scratch)
    around = np.concatenate([block[:rows_around[0]], block[rows_around[0] + out_channels:]])
    return out.reshape(out_channels, out_h, out_w, n).transpose(3, 0, 1, 2), around


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_shifted_products_match_the_definition(data, instruction_set):
    n, c = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 5))
    h, w = data.draw(st.integers(1, 9)), data.draw(st.integers(1, 9))
    out_channels = data.draw(st.integers(1, 19))       # across the tiles' 8 and 1-row rows
    kernel = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    stride = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    dilation = data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2))
    pads_h = data.draw(st.integers(0, 2)), data.draw(st.integers(0, 2))
    pads_w = data.draw(st.integers(0, 2)), data.draw(st.integers(0, 2))
    assume(h + sum(pads_h) > dilation[0] * (kernel[0] - 1)
           and w + sum(pads_w) > dilation[1] * (kernel[1] - 1))      # an output at least
    layout = data.draw(st.sampled_from(sorted(LAYOUTS)))
    with_bias, relu = data.draw(st.booleans()), data.draw(st.booleans())
    threads = data.draw(st.sampled_from([1, 3]))
    rows_around = data.draw(st.integers(0, 2)), data.draw(st.integers(0, 2))
    columns = data.draw(st.sampled_from([None, True, False]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16)))
    x = laid_out(rng.standard_normal((n, c, h, w)).astype(np.float32), layout)
    W = rng.standard_normal((out_channels, c, *kernel)).astype(np.float32)
    b = rng.standard_normal(out_channels).astype(np.float32) if with_bias else None
    previous = autograd.get_num_threads(), native_convolution.MIN_WORK_PER_THREAD
    autograd.set_num_threads(threads)
    native_convolution.MIN_WORK_PER_THREAD = 1      # these small products split too
    try:
        y, around = run(x, W, b, pads_h, pads_w, dilation, relu, rows_around, stride, columns)
    finally:
        autograd.set_num_threads(previous[0])
        native_convolution.MIN_WORK_PER_THREAD = previous[1]
    expected, scale = reference(x, W, b, pads_h, pads_w, dilation, relu, stride)
    assert y.shape == expected.shape
    bound = 4 * W[0].size * 2.0 ** -24 * scale + 1e-30
    assert np.all(np.abs(y - expected) <= bound)          # every element written: no NaN
    assert np.isnan(around).all()                         # and nothing outside y


def test_a_nan_reaches_the_outputs_whose_windows_read_it_and_the_relu_keeps_it():
    x = np.ones((1, 2, 6, 7), np.float32)
    x[0, 1, 2, 3] = np.nan
    W = -np.ones((3, 2, 3, 3), np.float32)                # every finite output below 0
    y, _ = run(x, W, None, (1, 1), (1, 1), (1, 1), True)
    expected, _ = reference(x, W, None, (1, 1), (1, 1), (1, 1), True)
    assert np.array_equal(np.isnan(y), np.isnan(expected)) and np.isnan(y).sum() == 27
    assert np.all(y[~np.isnan(y)] == 0) and not np.signbit(y[~np.isnan(y)]).any()


def test_the_columns_path_and_the_shifted_products_agree_in_inference_forward(monkeypatch):
    """A SqueezeNet expand layer at batch 1 and 3 (batch-last), with a ReLU and a bias, into
    rows of a Concat's block, and a residual (added before the ReLU: not fused)."""
    rng = np.random.default_rng(0)
    geometry = ConvGeometry(3, padding=1)
    real_plan = convolution_shifted.plan_for
    calls = native_helpers.record_calls(monkeypatch, ("shifted_convolution",))
    W = rng.standard_normal((24, 16, 3, 3)).astype(np.float32) * 0.1
    b = rng.standard_normal(24).astype(np.float32)
    for n in (1, 3):
        x = laid_out(rng.standard_normal((n, 16, 13, 11)).astype(np.float32), "batch last")
        residual = rng.standard_normal((n, 24, 13, 11)).astype(np.float32)
        results = []
        for shifted in (True, False):
            monkeypatch.setattr(convolution_shifted, "plan_for",
                                real_plan if shifted else lambda *shapes: None)
            block = np.full((40, 13 * 11 * n), np.nan, np.float32)
            into_block = convolution.inference_forward(x, W, b, geometry, ((1, 1), (1, 1)),
                                                       relu=True, out=block[8:32])
            with_residual = convolution.inference_forward(
                x, W, b, geometry, ((1, 1), (1, 1)), relu=True, residual=residual)
            assert np.isnan(block[:8]).all() and np.isnan(block[32:]).all()
            assert len(calls) == (2 if shifted else 0)
            calls.clear()
            results.append((np.array(into_block), np.array(with_residual)))
        for shifted, columns in zip(*results):
            np.testing.assert_allclose(shifted, columns, rtol=1e-5, atol=1e-5)
        expected, _ = reference(x, W, b, (1, 1), (1, 1), (1, 1), False)
        np.testing.assert_allclose(results[0][1], np.maximum(expected + residual, 0),
                                   rtol=1e-5, atol=1e-5)


def test_what_the_kernel_does_not_take_goes_to_the_columns_path():
    x = np.ones((1, 2, 5, 5), np.float64)
    W = np.ones((3, 2, 3, 3), np.float64)
    out = np.empty((3, 25), np.float32)
    assert native_convolution.shifted_forward(x, W, None, (5, 5), (1, 1), (1, 1),
                                              ((1, 1), (1, 1)), False, out) is None
    y = convolution.inference_forward(x, W, None, ConvGeometry(3, padding=1),
                                      ((1, 1), (1, 1)))
    np.testing.assert_allclose(y, reference(x, W, None, (1, 1), (1, 1), (1, 1), False)[0])


def test_the_binding_names_itself_and_the_operand():
    call = native._native.shifted_convolution
    x = np.ones((1, 2, 5, 5), np.float32)
    W = np.ones((3, 2, 3, 3), np.float32)
    y = np.empty((3, 25), np.float32)
    size = native_convolution.padded_size(x.shape, W.shape, (5, 5), (1, 1), (1, 1))
    columns = native_convolution.compact(x.shape, W.shape, (5, 5), (1, 1), (1, 1))
    padded = np.empty(size, np.float32)
    good = [x, W, None, y, padded, 1, 1, 1, 1, 1, 1, 5, 5, False, 1, columns]
    call(*good)
    assert np.all(y[:, 6] == 18)                    # an inner pixel: 2 channels x 9 ones

    def changed(position, value):
        return good[:position] + [value] + good[position + 1:]
    cases = [
        (changed(1, W[:, :1]), "weights"),
        (changed(3, y[:, :24]), "y as a float32"),
        (changed(4, padded[:-1]), "padded as a"),
        (changed(7, -1), "non-negative pads"),
        (changed(5, 0), "positive kernel, stride"),
        (changed(2, np.ones(2, np.float32)), "bias of 3"),
        (changed(3, padded[:75].reshape(3, 25)), "must not overlap"),
        (changed(0, padded[:50].reshape(1, 2, 5, 5)), "must not overlap"),
        (changed(4, np.empty((2, size), np.float32)[:, :size - 1]), "padded"),
    ]
    for arguments, message in cases:
        with pytest.raises(ValueError, match="shifted_convolution: .*" + message):
            call(*arguments)


@pytest.mark.parametrize("n, channels, size, out_channels, kernel, stride, groups, taken", [
    (1, 16, 55, 64, 3, 1, 1, True),        # a SqueezeNet expand
    (1, 16, 55, 64, 3, 1, 2, False),       # groups
    (1, 16, 55, 64, 1, 1, 1, True),        # 1x1 at stride 1: its input read in place
    (1, 16, 56, 64, 1, 2, 1, False),       # ... not at a stride
    (8, 128, 55, 16, 1, 1, 1, False),      # 16 output channels, 12.4 MB of input
    (1, 128, 55, 16, 1, 1, 1, True),       # ... 1.5 MB, in the cache
    (1, 128, 65, 31, 1, 1, 1, False),      # 31 channels, 2.16 MB
    (1, 128, 65, 32, 1, 1, 1, True),       # 32
    (1, 3, 224, 64, 3, 2, 1, True),        # a stride: its phases
    (8, 64, 56, 64, 3, 1, 1, True),        # 0.15 MB of weights, cached: 271 reads
    (8, 256, 14, 256, 3, 1, 1, False),     # 2.4 MB read 56 times: 126 MiB
    (1, 455, 32, 64, 3, 1, 1, True),       # 1.048 MB, under 1 MiB: read 34 times
    (1, 456, 32, 64, 3, 1, 1, False),      # 1.051 MB, past it: 34 times, 34 MiB
    (1, 64, 30, 1024, 3, 1, 1, True),      # 2.4 MB once per block of 3 tiles: 10 reads
    (1, 64, 37, 1024, 3, 1, 1, False),     # ... 16 reads, 36 MiB
    (1, 512, 7, 512, 3, 1, 1, True),       # 9.4 MB of weights read twice
    (8, 512, 7, 512, 3, 1, 1, False),      # ... 16 times
    (1, 512, 8, 512, 3, 1, 1, True),       # 9.4 MB 3 times: 27 MiB
    (1, 512, 9, 512, 3, 1, 1, False),      # 4 times: 36 MiB, past 32
])
def test_the_rule_for_shifted_products(n, channels, size, out_channels, kernel, stride, groups,
                                       taken):
    x = np.empty((n, channels, size, size), np.float32)
    W = np.empty((out_channels, channels // groups, kernel, kernel), np.float32)
    geometry = ConvGeometry(kernel, stride=stride, padding=kernel // 2, groups=groups)
    pad = (kernel // 2,) * 2
    out_size = geometry.output_size((size, size), (pad, pad))
    assert convolution_shifted.rule(x.shape, W.shape, geometry, out_size) is taken


@pytest.mark.parametrize("n", [1, 8])
def test_a_forward_nothing_will_differentiate_takes_the_shifted_products(n, monkeypatch):
    """conv2d under no_grad (the digits CNN's second layer at batch 1 and 8): the compiled
    shifted products, the definition's values; with a gradient wanted, the columns path."""
    rng = np.random.default_rng(n)
    x = autograd.Tensor(data=rng.standard_normal((n, 32, 4, 4)).astype(np.float32))
    W = autograd.Tensor(data=rng.standard_normal((64, 32, 3, 3)).astype(np.float32),
                        stores_grad=True)
    b = autograd.Tensor(data=rng.standard_normal(64).astype(np.float32))
    calls = native_helpers.record_calls(monkeypatch, ("shifted_convolution",))
    expected, _ = reference(x.data, W.data, b.data, (1, 1), (1, 1), (1, 1), False)
    plan_cache.clear()
    with autograd.no_grad():
        y = autograd.conv2d(x, W, b, padding=1)       # forward, then its plan checked
        assert calls == ["shifted_convolution"] * 2
        np.testing.assert_allclose(y.data, expected, rtol=1e-4, atol=1e-4)
        calls.clear()
        y = autograd.conv2d(x, W, b, padding=1)       # the plan
    assert calls == ["shifted_convolution"]
    np.testing.assert_allclose(y.data, expected, rtol=1e-4, atol=1e-4)
    calls.clear()
    y = autograd.conv2d(x, W, b, padding=1)
    assert calls == [] and y.creator is not None
    np.testing.assert_allclose(y.data, expected, rtol=1e-4, atol=1e-4)


def test_where_winograd_applies_too_the_shifted_products_run(monkeypatch):
    """A wide 3x3 stride-1 layer (Winograd's), in an inference step and under no_grad: the
    shifted products first (0.75-1.0x Winograd's time, convolution_shifted.py)."""
    from autograd.backend import winograd
    rng = np.random.default_rng(2)
    x = rng.standard_normal((1, 64, 56, 56)).astype(np.float32)
    W = rng.standard_normal((64, 64, 3, 3)).astype(np.float32) * 0.05
    geometry, pads = ConvGeometry(3, padding=1), ((1, 1), (1, 1))
    assert winograd.applies(x, W, (1, 1), (1, 1), 1, (1, 1), (1, 1))
    calls = native_helpers.record_calls(monkeypatch, ("shifted_convolution",))
    expected, _ = reference(x, W, None, (1, 1), (1, 1), (1, 1), False)
    y = convolution.inference_forward(x, W, None, geometry, pads, relu=True)
    np.testing.assert_allclose(y, np.maximum(expected, 0), rtol=1e-4, atol=1e-4)
    y, _ = convolution.forward(x, W, None, geometry, pads, ())
    np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-4)
    assert calls == ["shifted_convolution"] * 2


@pytest.mark.parametrize("n, size, layout", [
    (1, 5, "plain"), (1, 8, "plain"), (3, 5, "batch last"), (4, 4, "batch last"),
    (2, 6, "channels last"), (1, 7, "sliced"), (2, 5, "every other column"),
    (1, 6, "cropped rows")])
def test_a_1x1_kernel_reads_its_input_in_place(n, size, layout, instruction_set):
    """Stride 1, unpadded: x read in place where its channels are dense planes (one image, a
    batch-last batch, a slice of its channels), the last tile's runs copied (flat lengths of
    25 to 64 values: a whole tile, or one past); copied first otherwise (channels last, rows
    apart, images apart)."""
    rng = np.random.default_rng(size)
    x = rng.standard_normal((n, 9, size, size)).astype(np.float32)
    if layout == "sliced":               # channels 2..7 of a C-order image: planes apart
        x = x[:, 2:8]
    elif layout == "cropped rows":       # rows 9 apart, 6 wide: copied
        wide = np.zeros((n, 9, size, size + 3), np.float32)
        wide[..., :size] = x
        x = wide[..., :size]
    elif layout == "every other column":  # a pixel step of 2 = N, the images apart: copied
        wide = np.zeros((n, 9, size, 2 * size), np.float32)
        wide[..., ::2] = x
        x = wide[..., ::2]
    elif layout != "plain":
        x = laid_out(x, layout)
    W = rng.standard_normal((11, x.shape[1], 1, 1)).astype(np.float32)
    b = rng.standard_normal(11).astype(np.float32)
    y, around = run(x, W, b, (0, 0), (0, 0), (1, 1), True, (1, 1))
    expected, scale = reference(x, W, b, (0, 0), (0, 0), (1, 1), True)
    assert np.all(np.abs(y - expected) <= 4 * x.shape[1] * 2.0 ** -24 * scale + 1e-30)
    assert np.isnan(around).all()


def test_y_over_x_itself_is_computed_from_a_copy():
    """A 1x1 convolution whose output (16 channels) overwrites its own input (4 channels, the
    first rows of the same memory): x is copied first rather than read in place while the
    first channel tile's rows are written over it."""
    rng = np.random.default_rng(3)
    memory = rng.standard_normal(16 * 64).astype(np.float32)
    x = memory[:4 * 64].reshape(1, 4, 8, 8)
    W = rng.standard_normal((16, 4, 1, 1)).astype(np.float32)
    expected, _ = reference(x.copy(), W, None, (0, 0), (0, 0), (1, 1), False)
    padded = np.empty(native_convolution.padded_size(x.shape, W.shape, (8, 8), (1, 1),
                                                     (1, 1)), np.float32)
    native._native.shifted_convolution(x, W, None, memory.reshape(16, 64), padded, 1, 1, 0,
                                       0, 1, 1, 8, 8, False, 1, False)
    np.testing.assert_allclose(memory.reshape(1, 16, 8, 8), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n, channels, out, taken", [
    (1, 3, (13, 13), True),      # 169 outputs: 5.5 tiles of 32, against 6.5 with 2 of 15 dropped
    (8, 3, (13, 13), True),      # 42.5 against 49: an eighth
    (1, 3, (14, 14), False),     # 196: 6.5 against 7
    (1, 3, (16, 14), True),      # 7 against 8: an eighth
    (1, 3, (16, 16), False),     # 8 against 9
    (4, 3, (4, 4), True),        # 2 against 3, 64 outputs
    (2, 3, (5, 5), True),        # 2 against 2.5, 50 outputs whose 5.4 KB of columns are small
    (2, 64, (5, 5), False),      # the same, but 115 KB of columns for under 64 outputs
    (1, 3, (4, 4), True),        # 0.5 against 1, 16 outputs, 1.7 KB of columns
    (1, 56, (4, 4), True),       # 32,256 bytes of columns: small still
    (1, 57, (4, 4), False),      # 32,832 bytes: not
    (8, 3, (27, 27), False),     # 182.5 against 196
])
def test_the_rule_for_building_the_columns(n, channels, out, taken):
    """3x3 kernels: each output row computes 2 columns more when the input is read at
    shifts; a last tile of 16 outputs or fewer costs half a tile. Under 64 outputs the columns
    are built only where they fit in CACHED_COLUMNS bytes."""
    assert native_convolution.compact((n, channels) + out, (4, channels, 3, 3), out, (1, 1),
                                      (1, 1)) is taken


@pytest.mark.parametrize("channels, out_channels, size", [
    (32, 64, 4),      # the digits CNN's second layer: small columns, one thread
    (3, 130, 4),      # small columns, over 128 output channels: two parts and more
    (64, 24, 6),      # 147 KB of columns: split as any product
])
def test_built_columns_give_the_same_bits_on_any_thread_count(channels, out_channels, size):
    """A built product is split over the threads by output channels where its columns are
    large or it has 128 output channels or more, else run on one thread: each output is one
    thread's sum in the same order either way, so the bits are the same at 1, 2 and 3 threads,
    and match the definition."""
    rng = np.random.default_rng(channels)
    x = rng.standard_normal((1, channels, size, size)).astype(np.float32)
    W = rng.standard_normal((out_channels, channels, 3, 3)).astype(np.float32)
    b = rng.standard_normal(out_channels).astype(np.float32)
    previous = autograd.get_num_threads(), native_convolution.MIN_WORK_PER_THREAD
    results = []
    native_convolution.MIN_WORK_PER_THREAD = 1
    try:
        for threads in (1, 2, 3):
            autograd.set_num_threads(threads)
            y, _ = run(x, W, b, (1, 1), (1, 1), (1, 1), False, columns=True)
            results.append(y)
    finally:
        autograd.set_num_threads(previous[0])
        native_convolution.MIN_WORK_PER_THREAD = previous[1]
    expected, scale = reference(x, W, b, (1, 1), (1, 1), (1, 1), False)
    assert np.all(np.abs(results[0] - expected) <= 4 * W[0].size * 2.0 ** -24 * scale)
    for y in results[1:]:
        assert y.tobytes() == results[0].tobytes()


@pytest.mark.parametrize("size, kernel, stride, dilation, n", [
    (9, 3, 1, 1, 1), (12, 3, 2, 1, 2), (11, 2, 3, 2, 1), (13, 3, 1, 1, 1), (8, 5, 2, 2, 3)])
def test_the_scratch_size_is_the_bindings_own(size, kernel, stride, dilation, n):
    """native_convolution.padded_size (the phases, and the columns where compact) is what the
    binding asks for: one value less is refused."""
    x = np.ones((n, 2, size, size), np.float32)
    W = np.ones((3, 2, kernel, kernel), np.float32)
    out = (size + 2 - dilation * (kernel - 1) - 1) // stride + 1
    y = np.empty((3, out * out * n), np.float32)
    arguments = ((out, out), (stride,) * 2, (dilation,) * 2, ((1, 1), (1, 1)), False, y)
    size_needed = native_convolution.padded_size(x.shape, W.shape, *arguments[:3])
    columns = native_convolution.compact(x.shape, W.shape, *arguments[:3])
    assert native_convolution.shifted_forward(x, W, None, *arguments, (size_needed, columns))
    with pytest.raises(ValueError, match="shifted_convolution: expected padded"):
        native_convolution.shifted_forward(x, W, None, *arguments, (size_needed - 1, columns))
