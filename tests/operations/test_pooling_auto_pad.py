"""max_pool2d / avg_pool2d with SINGA's pad_mode (ONNX auto_pad), against a NumPy loop over
explicitly padded windows, and gradcheck."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import autograd
from autograd import Tensor


def reference(x, kernel, stride, mode, largest, count_include_pad):
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
    for i in range(outs[0]):
        for j in range(outs[1]):
            rows = slice(i * stride[0], i * stride[0] + kernel[0])
            cols = slice(j * stride[1], j * stride[1] + kernel[1])
            window = padded[:, :, rows, cols]
            if largest:
                y[:, :, i, j] = window.max(axis=(2, 3))
            else:
                count = kernel[0] * kernel[1] if count_include_pad else inside[rows, cols].sum()
                y[:, :, i, j] = window.sum(axis=(2, 3)) / count
    return y


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


def test_globalaveragepool_is_singas_spelling():
    x = Tensor(data=np.arange(16.0).reshape(1, 2, 2, 4))
    np.testing.assert_array_equal(autograd.globalaveragepool(x).to_numpy(),
                                  autograd.global_avg_pool2d(x).to_numpy())
    with pytest.raises(ValueError, match="channels_first"):
        autograd.globalaveragepool(x, "channels_last")


def test_bad_pad_mode_and_valid_kernel_errors():
    x = Tensor(shape=(1, 1, 3, 3))
    with pytest.raises(ValueError, match="pad_mode must be"):
        autograd.max_pool2d(x, 2, pad_mode="SAME")
    with pytest.raises(ValueError, match="larger than the input"):
        autograd.avg_pool2d(x, 4, pad_mode="VALID")
