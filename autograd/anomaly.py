"""PyTorch's spellings of debug mode (``autograd.set_debug``): anomaly detection.

In debug mode every op records the line that created it, and the first NaN or inf that a
forward or a backward produces raises FloatingPointError naming the op and that line.

>>> import numpy as np, autograd
>>> x = autograd.Tensor(data=[np.inf], stores_grad=True)
>>> with autograd.detect_anomaly():
...     autograd.relu(x)
Traceback (most recent call last):
    ...
FloatingPointError: ReLU (created at ...): forward produced NaN or inf
>>> autograd.relu(x).to_numpy()                  # debug mode is off again outside the block
array([inf], dtype=float32)
"""
from __future__ import annotations

from .recording import config, set_debug

__all__ = ["detect_anomaly", "set_detect_anomaly"]


class detect_anomaly:
    """``with autograd.detect_anomaly():`` turns debug mode on for the block and back to what
    it was after it (PyTorch's ``torch.autograd.detect_anomaly``)."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = bool(check_nan)
        self._previous: bool | None = None

    def __enter__(self) -> "detect_anomaly":
        self._previous = config.debug
        set_debug(self.check_nan)
        return self

    def __exit__(self, *exc: object) -> None:
        set_debug(bool(self._previous))


def set_detect_anomaly(mode: bool) -> None:
    """PyTorch's ``torch.autograd.set_detect_anomaly(mode)``: ``autograd.set_debug(mode)``."""
    set_debug(mode)
