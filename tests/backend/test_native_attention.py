"""The compiled attention (autograd/backend/csrc/kernel_attention.h, through backend/attention.py's
fused_forward and fused_backward): p, y and the three gradients against float64 formulas for
every instruction-set build this CPU runs, over sizes on both sides of the register tiles and
heads read in place from a packed projection; the op against the portable code; when the
kernels step aside; the binding's errors."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import autograd
from autograd import Tensor
from autograd.backend import attention, native
from tests.backend.native_helpers import EPSILON, close

pytestmark = pytest.mark.skipif(not native.available(),
                                reason="the compiled kernels are not built in this install")


def heads_of(rng, batch, heads, rows, width, layout):
    """float32 (batch, heads, rows, width): plain, or the heads of a packed (batch, rows, 3 *
    heads * width) projection, transposed, as MultiHeadAttention reads them."""
    if layout == "plain":
        return rng.standard_normal((batch, heads, rows, width)).astype(np.float32)
    packed = rng.standard_normal((batch, rows, 3, heads, width)).astype(np.float32)
    return packed[:, :, 1].transpose(0, 2, 1, 3)


def formula_forward(q, k, v, scale, causal):
    """p and y in float64, and the mask of kept keys."""
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    queries, keys = q.shape[-2], k.shape[-2]
    kept = np.tri(queries, keys, dtype=bool) if causal else np.ones((queries, keys), bool)
    scores = np.where(kept, q @ k.swapaxes(-1, -2) * scale, -np.inf)
    shifted = scores - scores.max(axis=-1, keepdims=True)
    p = np.exp(shifted) / np.exp(shifted).sum(axis=-1, keepdims=True)
    return p, p @ v, kept, np.where(kept, shifted, 0)


@settings(max_examples=40, deadline=None)
@given(batch=st.integers(1, 2), heads=st.integers(1, 3), queries=st.integers(1, 19),
       keys=st.integers(1, 40), depth=st.integers(1, 36), value_depth=st.integers(1, 36),
       causal=st.booleans(), scale=st.sampled_from([0.1, 0.5, 2.0]),
       layout=st.sampled_from(["plain", "heads of a packed projection"]),
       seed=st.integers(0, 2 ** 16))
def test_fused_attention_matches_the_formulas(instruction_set, batch, heads, queries, keys,
                                              depth, value_depth, causal, scale, layout, seed):
    """Rows and columns on both sides of the 8 x 32 tile (and its remainders), queries above
    and below the keys with causal; the backward from the kernel's own p and y, so that each
    product is checked against its formula alone."""
    rng = np.random.default_rng(seed)
    q = heads_of(rng, batch, heads, queries, depth, layout)
    k = heads_of(rng, batch, heads, keys, depth, layout)
    v = heads_of(rng, batch, heads, keys, value_depth, layout)
    y, p = attention.fused_forward(q, k, v, scale, causal)
    want_p, _, kept, shifted = formula_forward(q, k, v, scale, causal)
    magnitude = np.abs(q.astype(np.float64)) @ np.abs(k.swapaxes(-1, -2)) * scale
    row_error = 3 * 8 * EPSILON * np.max(magnitude, axis=-1, keepdims=True)
    allowed = want_p * (2e-6 + 2 * EPSILON * np.abs(shifted) + row_error) + 1e-37
    assert np.all(np.abs(p - want_p) <= allowed)
    assert np.all(p[..., ~kept] == 0)
    p64 = p.astype(np.float64)
    close(y, p64 @ v, np.abs(p64) @ np.abs(v))

    dy = rng.standard_normal(y.shape).astype(np.float32)
    dq, dk, dv = attention.fused_backward(q, k, v, p, y, dy, scale, causal)
    dy64, y64 = dy.astype(np.float64), y.astype(np.float64)
    close(dv, p64.swapaxes(-1, -2) @ dy64, np.abs(p64.swapaxes(-1, -2)) @ np.abs(dy64))
    gradient = dy64 @ v.swapaxes(-1, -2)
    rowsum = (dy64 * y64).sum(axis=-1, keepdims=True)
    ds = p64 * (gradient - rowsum)
    ds_size = p64 * (np.abs(dy64) @ np.abs(v.swapaxes(-1, -2))
                     + np.abs(dy64 * y64).sum(axis=-1, keepdims=True))
    close(dq, ds @ k * scale, 2 * (ds_size + np.abs(ds)) @ np.abs(k) * scale)
    close(dk, ds.swapaxes(-1, -2) @ q * scale,
          2 * (ds_size + np.abs(ds)).swapaxes(-1, -2) @ np.abs(q) * scale)


def test_the_heads_split_over_threads_give_the_same_bits(thread_count):
    """Each head is computed alone, so one thread or three give equal results."""
    rng = np.random.default_rng(3)
    q, k, v = (heads_of(rng, 2, 3, 11, 8, "heads of a packed projection") for _ in range(3))
    dy = rng.standard_normal((2, 3, 11, 8)).astype(np.float32)
    y, p = attention.fused_forward(q, k, v, 0.3, True)
    grads = attention.fused_backward(q, k, v, p, y, dy, 0.3, True)
    previous = autograd.get_num_threads()
    autograd.set_num_threads(1)
    try:
        y1, p1 = attention.fused_forward(q, k, v, 0.3, True)
        grads1 = attention.fused_backward(q, k, v, p1, y1, dy, 0.3, True)
    finally:
        autograd.set_num_threads(previous)
    for got, want in zip((y, p, *grads), (y1, p1, *grads1)):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("causal", [True, False])
def test_the_op_agrees_with_the_portable_code(causal):
    """scaled_dot_product_attention on 3-D and on strided 4-D heads: output and gradients, the
    compiled kernels against the portable passes."""
    rng = np.random.default_rng(4)
    cases = [[rng.standard_normal((5, 9, 6)).astype(np.float32) for _ in range(3)],
             [heads_of(rng, 2, 4, 13, 16, "heads of a packed projection") for _ in range(3)]]
    for arrays in cases:
        results = []
        for flag in (True, False):
            previous = native.set_enabled(flag)
            try:
                tensors = [Tensor(data=a, stores_grad=True) for a in arrays]
                y = autograd.scaled_dot_product_attention(*tensors, causal=causal)
                loss = autograd.sum(y * Tensor(data=np.linspace(-1, 1, y.size, dtype=np.float32)
                                               .reshape(y.shape)))
                grads = autograd.gradients(loss)
                results.append([y.to_numpy()] + [grads[t].to_numpy() for t in tensors])
            finally:
                native.set_enabled(previous)
        for compiled, portable in zip(*results):
            np.testing.assert_allclose(compiled, portable, rtol=2e-5, atol=2e-6)


def test_the_kernels_step_aside_where_they_do_not_apply():
    rng = np.random.default_rng(5)
    q = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    assert attention.fused_forward(q.astype(np.float64), q, q, 1.0, False) is None
    assert attention.fused_forward(q, q[:1], q[:1], 1.0, False) is None       # broadcast batch
    assert attention.fused_forward(q[0, 0], q[0, 0], q[0, 0], 1.0, False) is None     # 2-D
    assert attention.fused_forward(q[:, :, :, ::-1], q, q, 1.0, False) is None
    previous = native.set_enabled(False)
    try:
        assert attention.fused_forward(q, q, q, 1.0, False) is None
        y = np.zeros((2, 3, 4, 5), np.float32)
        assert attention.fused_backward(q, q, q, np.zeros((2, 3, 4, 4), np.float32), y, y,
                                        1.0, False) is None
    finally:
        native.set_enabled(previous)


def test_the_op_takes_the_portable_path_with_a_mask_or_dropout(monkeypatch):
    calls = []
    monkeypatch.setattr(attention, "fused_forward",
                        lambda *args: calls.append(args) or None)
    from autograd.backend import numpy_kernels
    monkeypatch.setattr(numpy_kernels, "attention_forward", attention.fused_forward)
    q = Tensor(data=np.ones((2, 3, 4), np.float32))
    autograd.scaled_dot_product_attention(q, q, q, mask=np.ones((3, 3), bool))
    autograd.scaled_dot_product_attention(q, q, q, dropout=0.5, training=True)
    assert calls == []
    autograd.scaled_dot_product_attention(q, q, q)
    assert len(calls) == 1


def test_the_binding_names_the_kernel_and_the_operand():
    kernel = native._native
    q = np.zeros((1, 2, 3, 4), np.float32)
    p, y = np.zeros((1, 2, 3, 3), np.float32), np.zeros((1, 2, 3, 4), np.float32)
    with pytest.raises(ValueError, match=r"^attention_forward: expected v of shape "
                                         r"\(1, 2, 3, 4\), got \(1, 2, 5, 4\)$"):
        kernel.attention_forward(q, q, np.zeros((1, 2, 5, 4), np.float32), p, y, 1.0, False,
                                 0, 2)
    with pytest.raises(ValueError, match=r"^attention_forward: expected k as a 4-D float32 "
                                         r"array with contiguous rows$"):
        kernel.attention_forward(q, q[0], q, p, y, 1.0, False, 0, 2)
    with pytest.raises(ValueError, match=r"^attention_forward: p's rows must be contiguous"):
        kernel.attention_forward(q, q, q, np.zeros((1, 2, 3, 6), np.float32)[..., :3], y, 1.0,
                                 False, 0, 2)
    with pytest.raises(ValueError, match=r"^attention_forward: start and stop must satisfy"):
        kernel.attention_forward(q, q, q, p, y, 1.0, False, 0, 3)
    with pytest.raises(ValueError, match=r"^attention_backward: expected dq of shape "
                                         r"\(1, 2, 3, 4\), got \(1, 2, 3, 5\)$"):
        kernel.attention_backward(q, q, q, p, y, y, np.zeros((1, 2, 3, 5), np.float32), q.copy(),
                                  q.copy(), 1.0, False, 0, 2)
    frozen = q.copy()
    frozen.setflags(write=False)
    with pytest.raises((ValueError, TypeError, BufferError), match=r"^attention_backward: dk: "):
        kernel.attention_backward(q, q, q, p, y, y, q.copy(), frozen, q.copy(), 1.0, False, 0, 2)


def test_outputs_are_laid_out_like_the_inputs():
    """Heads split from a projection (memory (N, T, H, D)) give y and dq, dk, dv in that memory
    too, so that merging the heads back is a view; plain heads give C-contiguous results."""
    rng = np.random.default_rng(6)
    split = [heads_of(rng, 2, 3, 5, 4, "heads of a packed projection") for _ in range(3)]
    plain = [np.ascontiguousarray(x) for x in split]
    dy = rng.standard_normal((2, 3, 5, 4)).astype(np.float32)
    for inputs, interleaved in ((split, True), (plain, False)):
        y, p = attention.fused_forward(*inputs, 0.5, True)
        grads = attention.fused_backward(*inputs, p, y, dy, 0.5, True)
        for array in (y, *grads):
            merged = array.transpose(0, 2, 1, 3)
            assert merged.flags.c_contiguous is interleaved
            assert array.flags.c_contiguous is not interleaved
        want = attention.fused_forward(*plain, 0.5, True)[0]
        np.testing.assert_array_equal(y, want)


def test_the_gradients_of_a_packed_projection_are_one_array():
    """q, k and v cut from one (N, T, 3E) projection: dq, dk and dv are the same pieces of one
    new array (so the projection's Split joins them without a copy), with the values of
    separately laid out gradients. q, k and v that share memory (one array passed three times)
    get gradients of their own."""
    rng = np.random.default_rng(8)
    n, t, h, d = 2, 5, 3, 4
    qkv = rng.standard_normal((n, t, 3 * h * d)).astype(np.float32)
    q, k, v = (qkv[..., i * h * d:(i + 1) * h * d].reshape(n, t, h, d).transpose(0, 2, 1, 3)
               for i in range(3))
    dy = rng.standard_normal((n, h, t, d)).astype(np.float32)
    y, p = attention.fused_forward(q, k, v, 0.5, True)
    grads = attention.fused_backward(q, k, v, p, y, dy, 0.5, True)
    joined = grads[0].transpose(0, 2, 1, 3).reshape(n, t, h * d)
    whole = np.lib.stride_tricks.as_strided(joined, qkv.shape, joined.strides)
    for i, grad in enumerate(grads):
        assert grad.base is grads[0].base and grad.strides == q.strides
        np.testing.assert_array_equal(
            whole[..., i * h * d:(i + 1) * h * d].reshape(n, t, h, d).transpose(0, 2, 1, 3),
            grad)
    copies = [np.ascontiguousarray(x) for x in (q, k, v)]
    separate = attention.fused_backward(*copies, p, y, dy, 0.5, True)
    for grad, expected in zip(grads, separate):
        np.testing.assert_array_equal(grad, expected)
    same = attention.fused_backward(q, q, q, p, y, dy, 0.5, True)
    assert not any(np.shares_memory(a, b) for a, b in ((same[0], same[1]), (same[0], same[2]),
                                                       (same[1], same[2])))
    again = attention.fused_backward(*(np.ascontiguousarray(q),) * 3, p, y, dy, 0.5, True)
    for grad, expected in zip(same, again):
        np.testing.assert_array_equal(grad, expected)
