"""Weight initialisation schemes, chosen per layer with ``init=`` (as in PuzzleLib).

Each scheme fills a weight Tensor in place from its device's generator (so
``autograd.manual_seed`` makes it repeatable) and ``wscale`` multiplies the standard deviation
(or the half-width of the range). ``fan_in`` / ``fan_out`` are the number of inputs / outputs
that one weight element connects: for Linear's W (in, out) they are ``in`` and ``out``; for
Conv2d's W (out, in/groups, kh, kw) they are ``in/groups * kh * kw`` and ``out * kh * kw``.

- "xavier": U(-a, a), a = wscale * sqrt(6 / (fan_in + fan_out)); variance
  wscale^2 * 2 / (fan_in + fan_out)
- "he": N(0, std^2), std = wscale * sqrt(2 / fan_in); variance wscale^2 * 2 / fan_in
- "gaussian": N(0, std^2), std = 0.01 * wscale, whatever the fans
- "uniform": U(-a, a), a = wscale / sqrt(fan_in); variance wscale^2 / (3 * fan_in)
- "none": left as it is (zeros)

"xavier" is Glorot uniform (the default of every layer), "he" is Kaiming normal in fan_in mode
(for ReLU networks), "uniform" is PyTorch's default for Linear and Conv. A callable
``init(tensor, fan_in, fan_out, wscale)`` may be given instead of a name. Biases start at zero.

>>> from autograd import Tensor, manual_seed
>>> manual_seed(0)
>>> w = initialize(Tensor(shape=(400, 300)), "he", fan_in=400, fan_out=300)
>>> abs(float(w.to_numpy().std()) / (2 / 400) ** 0.5 - 1) < 0.01     # std sqrt(2 / fan_in)
True
"""
import math

__all__ = ["initialize", "SCHEMES", "xavier", "he", "gaussian", "uniform", "none"]


def xavier(tensor, fan_in, fan_out, wscale=1.0):
    """Glorot uniform: U(-a, a) with a = wscale * sqrt(6 / (fan_in + fan_out))."""
    limit = wscale * math.sqrt(6.0 / (fan_in + fan_out))
    return tensor.uniform(-limit, limit)


def he(tensor, fan_in, fan_out, wscale=1.0):
    """Kaiming normal (fan_in mode): N(0, std^2) with std = wscale * sqrt(2 / fan_in)."""
    return tensor.gaussian(0.0, wscale * math.sqrt(2.0 / fan_in))


def gaussian(tensor, fan_in, fan_out, wscale=1.0):
    """N(0, std^2) with std = 0.01 * wscale, whatever the fans."""
    return tensor.gaussian(0.0, 0.01 * wscale)


def uniform(tensor, fan_in, fan_out, wscale=1.0):
    """U(-a, a) with a = wscale / sqrt(fan_in)."""
    limit = wscale / math.sqrt(fan_in)
    return tensor.uniform(-limit, limit)


def none(tensor, fan_in, fan_out, wscale=1.0):
    """Leave the tensor as it is (zeros for a new one)."""
    return tensor


SCHEMES = {"xavier": xavier, "he": he, "gaussian": gaussian, "uniform": uniform, "none": none}


def check_scheme(init, layer_name):
    """Raise ValueError naming the layer unless ``init`` is a known scheme or a callable."""
    if callable(init) or init in SCHEMES:
        return init
    raise ValueError(f"{layer_name}: init must be one of {sorted(SCHEMES)} or a callable, "
                     f"got {init!r}")


def initialize(tensor, init, fan_in, fan_out, wscale=1.0):
    """Fill ``tensor`` in place with scheme ``init`` (a name of :data:`SCHEMES` or a callable
    ``init(tensor, fan_in, fan_out, wscale)``); returns the tensor."""
    scheme = init if callable(init) else SCHEMES.get(init)
    if scheme is None:
        raise ValueError(f"initialize: init must be one of {sorted(SCHEMES)} or a callable, "
                         f"got {init!r}")
    scheme(tensor, max(int(fan_in), 1), max(int(fan_out), 1), float(wscale))
    return tensor
