"""Argument checks the layers share; each error names the layer, the argument and the value."""
import numpy as np

from ..geometry import PAD_MODES, pair, pad_mode_argument

__all__ = ["PAD_MODES", "positive_int", "positive_pair", "pad_mode_argument", "conv_padding"]

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


def conv_padding(padding, layer, forms="an int, a pair", numbers=None):
    """A convolution's ``padding``: PyTorch's "same" / "valid" (any case) lower-cased, else
    ``numbers(padding)``, by default a (height, width) pair of non-negative ints. ``forms`` names
    the numeric forms the layer takes, for the error."""
    if isinstance(padding, str):
        if padding.lower() not in ("same", "valid"):
            raise ValueError(f"{layer}: padding must be {forms}, 'same' or 'valid', got "
                             f"{padding!r}")
        return padding.lower()
    if numbers is not None:
        return numbers(padding)
    result = pair(padding, layer, "padding")
    if min(result) < 0:
        raise ValueError(f"{layer}: padding must be non-negative, got {padding!r}")
    return result
