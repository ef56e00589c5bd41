"""The transformer layers' masks, found unchecked by the full mutation run of layers/
(docs/testing.md): a block that dropped its key_padding_mask, its attn_mask or the encoder
layer's is_causal passed every test. The references are properties of attention itself, not
a second call of the same path: a key masked out is a key removed (the outputs at the other
positions equal those of the sequence without it), and a causal mask makes position i's
output that of the prefix x[:, :i + 1]."""
import re

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


# From the mutation run of issue 22's layersB session: TransformerEncoderLayer's defaults and
# the arguments it hands to TransformerBlock (only the PyTorch comparison, skipped without
# torch, reached them), the descriptions, and PositionalEmbedding's bounds and messages.

def encoder_reference(x, p, norm_first, relu, eps):
    """PyTorch's encoder layer written out in NumPy (post-norm unless norm_first)."""
    from scipy.special import erf
    from tests.layers.test_attention import mha_reference

    def layer_norm(h, which):
        mean, var = h.mean(-1, keepdims=True), h.var(-1, keepdims=True)
        return ((h - mean) / np.sqrt(var + eps) * p.get(f"{which}.scale", 1.0)
                + p.get(f"{which}.bias", 0.0))

    def linear(h, name):
        return h @ p[f"{name}.W"] + p.get(f"{name}.b", 0.0)

    e = x.shape[-1]
    W, b = p["attn.in_proj.W"], p.get("attn.in_proj.b", np.zeros(3 * e))
    pieces = [(W[:, i * e:(i + 1) * e], b[i * e:(i + 1) * e]) for i in range(3)]

    def attend(h):
        return mha_reference(h, h, h, *pieces[0], *pieces[1], *pieces[2], p["attn.out_proj.W"],
                             p.get("attn.out_proj.b", 0.0), 2)

    def mlp(h):
        h = linear(h, "fc")
        h = np.maximum(h, 0) if relu else 0.5 * h * (1 + erf(h / np.sqrt(2)))
        return linear(h, "proj")

    if norm_first:
        x = x + attend(layer_norm(x, "ln1"))
        return x + mlp(layer_norm(x, "ln2"))
    x = layer_norm(x + attend(x), "ln1")
    return layer_norm(x + mlp(x), "ln2")


def test_encoder_layer_defaults_are_pytorchs():
    """dim_feedforward 2048, dropout 0.1, relu, eps 1e-5, post-norm, biases (mutants: each
    default changed, a dropout of 1.1 refused, bias=None building none)."""
    layer = autograd.TransformerEncoderLayer(8, 2)
    assert layer.fc.W.shape == (8, 2048) and layer.proj.W.shape == (2048, 8)
    assert layer.dropout == 0.1 and layer.attn.dropout == 0.1
    assert layer.activation == "relu" and layer.norm_first is False
    assert layer.ln1.eps == layer.ln2.eps == 1e-5
    assert all(lin.b is not None for lin in (layer.fc, layer.proj, layer.attn.in_proj,
                                             layer.attn.out_proj))
    rng = np.random.default_rng(7)
    random_parameters(layer, rng)
    layer.eval()
    x = rng.standard_normal((2, 3, 8))
    p = {name: t.to_numpy() for name, t in layer.named_parameters()}
    np.testing.assert_allclose(layer(Tensor(data=x)).to_numpy(),
                               encoder_reference(x, p, False, True, 1e-5), rtol=1e-8, atol=1e-9)


@pytest.mark.parametrize("norm_first", [True, False])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_encoder_layer_passes_every_argument_on(norm_first, activation):
    """norm_first, activation, dim_feedforward, layer_norm_eps and bias=False reach the block
    (mutants: each dropped or None); eps 0.3 is large enough to change the output."""
    layer = autograd.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0,
                                             activation=activation, layer_norm_eps=0.3,
                                             norm_first=norm_first, bias=False)
    random_parameters(layer, np.random.default_rng(8))
    p = {name: t.to_numpy() for name, t in layer.named_parameters()}
    assert sorted(p) == ["attn.in_proj.W", "attn.out_proj.W", "fc.W", "ln1.bias", "ln1.scale",
                         "ln2.bias", "ln2.scale", "proj.W"]
    assert p["fc.W"].shape == (8, 16)
    x = np.random.default_rng(9).standard_normal((2, 3, 8))
    np.testing.assert_allclose(layer(Tensor(data=x)).to_numpy(),
                               encoder_reference(x, p, norm_first, activation == "relu", 0.3),
                               rtol=1e-8, atol=1e-9)


def test_encoder_layer_passes_its_dropout_on():
    layer = autograd.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.25)
    assert layer.dropout == 0.25 and layer.attn.dropout == 0.25


def test_encoder_layer_refuses_batch_first_false_word_for_word():
    with pytest.raises(ValueError, match=r"^TransformerEncoderLayer: only batch_first=True "
                                         r"\(N, T, E\) is supported$"):
        autograd.TransformerEncoderLayer(8, 2, batch_first=False)


@pytest.mark.parametrize("make, text", [
    (lambda: autograd.MultiHeadAttention(8, 2, dropout=0.25),
     "MultiHeadAttention(8, num_heads=2, dropout=0.25)"),
    (lambda: autograd.TransformerBlock(8, 2), "TransformerBlock(8, num_heads=2, hidden=32)"),
    (lambda: autograd.TransformerBlock(8, 2, causal=True),
     "TransformerBlock(8, num_heads=2, hidden=32, causal)"),
    (lambda: autograd.TransformerBlock(8, 2, norm_first=False),
     "TransformerBlock(8, num_heads=2, hidden=32, post-norm)"),
    (lambda: autograd.TransformerBlock(8, 2, causal=True, norm_first=False),
     "TransformerBlock(8, num_heads=2, hidden=32, causal, post-norm)"),
])
def test_attention_layers_describe_dropout_causal_and_post_norm_exactly(make, text):
    assert make().describe() == text


def test_positional_embedding_takes_exactly_max_len_positions():
    """T == max_len is allowed (mutant: `>=`) and adds the whole table."""
    pos = autograd.PositionalEmbedding(4, 3)
    x = np.random.default_rng(10).standard_normal((2, 4, 3)).astype(np.float32)
    np.testing.assert_allclose(pos(Tensor(data=x)).to_numpy(), x + pos.W.to_numpy(), rtol=1e-6)


def test_positional_embedding_messages_word_for_word():
    """embed_dim named in its message (mutants: the name or the layer changed); a 2-d input with
    the right last size refused (mutant: `and` for the first `or`)."""
    with pytest.raises(ValueError, match=r"^PositionalEmbedding: embed_dim must be a positive "
                                         r"int, got 0$"):
        autograd.PositionalEmbedding(4, 0)
    with pytest.raises(ValueError, match=r"^PositionalEmbedding\(4, 3\): expected input of "
                                         r"shape \(N, T <= 4, 3\), got \(2, 3\)$"):
        autograd.PositionalEmbedding(4, 3)(Tensor(data=np.zeros((2, 3))))


MHA = "MultiHeadAttention"


@pytest.mark.parametrize("make, message", [
    (lambda: autograd.MultiHeadAttention(6, 4),
     f"{MHA}: embed_dim 6 must be divisible by num_heads 4"),
    (lambda: autograd.MultiHeadAttention(4, 2, dropout=1.0),
     f"{MHA}: dropout must be in [0, 1), got 1.0"),
    (lambda: autograd.MultiHeadAttention(4, 2, dropout=-0.1),
     f"{MHA}: dropout must be in [0, 1), got -0.1"),
    (lambda: autograd.MultiHeadAttention(4, 2, kdim=3, packed=True),
     f"{MHA}: packed projections need kdim == vdim == embed_dim, got kdim=3, vdim=4"),
    (lambda: autograd.MultiHeadAttention(4, 2, vdim=3, packed=True),
     f"{MHA}: packed projections need kdim == vdim == embed_dim, got kdim=4, vdim=3"),
    (lambda: autograd.MultiHeadAttention(0, 2), f"{MHA}: embed_dim must be a positive int, got 0"),
    (lambda: autograd.MultiHeadAttention(4, 0), f"{MHA}: num_heads must be a positive int, got 0"),
    (lambda: autograd.MultiHeadAttention(4, 2, kdim=0), f"{MHA}: kdim must be a positive int, got 0"),
    (lambda: autograd.MultiHeadAttention(4, 2, vdim=0), f"{MHA}: vdim must be a positive int, got 0"),
    (lambda: autograd.TransformerBlock(4, 2, activation="tanh"),
     "TransformerBlock: activation must be 'gelu' or 'relu', got 'tanh'"),
    (lambda: autograd.TransformerEncoderLayer(4, 2, activation="tanh"),
     "TransformerEncoderLayer: activation must be 'gelu' or 'relu', got 'tanh'"),
    (lambda: autograd.TransformerBlock(0, 2), "TransformerBlock: embed_dim must be a positive "
                                             "int, got 0"),
])
def test_attention_constructor_messages_word_for_word(make, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        make()


def test_attention_takes_a_dropout_of_zero_and_just_under_one():
    assert autograd.MultiHeadAttention(4, 2, dropout=0.0).dropout == 0.0
    assert autograd.MultiHeadAttention(4, 2, dropout=0.99).dropout == 0.99


def shapes(*shapes):
    return [Tensor(shape=s) for s in shapes]


@pytest.mark.parametrize("make, inputs, masks, message", [
    (lambda: autograd.MultiHeadAttention(4, 2, kdim=3, vdim=5), shapes((2, 3, 4), (2, 3, 4),
                                                                       (2, 3, 5)), {},
     f"{MHA}(4, num_heads=2, packed=False): expected key of shape (N, T, 3), got (2, 3, 4)"),
    (lambda: autograd.MultiHeadAttention(4, 2, kdim=3, vdim=5), shapes((2, 3, 4), (2, 3, 3),
                                                                       (2, 3, 4)), {},
     f"{MHA}(4, num_heads=2, packed=False): expected value of shape (N, T, 5), got (2, 3, 4)"),
    (lambda: autograd.MultiHeadAttention(4, 2), shapes((2, 3, 4), (1, 3, 4), (1, 3, 4)), {},
     f"{MHA}(4, num_heads=2): query (2, 3, 4), key (1, 3, 4) and value (1, 3, 4) must share "
     "N, and key and value T"),
    (lambda: autograd.MultiHeadAttention(4, 2), shapes((2, 3, 4), (2, 3, 4), (2, 2, 4)), {},
     f"{MHA}(4, num_heads=2): query (2, 3, 4), key (2, 3, 4) and value (2, 2, 4) must share "
     "N, and key and value T"),
    (lambda: autograd.MultiHeadAttention(4, 2), shapes((2, 3, 4), (2, 3, 4), (1, 3, 4)), {},
     f"{MHA}(4, num_heads=2): query (2, 3, 4), key (2, 3, 4) and value (1, 3, 4) must share "
     "N, and key and value T"),
    (lambda: autograd.MultiHeadAttention(4, 2), shapes((1, 3, 4)),
     {"key_padding_mask": np.zeros((1, 2), bool)},
     f"{MHA}(4, num_heads=2): expected a boolean key_padding_mask of shape (1, 3), got bool "
     "(1, 2)"),
    (lambda: autograd.MultiHeadAttention(4, 2), shapes((1, 3, 4)),
     {"key_padding_mask": np.zeros((1, 3), np.int64)},
     f"{MHA}(4, num_heads=2): expected a boolean key_padding_mask of shape (1, 3), got int64 "
     "(1, 3)"),
    (lambda: autograd.MultiHeadAttention(4, 2), shapes((1, 3, 4, 1)), {},
     f"{MHA}(4, num_heads=2): expected query of shape (N, T, 4), got (1, 3, 4, 1)"),
])
def test_attention_input_messages_word_for_word(make, inputs, masks, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        make()(*inputs, **masks)


@pytest.mark.parametrize("kind", ["float", "bool", "none"])
def test_a_padding_mask_combines_with_an_attention_mask(kind):
    """key_padding_mask (a Tensor here) with a floating attn_mask (added to the scores), a
    boolean one (both must allow) or none, against the formula written out in NumPy."""
    from tests.layers.test_attention import softmax
    rng = np.random.default_rng(11)
    attn = random_parameters(autograd.MultiHeadAttention(4, 2), rng)
    x = rng.standard_normal((2, 3, 4))
    padding = np.array([[False, False, True], [False, False, False]])
    masks = {"none": None, "float": rng.standard_normal((3, 3)),
             "bool": np.array([[True, False, True], [True, True, False], [False, True, True]])}
    mask = masks[kind]
    y = attn(Tensor(data=x), key_padding_mask=Tensor(data=padding), attn_mask=mask).to_numpy()

    W, b = attn.in_proj.W.to_numpy(), attn.in_proj.b.to_numpy()
    q, k, v = ((x @ W[:, i * 4:(i + 1) * 4] + b[i * 4:(i + 1) * 4])
               .reshape(2, 3, 2, 2).transpose(0, 2, 1, 3) for i in range(3))
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(2)
    if kind == "float":
        scores = scores + mask
    elif kind == "bool":
        scores = np.where(mask, scores, -np.inf)
    scores = np.where(padding[:, None, None, :], -np.inf, scores)
    heads = (softmax(scores) @ v).transpose(0, 2, 1, 3).reshape(2, 3, 4)
    expected = heads @ attn.out_proj.W.to_numpy() + attn.out_proj.b.to_numpy()
    np.testing.assert_allclose(y, expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("same", [True, False])
def test_packed_attention_without_bias_matches_the_formula(same):
    """The packed projection's bias-free path, for self-attention and for distinct query and
    key/value (mutants: the bias test inverted)."""
    from tests.layers.test_attention import mha_reference
    rng = np.random.default_rng(12)
    attn = random_parameters(autograd.MultiHeadAttention(4, 2, bias=False), rng)
    assert [name for name, _ in attn.named_parameters()] == ["in_proj.W", "out_proj.W"]
    q = rng.standard_normal((2, 3, 4))
    kv = q if same else rng.standard_normal((2, 5, 4))
    y = attn(Tensor(data=q), Tensor(data=kv), Tensor(data=kv)).to_numpy()
    W, zero = attn.in_proj.W.to_numpy(), np.zeros(4)
    pieces = [(W[:, i * 4:(i + 1) * 4], zero) for i in range(3)]
    expected = mha_reference(q, kv, kv, *pieces[0], *pieces[1], *pieces[2],
                             attn.out_proj.W.to_numpy(), zero, 2)
    np.testing.assert_allclose(y, expected, rtol=1e-10, atol=1e-12)


def test_only_equal_key_and_value_sizes_pack_the_projections():
    """kdim == embed_dim but vdim not: separate projections (mutant: `or` in the test), and the
    result is the formula's."""
    from tests.layers.test_attention import mha_reference
    rng = np.random.default_rng(16)
    attn = random_parameters(autograd.MultiHeadAttention(4, 2, vdim=3), rng)
    assert not attn.packed and attn.kdim == 4 and attn.vdim == 3
    q, k, v = (rng.standard_normal(s) for s in ((2, 3, 4), (2, 5, 4), (2, 5, 3)))
    y = attn(Tensor(data=q), Tensor(data=k), Tensor(data=v)).to_numpy()
    params = [t.to_numpy() for _, t in attn.named_parameters()]
    np.testing.assert_allclose(y, mha_reference(q, k, v, *params, 2), rtol=1e-10)


def test_value_defaults_to_the_key_and_key_to_the_query():
    """(a value defaulting to the query, of another length, would be refused)"""
    rng = np.random.default_rng(17)
    attn = random_parameters(autograd.MultiHeadAttention(4, 2), rng)
    q, kv = Tensor(data=rng.standard_normal((2, 3, 4))), Tensor(data=rng.standard_normal((2, 5, 4)))
    np.testing.assert_array_equal(attn(q, kv).to_numpy(), attn(q, kv, kv).to_numpy())
    np.testing.assert_array_equal(attn(q).to_numpy(), attn(q, q, q).to_numpy())


@pytest.mark.parametrize("which", ["key", "value"])
def test_packed_attention_with_only_the_key_or_only_the_value_distinct(which):
    """attn(x, y, x) and attn(x, x, y) take the separate packed projections, not the fused
    self-attention product on x alone (mutants: `is not` in either test)."""
    from tests.layers.test_attention import mha_reference
    rng = np.random.default_rng(19)
    attn = random_parameters(autograd.MultiHeadAttention(4, 2), rng)
    x, other = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 3, 4))
    k, v = (other, x) if which == "key" else (x, other)
    X = Tensor(data=x)
    y = attn(X, Tensor(data=k) if which == "key" else X,
             Tensor(data=v) if which == "value" else X).to_numpy()
    W, b = attn.in_proj.W.to_numpy(), attn.in_proj.b.to_numpy()
    pieces = [(W[:, i * 4:(i + 1) * 4], b[i * 4:(i + 1) * 4]) for i in range(3)]
    expected = mha_reference(x, k, v, *pieces[0], *pieces[1], *pieces[2],
                             attn.out_proj.W.to_numpy(), attn.out_proj.b.to_numpy(), 2)
    np.testing.assert_allclose(y, expected, rtol=1e-10, atol=1e-12)


def test_attention_dropout_acts_while_training_only():
    """MultiHeadAttention's own dropout (mutants: never passed to the op, or only in eval):
    with value rows all ones and no output bias, each output is out_proj.W's column sum
    scaled by the kept share of attention, exactly 1 in eval and varying while training."""
    autograd.manual_seed(21)
    attn = autograd.MultiHeadAttention(4, 2, dropout=0.5, bias=False)
    attn.in_proj.W.data = np.concatenate([np.zeros((4, 8)), np.eye(4)], axis=1)   # q = k = 0
    attn.out_proj.W.data = np.eye(4)
    x = Tensor(data=np.ones((2, 6, 4)))
    attn.eval()
    np.testing.assert_allclose(attn(x).to_numpy(), np.ones((2, 6, 4)), rtol=1e-12)
    attn.train()
    y = attn(x).to_numpy()
    assert not np.allclose(y, 1.0)                # some attention dropped or rescaled
    assert set(np.round(np.unique(y * 6 / 2), 6)) <= set(range(0, 7))   # kept/0.5 of 1/6 each


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("packed", [True, False])
def test_attention_parameters_exist_with_their_shapes_before_any_call(bias, packed):
    """Every projection built eagerly (mutants: a lazy Linear(None, E) or Linear(E) that the
    formula tests, reading the parameters after the call, could not tell apart) and the bias
    passed to each."""
    kdim, vdim = (None, None) if packed else (3, 5)
    attn = autograd.MultiHeadAttention(4, 2, bias=bias, kdim=kdim, vdim=vdim)
    names = (["in_proj"] if packed else ["q_proj", "k_proj", "v_proj"]) + ["out_proj"]
    inputs = {"in_proj": 4, "q_proj": 4, "k_proj": 3, "v_proj": 5, "out_proj": 4}
    expected = []
    for name in names:
        out = 12 if name == "in_proj" else 4
        expected.append((f"{name}.W", (inputs[name], out)))
        if bias:
            expected.append((f"{name}.b", (out,)))
    assert [(n, tuple(p.shape)) for n, p in attn.named_parameters()] == expected
