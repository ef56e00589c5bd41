"""What the tests of the compiled kernels share: the instruction-set builds this CPU runs, the
drawn operands and the float32-against-float64 comparison."""
import numpy as np

from autograd.backend import native

RTOL, ATOL = 3e-6, 2e-7      # float32 kernels against float64 formulas of float32 inputs


def builds():
    """The instruction sets whose kernels this CPU runs."""
    if not native.available():
        return ["generic"]
    names = []
    current = native._native.get_instruction_set()
    for name in ("generic", "avx2", "avx512"):
        try:
            native._native.set_instruction_set(name)
        except ValueError:
            continue
        names.append(name)
    native._native.set_instruction_set(current)
    return names


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def draw(rng, shape, scale, layout):
    """float32 values of ``scale`` (with some exact zeros and tiny ones), stored plainly or as
    every other row of a wider, taller array."""
    values = (rng.standard_normal(shape) * scale).astype(np.float32)
    values.flat[::7] = 0.0
    values.flat[3::11] *= 1e-4
    if layout == "plain":
        return values
    wide = np.full((2 * shape[0], shape[1] + 5), np.nan, np.float32)
    wide[::2, 2:2 + shape[1]] = values
    return wide[::2, 2:2 + shape[1]]


EPSILON = float(np.finfo(np.float32).eps)


def on_lines(rng, shape, offset=0):
    """float32 values of ``shape`` (as :func:`draw` stores them plainly) whose rows start
    ``offset`` bytes past a 64-byte line (every row, for widths of whole lines), as a
    parameter's array does at offset 0: the compiled products take many rows only by such a
    b, and NumPy's own arrays start on a line or not by chance."""
    size = int(np.prod(shape))
    block = np.empty(size + 32, np.float32)
    start = (-block.ctypes.data % 64 + offset) // 4
    array = block[start:start + size].reshape(shape)
    array[...] = draw(rng, shape, 1.0, "plain")
    return array


def close(actual, expected, magnitude=0.0):
    """Within RTOL and ATOL of the float64 formula, plus 8 float32 epsilons of ``magnitude``:
    the size of the terms that were summed (a standard forward error bound), since a sum that
    cancels, like x_n + r h_n with large terms, is only as exact as its terms."""
    error = np.abs(actual.astype(np.float64) - expected)
    allowed = RTOL * np.abs(expected) + ATOL + 8 * EPSILON * np.asarray(magnitude)
    worst = np.unravel_index(np.argmax(error - allowed), error.shape)
    assert np.all(error <= allowed), (worst, actual[worst], expected[worst],
                                      np.broadcast_to(allowed, error.shape)[worst])


def ulps(actual, expected):
    return np.abs(actual - expected) / np.spacing(np.abs(expected).astype(np.float32))


def record_calls(monkeypatch, names):
    """The names of the compiled kernels among ``names`` that run from now on, in order (each
    still runs: the list only watches)."""
    seen = []
    for name in names:
        real = getattr(native._native, name)

        def recorded(*arguments, _real=real, _name=name):
            seen.append(_name)
            return _real(*arguments)
        monkeypatch.setattr(native._native, name, recorded)
    return seen
