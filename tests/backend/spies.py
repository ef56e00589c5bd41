"""Spies on what the kernels ask of the buffer cache."""
import numpy as np

from autograd.backend import buffer_cache


def record_scratch_dtypes(monkeypatch):
    """The list of every dtype asked of buffer_cache.empty while the patch holds."""
    asked, original = [], buffer_cache.empty

    def spy(xp, shape, dtype, axis_order=None):
        asked.append(np.dtype(dtype))
        return original(xp, shape, dtype, axis_order)
    monkeypatch.setattr(buffer_cache, "empty", spy)
    return asked
