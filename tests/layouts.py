"""Test helper: the same images stored batch-last, as conv2d returns them (operations/layout.py),
built with NumPy alone so that tests of the layout do not lean on the code under test."""
import numpy as np


def stored_batch_last(images):
    """``images`` (N, C, H, W): the same values, as a view of a C-contiguous (C, H, W, N) copy."""
    return np.ascontiguousarray(images.transpose(1, 2, 3, 0)).transpose(3, 0, 1, 2)
