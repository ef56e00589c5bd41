"""MultiHeadAttention, TransformerBlock/TransformerEncoderLayer, PositionalEmbedding: against
NumPy formulas written here, gradcheck through the parameters, weight tying, errors, and
PyTorch's nn.MultiheadAttention / nn.TransformerEncoderLayer where torch is installed."""
import numpy as np
import pytest

import autograd
from autograd import Tensor


def softmax(s):
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def mha_reference(query, key, value, Wq, bq, Wk, bk, Wv, bv, Wo, bo, heads, keep=None):
    """Multi-head attention written out in NumPy: (N, T, E) in, (N, T, E) out."""
    n, tq, e = query.shape
    d = e // heads

    def split(x, W, b):
        y = x @ W + b
        return y.reshape(n, -1, heads, d).transpose(0, 2, 1, 3)

    q, k, v = split(query, Wq, bq), split(key, Wk, bk), split(value, Wv, bv)
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d)
    if keep is not None:
        scores = np.where(keep, scores, -np.inf)
    out = (softmax(scores) @ v).transpose(0, 2, 1, 3).reshape(n, tq, e)
    return out @ Wo + bo


def float64_layer(layer):
    for _, p in layer.named_parameters():
        p.data = p.data.astype(np.float64)
    return layer


def random_parameters(layer, rng):
    for _, p in layer.named_parameters():
        p.data = rng.standard_normal(p.shape) * 0.5
    return layer


@pytest.mark.parametrize("packed", [True, False])
@pytest.mark.parametrize("causal", [False, True])
def test_self_attention_matches_the_numpy_formula(packed, causal):
    rng = np.random.default_rng(0)
    attn = random_parameters(autograd.MultiHeadAttention(6, 3, packed=packed), rng)
    x = rng.standard_normal((2, 4, 6))
    padding = np.array([[False, False, False, True], [False, True, False, False]])
    y = attn(Tensor(data=x), key_padding_mask=padding, causal=causal).to_numpy()

    if packed:
        W, b = attn.in_proj.W.to_numpy(), attn.in_proj.b.to_numpy()
        projections = [(W[:, i * 6:(i + 1) * 6], b[i * 6:(i + 1) * 6]) for i in range(3)]
    else:
        projections = [(p.W.to_numpy(), p.b.to_numpy())
                       for p in (attn.q_proj, attn.k_proj, attn.v_proj)]
    keep = ~padding[:, None, None, :]
    if causal:
        keep = keep & np.tril(np.ones((4, 4), bool))
    expected = mha_reference(x, x, x, *projections[0], *projections[1], *projections[2],
                             attn.out_proj.W.to_numpy(), attn.out_proj.b.to_numpy(), 3, keep)
    np.testing.assert_allclose(y, expected, rtol=1e-10, atol=1e-12)


def test_cross_attention_with_other_key_sizes_uses_separate_projections():
    rng = np.random.default_rng(1)
    attn = random_parameters(autograd.MultiHeadAttention(4, 2, kdim=3, vdim=5), rng)
    assert not attn.packed
    q, k, v = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 6, 3)), \
        rng.standard_normal((2, 6, 5))
    y = attn(Tensor(data=q), Tensor(data=k), Tensor(data=v)).to_numpy()
    params = [t.to_numpy() for _, t in attn.named_parameters()]
    np.testing.assert_allclose(y, mha_reference(q, k, v, *params, 2), rtol=1e-10)


@pytest.mark.parametrize("packed", [True, False])
def test_gradients_through_every_parameter_check(packed):
    rng = np.random.default_rng(2)
    attn = float64_layer(autograd.MultiHeadAttention(4, 2, packed=packed))
    names = [name for name, _ in attn.named_parameters()]

    def run(x, *params):
        for name, p in zip(names, params):
            layer_name, attribute = name.split(".")
            setattr(getattr(attn, layer_name), attribute, p)
        return attn(x, x, x, causal=True)

    params = [Tensor(data=p.data + rng.standard_normal(p.shape) * 0.1, stores_grad=True)
              for p in attn.parameters()]
    autograd.gradcheck(run, [Tensor(data=rng.standard_normal((2, 3, 4)), stores_grad=True)]
                       + params)


def test_packed_projection_of_distinct_query_key_value():
    rng = np.random.default_rng(3)
    attn = random_parameters(autograd.MultiHeadAttention(4, 2), rng)
    q, kv = rng.standard_normal((1, 2, 4)), rng.standard_normal((1, 3, 4))
    y = attn(Tensor(data=q), Tensor(data=kv), Tensor(data=kv)).to_numpy()
    W, b = attn.in_proj.W.to_numpy(), attn.in_proj.b.to_numpy()
    pieces = [(W[:, i * 4:(i + 1) * 4], b[i * 4:(i + 1) * 4]) for i in range(3)]
    expected = mha_reference(q, kv, kv, *pieces[0], *pieces[1], *pieces[2],
                             attn.out_proj.W.to_numpy(), attn.out_proj.b.to_numpy(), 2)
    np.testing.assert_allclose(y, expected, rtol=1e-10)


def test_transformer_block_is_pre_norm_residual_attention_and_gelu_mlp():
    rng = np.random.default_rng(4)
    block = random_parameters(autograd.TransformerBlock(4, 2, causal=True), rng)
    x = rng.standard_normal((2, 3, 4))
    y = block(Tensor(data=x)).to_numpy()

    def layer_norm(h, scale, bias):
        mean, var = h.mean(-1, keepdims=True), h.var(-1, keepdims=True)
        return (h - mean) / np.sqrt(var + 1e-5) * scale + bias

    from scipy.special import erf
    p = {name: t.to_numpy() for name, t in block.named_parameters()}
    h = layer_norm(x, p["ln1.scale"], p["ln1.bias"])
    W, b = p["attn.in_proj.W"], p["attn.in_proj.b"]
    pieces = [(W[:, i * 4:(i + 1) * 4], b[i * 4:(i + 1) * 4]) for i in range(3)]
    x = x + mha_reference(h, h, h, *pieces[0], *pieces[1], *pieces[2], p["attn.out_proj.W"],
                          p["attn.out_proj.b"], 2, np.tril(np.ones((3, 3), bool)))
    h = layer_norm(x, p["ln2.scale"], p["ln2.bias"]) @ p["fc.W"] + p["fc.b"]
    h = 0.5 * h * (1 + erf(h / np.sqrt(2)))
    np.testing.assert_allclose(y, x + h @ p["proj.W"] + p["proj.b"], rtol=1e-9, atol=1e-10)


def test_dropout_only_while_training():
    autograd.manual_seed(0)
    block = autograd.TransformerBlock(8, 2, dropout=0.5)
    x = Tensor(data=np.random.default_rng(0).standard_normal((2, 5, 8)).astype(np.float32))
    a, b = block(x).to_numpy(), block(x).to_numpy()
    assert not np.allclose(a, b)
    block.eval()
    np.testing.assert_array_equal(block(x).to_numpy(), block(x).to_numpy())


def test_positional_embedding_adds_the_first_rows():
    pos = autograd.PositionalEmbedding(10, 3)
    x = Tensor(data=np.ones((2, 4, 3), np.float32), stores_grad=True)
    y = pos(x)
    np.testing.assert_allclose(y.to_numpy(), np.broadcast_to(1 + pos.W.to_numpy()[:4], (2, 4, 3)))
    grad = autograd.gradients(autograd.sum(y))[pos.W].to_numpy()
    np.testing.assert_array_equal(grad, np.r_[np.full((4, 3), 2.0), np.zeros((6, 3))])
    with pytest.raises(ValueError, match=r"PositionalEmbedding\(10, 3\): expected input of "
                                         r"shape \(N, T <= 10, 3\), got \(1, 11, 3\)"):
        pos(Tensor(shape=(1, 11, 3)))


def test_tied_weights_get_the_sum_of_both_gradients_once():
    """The token table is both the lookup and the output projection (GPT weight tying)."""
    rng = np.random.default_rng(5)
    table = Tensor(data=rng.standard_normal((6, 4)), stores_grad=True)
    ids = rng.integers(0, 6, (2, 3))
    targets = rng.integers(0, 6, (2, 3))

    def loss_of(lookup_table, output_table):
        h = autograd.tanh(autograd.embedding(ids, lookup_table))
        logits = autograd.matmul(h, autograd.transpose(output_table))
        return autograd.token_cross_entropy(logits, targets)

    pairs = list(autograd.backward(loss_of(table, table)))
    assert [p is table for p, _ in pairs] == [True]
    separate_lookup = Tensor(data=table.data.copy(), stores_grad=True)
    separate_output = Tensor(data=table.data.copy(), stores_grad=True)
    grads = autograd.gradients(loss_of(separate_lookup, separate_output))
    np.testing.assert_allclose(pairs[0][1].to_numpy(), grads[separate_lookup].to_numpy()
                               + grads[separate_output].to_numpy(), rtol=1e-12)
    autograd.gradcheck(lambda t: loss_of(t, t), [table])


def test_errors_name_the_layer():
    with pytest.raises(ValueError, match="embed_dim 6 must be divisible by num_heads 4"):
        autograd.MultiHeadAttention(6, 4)
    attn = autograd.MultiHeadAttention(4, 2)
    with pytest.raises(ValueError, match=r"MultiHeadAttention\(4, num_heads=2\): expected query "
                                         r"of shape \(N, T, 4\), got \(2, 4\)"):
        attn(Tensor(shape=(2, 4)))
    with pytest.raises(ValueError, match=r"boolean key_padding_mask of shape \(1, 3\)"):
        attn(Tensor(shape=(1, 3, 4)), key_padding_mask=np.zeros((1, 2), bool))


def _copy_torch_mha(torch_mha, attn):
    import torch
    with torch.no_grad():
        torch_mha.in_proj_weight.copy_(torch.tensor(attn.in_proj.W.to_numpy().T))
        torch_mha.in_proj_bias.copy_(torch.tensor(attn.in_proj.b.to_numpy()))
        torch_mha.out_proj.weight.copy_(torch.tensor(attn.out_proj.W.to_numpy().T))
        torch_mha.out_proj.bias.copy_(torch.tensor(attn.out_proj.b.to_numpy()))


def test_matches_pytorch_multihead_attention_forward_and_backward():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(6)
    attn = random_parameters(autograd.MultiHeadAttention(8, 4), rng)
    for _, p in attn.named_parameters():
        p.data = p.data.astype(np.float32)
    reference = torch.nn.MultiheadAttention(8, 4, batch_first=True)
    _copy_torch_mha(reference, attn)
    x = rng.standard_normal((2, 5, 8)).astype(np.float32)
    padding = np.zeros((2, 5), bool)
    padding[1, 3:] = True
    causal = np.triu(np.ones((5, 5), bool), 1)          # torch: True = masked
    y = attn(Tensor(data=x), key_padding_mask=padding, causal=True)
    xt = torch.tensor(x)
    expected, _ = reference(xt, xt, xt, key_padding_mask=torch.tensor(padding),
                            attn_mask=torch.tensor(causal), need_weights=False)
    np.testing.assert_allclose(y.to_numpy(), expected.detach().numpy(), rtol=1e-4, atol=1e-5)
    dy = rng.standard_normal(y.shape).astype(np.float32)
    grads = autograd.gradients(y, dy)
    expected.backward(torch.tensor(dy))
    np.testing.assert_allclose(grads[attn.in_proj.W].to_numpy(),
                               reference.in_proj_weight.grad.numpy().T, rtol=1e-3, atol=1e-5)
    np.testing.assert_allclose(grads[attn.out_proj.b].to_numpy(),
                               reference.out_proj.bias.grad.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("norm_first", [True, False])
def test_encoder_layer_matches_pytorch(norm_first):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    layer = autograd.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0,
                                             activation="gelu", norm_first=norm_first)
    random_parameters(layer, rng)
    for _, p in layer.named_parameters():
        p.data = p.data.astype(np.float32)
    reference = torch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0,
                                                 activation="gelu", batch_first=True,
                                                 norm_first=norm_first)
    _copy_torch_mha(reference.self_attn, layer.attn)
    with torch.no_grad():
        for ours, theirs in ((layer.fc, reference.linear1), (layer.proj, reference.linear2)):
            theirs.weight.copy_(torch.tensor(ours.W.to_numpy().T))
            theirs.bias.copy_(torch.tensor(ours.b.to_numpy()))
        for ours, theirs in ((layer.ln1, reference.norm1), (layer.ln2, reference.norm2)):
            theirs.weight.copy_(torch.tensor(ours.scale.to_numpy()))
            theirs.bias.copy_(torch.tensor(ours.bias.to_numpy()))
    reference.eval()            # no dropout, and the fast path checks the same maths
    x = rng.standard_normal((2, 5, 8)).astype(np.float32)
    with torch.no_grad():
        expected = reference(torch.tensor(x)).numpy()
    np.testing.assert_allclose(layer(Tensor(data=x)).to_numpy(), expected, rtol=1e-4,
                               atol=1e-4)


def test_attention_layers_describe_and_check_their_arguments_exactly():
    assert autograd.MultiHeadAttention(4, 2, packed=False).describe() == (
        "MultiHeadAttention(4, num_heads=2, packed=False)")
    assert autograd.MultiHeadAttention(4, 2).describe() == "MultiHeadAttention(4, num_heads=2)"
    with pytest.raises(ValueError, match=r"^PositionalEmbedding: max_len must be a positive "
                                         r"int, got 0$"):
        autograd.PositionalEmbedding(0, 4)


def test_positional_embedding_draws_its_table_with_the_std_given():
    autograd.manual_seed(4)
    table = autograd.PositionalEmbedding(500, 40, std=0.02).W.to_numpy()
    assert abs(table.std() - 0.02) < 0.002 and abs(table.mean()) < 0.002
    autograd.manual_seed(4)
    assert abs(autograd.PositionalEmbedding(500, 40).W.to_numpy().std() - 0.02) < 0.002
