"""im2col.py where the full mutation run of autograd/backend/ found the suite blind
(docs/testing.md): padding with a value into a chosen layout, the axis the threads split,
the windows' strided view and the column matrix's exact order (row (c, i, j), column
(oh, ow, n)), with the bias's row of ones and groups. References: np.pad and explicit
indexing written here."""
import numpy as np
import pytest

from autograd.backend import im2col, threads
from autograd.backend.layout import BATCH_LAST, is_batch_last
from tests.layouts import stored_batch_last


PADS = [((1, 2), (0, 3)), ((0, 0), (2, 0)), ((3, 0), (0, 0)), ((0, 1), (1, 0))]


@pytest.mark.parametrize("pads_h, pads_w", PADS)
@pytest.mark.parametrize("x_batch_last", [False, True])
@pytest.mark.parametrize("axis_order", [None, (0, 1, 2, 3), BATCH_LAST])
def test_pad2d_matches_np_pad_in_the_layout_asked_for(thread_count, pads_h, pads_w,
                                                      x_batch_last, axis_order):
    """The border takes ``value``, the interior x; laid out as asked, else as x is."""
    x = np.random.default_rng(1).standard_normal((3, 5, 5, 6))      # N < C: either axis splits
    laid_out = stored_batch_last(x) if x_batch_last else x
    for _ in range(3):                  # a race between threads shows only sometimes
        padded = im2col.pad2d(laid_out, pads_h, pads_w, -7.5, axis_order)
        np.testing.assert_array_equal(padded, np.pad(x, ((0, 0), (0, 0), pads_h, pads_w),
                                                     constant_values=-7.5))
        wanted_batch_last = (axis_order == BATCH_LAST if axis_order is not None
                             else x_batch_last)
        assert is_batch_last(padded) == wanted_batch_last
        assert wanted_batch_last or padded.flags.c_contiguous


def test_pad2d_pads_with_zeros_by_default_and_returns_x_itself_unpadded():
    x = np.random.default_rng(2).standard_normal((2, 3, 4, 5))
    np.testing.assert_array_equal(im2col.pad2d(x, (1, 0), (0, 2)),
                                  np.pad(x, ((0, 0), (0, 0), (1, 0), (0, 2))))
    assert im2col.pad2d(x, (0, 0), (0, 0), 5.0) is x


def test_unpad2d_inverts_pad2d():
    x = np.random.default_rng(3).standard_normal((2, 3, 4, 5))
    for pads_h, pads_w in PADS:
        np.testing.assert_array_equal(
            im2col.unpad2d(im2col.pad2d(x, pads_h, pads_w, 1.0), pads_h, pads_w), x)


@pytest.mark.parametrize("shape, order, threads_count, axis", [
    ((4, 3, 5, 5), (0, 1, 2, 3), 3, 0),     # C order: the batch, outermost
    ((2, 3, 5, 5), (0, 1, 2, 3), 3, 1),     # too few images for 3 threads: the channels
    ((4, 3, 5, 5), BATCH_LAST, 3, 1),       # batch-last: the channels, outermost
    ((4, 2, 5, 5), BATCH_LAST, 3, 0),       # too few channels: the batch
    ((2, 2, 5, 5), (0, 1, 2, 3), 3, 0),     # neither long enough: the outermost
    ((2, 2, 5, 5), BATCH_LAST, 3, 1),
])
def test_split_image_axis_takes_the_outermost_of_batch_and_channels_with_a_part_each(
        monkeypatch, shape, order, threads_count, axis):
    monkeypatch.setattr(threads, "_num_threads", threads_count)
    assert im2col.split_image_axis(shape, order) == axis


@pytest.mark.parametrize("stride, dilation", [((1, 1), (1, 1)), ((2, 3), (1, 1)),
                                              ((1, 2), (3, 2)), ((3, 1), (2, 1))])
def test_window_view_and_offset_slice_read_the_documented_elements(stride, dilation):
    """Element [n, c, i, j, oh, ow] of the view, and offset (i, j)'s slice at (oh, ow), is
    padded[n, c, oh * stride + i * dilation, ow * stride + j * dilation]."""
    padded = np.random.default_rng(4).standard_normal((2, 3, 11, 12))
    kernel = (2, 3)
    out_size = tuple((padded.shape[2 + a] - dilation[a] * (kernel[a] - 1) - 1) // stride[a] + 1
                     for a in (0, 1))
    view = im2col.window_view(padded, kernel, out_size, stride, dilation)
    assert view.shape == (2, 3) + kernel + out_size
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            block = padded[im2col.offset_slice(i, j, *out_size, stride, dilation)]
            assert block.shape == (2, 3) + out_size
            for oh in range(out_size[0]):
                for ow in range(out_size[1]):
                    expected = padded[:, :, oh * stride[0] + i * dilation[0],
                                      ow * stride[1] + j * dilation[1]]
                    np.testing.assert_array_equal(view[:, :, i, j, oh, ow], expected)
                    np.testing.assert_array_equal(block[:, :, oh, ow], expected)


@pytest.mark.parametrize("groups", [1, 2])
@pytest.mark.parametrize("ones_row", [False, True])
@pytest.mark.parametrize("batch_last", [False, True])
def test_columns_are_rows_c_i_j_by_columns_oh_ow_n(thread_count, groups, ones_row, batch_last):
    rng = np.random.default_rng(5)
    padded = rng.standard_normal((3, 4, 7, 8))
    kernel, stride, dilation = (2, 3), (2, 1), (1, 2)
    out_size = (3, 4)
    laid_out = stored_batch_last(padded) if batch_last else padded
    for _ in range(3):
        cols = im2col.columns(laid_out, kernel, out_size, stride, dilation, groups, ones_row)
        per_group = 4 // groups
        rows = per_group * kernel[0] * kernel[1]
        assert cols.shape == (groups, rows + ones_row, out_size[0] * out_size[1] * 3)
        expected = np.empty((groups, rows, out_size[0], out_size[1], 3))
        for g in range(groups):
            for c in range(per_group):
                for i in range(kernel[0]):
                    for j in range(kernel[1]):
                        row = (c * kernel[0] + i) * kernel[1] + j
                        for oh in range(out_size[0]):
                            for ow in range(out_size[1]):
                                expected[g, row, oh, ow] = padded[
                                    :, g * per_group + c, oh * stride[0] + i * dilation[0],
                                    ow * stride[1] + j * dilation[1]]
        np.testing.assert_array_equal(cols[:, :rows], expected.reshape(groups, rows, -1))
        if ones_row:
            np.testing.assert_array_equal(cols[:, rows], 1.0)


def test_pad2d_of_a_view_with_no_dense_layout_comes_out_in_c_order():
    """Every other column of x (no axis order fits it): padded in C order, values as np.pad."""
    x = np.random.default_rng(6).standard_normal((2, 3, 5, 8))[:, :, :, ::2]
    padded = im2col.pad2d(x, (1, 0), (0, 2), 2.5)
    assert padded.flags.c_contiguous
    np.testing.assert_array_equal(padded, np.pad(x, ((0, 0), (0, 0), (1, 0), (0, 2)),
                                                 constant_values=2.5))
