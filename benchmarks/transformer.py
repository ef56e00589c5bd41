"""GPT training step: the character-level GPT of examples/train_gpt.py (nanoGPT's CPU config:
4 pre-norm causal blocks, 4 heads, width 128, context 64, batch 12, vocabulary 65, tied token
embedding), token cross-entropy, SGD update.

About 3.7 GFLOP a step (forward and backward); the rest of a NumPy step is the softmax, GELU,
LayerNorm and the copies that split and merge heads. The NumPy floor below writes the forward
and backward of every piece by hand, with the same formulas.
"""
import math

import numpy as np

from .common import Bench, require, float32_problems, random_state, as_numpy, replayable_sgd

NAME = "transformer"
DESCRIPTION = "char GPT 4x(128 wide, 4 heads), batch 12 x context 64, SGD step"
UNIT = "ms"
LEARNING_RATE = 0.01
VOCABULARY = 65


def sizes(quick):
    if quick:
        return {"batch": 2, "context": 8, "width": 16, "heads": 2, "layers": 2,
                "vocabulary": VOCABULARY}
    return {"batch": 12, "context": 64, "width": 128, "heads": 4, "layers": 4,
            "vocabulary": VOCABULARY}


def layer_names(layer):
    return [f"h{layer}.{name}" for name in ("ln1_g", "ln1_b", "W_qkv", "b_qkv", "W_o", "b_o",
                                            "ln2_g", "ln2_b", "W_fc", "b_fc", "W_pr", "b_pr")]


def make_data(size, seed=4):
    rng = random_state(seed)
    B, T, E, V = size["batch"], size["context"], size["width"], size["vocabulary"]

    def normal(*shape, std=0.02):
        return (rng.standard_normal(shape) * std).astype(np.float32)

    params = {"wte": normal(V, E), "wpe": normal(T, E)}
    for layer in range(size["layers"]):
        values = [np.ones(E), np.zeros(E), normal(E, 3 * E), normal(3 * E, std=0.01),
                  normal(E, E), normal(E, std=0.01), np.ones(E), np.zeros(E),
                  normal(E, 4 * E), normal(4 * E, std=0.01), normal(4 * E, E),
                  normal(E, std=0.01)]
        for name, value in zip(layer_names(layer), values):
            params[name] = np.asarray(value, np.float32)
    params["lnf_g"], params["lnf_b"] = np.ones(E, np.float32), np.zeros(E, np.float32)
    ids = rng.integers(0, V, (B, T + 1))
    return ids[:, :-1], ids[:, 1:], params


# ---------------------------------------------------------------- autograd (the layers)

def build_autograd(size, seed=4):
    (backward, token_cross_entropy, matmul, transpose, reshape, TransformerBlock, LayerNorm,
     Embedding, PositionalEmbedding) = require(
        "backward", "token_cross_entropy", "matmul", "transpose", "reshape",
        "TransformerBlock", "LayerNorm", "Embedding", "PositionalEmbedding")
    import autograd
    from autograd import Tensor
    x, targets, initial = make_data(size, seed)
    E, H = size["width"], size["heads"]

    class GPT(autograd.Layer):
        def __init__(self):
            super().__init__()
            self.wte = Embedding(size["vocabulary"], E)
            self.wpe = PositionalEmbedding(size["context"], E)
            self.blocks = [TransformerBlock(E, H, causal=True) for _ in range(size["layers"])]
            self.ln_f = LayerNorm(E)

        def forward(self, ids):
            h = self.ln_f(_blocks(self.blocks, self.wpe(self.wte(ids))))
            n, t, _ = h.shape
            logits = matmul(reshape(h, (n * t, E)), transpose(self.wte.W))
            return reshape(logits, (n, t, -1))

    model = GPT()
    tensors = {"wte": model.wte.W, "wpe": model.wpe.W, "lnf_g": model.ln_f.scale,
               "lnf_b": model.ln_f.bias}
    for layer, block in enumerate(model.blocks):
        parts = [block.ln1.scale, block.ln1.bias, block.attn.in_proj.W, block.attn.in_proj.b,
                 block.attn.out_proj.W, block.attn.out_proj.b, block.ln2.scale, block.ln2.bias,
                 block.fc.W, block.fc.b, block.proj.W, block.proj.b]
        tensors.update(zip(layer_names(layer), parts))
    for name, tensor in tensors.items():
        tensor.data = initial[name].copy()

    update = replayable_sgd()       # so that transformer_replay can capture the step

    def step():
        update(backward(token_cross_entropy(model(x), targets)), LEARNING_RATE)

    def check():
        loss = token_cross_entropy(model(x), targets)
        pairs = list(backward(loss))
        for param, grad in pairs:
            param.data -= LEARNING_RATE * grad.data
        return float32_problems({"loss": loss}, pairs, tensors)

    return Bench(step=step, check=check, outcome=lambda: {
        name: as_numpy(value) for name, value in tensors.items()})


def _blocks(blocks, x):
    for block in blocks:
        x = block(x)
    return x


# ---------------------------------------------------------------- the NumPy floor

def _erf(x):
    from scipy.special import erf
    return erf(x)


def _layer_norm(x, g, b):
    mean = x.mean(axis=-1, keepdims=True)
    centered = x - mean
    inv_std = 1.0 / np.sqrt((centered * centered).mean(axis=-1, keepdims=True) + 1e-5)
    x_hat = centered
    x_hat *= inv_std
    return x_hat * g + b, (x_hat, inv_std, g)


def _layer_norm_backward(dy, saved):
    x_hat, inv_std, g = saved
    dg = (dy * x_hat).sum(axis=0)
    db = dy.sum(axis=0)
    gy = dy * g
    dx = gy - gy.mean(axis=-1, keepdims=True)
    dx -= x_hat * (gy * x_hat).mean(axis=-1, keepdims=True)
    dx *= inv_std
    return dx, dg, db


def build_floor(size, seed=4):
    ids, targets, p = make_data(size, seed)
    B, T, E, H = size["batch"], size["context"], size["width"], size["heads"]
    D, M, L = E // H, B * T, size["layers"]
    scale = np.float32(1.0 / math.sqrt(D))
    hidden_keep = np.tri(T, T, dtype=bool)
    rows, flat_targets = np.arange(M), targets.reshape(-1)

    def attention_forward(h, layer):
        qkv = h @ p[f"h{layer}.W_qkv"] + p[f"h{layer}.b_qkv"]
        q, k, v = qkv.reshape(B, T, 3, H, D).transpose(2, 0, 3, 1, 4)
        s = (q * scale) @ k.swapaxes(-1, -2)
        np.copyto(s, -np.inf, where=~hidden_keep)
        s -= s.max(axis=-1, keepdims=True)
        probabilities = np.exp(s, out=s)
        probabilities /= probabilities.sum(axis=-1, keepdims=True)
        a = probabilities @ v
        merged = a.transpose(0, 2, 1, 3).reshape(M, E)
        return merged @ p[f"h{layer}.W_o"] + p[f"h{layer}.b_o"], (q, k, v, probabilities, a,
                                                                    merged)

    def attention_backward(do, h, saved, layer, grads):
        q, k, v, probabilities, a, merged = saved
        grads[f"h{layer}.W_o"] = merged.T @ do
        grads[f"h{layer}.b_o"] = do.sum(axis=0)
        da = (do @ p[f"h{layer}.W_o"].T).reshape(B, T, H, D).transpose(0, 2, 1, 3)
        dv = probabilities.swapaxes(-1, -2) @ da
        ds = da @ v.swapaxes(-1, -2)
        ds -= (da * a).sum(axis=-1, keepdims=True)
        ds *= probabilities
        dq = (ds @ k) * scale
        dk = (ds.swapaxes(-1, -2) @ q) * scale
        dqkv = np.stack([dq, dk, dv]).transpose(1, 3, 0, 2, 4).reshape(M, 3 * E)
        grads[f"h{layer}.W_qkv"] = h.T @ dqkv
        grads[f"h{layer}.b_qkv"] = dqkv.sum(axis=0)
        return dqkv @ p[f"h{layer}.W_qkv"].T

    def step():
        x = (p["wte"][ids] + p["wpe"]).reshape(M, E)
        saved = []
        for layer in range(L):
            h1, ln1 = _layer_norm(x, p[f"h{layer}.ln1_g"], p[f"h{layer}.ln1_b"])
            attended, attention = attention_forward(h1, layer)
            x = x + attended
            h2, ln2 = _layer_norm(x, p[f"h{layer}.ln2_g"], p[f"h{layer}.ln2_b"])
            f = h2 @ p[f"h{layer}.W_fc"] + p[f"h{layer}.b_fc"]
            cdf = _erf(f * np.float32(1 / math.sqrt(2)))
            cdf += 1
            cdf *= 0.5
            g = f * cdf
            x = x + (g @ p[f"h{layer}.W_pr"] + p[f"h{layer}.b_pr"])
            saved.append((h1, ln1, attention, h2, ln2, f, cdf, g))
        hf, lnf = _layer_norm(x, p["lnf_g"], p["lnf_b"])
        logits = hf @ p["wte"].T
        logits -= logits.max(axis=1, keepdims=True)
        probabilities = np.exp(logits, out=logits)
        probabilities /= probabilities.sum(axis=1, keepdims=True)
        dlogits = probabilities
        dlogits[rows, flat_targets] -= 1
        dlogits *= np.float32(1.0 / M)

        grads = {"wte": dlogits.T @ hf}
        dx, grads["lnf_g"], grads["lnf_b"] = _layer_norm_backward(dlogits @ p["wte"], lnf)
        for layer in reversed(range(L)):
            h1, ln1, attention, h2, ln2, f, cdf, g = saved[layer]
            grads[f"h{layer}.W_pr"] = g.T @ dx
            grads[f"h{layer}.b_pr"] = dx.sum(axis=0)
            dg = dx @ p[f"h{layer}.W_pr"].T
            density = np.exp(-0.5 * f * f) * np.float32(1 / math.sqrt(2 * math.pi))
            df = dg * (cdf + f * density)
            grads[f"h{layer}.W_fc"] = h2.T @ df
            grads[f"h{layer}.b_fc"] = df.sum(axis=0)
            dh2, grads[f"h{layer}.ln2_g"], grads[f"h{layer}.ln2_b"] = _layer_norm_backward(
                df @ p[f"h{layer}.W_fc"].T, ln2)
            dx = dx + dh2
            dh1 = attention_backward(dx, h1, attention, layer, grads)
            dh1, grads[f"h{layer}.ln1_g"], grads[f"h{layer}.ln1_b"] = _layer_norm_backward(
                dh1, ln1)
            dx = dx + dh1
        dx = dx.reshape(B, T, E)
        grads["wpe"] = dx.sum(axis=0)
        np.add.at(grads["wte"], ids.reshape(-1), dx.reshape(M, E))
        for name, grad in grads.items():
            p[name] -= LEARNING_RATE * grad

    return Bench(step=step, outcome=lambda: {name: as_numpy(v) for name, v in p.items()})


# ---------------------------------------------------------------- PyTorch eager

def build_torch(size, torch, seed=4):
    functional = torch.nn.functional
    ids_data, target_data, initial = make_data(size, seed)
    ids, targets = torch.from_numpy(ids_data), torch.from_numpy(target_data).reshape(-1)
    p = {name: torch.from_numpy(value.copy()).requires_grad_(True)
         for name, value in initial.items()}
    B, T, E, H = size["batch"], size["context"], size["width"], size["heads"]

    def loss_of_batch():
        x = p["wte"][ids] + p["wpe"]
        for layer in range(size["layers"]):
            q = lambda name: p[f"h{layer}.{name}"]          # noqa: E731
            h = functional.layer_norm(x, (E,), q("ln1_g"), q("ln1_b"))
            qkv = (h @ q("W_qkv") + q("b_qkv")).view(B, T, 3, H, E // H)
            qh, kh, vh = qkv.permute(2, 0, 3, 1, 4)
            a = functional.scaled_dot_product_attention(qh, kh, vh, is_causal=True)
            x = x + a.transpose(1, 2).reshape(B, T, E) @ q("W_o") + q("b_o")
            h = functional.layer_norm(x, (E,), q("ln2_g"), q("ln2_b"))
            x = x + functional.gelu(h @ q("W_fc") + q("b_fc")) @ q("W_pr") + q("b_pr")
        h = functional.layer_norm(x, (E,), p["lnf_g"], p["lnf_b"])
        return functional.cross_entropy((h @ p["wte"].T).reshape(B * T, -1), targets)

    def step():
        loss = loss_of_batch()
        for value in p.values():
            value.grad = None
        loss.backward()
        with torch.no_grad():
            for value in p.values():
                value -= LEARNING_RATE * value.grad

    return Bench(step=step, outcome=lambda: {name: as_numpy(v) for name, v in p.items()})
