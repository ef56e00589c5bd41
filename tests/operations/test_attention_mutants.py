"""scaled_dot_product_attention where the sampled mutation run found the suite blind
(docs/testing.md): v's leading axes in the broadcast batch, the softmax's shift per row, the
leading-axes message. Each against the NumPy formula of tests/operations/test_attention.py."""
import re

import numpy as np
import pytest

import autograd
from autograd import Tensor
from tests.operations.test_attention import attention_reference


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
