"""The transformer layers' masks, found unchecked by the full mutation run of layers/
(docs/testing.md): a block that dropped its key_padding_mask, its attn_mask or the encoder
layer's is_causal passed every test. The references are properties of attention itself, not
a second call of the same path: a key masked out is a key removed (the outputs at the other
positions equal those of the sequence without it), and a causal mask makes position i's
output that of the prefix x[:, :i + 1]."""
import numpy as np
import pytest

import autograd
from autograd import Tensor
from tests.layers.test_attention import random_parameters

E, T = 8, 5


def block(kind, norm_first):
    rng = np.random.default_rng(22)
    if kind == "block":
        layer = autograd.TransformerBlock(E, 2, mlp_ratio=2, norm_first=norm_first)
    else:
        layer = autograd.TransformerEncoderLayer(E, 2, dim_feedforward=16, dropout=0.0,
                                                 norm_first=norm_first)
    random_parameters(layer, rng)
    return layer


def run(layer, x, **masks):
    if isinstance(layer, autograd.TransformerEncoderLayer):
        names = {"key_padding_mask": "src_key_padding_mask", "attn_mask": "src_mask",
                 "causal": "is_causal"}
        masks = {names[k]: v for k, v in masks.items()}
    elif "causal" in masks:                   # a TransformerBlock's causal is an attribute
        layer.causal = masks.pop("causal")
        try:
            return layer(Tensor(data=x), **masks).to_numpy()
        finally:
            layer.causal = False
    return layer(Tensor(data=x), **masks).to_numpy()


X = np.random.default_rng(5).standard_normal((2, T, E))


@pytest.mark.parametrize("kind", ["block", "encoder"])
@pytest.mark.parametrize("norm_first", [True, False])
def test_a_padded_key_is_a_removed_key(kind, norm_first):
    layer = block(kind, norm_first)
    padding = np.zeros((2, T), bool)
    padding[0, 3:] = True                     # sequence 0 has 3 real positions, sequence 1 all
    y = run(layer, X, key_padding_mask=padding)
    np.testing.assert_allclose(y[0, :3], run(layer, X[:1, :3])[0], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(y[1], run(layer, X[1:])[0], rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("kind", ["block", "encoder"])
@pytest.mark.parametrize("how", ["attn_mask", "causal"])
def test_a_causal_mask_makes_each_position_that_of_its_prefix(kind, how):
    layer = block(kind, norm_first=True)
    masks = ({"attn_mask": np.tril(np.ones((T, T), bool))} if how == "attn_mask"
             else {"causal": True})
    y = run(layer, X, **masks)
    for i in range(T):
        np.testing.assert_allclose(y[:, i], run(layer, X[:, :i + 1])[:, i], rtol=1e-9,
                                   atol=1e-9)
    assert not np.allclose(y, run(layer, X))      # the mask changed something
