"""The normalization CPU kernels (autograd/backend/normalization.py) on what the rest of the
suite leaves out, against NumPy formulas written here: batch_norm_backward asked for only some
gradients, batch norm on float32, and layer_norm_backward's parameter gradients without dx
over several blocks of rows."""
import itertools

import numpy as np
import pytest

from autograd.backend import normalization
from autograd.backend import numpy_kernels as kernels

# the compiled kernels and the portable code they stand in for: both tested
pytestmark = pytest.mark.usefixtures("compiled_and_portable")


def reference_batch_norm(x, scale, bias, eps, dy, training, mean=None, var=None):
    """y, mean, var, dx, dscale, dbias of batch norm over axis 1 of x (N, C, ...), float64."""
    axes = (0,) + tuple(range(2, x.ndim))
    stretch = (1, -1) + (1,) * (x.ndim - 2)
    if training:
        mean, var = x.mean(axis=axes), x.var(axis=axes)
    invstd = 1 / np.sqrt(var + eps).reshape(stretch)
    xhat = (x - mean.reshape(stretch)) * invstd
    y = xhat * scale.reshape(stretch) + bias.reshape(stretch)
    g = dy * scale.reshape(stretch)
    if training:
        dx = invstd * (g - g.mean(axis=axes, keepdims=True)
                       - xhat * (g * xhat).mean(axis=axes, keepdims=True))
    else:
        dx = invstd * g
    return y, mean, var, dx, (dy * xhat).sum(axis=axes), dy.sum(axis=axes)


NEEDS = [needs for needs in itertools.product((False, True), repeat=3) if any(needs)]


@pytest.mark.parametrize("needs", NEEDS, ids=lambda n: "".join("x" if f else "-" for f in n))
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_backward_returns_exactly_the_gradients_asked_for(needs, training):
    """Each gradient asked for matches the formula; each not asked for is None. Catches dx
    built whatever ``needs`` says (``needs[0] or True``) or by the wrong flag (``needs[1]``),
    and dscale / dbias returned unasked (``or True``) or by each other's flag (``needs[2]``):
    the case of the issue's "batch_norm's backward when the input needs no gradient"."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal((3, 4, 5, 2)) * 2 + 1
    scale, bias = rng.uniform(0.5, 2, 4), rng.standard_normal(4)
    dy = rng.standard_normal(x.shape)
    given = (None, None) if training else (rng.standard_normal(4), rng.random(4) + 0.5)
    _, _, _, saved = kernels.batch_norm_forward(x, scale, bias, 1e-3, *given)
    got = kernels.batch_norm_backward(dy, scale, saved, training, needs)
    want = reference_batch_norm(x, scale, bias, 1e-3, dy, training, *given)[3:]
    for wanted, gradient, expected in zip(needs, got, want):
        if wanted:
            np.testing.assert_allclose(gradient, expected, rtol=1e-10, atol=1e-10)
        else:
            assert gradient is None


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_kernels_keep_float32(training):
    """float32 in, float32 out: y, the batch's mean and var, the saved centred values and
    inverse deviations, and the three gradients. Catches mean, var or invstd allocated as
    float64 (``xp.empty(channels, None)`` / ``xp.empty(channels, )``): the returned
    statistics change dtype, and a float64 factor drags every pass that uses it into float64."""
    rng = np.random.default_rng(12)
    x64 = rng.standard_normal((4, 3, 6, 5)) * 3 + 1
    scale64, bias64 = rng.uniform(0.5, 2, 3), rng.standard_normal(3)
    dy64 = rng.standard_normal(x64.shape)
    x, scale, bias, dy = (a.astype(np.float32) for a in (x64, scale64, bias64, dy64))
    given = (None, None) if training else (np.float32([0.5, -1, 2]), np.float32([1, 2, 0.5]))
    y, mean, var, saved = kernels.batch_norm_forward(x, scale, bias, 1e-3, *given)
    grads = kernels.batch_norm_backward(dy, scale, saved, training, (True, True, True))
    centered, invstd, _ = saved
    arrays = (y, mean, var, centered, invstd) + grads
    assert [a.dtype for a in arrays] == [np.dtype(np.float32)] * len(arrays)
    want = reference_batch_norm(*(a.astype(np.float64) for a in (x, scale, bias)), 1e-3,
                                dy.astype(np.float64), training,
                                *(None if g is None else g.astype(np.float64) for g in given))
    for got, expected in zip((y, mean, var) + grads, want):
        np.testing.assert_allclose(got, expected, rtol=2e-4, atol=2e-4)


def test_layer_norm_backward_without_dx_sums_dscale_and_dbias_over_every_block():
    """dscale and dbias alone (dx not wanted) over rows that take several cache blocks: each
    block adds its part. Catches the block loop left at the first block when dx is not wanted
    (``continue`` -> ``break``)."""
    width = 128
    rows = 3 * normalization._block_rows(width) + 7
    rng = np.random.default_rng(13)
    x, dy = rng.standard_normal((rows, width)), rng.standard_normal((rows, width))
    scale = rng.uniform(0.5, 2, width)
    _, xhat, invstd = kernels.layer_norm_forward(x, scale, None, 1e-5)
    mean, var = x.mean(axis=1, keepdims=True), x.var(axis=1, keepdims=True)
    want_xhat = (x - mean) / np.sqrt(var + 1e-5)
    for needs in ((False, True, True), (False, True, False), (False, False, True)):
        dx, dscale, dbias = kernels.layer_norm_backward(dy, xhat, invstd, scale, needs)
        assert dx is None
        for wanted, got, expected in zip(needs[1:], (dscale, dbias),
                                         ((dy * want_xhat).sum(axis=0), dy.sum(axis=0))):
            if wanted:
                np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)
            else:
                assert got is None
