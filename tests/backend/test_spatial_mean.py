"""The global average pooling kernel (backend/pooling.py, spatial_mean): each (n, c) plane's
mean, as NumPy's, by the compiled row pass (float32) or one GEMV over every plane of a
C-order batch, a GEMV per channel of a batch-last batch, and NumPy's mean for any other
layout; the Mean operation and
global_avg_pool2d through it, forward and backward."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import autograd
from autograd import Tensor
from autograd.backend import native, pooling
from tests.backend import native_helpers
from tests.backend.test_native_convolution import laid_out


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 9), c=st.integers(1, 5), h=st.integers(1, 7), w=st.integers(1, 7),
       layout=st.sampled_from(["plain", "batch last", "channels last"]),
       dtype=st.sampled_from([np.float32, np.float64]), seed=st.integers(0, 2 ** 16))
def test_the_mean_of_each_plane(n, c, h, w, layout, dtype, seed):
    x = np.random.default_rng(seed).standard_normal((n, c, h, w)).astype(dtype)
    x = laid_out(x, layout)
    y = pooling.spatial_mean(x)
    want = x.astype(np.float64).mean(axis=(2, 3), keepdims=True)
    assert y.shape == (n, c, 1, 1) and y.dtype == dtype
    tolerance = 1e-6 if dtype == np.float32 else 1e-14
    np.testing.assert_allclose(y, want, rtol=tolerance, atol=tolerance)


def test_c_order_and_batch_last_take_the_product_and_others_numpys_mean(monkeypatch):
    """float32 in C order: the compiled row pass where built (else one GEMV); float64 in C
    order one GEMV, a batch-last batch a GEMV per channel, other layouts NumPy's mean."""
    calls = []
    real = np.matmul
    monkeypatch.setattr(pooling.np, "matmul",
                        lambda a, b, **k: calls.append((a.shape, b.shape)) or real(a, b, **k))
    compiled = native_helpers.record_calls(monkeypatch, ("row_means",)) if native.available() \
        else []
    x = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    want = x.mean(axis=(2, 3), keepdims=True)
    pooling.spatial_mean(laid_out(x, "channels last"))
    pooling.spatial_mean(x.astype(np.int64))
    pooling.spatial_mean(x[:, :, :, :4])                        # planes not contiguous
    assert calls == [] and compiled == []
    np.testing.assert_allclose(pooling.spatial_mean(x.astype(np.float64)), want, rtol=1e-12)
    assert calls == [((6, 20), (20,))]                          # every plane in one GEMV
    np.testing.assert_allclose(pooling.spatial_mean(x), want, rtol=1e-6)
    y = pooling.spatial_mean(laid_out(x[:1], "batch last"))     # one image: C order too
    np.testing.assert_allclose(y, want[:1], rtol=1e-6)
    if native.available():
        assert compiled == ["row_means", "row_means"] and len(calls) == 1
    y = pooling.spatial_mean(laid_out(x, "batch last"))
    assert calls[-1] == ((20,), (3, 20, 2))                     # a GEMV per channel
    np.testing.assert_allclose(y, want, rtol=1e-6)


@pytest.mark.parametrize("keepdims", [True, False])
def test_mean_over_the_pixels_and_global_pooling_of_a_batch_last_tensor(keepdims):
    rng = np.random.default_rng(1)
    data = laid_out(rng.standard_normal((4, 3, 5, 6)).astype(np.float32), "batch last")
    weights = rng.standard_normal((4, 3, 1, 1) if keepdims else (4, 3)).astype(np.float32)
    for function in (lambda t: autograd.mean(t, axis=(2, 3), keepdims=keepdims),
                     lambda t: autograd.global_avg_pool2d(t) if keepdims else
                     autograd.reshape(autograd.global_avg_pool2d(t), (4, 3))):
        x = Tensor(data=data, stores_grad=True)
        y = function(x)
        want = data.mean(axis=(2, 3), keepdims=keepdims)
        np.testing.assert_allclose(y.to_numpy(), want, rtol=1e-6, atol=1e-7)
        loss = autograd.sum(y * Tensor(data=weights))
        grads = dict((id(p), g) for p, g in autograd.backward(loss))
        dx = np.broadcast_to(weights.reshape(4, 3, 1, 1) / 30, data.shape)
        np.testing.assert_allclose(grads[id(x)], dx, rtol=1e-6)
