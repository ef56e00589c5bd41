"""Argument checks the layers share; each error names the layer, the argument and the value."""
import numpy as np

from ..operations.im2col import pair

__all__ = ["PAD_MODES", "positive_int", "positive_pair"]

PAD_MODES = ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")      # SINGA's / ONNX's auto_pad


def positive_int(value, what, layer):
    """``value`` as an int >= 1, else a ValueError naming ``layer`` and ``what``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{layer}: {what} must be a positive int, got {value!r}")
    return int(value)


def positive_pair(value, what, layer):
    """``value`` (an int or a pair) as a pair of ints >= 1, else a ValueError."""
    result = pair(value, layer, what)
    if min(result) < 1:
        raise ValueError(f"{layer}: {what} must be positive, got {value!r}")
    return result
