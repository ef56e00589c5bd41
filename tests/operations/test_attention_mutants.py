"""scaled_dot_product_attention where the sampled mutation run found the suite blind
(docs/testing.md): v's leading axes in the broadcast batch, the softmax's shift per row, the
leading-axes message. Each against the NumPy formula of tests/operations/test_attention.py."""
import re

import numpy as np
import pytest

import autograd
from autograd import Tensor
from tests.operations.test_attention import attention_reference

# the compiled kernels and the portable code they stand in for: both tested
pytestmark = pytest.mark.usefixtures("compiled_and_portable")


def test_only_v_batched_broadcasts_q_k_and_a_batched_mask():
    # q and k have no leading axes, v and the mask have (2,): the scores are (2, 3, 3), so a
    # batch that left v out would reject the mask
    rng = np.random.default_rng(22)
    q, k = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    v = rng.standard_normal((2, 3, 5))
    mask = rng.random((2, 3, 3)) > 0.3
    mask[..., 0] = True
    y = autograd.scaled_dot_product_attention(Tensor(data=q), Tensor(data=k), Tensor(data=v),
                                              mask=mask)
    assert y.shape == (2, 3, 5)
    np.testing.assert_allclose(y.to_numpy(), attention_reference(q, k, v, mask=mask),
                               rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kind", ["keep", "add"])
def test_a_mask_batched_like_v_alone_passes_gradcheck(kind):
    # the scores (3, 3) of unbatched q and k take the mask's leading axes (2,); their
    # gradients sum over them back to q's and k's shapes
    rng = np.random.default_rng(23)
    q, k = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    v = rng.standard_normal((2, 3, 5))
    if kind == "keep":
        mask = rng.random((2, 3, 3)) > 0.3
        mask[..., 1] = True
    else:
        mask = rng.standard_normal((2, 3, 3))
    y = autograd.scaled_dot_product_attention(Tensor(data=q), Tensor(data=k), Tensor(data=v),
                                              mask=mask)
    np.testing.assert_allclose(y.to_numpy(), attention_reference(q, k, v, mask=mask),
                               rtol=1e-10, atol=1e-12)
    assert autograd.gradcheck(
        lambda a, b, c: autograd.scaled_dot_product_attention(a, b, c, mask=mask), [q, k, v])


def test_leading_axes_of_v_that_do_not_broadcast_are_named_exactly():
    q = Tensor(data=np.zeros((2, 3, 4), np.float32))
    v = Tensor(data=np.zeros((3, 3, 4), np.float32))
    message = ("scaled_dot_product_attention: the leading axes of q (2, 3, 4), k (2, 3, 4) "
               "and v (3, 3, 4) do not broadcast")
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        autograd.scaled_dot_product_attention(q, q, v)


def test_softmax_shifts_each_row_by_its_own_maximum():
    # row 0's scores are ~1000 above row 1's: shifting both by one maximum over all rows
    # would underflow row 1 to zeros (float32 exp(-1000) is 0) and divide 0 by 0
    d = 4
    q = np.zeros((2, d), np.float32)
    q[0] = 2000.0 / np.sqrt(d)
    q[1, 0] = 0.5
    k = np.eye(3, d, dtype=np.float32) + 0.5
    v = np.arange(15, dtype=np.float32).reshape(3, 5)
    y = autograd.scaled_dot_product_attention(Tensor(data=q), Tensor(data=k),
                                              Tensor(data=v)).to_numpy()
    expected = attention_reference(q.astype(np.float64), k.astype(np.float64),
                                   v.astype(np.float64))
    assert np.isfinite(y).all()
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)


# masked_fill and triu/tril: survivors of the whole mutation run of chunk 4 (docs/testing.md).
# test_attention.py's masked_fill OpCase draws its mask from a seeded generator that happens to
# give [False] * 4, so no filled place was ever checked, forward or backward.

def test_masked_fill_fills_the_masked_places_and_gives_them_no_gradient():
    # catches the mask not saved for backward, np.where(None, ...), and a gradient of 1 (or
    # NaN, dtype.type(None)) at the filled places instead of 0
    rng = np.random.default_rng(30)
    x = rng.standard_normal((3, 4))
    mask = np.array([True, False, True, False])
    xt = Tensor(data=x, stores_grad=True)
    y = autograd.masked_fill(xt, mask, -3.0)
    np.testing.assert_array_equal(y.to_numpy(), np.where(mask, -3.0, x))
    dy = rng.standard_normal((3, 4))
    grad = autograd.gradients(y, dy)[xt].to_numpy()
    np.testing.assert_array_equal(grad, np.where(mask, 0.0, dy))
    assert autograd.gradcheck(lambda t: autograd.masked_fill(t, mask, -3.0), [x])


def test_masked_fill_messages_are_exact():
    x = Tensor(data=np.zeros((2, 3)))
    with pytest.raises(TypeError, match=r"^masked_fill: mask must be boolean, got int64$"):
        autograd.masked_fill(x, np.ones(3, np.int64), 0.0)
    with pytest.raises(TypeError, match=r"^masked_fill: value must be a real number, got str$"):
        autograd.masked_fill(x, np.ones(3, bool), "1")
    message = "masked_fill: mask of shape (2,) does not broadcast to x of shape (2, 3)"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        autograd.masked_fill(x, np.ones(2, bool), 0.0)


def test_triu_gradient_keeps_its_diagonal_offset():
    # Triangle.backward with triu(dy) (diagonal dropped): the gradient would keep the main
    # diagonal that the forward zeroed
    rng = np.random.default_rng(31)
    x = rng.standard_normal((2, 3, 4))
    dy = rng.standard_normal((2, 3, 4))
    for fn, reference, k in ((autograd.triu, np.triu, 1), (autograd.triu, np.triu, -1),
                             (autograd.tril, np.tril, 1), (autograd.tril, np.tril, -1)):
        xt = Tensor(data=x, stores_grad=True)
        y = fn(xt, k)
        np.testing.assert_array_equal(y.to_numpy(), reference(x, k))
        np.testing.assert_array_equal(autograd.gradients(y, dy)[xt].to_numpy(), reference(dy, k))


def test_tril_defaults_to_the_main_diagonal():
    x = np.arange(1.0, 10.0).reshape(3, 3)
    np.testing.assert_array_equal(autograd.tril(Tensor(data=x)).to_numpy(), np.tril(x))
    np.testing.assert_array_equal(autograd.triu(Tensor(data=x)).to_numpy(), np.triu(x))


@pytest.mark.parametrize("name", ["triu", "tril"])
def test_triangle_messages_name_the_op_exactly(name):
    fn = getattr(autograd, name)
    with pytest.raises(TypeError, match=f"^{name}: expected a Tensor, got list$"):
        fn([[1.0]])
    with pytest.raises(ValueError, match=rf"^{name}: expected at least 2 dimensions, got \(3,\)$"):
        fn(Tensor(data=[1.0, 2.0, 3.0]))
    with pytest.raises(TypeError, match=f"^{name}: diagonal must be an int, got float$"):
        fn(Tensor(data=np.ones((2, 2))), 1.0)
    with pytest.raises(TypeError, match=f"^{name}: diagonal must be an int, got bool$"):
        fn(Tensor(data=np.ones((2, 2))), True)


def test_attention_gradient_of_v_alone_passes_gradcheck():
    # backward's early return when neither q nor k needs a gradient (a tuple `- no_mask_grad`
    # there raised only on this path), with a mask so that the mask's None is appended too
    rng = np.random.default_rng(32)
    q, k = (Tensor(data=rng.standard_normal((2, 3, 4)), requires_grad=False) for _ in range(2))
    v = rng.standard_normal((2, 3, 5))
    mask = rng.standard_normal((3, 3))
    vt = Tensor(data=v, stores_grad=True)
    y = autograd.scaled_dot_product_attention(q, k, vt, mask=mask)
    dy = rng.standard_normal(y.shape)
    p = attention_reference(q.to_numpy(), k.to_numpy(), np.eye(3), mask=mask)   # P itself
    np.testing.assert_allclose(autograd.gradients(y, dy)[vt].to_numpy(),
                               p.swapaxes(-1, -2) @ dy, rtol=1e-10, atol=1e-12)
    assert autograd.gradcheck(
        lambda t: autograd.scaled_dot_product_attention(q, k, t, mask=mask), [v])


@pytest.mark.parametrize("mask_shape", [(2, 1, 3), (2, 3, 1)])
def test_a_mask_with_size_one_axes_and_v_batch_broadcasts_the_scores_to_both(mask_shape):
    # unbatched q, k (3, 4), batched v (2, 3, 5): the scores (3, 3) take the mask's leading
    # axis; broadcasting them to the mask's shape alone, (2, 1, 3), would fail
    rng = np.random.default_rng(33)
    q, k = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    v = rng.standard_normal((2, 3, 5))
    mask = rng.standard_normal(mask_shape)
    y = autograd.scaled_dot_product_attention(Tensor(data=q), Tensor(data=k), Tensor(data=v),
                                              mask=mask)
    np.testing.assert_allclose(y.to_numpy(), attention_reference(q, k, v, mask=mask),
                               rtol=1e-10, atol=1e-12)
    assert autograd.gradcheck(
        lambda a, b, c: autograd.scaled_dot_product_attention(a, b, c, mask=mask), [q, k, v])


@pytest.mark.parametrize("kind", ["keep", "add"])
def test_causal_and_a_mask_together_apply_both(kind):
    # the causal triangle combined with a boolean mask by `&` (not `|`, not replacing it)
    rng = np.random.default_rng(34)
    q, k, v = (rng.standard_normal((2, 4, 3)) for _ in range(3))
    if kind == "keep":
        mask = rng.random((2, 4, 4)) > 0.4
        mask[..., 0] = True
    else:
        mask = rng.standard_normal((2, 4, 4))
    y = autograd.scaled_dot_product_attention(Tensor(data=q), Tensor(data=k), Tensor(data=v),
                                              mask=mask, causal=True)
    np.testing.assert_allclose(y.to_numpy(), attention_reference(q, k, v, mask=mask, causal=True),
                               rtol=1e-10, atol=1e-12)
    assert autograd.gradcheck(
        lambda a, b, c: autograd.scaled_dot_product_attention(a, b, c, mask=mask, causal=True),
        [q, k, v])


def test_float32_dropout_draws_float32_from_the_device_generator():
    # the dropout mask comes from float32 draws of the seeded generator and stays float32
    rng = np.random.default_rng(35)
    q, k, v = (rng.standard_normal((2, 4, 3)).astype(np.float32) for _ in range(3))
    autograd.manual_seed(9)
    y = autograd.scaled_dot_product_attention(Tensor(data=q), Tensor(data=k), Tensor(data=v),
                                              dropout=0.25, training=True)
    assert y.dtype == np.float32
    autograd.manual_seed(9)
    draws = autograd.device.cpu().random.random((2, 4, 4), dtype=np.float32)
    p = attention_reference(q.astype(np.float64), k.astype(np.float64), np.eye(4))
    expected = (p * (draws >= 0.25) / 0.75) @ v.astype(np.float64)
    np.testing.assert_allclose(y.to_numpy(), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dropout, training", [(0.0, True), (0.5, False)])
def test_attention_without_dropout_leaves_the_generator_alone(dropout, training):
    # no dropout: no draws, so the random stream after attention is the seeded one
    q = Tensor(data=np.random.default_rng(36).standard_normal((1, 3, 2)))
    autograd.manual_seed(11)
    expected = autograd.device.cpu().random.random(4)
    autograd.manual_seed(11)
    y = autograd.scaled_dot_product_attention(q, q, q, dropout=dropout, training=training)
    np.testing.assert_array_equal(autograd.device.cpu().random.random(4), expected)
    np.testing.assert_allclose(y.to_numpy(), attention_reference(q.to_numpy(), q.to_numpy(),
                                                                 q.to_numpy()), rtol=1e-12)


_Q = np.zeros((2, 3, 4), np.float32)
_NAME = "scaled_dot_product_attention"


@pytest.mark.parametrize("args, kwargs, error, message", [
    (([1.0], _Q, _Q), {}, TypeError, "expected a Tensor, got list"),
    ((_Q, _Q, "v"), {}, TypeError, "expected a Tensor, got str"),
    ((np.zeros(4), _Q, _Q), {}, ValueError,
     "expected q with at least 2 dimensions (..., T, D), got (4,)"),
    ((_Q, np.zeros(4), _Q), {}, ValueError,
     "expected k with at least 2 dimensions (..., T, D), got (4,)"),
    ((_Q, _Q, np.zeros(4)), {}, ValueError,
     "expected v with at least 2 dimensions (..., T, D), got (4,)"),
    ((np.zeros((3, 4), np.int64), _Q, _Q), {}, TypeError, "expected floating q, got int64"),
    ((_Q, np.zeros((3, 4), np.int32), _Q), {}, TypeError, "expected floating k, got int32"),
    ((_Q, _Q, np.zeros((3, 4), np.int64)), {}, TypeError, "expected floating v, got int64"),
    ((_Q, np.zeros((2, 3, 5), np.float32), _Q), {}, ValueError,
     "q (2, 3, 4) and k (2, 3, 5) must have the same feature size D (last axis)"),
    ((_Q, _Q, np.zeros((2, 5, 4), np.float32)), {}, ValueError,
     "expected v of shape (..., 3, Dv) with as many keys as k (2, 3, 4), got (2, 5, 4)"),
    ((_Q, _Q, _Q), dict(mask=np.ones((3, 3), np.int64)), TypeError,
     "mask must be boolean (True = attend) or floating (added), got int64"),
    ((_Q, _Q, _Q), dict(mask=np.ones((2, 2), bool)), ValueError,
     "mask of shape (2, 2) does not broadcast to the scores (2, 3, 3)"),
    ((_Q, _Q, _Q), dict(mask=np.ones((1, 2, 3, 3), bool)), ValueError,
     "mask of shape (1, 2, 3, 3) does not broadcast to the scores (2, 3, 3)"),
    ((_Q, _Q, _Q), dict(dropout=True), ValueError, "dropout must be in [0, 1), got True"),
    ((_Q, _Q, _Q), dict(dropout=False), ValueError, "dropout must be in [0, 1), got False"),
    ((_Q, _Q, _Q), dict(dropout="0.1"), ValueError, "dropout must be in [0, 1), got '0.1'"),
    ((_Q, _Q, _Q), dict(dropout=-0.1), ValueError, "dropout must be in [0, 1), got -0.1"),
    ((_Q, _Q, _Q), dict(dropout=1), ValueError, "dropout must be in [0, 1), got 1"),
])
def test_attention_messages_name_the_op_and_the_argument_exactly(args, kwargs, error, message):
    args = [Tensor(data=a) if isinstance(a, np.ndarray) else a for a in args]
    with pytest.raises(error, match=f"^{re.escape(f'{_NAME}: {message}')}$"):
        autograd.scaled_dot_product_attention(*args, **kwargs)


def test_attention_accepts_a_dropout_at_the_bounds_and_a_numpy_rate():
    # 0 and just under 1 are allowed, as is a NumPy float; evaluation ignores the rate
    q = Tensor(data=np.random.default_rng(37).standard_normal((1, 3, 2)))
    expected = attention_reference(q.to_numpy(), q.to_numpy(), q.to_numpy())
    for dropout in (0, 0.0, np.float32(0.5), 0.999):
        y = autograd.scaled_dot_product_attention(q, q, q, dropout=dropout, training=False)
        np.testing.assert_allclose(y.to_numpy(), expected, rtol=1e-12)


@pytest.mark.parametrize("batched", ["q", "k"])
def test_only_q_or_only_k_batched_takes_a_batched_mask(batched):
    # the batch of the scores is every input's leading axes, q's and k's included
    rng = np.random.default_rng(38)
    arrays = {"q": rng.standard_normal((3, 4)), "k": rng.standard_normal((3, 4)),
              "v": rng.standard_normal((3, 5))}
    arrays[batched] = rng.standard_normal((2, 3, 4))
    mask = rng.standard_normal((2, 3, 3))
    q, k, v = arrays["q"], arrays["k"], arrays["v"]
    y = autograd.scaled_dot_product_attention(Tensor(data=q), Tensor(data=k), Tensor(data=v),
                                              mask=mask)
    np.testing.assert_allclose(y.to_numpy(), attention_reference(q, k, v, mask=mask),
                               rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("shapes", [((3, 3, 4), (2, 3, 4), (3, 4)), ((2, 3, 4), (3, 3, 4), (3, 4))])
def test_leading_axes_of_q_and_k_that_do_not_broadcast_are_named_exactly(shapes):
    q, k, v = (Tensor(data=np.zeros(s, np.float32)) for s in shapes)
    message = (f"scaled_dot_product_attention: the leading axes of q {shapes[0]}, k {shapes[1]} "
               f"and v {shapes[2]} do not broadcast")
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        autograd.scaled_dot_product_attention(q, k, v)
