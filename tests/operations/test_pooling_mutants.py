"""Pooling where the whole mutation run of chunk 4 found the suite blind (docs/testing.md):
argument defaults, float32 gradients with a per-window divisor, the layout of avg_pool2d's
gradient, exact messages. Against the direct-loop reference of tests/operations/test_pooling.py
or messages written out word for word."""
import re

import numpy as np
import pytest

import autograd
from autograd import Tensor
from autograd.backend.layout import is_batch_last
from tests.layouts import stored_batch_last
from tests.operations.test_pooling import reference_pool


def test_avg_pool2d_defaults_no_padding_and_counting_the_padding():
    x = np.random.default_rng(40).standard_normal((1, 2, 5, 4))
    y = autograd.avg_pool2d(Tensor(data=x), 2).to_numpy()
    expected, _, _ = reference_pool(x, (2, 2), (2, 2), (0, 0), False, "avg")
    assert y.shape == (1, 2, 2, 2)
    np.testing.assert_allclose(y, expected, rtol=1e-12)
    # padding 1 and the default count_include_pad: a corner window divides by 9, not by 4
    y = autograd.avg_pool2d(Tensor(data=x), 3, 1, padding=1).to_numpy()
    expected, _, _ = reference_pool(x, (3, 3), (1, 1), (1, 1), False, "avg", True)
    np.testing.assert_allclose(y, expected, rtol=1e-12)
    assert y[0, 0, 0, 0] == pytest.approx(x[0, 0, :2, :2].sum() / 9)


@pytest.mark.parametrize("ceil_mode, count_include_pad", [(False, False), (True, True)])
def test_avg_pool2d_float32_with_a_per_window_divisor_keeps_float32_gradients(
        ceil_mode, count_include_pad):
    # the divisor is an (OH, OW) array of counts here, cast to x's dtype once for both passes.
    # (Left int64, the mutant `asarray(divisor, dtype=None)`, the answers stay the same: the
    # kernels divide into float32 buffers, and a float64 quotient rounded to float32 is the
    # float32 quotient; so that mutant is equivalent. This checks the path's float32 values.)
    x = np.random.default_rng(41).standard_normal((2, 1, 5, 5)).astype(np.float32)
    xt = Tensor(data=x, stores_grad=True)
    args = dict(kernel_size=3, stride=2, padding=1, ceil_mode=ceil_mode,
                count_include_pad=count_include_pad)
    y = autograd.avg_pool2d(xt, **args)
    assert y.dtype == np.float32
    expected, _, _ = reference_pool(x.astype(np.float64), (3, 3), (2, 2), (1, 1), ceil_mode,
                                    "avg", count_include_pad)
    np.testing.assert_allclose(y.to_numpy(), expected, rtol=1e-6)
    grad = autograd.gradients(y, np.ones(y.shape, np.float32))[xt]
    assert grad.dtype == np.float32
    x64 = Tensor(data=x.astype(np.float64), stores_grad=True)
    reference = autograd.gradients(autograd.avg_pool2d(x64, **args), np.ones(y.shape))[x64]
    np.testing.assert_allclose(grad.to_numpy(), reference.to_numpy(), rtol=1e-6)
    assert autograd.gradcheck(lambda t: autograd.avg_pool2d(t, **args), [x.astype(np.float64)])


def test_avg_pool2d_gradient_of_a_batch_last_input_is_batch_last():
    # conv2d returns batch-last images (operations/layout.py); AvgPool2d.backward giving dx in C
    # order (its layout dropped) would make the next conv's backward copy it
    x = stored_batch_last(np.random.default_rng(42).standard_normal((3, 2, 4, 4)))
    xt = Tensor(data=x, stores_grad=True)
    y = autograd.avg_pool2d(xt, 2)
    dy = stored_batch_last(np.ones(y.shape))
    grad = autograd.gradients(y, dy)[xt].to_numpy()
    assert is_batch_last(grad)
    np.testing.assert_array_equal(grad, np.full(x.shape, 0.25))


_X = (1, 1, 4, 4)


@pytest.mark.parametrize("call, error, message", [
    (lambda: autograd.max_pool2d(Tensor(shape=_X), 1.5), TypeError,
     "max_pool2d: kernel_size must be an int or 2 ints, got 1.5"),
    (lambda: autograd.avg_pool2d(Tensor(shape=_X), (2, 2, 2)), TypeError,
     "avg_pool2d: kernel_size must be an int or 2 ints, got (2, 2, 2)"),
    (lambda: autograd.avg_pool2d(Tensor(shape=_X), 2, stride=(1, 0)), ValueError,
     "avg_pool2d: stride must be positive, got (1, 0)"),
    (lambda: autograd.max_pool2d(Tensor(shape=_X), (3, 2), padding=(1, 2)), ValueError,
     "max_pool2d: padding must be between 0 and half the kernel size (3, 2), got (1, 2)"),
    (lambda: autograd.avg_pool2d(Tensor(shape=(1, 1, 2, 2)), 5, padding=1), ValueError,
     "avg_pool2d: kernel (5, 5) is larger than the padded input (2, 2) with padding 1"),
    (lambda: autograd.max_pool2d(Tensor(shape=(1, 1, 2, 2)), 3, pad_mode="valid"), ValueError,
     "max_pool2d: kernel (3, 3) is larger than the input (2, 2) with pad_mode='valid'"),
    (lambda: autograd.max_pool2d(Tensor(shape=(3, 4, 4)), 2), ValueError,
     "max_pool2d: expected x of shape (N, C, H, W), got (3, 4, 4)"),
    (lambda: autograd.global_avg_pool2d(Tensor(shape=(2, 3))), ValueError,
     "global_avg_pool2d: expected x of shape (N, C, H, W), got (2, 3)"),
    (lambda: autograd.globalaveragepool(Tensor(shape=(2, 3))), ValueError,
     "globalaveragepool: expected x with a batch, a channel and at least one spatial axis, "
     "got shape (2, 3)"),
    (lambda: autograd.globalaveragepool(Tensor(shape=_X), "NHWC"), ValueError,
     "globalaveragepool: data_format must be 'channels_first' or 'channels_last', got 'NHWC'"),
])
def test_pooling_messages_name_the_op_and_the_argument_exactly(call, error, message):
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        call()
