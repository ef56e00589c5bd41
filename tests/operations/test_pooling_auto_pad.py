"""max_pool2d / avg_pool2d with SINGA's pad_mode (ONNX auto_pad), against a NumPy loop over
explicitly padded windows (forward and backward), and gradcheck; SINGA's globalaveragepool in
both data formats (OpCases)."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import autograd
from autograd import Tensor
from autograd.operations import pooling
from tests.opcase import OpCase, check_case, floats


def reference(x, kernel, stride, mode, largest, count_include_pad, dy=None):
    """y of the pooling; with ``dy``, the gradient of sum(y * dy) with respect to the padded
    input, cropped to x (the pad entries' gradient dropped): each window's dy goes to its first
    maximum (max) or is spread over it divided by its count (avg)."""
    n, c, h, w = x.shape
    pads, outs = [], []
    for size, k, s in zip((h, w), kernel, stride):
        if mode == "VALID":
            pads.append((0, 0))
            outs.append((size - k) // s + 1)
            continue
        out = -(-size // s)
        total = max((out - 1) * s + k - size, 0)
        small, large = total // 2, total - total // 2
        pads.append((large, small) if mode == "SAME_LOWER" else (small, large))
        outs.append(out)
    fill = -np.inf if largest else 0.0
    padded = np.pad(x, ((0, 0), (0, 0), pads[0], pads[1]), constant_values=fill)
    inside = np.pad(np.ones((h, w)), (pads[0], pads[1]))
    y = np.empty((n, c, outs[0], outs[1]))
    dpadded = np.zeros(padded.shape)
    for i in range(outs[0]):
        for j in range(outs[1]):
            rows = slice(i * stride[0], i * stride[0] + kernel[0])
            cols = slice(j * stride[1], j * stride[1] + kernel[1])
            window = padded[:, :, rows, cols]
            if largest:
                y[:, :, i, j] = window.max(axis=(2, 3))
                for a in range(n):
                    for b in range(c):
                        r, s = np.unravel_index(np.argmax(window[a, b]), window.shape[2:])
                        if dy is not None:
                            dpadded[a, b, rows.start + r, cols.start + s] += dy[a, b, i, j]
            else:
                count = kernel[0] * kernel[1] if count_include_pad else inside[rows, cols].sum()
                y[:, :, i, j] = window.sum(axis=(2, 3)) / count
                if dy is not None:
                    dpadded[:, :, rows, cols] += dy[:, :, i, j, None, None] / count
    if dy is None:
        return y
    return y, dpadded[:, :, pads[0][0]:pads[0][0] + h, pads[1][0]:pads[1][0] + w]


@pytest.mark.parametrize("mode", ["VALID", "SAME_UPPER", "SAME_LOWER"])
@pytest.mark.parametrize("largest", [True, False], ids=["max", "avg"])
@given(h=st.integers(2, 6), w=st.integers(2, 6), kh=st.integers(1, 3), kw=st.integers(1, 3),
       sh=st.integers(1, 3), sw=st.integers(1, 3), include=st.booleans())
def test_pad_modes_match_the_padded_loop(mode, largest, h, w, kh, kw, sh, sw, include):
    if mode == "VALID" and (kh > h or kw > w):
        return
    x = np.random.default_rng(h * 7 + w).permutation(2 * 2 * h * w).reshape(2, 2, h, w) / 10.0
    if largest:
        call = lambda t: autograd.max_pool2d(t, (kh, kw), (sh, sw), pad_mode=mode)
    else:
        call = lambda t: autograd.avg_pool2d(t, (kh, kw), (sh, sw), pad_mode=mode,
                                             count_include_pad=include)
    out = call(Tensor(data=x))
    np.testing.assert_allclose(out.to_numpy(),
                               reference(x, (kh, kw), (sh, sw), mode, largest, include),
                               rtol=1e-12)
    assert autograd.gradcheck(call, [Tensor(data=x)])


@pytest.mark.parametrize("mode", ["SAME_UPPER", "SAME_LOWER"])
@pytest.mark.parametrize("largest", [True, False], ids=["max", "avg"])
@given(h=st.integers(2, 6), w=st.integers(2, 6), kh=st.integers(2, 3), kw=st.integers(1, 3),
       sh=st.integers(1, 3), sw=st.integers(1, 3), include=st.booleans())
def test_same_padding_is_one_op_whose_gradient_is_the_unpadded_inputs(mode, largest, h, w, kh,
                                                                      kw, sh, sw, include):
    """SINGA pads the odd part of SAME padding in a separate step before pooling and crops its
    gradient after; ours is one recorded op on x itself, whose backward returns x's gradient
    (the loop's gradient of the padded input, cropped)."""
    rng = np.random.default_rng(h * 11 + w)
    x_values = rng.permutation(2 * 2 * h * w).reshape(2, 2, h, w) / 10.0   # no ties
    x = Tensor(data=x_values, stores_grad=True)
    if largest:
        y = autograd.max_pool2d(x, (kh, kw), (sh, sw), pad_mode=mode)
    else:
        y = autograd.avg_pool2d(x, (kh, kw), (sh, sw), pad_mode=mode, count_include_pad=include)
    op = y.creator
    assert type(op) is (pooling.MaxPool2d if largest else pooling.AvgPool2d)
    assert len(op.input_edges) == 1 and op.input_edges[0][2] is x     # recorded on x itself
    dy = rng.standard_normal(y.shape)
    expected_y, expected_dx = reference(x_values, (kh, kw), (sh, sw), mode, largest, include, dy)
    np.testing.assert_allclose(y.to_numpy(), expected_y, rtol=1e-12)
    dx = autograd.gradients(y, dy)[x].to_numpy()
    assert dx.shape == x.shape
    np.testing.assert_allclose(dx, expected_dx, rtol=1e-12, atol=1e-15)


def _global_mean(axes):
    return lambda x, data_format="channels_first": x.mean(axis=axes, keepdims=True)


GLOBAL_POOL_CASES = [
    OpCase(autograd.globalaveragepool, _global_mean((2, 3)), [floats()], shape=(2, 3, 4, 2),
           name="globalaveragepool_channels_first"),
    OpCase(autograd.globalaveragepool, _global_mean((1, 2)), [floats()], shape=(2, 4, 2, 3),
           kwargs=dict(data_format="channels_last"), name="globalaveragepool_channels_last"),
    OpCase(autograd.globalaveragepool, _global_mean((1,)), [floats()], shape=(2, 5, 3),
           kwargs=dict(data_format="channels_last"), name="globalaveragepool_channels_last_1d"),
    OpCase(autograd.globalaveragepool, _global_mean((2, 3, 4)), [floats()],
           shape=(2, 3, 2, 3, 2), name="globalaveragepool_channels_first_3d"),
]


@pytest.mark.parametrize("case", GLOBAL_POOL_CASES, ids=str)
@given(data=st.data())
def test_globalaveragepool(case, data):
    check_case(case, data)


def test_globalaveragepool_channels_first_images_is_global_avg_pool2d():
    x = Tensor(data=np.arange(16.0).reshape(1, 2, 2, 4), stores_grad=True)
    y = autograd.globalaveragepool(x)
    assert type(y.creator) is pooling.GlobalAvgPool2d       # what ONNX export knows
    np.testing.assert_array_equal(y.to_numpy(), autograd.global_avg_pool2d(x).to_numpy())


def test_globalaveragepool_argument_errors():
    with pytest.raises(ValueError, match="data_format must be 'channels_first' or "
                                         "'channels_last', got 'NHWC'"):
        autograd.globalaveragepool(Tensor(shape=(1, 2, 2, 2)), "NHWC")
    with pytest.raises(ValueError, match=r"at least one spatial axis, got shape \(2, 3\)"):
        autograd.globalaveragepool(Tensor(shape=(2, 3)), "channels_last")


def test_bad_pad_mode_and_valid_kernel_errors():
    x = Tensor(shape=(1, 1, 3, 3))
    with pytest.raises(ValueError, match="pad_mode must be"):
        autograd.max_pool2d(x, 2, pad_mode="SAME")
    with pytest.raises(ValueError, match="larger than the input"):
        autograd.avg_pool2d(x, 4, pad_mode="VALID")
