"""Pooling2d's padding modes on a fixed grid (the hypothesis test in test_singa.py draws 12 of
them, so a dropped ``count_include_pad`` under a SAME mode survived the full mutation run of
layers/: docs/testing.md), float32 kept, against the direct loops of test_singa.py."""
import numpy as np
import pytest

from autograd import Tensor
from autograd.layers import Pooling2d
from tests.layers.test_singa import reference_pool2d


def same_pads(size, kernel, stride, lower):
    pads = []
    for axis in (0, 1):
        out = -(-size[axis] // stride[axis])
        total = max((out - 1) * stride[axis] + kernel[axis] - size[axis], 0)
        small, large = total // 2, total - total // 2
        pads.append((large, small) if lower else (small, large))
    return pads


@pytest.mark.parametrize("mode", ["SAME_UPPER", "SAME_LOWER", "NOTSET"])
@pytest.mark.parametrize("is_max", [True, False])
@pytest.mark.parametrize("include", [True, False])
def test_every_pad_mode_and_count_include_pad_matches_direct_loops(mode, is_max, include):
    x = np.random.default_rng(3).standard_normal((2, 2, 5, 6)).astype(np.float32)
    kernel, stride = (3, 2), (2, 2)
    if mode == "NOTSET":                          # uneven: top 1, bottom 0, left 0, right 1
        layer = Pooling2d(kernel, stride, [1, 0, 0, 1], is_max=is_max,
                          count_include_pad=include)
        pads = ((1, 0), (0, 1))
    else:
        layer = Pooling2d(kernel, stride, is_max=is_max, pad_mode=mode,
                          count_include_pad=include)
        pads = same_pads((5, 6), kernel, stride, mode == "SAME_LOWER")
    assert any(sum(p) for p in pads)              # the grid pads, so the count matters
    y = layer(Tensor(data=x))
    assert y.dtype == np.float32
    np.testing.assert_allclose(y.to_numpy(),
                               reference_pool2d(x.astype(np.float64), kernel, stride, pads,
                                                is_max, include), rtol=1e-5, atol=1e-6)
