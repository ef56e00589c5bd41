"""conv2d's message for a kernel wider than the padded input, with the padded size computed
in the message (the sampled mutation run changed its arithmetic unseen: docs/testing.md)."""
import re

import numpy as np
import pytest

import autograd
from autograd import Tensor


@pytest.mark.parametrize("padding,padded", [(1, 5), ((2, 0), 7)])
def test_a_kernel_longer_than_the_padded_input_names_the_padded_size(padding, padded):
    x = Tensor(data=np.zeros((1, 1, 3, 3), np.float32))
    W = Tensor(data=np.zeros((1, 1, 9, 1), np.float32))
    pads = (padding, padding) if isinstance(padding, int) else (padding[0], padding[0])
    message = (f"conv2d: kernel (9, 1) with dilation (1, 1) spans 9 pixels, more than the "
               f"padded input height {padded} (x (1, 1, 3, 3), padding {pads})")
    assert padded == 3 + 2 * pads[0]          # the reference: size + before + after
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        autograd.conv2d(x, W, padding=padding)


def test_a_kernel_wider_than_the_padded_input_names_the_width():
    # the second axis of the check is named "width" (the run of chunk 4 changed the name
    # unseen: every test's kernel was too tall, not too wide)
    x = Tensor(data=np.zeros((1, 1, 3, 3), np.float32))
    W = Tensor(data=np.zeros((1, 1, 1, 6), np.float32))
    message = ("conv2d: kernel (1, 6) with dilation (1, 2) spans 11 pixels, more than the "
               "padded input width 7 (x (1, 1, 3, 3), padding (2, 2))")
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        autograd.conv2d(x, W, padding=2, dilation=(1, 2))
