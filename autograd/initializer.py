"""SINGA's parameter initializers: each fills a Tensor in place from its device's generator
(``autograd.manual_seed`` makes them repeatable) and returns it.

Fans follow SINGA (and Keras): a 2-D weight (in, out) as Linear stores it has fan_in = in,
fan_out = out; a convolution weight (out, in, k...) has fan_in = in * prod(k) and
fan_out = out * prod(k).

>>> from autograd import Tensor
>>> w = he_normal(Tensor(shape=(400, 300)))
>>> round(float(w.to_numpy().std()), 2) == round((2 / 400) ** 0.5, 2)
True
"""
import math

import numpy as np

__all__ = ["compute_fans", "eye", "orthogonal", "lecun_uniform", "lecun_normal",
           "glorot_uniform", "glorot_normal", "he_uniform", "he_normal",
           "uniform", "gaussian", "xavier", "glorot", "msra"]


def compute_fans(shape):
    """(fan_in, fan_out) of a weight of this shape (see the module docstring)."""
    if len(shape) < 2:
        raise ValueError(f"initializer: a weight needs at least 2 dimensions to have fans, "
                         f"got shape {tuple(shape)}")
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive = int(np.prod(shape[2:]))
    return shape[1] * receptive, shape[0] * receptive


def _scaled_uniform(t, variance):
    limit = math.sqrt(3.0 * variance)            # U(-a, a) has variance a^2 / 3
    return t.uniform(-limit, limit)


def _scaled_normal(t, variance):
    return t.gaussian(0.0, math.sqrt(variance))


def eye(t):
    """The identity matrix (a 2-D tensor; ones on the main diagonal of a non-square one)."""
    if t.ndim != 2:
        raise ValueError(f"eye: expected a 2-D tensor, got shape {t.shape}")
    with t.device.activate():
        t.data[...] = t.device.xp.eye(*t.shape, dtype=t.dtype)
    return t


def orthogonal(t, gain=1.0):
    """A (semi-)orthogonal matrix times ``gain``, from the QR decomposition of a Gaussian
    matrix (Saxe et al. 2014); tensors of more dimensions are flattened to (rows, rest)."""
    if t.ndim < 2:
        raise ValueError(f"orthogonal: expected at least 2 dimensions, got shape {t.shape}")
    rows, cols = t.shape[0], int(np.prod(t.shape[1:]))
    xp = t.device.xp
    with t.device.activate():
        sample = t.device.random.standard_normal((max(rows, cols), min(rows, cols)))
        q, r = xp.linalg.qr(sample)
        q = q * xp.sign(xp.diagonal(r))          # a uniform distribution over rotations
        if rows < cols:
            q = q.T
        t.data[...] = (gain * q[:rows, :cols]).reshape(t.shape).astype(t.dtype)
    return t


def lecun_uniform(t):
    """U(-a, a) with variance 1 / fan_in (LeCun 1998)."""
    return _scaled_uniform(t, 1.0 / compute_fans(t.shape)[0])


def lecun_normal(t):
    """N(0, 1 / fan_in) (LeCun 1998; the initialisation SELU expects)."""
    return _scaled_normal(t, 1.0 / compute_fans(t.shape)[0])


def glorot_uniform(t):
    """U(-a, a) with variance 2 / (fan_in + fan_out) (Glorot & Bengio 2010)."""
    fan_in, fan_out = compute_fans(t.shape)
    return _scaled_uniform(t, 2.0 / (fan_in + fan_out))


def glorot_normal(t):
    """N(0, 2 / (fan_in + fan_out)) (Glorot & Bengio 2010)."""
    fan_in, fan_out = compute_fans(t.shape)
    return _scaled_normal(t, 2.0 / (fan_in + fan_out))


def he_uniform(t):
    """U(-a, a) with variance 2 / fan_in (He et al. 2015, for ReLU networks)."""
    return _scaled_uniform(t, 2.0 / compute_fans(t.shape)[0])


def he_normal(t):
    """N(0, 2 / fan_in) (He et al. 2015, for ReLU networks)."""
    return _scaled_normal(t, 2.0 / compute_fans(t.shape)[0])


def _legacy_variance(name, fan_in, fan_out):
    if fan_in <= 0 and fan_out <= 0:
        raise ValueError(f"{name}: fan_in and fan_out cannot both be 0")
    if fan_in * fan_out == 0:
        return 1.0 / (fan_in + fan_out)
    return 2.0 / (fan_in + fan_out)


def uniform(t, fan_in=0, fan_out=0):
    """SINGA's uniform(t, fan_in, fan_out): U(-a, a), a = sqrt(3 * avg / (fan_in + fan_out))
    where avg = 2 when both fans are given, else 1 (variance avg / (fan_in + fan_out))."""
    return _scaled_uniform(t, _legacy_variance("uniform", fan_in, fan_out))


def gaussian(t, fan_in=0, fan_out=0):
    """SINGA's gaussian(t, fan_in, fan_out): N(0, std^2), std = sqrt(2 * avg /
    (fan_in + fan_out)), avg as in :func:`uniform`."""
    return _scaled_normal(t, 2.0 * _legacy_variance("gaussian", fan_in, fan_out))


def xavier(t):
    """SINGA's xavier: U(-a, a), a = sqrt(6 / (rows + cols)) of a 2-D tensor."""
    limit = math.sqrt(6.0 / (t.shape[0] + t.shape[1]))
    return t.uniform(-limit, limit)


def glorot(t):
    """SINGA's glorot: N(0, 2 / (rows + cols)) of a 2-D tensor."""
    return _scaled_normal(t, 2.0 / (t.shape[0] + t.shape[1]))


def msra(t):
    """SINGA's msra: N(0, 2 / rows) of a 2-D tensor (rows = fan_in for Linear's (in, out))."""
    return _scaled_normal(t, 2.0 / t.shape[0])
