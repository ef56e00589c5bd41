"""A convolution's im2col columns built by the compiled kernel straight from the unpadded input
(csrc/columns_bindings.h, native_pooling.columns, im2col.columns_of) against a direct loop
written here from the definition: any kernel, stride, dilation, padding and groups, a batch in
C order, batch-last or strided, with and without the row of ones; the same bits
on any number of threads; the fallback for layouts it does not take; the binding's errors."""
import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

from autograd.backend import im2col, native, native_pooling

pytestmark = pytest.mark.skipif(not native.available(),
                                reason="the compiled kernels are not built in this install")


def reference_columns(x, kernel, stride, dilation, groups, pads_h, pads_w, ones_row):
    """cols[g, (c, i, j), (oh, ow, n)] = x[n, g * C/groups + c, oh * sh + i * dh - top,
    ow * sw + j * dw - left], 0 outside x; then a row of ones per group where asked."""
    n, c, h, w = x.shape
    kh, kw = kernel
    out_h = (h + sum(pads_h) - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    out_w = (w + sum(pads_w) - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    per_group = c // groups
    cols = np.zeros((groups, per_group * kh * kw + ones_row, out_h, out_w, n), x.dtype)
    for g in range(groups):
        for cc in range(per_group):
            for i in range(kh):
                for j in range(kw):
                    for oh in range(out_h):
                        for ow in range(out_w):
                            row = oh * stride[0] + i * dilation[0] - pads_h[0]
                            column = ow * stride[1] + j * dilation[1] - pads_w[0]
                            if 0 <= row < h and 0 <= column < w:
                                cols[g, (cc * kh + i) * kw + j, oh, ow] = \
                                    x[:, g * per_group + cc, row, column]
        if ones_row:
            cols[g, -1] = 1
    return cols.reshape(groups, cols.shape[1], -1), (out_h, out_w)


def _stored(x, layout):
    if layout == "batch last":
        return np.ascontiguousarray(x.transpose(1, 2, 3, 0)).transpose(3, 0, 1, 2)
    if layout == "strided":                         # every other column of a wider image
        wide = np.full(x.shape[:3] + (2 * x.shape[3],), np.nan, x.dtype)
        wide[..., ::2] = x
        return wide[..., ::2]
    return x


def draw_windows(data):
    """(kernel, stride, dilation, pads_h, pads_w) drawn for a small image: 1-3, 1-3, 1-2 and
    0-2 on each side."""
    def pair(low, high):
        return data.draw(st.integers(low, high)), data.draw(st.integers(low, high))
    return pair(1, 3), pair(1, 3), pair(1, 2), pair(0, 2), pair(0, 2)


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_columns_match_the_definition(data):
    groups = data.draw(st.sampled_from([1, 2, 3]))
    n = data.draw(st.integers(1, 3))
    c = groups * data.draw(st.integers(1, 3))
    h, w = data.draw(st.integers(1, 8)), data.draw(st.integers(1, 8))
    kernel, stride, dilation, pads_h, pads_w = draw_windows(data)
    ones_row = data.draw(st.booleans())
    layout = data.draw(st.sampled_from(["plain", "batch last", "strided"]))
    assume(h + sum(pads_h) > dilation[0] * (kernel[0] - 1)
           and w + sum(pads_w) > dilation[1] * (kernel[1] - 1))      # an output at least
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16)))
    x = _stored(rng.standard_normal((n, c, h, w)).astype(np.float32), layout)
    expected, out_size = reference_columns(x, kernel, stride, dilation, groups, pads_h, pads_w,
                                           ones_row)
    assert native_pooling.takes_images(x)
    cols = im2col.columns_of(x, kernel, out_size, stride, dilation, groups, pads_h, pads_w,
                             ones_row)
    assert np.array_equal(cols, expected)


def test_images_apart_whose_pixel_step_equals_the_batch_are_not_copied_as_one_block():
    """Two images, every other column of a wider array: a pixel steps 2 values, as a
    batch-last pair would, but the images are 2 values apart, not side by side."""
    x = _stored(np.random.default_rng(2).standard_normal((2, 1, 1, 3)).astype(np.float32),
                "strided")
    expected, out_size = reference_columns(x, (1, 1), (1, 1), (1, 1), 1, (0, 0), (0, 0), False)
    cols = im2col.columns_of(x, (1, 1), out_size, (1, 1), (1, 1), 1, (0, 0), (0, 0))
    assert np.array_equal(cols, expected)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_columns_split_over_the_threads_give_the_same_bits(threads):
    """Rows enough for every thread a part (48 rows of 8 * 28 * 28 values)."""
    rng = np.random.default_rng(threads)
    x = _stored(rng.standard_normal((8, 12, 30, 30)).astype(np.float32), "batch last")
    expected, out_size = reference_columns(x, (2, 2), (1, 1), (1, 1), 1, (0, 0), (0, 0), False)
    cols = np.full(expected.shape, np.nan, np.float32)
    native._native.columns(x, cols, 2, 2, 1, 1, 1, 1, 0, 0, *out_size, 1, threads)
    assert np.array_equal(cols, expected)


def test_what_the_kernel_does_not_take_gets_the_padded_copy_and_the_same_columns():
    x = np.random.default_rng(1).standard_normal((2, 4, 5, 6))       # float64
    assert not native_pooling.takes_images(x)
    expected, out_size = reference_columns(x, (3, 3), (1, 2), (1, 1), 2, (1, 1), (0, 2), True)
    assert np.array_equal(im2col.columns_of(x, (3, 3), out_size, (1, 2), (1, 1), 2, (1, 1),
                                            (0, 2), True), expected)


def test_the_binding_names_what_it_expected():
    x = np.zeros((1, 4, 5, 5), np.float32)
    cols = np.zeros((1, 36, 25), np.float32)
    with pytest.raises(ValueError, match="columns: expected positive kernel"):
        native._native.columns(x, cols, 0, 3, 1, 1, 1, 1, 1, 1, 5, 5, 1, 1)
    with pytest.raises(ValueError, match="columns: expected positive kernel"):
        native._native.columns(x, cols, 3, 3, 1, 1, 1, 1, -1, 1, 5, 5, 1, 1)
    with pytest.raises(ValueError, match="channels in whole groups"):
        native._native.columns(x, cols, 3, 3, 1, 1, 1, 1, 1, 1, 5, 5, 3, 1)
    with pytest.raises(ValueError, match=r"cols as a C-contiguous float32 array of shape "
                                         r"\(1, 36 or more, 25\)"):
        native._native.columns(x, np.zeros((1, 35, 25), np.float32), 3, 3, 1, 1, 1, 1, 1, 1,
                               5, 5, 1, 1)
    with pytest.raises(ValueError, match="expected x as a 4-D float32 array"):
        native._native.columns(x.astype(np.float64), cols, 3, 3, 1, 1, 1, 1, 1, 1, 5, 5, 1, 1)


@pytest.mark.parametrize("groups", [1, 2])
@pytest.mark.parametrize("layout", ["plain", "batch last"])
def test_offset_major_rows_are_the_same_rows_ordered_by_kernel_offset_first(layout, groups):
    """Winograd's input tiles: 6x6 windows of stride 4, each group's rows (i, j, c) instead of
    (c, i, j)."""
    x = _stored(np.random.default_rng(3).standard_normal((2, 6, 9, 7)).astype(np.float32),
                layout)
    expected, out_size = reference_columns(x, (6, 6), (4, 4), (1, 1), groups, (1, 4), (1, 4),
                                           False)
    per_group = 6 // groups
    by_offset = expected.reshape(groups, per_group, 36, -1).transpose(0, 2, 1, 3).reshape(
        groups, 36 * per_group, -1)
    cols = np.full(by_offset.shape, np.nan, np.float32)
    native_pooling.columns(x, cols, (6, 6), out_size, (4, 4), (1, 1), groups, 1, 1,
                           offset_major=True)
    assert np.array_equal(cols, by_offset)
