"""Elementwise kernels with a CPU fast path: ReLU, the exact GELU, the broadcast add of a
bias, and zero-filled buffers. Large passes split over the threads, in the output's memory
order (threads.elementwise), and keep the input's layout; the add writes a large result into
a cached buffer (a linear head's (N, V) logits: 45 MB for a language model's 1120 x 10k, whose
fresh pages cost more than the add).

>>> import numpy as np
>>> relu(np.array([-1.0, 2.0])), relu_backward(np.array([5.0, 5.0]), np.array([0.0, 2.0]))
(array([0., 2.]), array([0., 5.]))
"""
import math

import numpy as np

from ..device import get_array_module
from . import buffer_cache, native, native_elementwise, threads

__all__ = []     # reached through the kernels of numpy_kernels.py / cupy_kernels.py

# NumPy's maximum has SIMD loops for two strided operands but none for a scalar one: against a
# zero row broadcast over rows of x it runs twice as fast (1.6M float32 on one core: 0.39 against
# 0.78 ms; ReLU's forward in the CNN step 0.70 against 0.90 ms). Below ZERO_ROW_MIN_SIZE the
# broadcast's set-up costs more than its loop saves (4,096 float32: 13.8 against 4.6 us; 32,768:
# 17.4 against 27.4 us), so small arrays take the scalar.
ZERO_ROW_LENGTH = 512
ZERO_ROW_MIN_SIZE = 1 << 14
_zero_rows = {}


def relu(x):
    """max(x, 0), in x's layout."""
    out = buffer_cache.empty_like(x)
    if native_elementwise.relu(x, out):
        return out
    return threads.elementwise(_relu_into, out, x)


def relu_backward(dy, y):
    """dy where y > 0, else 0."""
    out = buffer_cache.empty_like(dy)
    if native_elementwise.relu_backward(dy, y, out):
        return out
    return threads.elementwise(_relu_gradient_into, out, dy, y)


def zeros(shape, dtype):
    """A zero-filled NumPy array from the buffer cache, filled over the threads when large (an
    embedding's 10 MB gradient: np.zeros cleared fresh heap each step, one core at a time)."""
    return threads.elementwise(_zero_into, buffer_cache.empty(np, shape, dtype))


def _zero_into(out):
    out.fill(0)


def add(x, b):
    """x + b, b broadcast against x (a bias row), the result of x's shape."""
    xp = get_array_module(x)
    out = buffer_cache.empty(xp, x.shape, np.result_type(x, b))
    if x.size < threads.MIN_PARALLEL_ELEMENTS:      # one pass; broadcast_to costs ~5 us
        return xp.add(x, b, out=out)
    return threads.elementwise(_add_into, out, x, xp.broadcast_to(b, x.shape))


def _add_into(out, x, b):
    get_array_module(x).add(x, b, out=out)


def _relu_into(out, x):
    xp = get_array_module(x)
    if (x.size >= ZERO_ROW_MIN_SIZE and xp is np and x.flags.c_contiguous
            and out.flags.c_contiguous):
        zeros = _zero_rows.get(x.dtype)
        if zeros is None:
            zeros = _zero_rows.setdefault(x.dtype, np.zeros(ZERO_ROW_LENGTH, x.dtype))
        whole = x.size - x.size % ZERO_ROW_LENGTH
        flat_x, flat_out = x.reshape(-1), out.reshape(-1)
        np.maximum(flat_x[:whole].reshape(-1, ZERO_ROW_LENGTH), zeros,
                   out=flat_out[:whole].reshape(-1, ZERO_ROW_LENGTH))
        x, out = flat_x[whole:], flat_out[whole:]
    xp.maximum(x, 0, out=out)


def _relu_gradient_into(out, dy, y):
    get_array_module(dy).multiply(dy, y > 0, out=out)


# ---------------------------------------------------------------- exact GELU

_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
# Elements per pass: 256 KiB a temporary, so a chunk's ~25 passes stay in L2. Smaller chunks
# mean more NumPy calls, and at 2 threads each call hands the GIL over: (768, 512) float32 took
# 5.9 ms (median) with 16K-element chunks against 3.2 ms with 64K on a 2-core Xeon (1 thread:
# 5.5 against 4.6 ms; the 2-core EPYC measured 2.8 ms for both at 1 thread).
ERF_CHUNK = 65536
# Abramowitz & Stegun 7.1.26: erf(u) = 1 - t (a1 + t (a2 + ... + t a5)) e^(-u^2),
# t = 1 / (1 + p u), for u >= 0 (odd function); |error| <= 1.5e-7 in exact arithmetic.
ERF_P = np.float32(0.3275911)
ERF_A = [np.float32(a) for a in (0.254829592, -0.284496736, 1.421413741, -1.453152027,
                                 1.061405429)]


def erf_float32_into(out, x, gaussian=None):
    """erf(x) of float32 1-D NumPy arrays into ``out`` by the approximation above, a
    cache-sized chunk at a time, to within 7e-7; with ``gaussian`` (an array like x) also
    e^(-x^2) there, which the approximation computes anyway."""
    a1, a2, a3, a4, a5 = ERF_A
    for start in range(0, x.size, ERF_CHUNK):
        part, result = x[start:start + ERF_CHUNK], out[start:start + ERF_CHUNK]
        magnitude = np.abs(part, out=None if gaussian is None else
                           gaussian[start:start + ERF_CHUNK])
        t = magnitude * ERF_P
        t += 1
        np.reciprocal(t, out=t)
        np.multiply(t, a5, out=result)
        for a in (a4, a3, a2, a1):          # Horner: t (a1 + t (a2 + t (a3 + t (a4 + t a5))))
            result += a
            result *= t
        magnitude *= magnitude
        np.negative(magnitude, out=magnitude)
        np.exp(magnitude, out=magnitude)
        result *= magnitude
        np.subtract(1, result, out=result)
        np.copysign(result, part, out=result)
    return out


def gelu_forward(x):
    """``(y, slope)``: y = x Phi(x) (Phi the standard normal CDF) and slope = dy/dx = Phi(x) +
    x phi(x), all backward needs, so backward is one product. float32 NumPy arrays run erf
    and both results in one pass, a cache-sized chunk at a time, split over the threads
    (e^(-x^2/2) comes out of the erf approximation); other arrays use SciPy's (CuPy's) erf."""
    xp = get_array_module(x)
    if type(x) is np.ndarray and x.dtype == np.float32:
        x = np.ascontiguousarray(x).reshape(x.shape)     # (0-d stays 0-d)
        y, slope = buffer_cache.empty_like(x), buffer_cache.empty_like(x)
        # flat views: every thread's chunk is then contiguous, as the chunked passes need
        threads.elementwise(_gelu_float32_into, y.reshape(-1), x.reshape(-1), slope.reshape(-1))
        return y, slope
    cdf = _erf(x * x.dtype.type(_SQRT_HALF))
    cdf += 1
    cdf *= 0.5
    slope = xp.exp(-0.5 * x * x)
    slope *= x
    slope *= _INV_SQRT_2PI
    slope += cdf
    return x * cdf, slope


def gelu_backward(dy, slope):
    """dx = dy * slope (slope from :func:`gelu_forward`), split over the threads."""
    return threads.elementwise(_multiply_into, buffer_cache.empty_like(dy), dy, slope)


def _gelu_float32_into(flat_y, flat_x, flat_slope):
    if native.gelu_forward(flat_x, flat_y, flat_slope):
        return
    for start in range(0, flat_x.size, ERF_CHUNK):
        part = flat_x[start:start + ERF_CHUNK]
        cdf, density = flat_y[start:start + ERF_CHUNK], flat_slope[start:start + ERF_CHUNK]
        # erf(x / sqrt 2) into cdf and e^(-x^2 / 2) into density, then both finished in cache
        erf_float32_into(cdf, part * np.float32(_SQRT_HALF), density)
        cdf += 1
        cdf *= np.float32(0.5)
        density *= part
        density *= np.float32(_INV_SQRT_2PI)          # x phi(x)
        density += cdf                                # slope = Phi + x phi
        cdf *= part                                   # y = x Phi


def _multiply_into(out, a, b):
    get_array_module(a).multiply(a, b, out=out)


def _erf(x):
    if get_array_module(x) is np:
        from scipy.special import erf
    else:
        from cupyx.scipy.special import erf
    return erf(x)
