"""Spies on what the kernels ask of the buffer cache."""
import numpy as np

from autograd.backend import buffer_cache, convolution


def record_scratch_dtypes(monkeypatch):
    """The list of every dtype asked of buffer_cache.empty while the patch holds."""
    asked, original = [], buffer_cache.empty

    def spy(xp, shape, dtype, axis_order=None):
        asked.append(np.dtype(dtype))
        return original(xp, shape, dtype, axis_order)
    monkeypatch.setattr(buffer_cache, "empty", spy)
    return asked


def record_ones_rows(monkeypatch):
    """The list of ``ones_row`` of every convolution.columns_of call while the patch holds
    (True: the bias rides in the GEMM under a row of ones)."""
    asked, original = [], convolution.columns_of

    def spy(*args, ones_row=False):
        asked.append(ones_row)
        return original(*args, ones_row=ones_row)
    monkeypatch.setattr(convolution, "columns_of", spy)
    return asked
