"""upsample, depth_to_space, space_to_depth against index formulas; gradcheck."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import autograd
from autograd import Tensor


@given(n=st.integers(1, 2), c=st.integers(1, 3), h=st.integers(1, 3), w=st.integers(1, 3),
       sh=st.integers(1, 3), sw=st.integers(1, 3))
def test_upsample_nearest_integer_scales_repeat_elements(n, c, h, w, sh, sw):
    x = np.random.default_rng(0).standard_normal((n, c, h, w))
    out = autograd.upsample(Tensor(data=x), "nearest", [1, 1, sh, sw]).to_numpy()
    np.testing.assert_array_equal(out, x.repeat(sh, axis=2).repeat(sw, axis=3))
    assert autograd.gradcheck(lambda t: autograd.upsample(t, "nearest", [1, 1, sh, sw]),
                              [Tensor(data=x)])


def test_upsample_fractional_scale_uses_floor_of_index_over_scale():
    x = np.arange(4.0).reshape(1, 4)
    out = autograd.upsample(Tensor(data=x), "nearest", [1, 1.5]).to_numpy()
    np.testing.assert_array_equal(out, x[:, np.floor(np.arange(6) / 1.5).astype(int)])


def test_upsample_rejects_bad_arguments():
    with pytest.raises(ValueError, match="upsample: expected 2 scales"):
        autograd.upsample(Tensor(shape=(2, 2)), "nearest", [2])
    with pytest.raises(ValueError, match="only mode='nearest'"):
        autograd.upsample(Tensor(shape=(2, 2)), "linear", [1, 2])


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
@given(n=st.integers(1, 2), c=st.integers(1, 2), b=st.integers(1, 3), h=st.integers(1, 3),
       w=st.integers(1, 2))
def test_depth_to_space_against_index_formula(mode, n, c, b, h, w):
    x = np.random.default_rng(1).standard_normal((n, c * b * b, h, w))
    out = autograd.depth_to_space(Tensor(data=x), b, mode).to_numpy()
    expected = np.empty((n, c, h * b, w * b))
    for i in range(b):
        for j in range(b):
            channels = ((i * b + j) * c + np.arange(c)) if mode == "DCR" else \
                (np.arange(c) * b * b + i * b + j)
            expected[:, :, i::b, j::b] = x[:, channels]
    np.testing.assert_array_equal(out, expected)
    assert autograd.gradcheck(lambda t: autograd.depth_to_space(t, b, mode), [Tensor(data=x)])


def _channels(mode, c, b, i, j):
    """The channels of the packed tensor that hold block offset (i, j) of each of c channels."""
    return ((i * b + j) * c + np.arange(c)) if mode == "DCR" else (np.arange(c) * b * b + i * b + j)


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
@given(n=st.integers(1, 2), c=st.integers(1, 3), b=st.integers(1, 3), h=st.integers(1, 2),
       w=st.integers(1, 2))
def test_space_to_depth_against_index_formula_and_inverts_depth_to_space(mode, n, c, b, h, w):
    x = np.random.default_rng(2).standard_normal((n, c, h * b, w * b))
    packed = autograd.space_to_depth(Tensor(data=x), b, mode)
    expected = np.empty((n, c * b * b, h, w))
    for i in range(b):
        for j in range(b):
            expected[:, _channels(mode, c, b, i, j)] = x[:, :, i::b, j::b]
    np.testing.assert_array_equal(packed.to_numpy(), expected)
    np.testing.assert_array_equal(autograd.depth_to_space(packed, b, mode).to_numpy(), x)
    assert autograd.gradcheck(lambda t: autograd.space_to_depth(t, b, mode), [Tensor(data=x)])


def test_modes_are_upper_cased_as_singa_does():
    x = Tensor(data=np.arange(16.0).reshape(1, 4, 2, 2))
    np.testing.assert_array_equal(autograd.depth_to_space(x, 2, "crd").to_numpy(),
                                  autograd.depth_to_space(x, 2, "CRD").to_numpy())
    with pytest.raises(ValueError, match="space_to_depth: mode must be 'DCR' or 'CRD', got 'RCD'"):
        autograd.space_to_depth(x, 2, "RCD")


def test_rearrangements_check_divisibility():
    with pytest.raises(ValueError, match=r"depth_to_space: channels \(3\)"):
        autograd.depth_to_space(Tensor(shape=(1, 3, 2, 2)), 2)
    with pytest.raises(ValueError, match="space_to_depth: height and width"):
        autograd.space_to_depth(Tensor(shape=(1, 1, 3, 4)), 2)
