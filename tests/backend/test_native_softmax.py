"""The compiled softmaxes (autograd/backend/native.py): the token loss's softmax cross-entropy and
the attention softmax, against float64 formulas for every instruction-set build this CPU runs;
bad targets, NaN, shifted rows; and the token loss op against the portable code."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import autograd
from autograd import Tensor
from autograd.backend import attention, native
from tests.backend.native_helpers import EPSILON, close, draw

pytestmark = pytest.mark.skipif(not native.available(),
                                reason="the compiled kernels are not built in this install")


@given(rows=st.integers(1, 6), width=st.integers(1, 70), scale=st.sampled_from([0.1, 3.0, 300.0]),
       layout=st.sampled_from(["plain", "rows of a wider array"]), seed=st.integers(0, 2 ** 16))
def test_softmax_cross_entropy_matches_the_formula(instruction_set, rows, width, scale, layout, seed):
    """Widths on both sides of the kernel's 16 lanes, logits far apart (probabilities that
    underflow), targets anywhere in the row."""
    rng = np.random.default_rng(seed)
    x = draw(rng, (rows, width), scale, layout)
    targets = rng.integers(0, width, rows)
    probabilities = np.full((rows, width), np.nan, np.float32)
    losses = np.full(rows, np.nan, np.float32)
    assert native.softmax_cross_entropy(x, targets, probabilities, losses)
    shifted = x.astype(np.float64) - x.max(axis=1, keepdims=True)
    total = np.exp(shifted).sum(axis=1)
    expected = np.exp(shifted) / total[:, None]
    # e^s of a rounded float32 s: relative error up to |s| epsilon
    allowed = expected * (2e-6 + 2 * EPSILON * np.abs(shifted)) + 1e-37
    assert np.all(np.abs(probabilities - expected) <= allowed)
    expected = np.log(total) - shifted[np.arange(rows), targets]
    close(losses, expected, np.log(total) + np.abs(shifted[np.arange(rows), targets]))


@given(batch=st.integers(1, 3), queries=st.integers(1, 9), keys=st.integers(1, 40),
       causal=st.booleans(), scale=st.sampled_from([0.1, 3.0, 100.0]),
       seed=st.integers(0, 2 ** 16))
def test_attention_softmax_matches_the_formula(instruction_set, batch, queries, keys, causal, scale,
                                               seed):
    """backend/attention.masked_softmax on float32 scores without a user mask (the compiled
    kernel): each row's softmax over its keys, with causal only over the keys j <= i of query
    i (numpy.tri(Tq, Tk), Tq above and below Tk), zeros after."""
    rng = np.random.default_rng(seed)
    scores = (rng.standard_normal((batch, queries, keys)) * scale).astype(np.float32)
    kept = np.tri(queries, keys, dtype=bool) if causal else np.ones((queries, keys), bool)
    masked = np.where(kept, scores.astype(np.float64), -np.inf)
    shifted = masked - masked.max(axis=-1, keepdims=True)
    want = np.exp(shifted) / np.exp(shifted).sum(axis=-1, keepdims=True)
    got = attention.masked_softmax(scores.copy(), None, guard=False, causal=causal)
    allowed = want * (2e-6 + 2 * EPSILON * np.abs(np.where(kept, shifted, 0))) + 1e-37
    assert np.all(np.abs(got - want) <= allowed)
    assert np.all(got[:, ~kept] == 0)


def test_attention_softmax_with_a_mask_and_causal_takes_both():
    """A user mask with causal: the portable path, the mask and the causal pattern together."""
    rng = np.random.default_rng(5)
    scores = rng.standard_normal((2, 4, 6)).astype(np.float32)
    keep = np.ones((2, 1, 6), bool)
    keep[1, :, 0] = False
    got = attention.masked_softmax(scores.copy(), keep, guard=True, causal=True)
    masked = np.where(keep & np.tri(4, 6, dtype=bool), scores.astype(np.float64), -np.inf)
    peak = masked.max(axis=-1, keepdims=True)
    peak[~np.isfinite(peak)] = 0
    total = np.exp(masked - peak).sum(axis=-1, keepdims=True)
    total[total == 0] = 1
    np.testing.assert_allclose(got, np.exp(masked - peak) / total, rtol=2e-6, atol=1e-30)
    assert np.all(got[1, 0] == 0)                       # its only key masked: zeros, no NaN
    with pytest.raises(ValueError, match="attention_softmax: expected a positive number of "
                                         "queries, got 0"):
        native._native.attention_softmax(scores[0], 0, True)


def test_softmax_cross_entropy_does_not_depend_on_a_shift_of_the_row(instruction_set):
    """Rows of logits all far below or above 0 give the probabilities of the row around 0."""
    rng = np.random.default_rng(2)
    centred = rng.standard_normal((1, 40)).astype(np.float32)
    x = np.concatenate([centred, centred - 1000, centred + 1000])
    probabilities, losses = np.empty_like(x), np.empty(3, np.float32)
    assert native.softmax_cross_entropy(x, np.array([3, 3, 3]), probabilities, losses)
    np.testing.assert_allclose(probabilities[1:], probabilities[[0, 0]], rtol=1e-4)
    np.testing.assert_allclose(losses[1:], losses[[0, 0]], rtol=1e-4)


def test_softmax_cross_entropy_rejects_bad_targets_and_propagates_nan(instruction_set):
    x = np.zeros((3, 5), np.float32)
    probabilities, losses = np.empty_like(x), np.empty(3, np.float32)
    with pytest.raises(ValueError, match="softmax_cross_entropy: target 5 of row 1 is outside "
                                         "\\[0, 5\\)"):
        native.softmax_cross_entropy(x, np.array([0, 5, 1]), probabilities, losses)
    with pytest.raises(ValueError, match="softmax_cross_entropy: target -1 of row 0"):
        native.softmax_cross_entropy(x, np.array([-1, 0, 1]), probabilities, losses)
    with pytest.raises(ValueError, match="expected targets of 3 elements, got 2"):
        native._native.softmax_cross_entropy(x, probabilities, np.zeros(2, np.int64), losses)
    with pytest.raises(ValueError, match="expected losses as a contiguous 1-D float32 array"):
        native._native.softmax_cross_entropy(x, probabilities, np.zeros(3, np.int64),
                                             np.zeros(3))
    x[1, 2] = np.nan
    assert native.softmax_cross_entropy(x, np.array([0, 1, 4], np.int32), probabilities, losses)
    assert np.isnan(losses[1]) and np.all(np.isnan(probabilities[1]))
    np.testing.assert_allclose(losses[[0, 2]], np.log(5), rtol=1e-6)
    assert native.softmax_cross_entropy(x.astype(np.float64), np.array([0, 1, 4]),
                                        probabilities, losses) is None


def test_the_token_loss_agrees_with_the_portable_code():
    """token_cross_entropy over a 3-D batch, with an ignored position, compiled against the
    portable passes: the loss and the gradient."""
    rng = np.random.default_rng(1)
    logits = (rng.standard_normal((3, 7, 50)) * 4).astype(np.float32)
    targets = rng.integers(0, 50, (3, 7))
    targets[1, 2] = -100

    def run(flag):
        previous = native.set_enabled(flag)
        try:
            x = Tensor(data=logits.copy(), stores_grad=True)
            loss = autograd.token_cross_entropy(x, targets)
            (grad,) = [g for _, g in autograd.backward(loss)]
            return loss.to_numpy(), grad
        finally:
            native.set_enabled(previous)

    (loss_native, grad_native), (loss_numpy, grad_numpy) = run(True), run(False)
    np.testing.assert_allclose(loss_native, loss_numpy, rtol=1e-6)
    np.testing.assert_allclose(grad_native, grad_numpy, rtol=1e-5, atol=1e-9)


@pytest.mark.parametrize("causal", [True, False])
def test_a_row_that_an_added_mask_made_all_minus_infinity_gives_zeros(causal):
    """With guard (the op's additive mask), such a row gives zeros, not NaN, compiled or not."""
    scores = np.zeros((1, 3, 4), np.float32)
    scores[0, 1] = -np.inf
    for flag in (True, False):
        previous = native.set_enabled(flag)
        try:
            got = attention.masked_softmax(scores.copy(), None, guard=True, causal=causal)
        finally:
            native.set_enabled(previous)
        assert np.all(got[0, 1] == 0) and not np.any(np.isnan(got))
        assert np.allclose(got[0, 0].sum(), 1) and np.allclose(got[0, 2].sum(), 1)
