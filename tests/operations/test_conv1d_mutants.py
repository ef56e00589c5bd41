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


@pytest.mark.parametrize("call, error, message", [
    (lambda x: autograd.max_pool1d(x, 2, stride=0), ValueError,
     "max_pool1d: stride must be positive, got 0"),
    (lambda x: autograd.avg_pool1d(x, 2, stride=1.5), TypeError,
     "avg_pool1d: stride must be an int, got 1.5"),
    (lambda x: autograd.avg_pool1d(x, 2, padding=1.5), TypeError,
     "avg_pool1d: padding must be an int, got 1.5"),
    (lambda x: autograd.max_pool1d(x, 2, padding=(1, 1)), TypeError,
     "max_pool1d: padding must be an int, got (1, 1)"),
    (lambda x: autograd.max_pool1d(x, 4, padding=3), ValueError,
     "max_pool1d: padding must be between 0 and half the kernel size 4, got 3"),
    (lambda x: autograd.avg_pool1d(x[:, :, :2], 7, padding=2), ValueError,
     "avg_pool1d: kernel 7 is longer than the padded input length 6 (x (1, 1, 2), padding 2)"),
    (lambda x: autograd.conv1d(x, Tensor(shape=(1, 1, 2)), dilation=0), ValueError,
     "conv1d: dilation must be positive, got 0"),
    (lambda x: autograd.conv1d(x, Tensor(shape=(1, 1, 2)), dilation=2.0), TypeError,
     "conv1d: dilation must be an int, got 2.0"),
    (lambda x: autograd.conv1d(x[:, :, :3], Tensor(shape=(1, 1, 9)), padding=2), ValueError,
     "conv1d: kernel 9 with dilation 1 spans 9 elements, more than the padded input length 7 "
     "(x (1, 1, 3), padding (2, 2))"),
])
def test_1d_messages_name_the_op_and_the_argument_exactly(call, error, message):
    # the padded lengths are 2 + 2 * 2 and 3 + 2 + 2: a padding of 2 tells + from - and /
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        call(Tensor(data=np.zeros((1, 1, 5))))
