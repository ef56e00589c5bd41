"""scaled_dot_product_attention, masked_fill, triu/tril: forward against NumPy formulas written
here, float64 gradcheck with random dy, float32 kept; masks, dropout, errors; PyTorch's
scaled_dot_product_attention where torch is installed."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import autograd
from autograd import Tensor
from tests.opcase import OpCase, floats, check_case

# the compiled kernels and the portable code they stand in for: both tested
pytestmark = pytest.mark.usefixtures("compiled_and_portable")


def attention_reference(q, k, v, mask=None, causal=False, scale=None):
    """softmax(q k^T / sqrt(D) + mask) v with a loop-free NumPy formula; fully masked rows 0."""
    scale = 1 / np.sqrt(q.shape[-1]) if scale is None else scale
    scores = np.einsum("...qd,...kd->...qk", q, k) * scale
    allowed = np.ones(scores.shape, bool)
    if mask is not None and mask.dtype == bool:
        allowed = allowed & mask
    elif mask is not None:
        scores = scores + mask
    if causal:
        allowed = allowed & (np.arange(k.shape[-2])[None, :] <= np.arange(q.shape[-2])[:, None])
    peak = np.where(allowed, scores, -np.inf).max(axis=-1, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0.0)
    weights = np.exp(np.where(allowed, scores - peak, -np.inf))
    total = weights.sum(axis=-1, keepdims=True)
    probabilities = weights / np.where(total == 0, 1, total)
    return np.einsum("...qk,...kd->...qd", probabilities, v)


def sdpa(q, k, v, **kwargs):
    return autograd.scaled_dot_product_attention(q, k, v, **kwargs)


RNG = np.random.default_rng(7)
PADDING = RNG.random((2, 1, 1, 5)) > 0.4          # key padding per batch row, broadcast
PADDING[0, 0, 0, :] = False                         # one row with every key masked
ADDITIVE = RNG.standard_normal((4, 5))

CASES = [
    OpCase(sdpa, attention_reference, [floats(shape=(3, 4, 2)), floats(shape=(3, 5, 2)),
                                       floats(shape=(3, 5, 3))], shape=(), name="sdpa_3d"),
    OpCase(sdpa, attention_reference, [floats(shape=(2, 2, 4, 3)), floats(shape=(2, 2, 4, 3)),
                                       floats(shape=(2, 2, 4, 3))], shape=(),
           kwargs=dict(causal=True), name="sdpa_causal"),
    OpCase(sdpa, attention_reference, [floats(shape=(2, 3, 4, 2)), floats(shape=(2, 3, 5, 2)),
                                       floats(shape=(2, 3, 5, 2))], shape=(),
           kwargs=dict(mask=PADDING), name="sdpa_bool_mask_with_empty_row"),
    OpCase(sdpa, attention_reference, [floats(shape=(4, 2)), floats(shape=(5, 2)),
                                       floats(shape=(5, 3))], shape=(),
           kwargs=dict(mask=ADDITIVE, scale=0.7), name="sdpa_additive_mask_2d"),
    OpCase(sdpa, attention_reference, [floats(shape=(2, 1, 3, 2)), floats(shape=(1, 4, 3, 2)),
                                       floats(shape=(4, 3, 2))], shape=(),
           kwargs=dict(causal=True), name="sdpa_broadcast_batch"),
    OpCase(autograd.masked_fill, lambda x, mask, value: np.where(mask, value, x),
           [floats(shape=(3, 4))], shape=(),
           # fixed, not drawn: the seeded draw was all False and no place was ever filled
           kwargs=dict(mask=np.array([True, False, False, True]), value=-3.0),
           name="masked_fill"),
    OpCase(autograd.triu, np.triu, [floats()], min_dims=2, max_dims=4),
    OpCase(autograd.tril, lambda x, diagonal: np.tril(x, diagonal), [floats()], min_dims=2,
           kwargs=dict(diagonal=-1), name="tril_below"),
]


@pytest.mark.parametrize("case", CASES, ids=str)
@given(data=st.data())
def test_op(case, data):
    check_case(case, data)


@settings(max_examples=15)
@given(batch=st.lists(st.integers(1, 3), max_size=2).map(tuple), tq=st.integers(1, 5),
       tk=st.integers(1, 5), d=st.integers(1, 4), dv=st.integers(1, 3), causal=st.booleans(),
       seed=st.integers(0, 2 ** 32 - 1))
def test_attention_on_drawn_shapes(batch, tq, tk, d, dv, causal, seed):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(batch + shape) for shape in ((tq, d), (tk, d), (tk, dv))]
    tensors = [Tensor(data=a, stores_grad=True) for a in arrays]
    y = sdpa(*tensors, causal=causal)
    np.testing.assert_allclose(y.to_numpy(), attention_reference(*arrays, causal=causal),
                               rtol=1e-10, atol=1e-12)
    autograd.gradcheck(lambda q, k, v: sdpa(q, k, v, causal=causal), tensors)


def test_dropout_drops_probabilities_with_the_seeded_mask_and_its_gradient_checks():
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((2, 4, 3)) for _ in range(3))

    def dropped(q, k, v):
        autograd.manual_seed(5)
        return sdpa(q, k, v, dropout=0.3)

    y = dropped(*(Tensor(data=a) for a in (q, k, v))).to_numpy()
    autograd.manual_seed(5)
    draws = autograd.device.cpu().random.random((2, 4, 4), dtype=np.float64)
    scores = q @ k.swapaxes(-1, -2) / np.sqrt(3)
    p = np.exp(scores) / np.exp(scores).sum(-1, keepdims=True)
    np.testing.assert_allclose(y, (p * (draws >= 0.3) / 0.7) @ v, rtol=1e-10)
    autograd.gradcheck(dropped, [Tensor(data=a, stores_grad=True) for a in (q, k, v)])
    # eval: no dropout at all
    plain = sdpa(*(Tensor(data=a) for a in (q, k, v)), dropout=0.3, training=False).to_numpy()
    np.testing.assert_allclose(plain, attention_reference(q, k, v), rtol=1e-10)


def test_probabilities_are_stable_for_huge_scores():
    q = Tensor(data=np.full((1, 2, 2), 300.0, np.float32), stores_grad=True)
    y = sdpa(q, q, Tensor(data=np.ones((1, 2, 2), np.float32)), causal=True)
    grads = autograd.gradients(autograd.sum(y))
    assert np.isfinite(y.to_numpy()).all() and np.isfinite(grads[q].to_numpy()).all()


def test_errors_name_the_op_and_the_shapes():
    q = Tensor(data=np.zeros((2, 3, 4), np.float32))
    with pytest.raises(ValueError, match=r"scaled_dot_product_attention: q \(2, 3, 4\) and k "
                                         r"\(2, 3, 5\)"):
        sdpa(q, Tensor(data=np.zeros((2, 3, 5), np.float32)), q)
    with pytest.raises(ValueError, match=r"mask of shape \(2, 2\) does not broadcast to the "
                                         r"scores \(2, 3, 3\)"):
        sdpa(q, q, q, mask=np.ones((2, 2), bool))
    with pytest.raises(TypeError, match="mask must be boolean"):
        sdpa(q, q, q, mask=np.ones((3, 3), np.int64))
    with pytest.raises(ValueError, match="dropout must be in"):
        sdpa(q, q, q, dropout=1.0)
    with pytest.raises(ValueError, match=r"masked_fill: mask of shape \(2,\)"):
        autograd.masked_fill(q, np.ones(2, bool), 0.0)
    with pytest.raises(ValueError, match="triu: expected at least 2 dimensions"):
        autograd.triu(Tensor(data=[1.0]))


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("use_mask", [False, True])
def test_matches_pytorch_scaled_dot_product_attention(causal, use_mask):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal((2, 3, 6, 4)).astype(np.float32) for _ in range(3)]
    mask = rng.random((2, 1, 6, 6)) > 0.3
    mask[..., 0] = True                    # no empty rows: torch gives NaN there
    tensors = [Tensor(data=a, stores_grad=True) for a in arrays]
    y = sdpa(*tensors, mask=mask if use_mask else None, causal=causal)
    dy = rng.standard_normal(y.shape).astype(np.float32)
    grads = autograd.gradients(y, dy)

    torch_inputs = [torch.tensor(a, requires_grad=True) for a in arrays]
    if use_mask and causal:
        # PyTorch refuses attn_mask together with is_causal: its causal mask joins ours by hand
        torch_mask, torch_causal = torch.tensor(mask & np.tril(np.ones((6, 6), bool))), False
    else:
        torch_mask, torch_causal = (torch.tensor(mask) if use_mask else None), causal
    expected = torch.nn.functional.scaled_dot_product_attention(
        *torch_inputs, attn_mask=torch_mask, is_causal=torch_causal)
    expected.backward(torch.tensor(dy))
    np.testing.assert_allclose(y.to_numpy(), expected.detach().numpy(), rtol=1e-4, atol=1e-5)
    for t, reference in zip(tensors, torch_inputs):
        np.testing.assert_allclose(grads[t].to_numpy(), reference.grad.numpy(), rtol=1e-4,
                                   atol=1e-5)


def test_masked_fill_takes_a_list_mask_and_names_itself_and_triu_takes_k():
    np.testing.assert_array_equal(
        autograd.masked_fill(Tensor(data=[1.0, 2.0]), [True, False], 0.0).to_numpy(), [0.0, 2.0])
    with pytest.raises(TypeError, match=r"^masked_fill: expected a Tensor, got list$"):
        autograd.masked_fill([1.0], Tensor(data=np.array([True])), 0.0)
    np.testing.assert_array_equal(autograd.triu(Tensor(data=np.ones((3, 3))), 1).to_numpy(),
                                  np.triu(np.ones((3, 3)), 1))


@pytest.mark.parametrize("only", ["q", "k"])
def test_attention_gradient_of_q_or_k_alone_passes_gradcheck(only):
    rng = np.random.default_rng(8)
    q, k, v = (rng.standard_normal((2, 3, 4)) for _ in range(3))
    fixed = {"q": Tensor(data=q, requires_grad=False), "k": Tensor(data=k, requires_grad=False),
             "v": Tensor(data=v, requires_grad=False)}

    def f(x):
        args = dict(fixed, **{only: x})
        return autograd.scaled_dot_product_attention(args["q"], args["k"], args["v"])

    assert autograd.gradcheck(f, [q if only == "q" else k])
