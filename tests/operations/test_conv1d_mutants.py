"""conv1d, max_pool1d and avg_pool1d where the whole mutation run of chunk 4 found the suite
blind (docs/testing.md): argument defaults and exact messages. Each against the direct-loop
reference of tests/operations/test_conv1d.py or a message written out word for word."""
import re

import numpy as np
import pytest

import autograd
from autograd import Tensor
from tests.operations.test_conv1d import reference_pool1d


def test_avg_pool1d_defaults_stride_kernel_no_padding_floor_and_counting_the_padding():
    # length 7, kernel 3: floor gives 2 windows, ceil_mode 3, padding 1 three; with padding 1
    # the edge windows divide by 3 (counting the padding), not by 2
    x = np.arange(14.0).reshape(1, 2, 7) ** 1.5
    y = autograd.avg_pool1d(Tensor(data=x), 3).to_numpy()
    np.testing.assert_allclose(y, reference_pool1d(x, 3, 3, 0, False, False), rtol=1e-12)
    assert y.shape == (1, 2, 2)
    padded = autograd.avg_pool1d(Tensor(data=x), 3, 2, padding=1).to_numpy()
    np.testing.assert_allclose(padded, reference_pool1d(x, 3, 2, 1, False, False, True),
                               rtol=1e-12)
    assert padded[0, 0, 0] == pytest.approx((0.0 + x[0, 0, 1]) / 3)
