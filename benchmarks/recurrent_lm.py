"""Recurrent language-model steps: embedding (V x E), a 2-layer LSTM or GRU of width H over a
sequence of T tokens, a linear head to V logits, softmax cross-entropy, gradient clipping by the
global norm (0.25) and a plain SGD update; and the same model's no_grad forward (inference).

autograd runs its layers as users write them (``autograd.Embedding``, ``autograd.LSTM`` /
``autograd.GRU`` with ``return_sequences=True``, ``gemm`` for the head (the op of PyTorch's
``addmm``: the bias added inside the GEMM), ``token_cross_entropy``, ``opt.clip_grad_norm``);
PyTorch runs ``nn.Embedding`` + one 2-layer ``nn.LSTM`` / ``nn.GRU`` + ``addmm`` +
``cross_entropy`` + ``clip_grad_norm_``; the floor is recurrent_floor.py. ``LSTM_LM`` and
``GRU_LM`` are the issue's workloads (V 10k, E = H = 256, T 35, batch 32); ``small_batch.py``
reuses the builders at batch 1 and 8.
"""
import numpy as np

from . import floor, recurrent_floor
from .common import Bench, require, float32_problems, random_state, as_numpy, replayable_sgd

__all__ = ["RecurrentLM", "LSTM_LM", "GRU_LM"]

LEARNING_RATE = 1.0
MAX_NORM = 0.25
LAYERS = 2


class RecurrentLM:
    """One workload (the interface of a benchmark module): ``cell`` "lstm" or "gru", the
    batch, and training step or no_grad inference."""

    UNIT = "ms"

    def __init__(self, name, cell, batch, train=True, vocabulary=10000, width=256, steps=35):
        self.NAME, self.cell, self.train = name, cell, train
        self.full = {"vocabulary": vocabulary, "width": width, "steps": steps, "batch": batch}
        self.DESCRIPTION = (f"{cell.upper()} LM: embedding {vocabulary}x{width}, {LAYERS}-layer "
                            f"{cell.upper()} {width}, seq {steps}, batch {batch}, " +
                            ("softmax CE, clip 0.25, SGD step" if train else
                             "no_grad forward to logits"))

    def sizes(self, quick):
        if quick:
            return {"vocabulary": 50, "width": 8, "steps": 5,
                    "batch": min(self.full["batch"], 3)}
        return dict(self.full)

    # ------------------------------------------------------------------ data
    def make_data(self, size, seed=5):
        """ids and targets (T, N), and float32 parameters in SINGA's (in, out) layout."""
        rng = random_state(seed)
        vocabulary, width, steps, batch = (size[k] for k in
                                           ("vocabulary", "width", "steps", "batch"))
        gates = 4 if self.cell == "lstm" else 3
        ids = rng.integers(0, vocabulary, (steps, batch))
        targets = rng.integers(0, vocabulary, (steps, batch))
        bound = 1 / np.sqrt(width)

        def uniform(*shape):
            return rng.uniform(-bound, bound, shape).astype(np.float32)

        params = {"embedding": rng.uniform(-0.1, 0.1, (vocabulary, width)).astype(np.float32)}
        for layer in range(LAYERS):
            params[f"W_ih{layer}"] = uniform(width, gates * width)
            params[f"W_hh{layer}"] = uniform(width, gates * width)
            params[f"b_ih{layer}"] = uniform(gates * width)
            params[f"b_hh{layer}"] = uniform(gates * width)
        params["W_out"] = uniform(width, vocabulary)
        params["b_out"] = np.zeros(vocabulary, np.float32)
        return ids, targets, params

    # ------------------------------------------------------------------ autograd
    def build_autograd(self, size, seed=5):
        (backward, gemm, reshape, token_cross_entropy, no_grad) = require(
            "backward", "gemm", "reshape", "token_cross_entropy", "no_grad")
        import autograd
        from autograd import Tensor
        from autograd.opt import clip_grad_norm
        ids, target_data, initial = self.make_data(size, seed)
        width, vocabulary = size["width"], size["vocabulary"]
        layer_type = autograd.LSTM if self.cell == "lstm" else autograd.GRU
        embedding = autograd.Embedding(vocabulary, width)
        recurrent = [layer_type(width, width, return_sequences=True) for _ in range(LAYERS)]
        params = {"embedding": embedding.W,
                  "W_out": Tensor(data=initial["W_out"], stores_grad=True),
                  "b_out": Tensor(data=initial["b_out"], stores_grad=True)}
        for layer, module in enumerate(recurrent):
            for name in ("W_ih", "W_hh", "b_ih", "b_hh"):
                params[f"{name}{layer}"] = getattr(module, name)
        for name, tensor in params.items():
            tensor.data[...] = initial[name]
        targets = Tensor(data=target_data.reshape(-1), requires_grad=False)
        last = {}

        def logits():
            h = embedding(ids)
            for module in recurrent:
                h, _ = module(h)
            h = reshape(h, (-1, width))
            return gemm(h, params["W_out"], params["b_out"])     # torch.addmm's op

        def loss_of_batch():
            return token_cross_entropy(logits(), targets)

        update = replayable_sgd()

        def step():
            loss = loss_of_batch()
            pairs, _ = clip_grad_norm(backward(loss), MAX_NORM)
            update(pairs, LEARNING_RATE)
            return loss, pairs

        def infer():
            with no_grad():
                last["logits"] = logits()

        def check():
            if not self.train:
                infer()
                return float32_problems({"logits": last["logits"]}, [])
            loss, pairs = step()
            return float32_problems({"loss": loss}, pairs, params)

        if self.train:
            return Bench(step=step, check=check, outcome=lambda: {
                name: as_numpy(value) for name, value in params.items()})
        return Bench(step=infer, check=check,
                     outcome=lambda: {"logits": as_numpy(last["logits"])})

    # ------------------------------------------------------------------ NumPy floor
    def build_floor(self, size, seed=5):
        ids, target_data, params = self.make_data(size, seed)
        width = size["width"]
        labels = target_data.reshape(-1)
        forward = (recurrent_floor.lstm_forward if self.cell == "lstm"
                   else recurrent_floor.gru_forward)
        layer_backward = (recurrent_floor.lstm_backward if self.cell == "lstm"
                          else recurrent_floor.gru_backward)
        last = {}

        def run_forward():
            h = params["embedding"][ids]
            saved = []
            for layer in range(LAYERS):
                h, context = forward(h, *(params[f"{n}{layer}"]
                                          for n in ("W_ih", "W_hh", "b_ih", "b_hh")))
                saved.append(context)
            flat = h.reshape(-1, width)
            logits = flat @ params["W_out"]
            logits += params["b_out"]
            return logits, flat, saved

        def step():
            logits, flat, saved = run_forward()
            _, dlogits = floor.softmax_cross_entropy(logits, labels)
            grads = {"W_out": flat.T @ dlogits, "b_out": dlogits.sum(axis=0)}
            dh = (dlogits @ params["W_out"].T).reshape(ids.shape + (width,))
            for layer in range(LAYERS - 1, -1, -1):
                result = layer_backward(dh, saved[layer], params[f"W_ih{layer}"],
                                        params[f"W_hh{layer}"])
                dh, grads[f"W_ih{layer}"], grads[f"W_hh{layer}"] = result[:3]
                grads[f"b_ih{layer}"] = result[3]
                grads[f"b_hh{layer}"] = result[-1]
            dE = np.zeros_like(params["embedding"])
            np.add.at(dE, ids.reshape(-1), dh.reshape(-1, width))
            grads["embedding"] = dE
            norm = np.sqrt(sum(float(np.vdot(g, g)) for g in grads.values()))
            scale = np.float32(LEARNING_RATE * min(1.0, MAX_NORM / (norm + 1e-6)))
            for name, g in grads.items():
                params[name] -= scale * g

        def infer():
            last["logits"] = run_forward()[0]

        if self.train:
            return Bench(step=step, outcome=lambda: {
                name: as_numpy(value) for name, value in params.items()})
        return Bench(step=infer, outcome=lambda: {"logits": last["logits"].copy()})

    # ------------------------------------------------------------------ PyTorch
    def build_torch(self, size, torch, seed=5):
        ids, target_data, initial = self.make_data(size, seed)
        width, vocabulary = size["width"], size["vocabulary"]
        embedding = torch.nn.Embedding(vocabulary, width)
        layer_type = torch.nn.LSTM if self.cell == "lstm" else torch.nn.GRU
        recurrent = layer_type(width, width, num_layers=LAYERS)
        W_out = torch.from_numpy(initial["W_out"]).requires_grad_(True)
        b_out = torch.from_numpy(initial["b_out"]).requires_grad_(True)
        with torch.no_grad():
            embedding.weight.copy_(torch.from_numpy(initial["embedding"]))
            for layer in range(LAYERS):
                for ours, theirs in (("W_ih", "weight_ih"), ("W_hh", "weight_hh"),
                                     ("b_ih", "bias_ih"), ("b_hh", "bias_hh")):
                    value = torch.from_numpy(initial[f"{ours}{layer}"])
                    getattr(recurrent, f"{theirs}_l{layer}").copy_(
                        value.T if ours[0] == "W" else value)
        parameters = [embedding.weight, *recurrent.parameters(), W_out, b_out]
        ids_t = torch.from_numpy(ids)
        targets = torch.from_numpy(target_data.reshape(-1))
        last = {}

        def logits():
            h, _ = recurrent(embedding(ids_t))
            return torch.addmm(b_out, h.reshape(-1, width), W_out)

        def step():
            torch.nn.functional.cross_entropy(logits(), targets).backward()
            torch.nn.utils.clip_grad_norm_(parameters, MAX_NORM)
            with torch.no_grad():
                for p in parameters:
                    p.add_(p.grad, alpha=-LEARNING_RATE)
                    p.grad = None

        def infer():
            with torch.no_grad():
                last["logits"] = logits()

        def outcome():
            result = {"embedding": as_numpy(embedding.weight), "W_out": as_numpy(W_out),
                      "b_out": as_numpy(b_out)}
            for layer in range(LAYERS):
                for ours, theirs in (("W_ih", "weight_ih"), ("W_hh", "weight_hh"),
                                     ("b_ih", "bias_ih"), ("b_hh", "bias_hh")):
                    value = as_numpy(getattr(recurrent, f"{theirs}_l{layer}"))
                    result[f"{ours}{layer}"] = value.T.copy() if ours[0] == "W" else value
            return result

        if self.train:
            return Bench(step=step, outcome=outcome)
        return Bench(step=infer, outcome=lambda: {"logits": as_numpy(last["logits"])})


LSTM_LM = RecurrentLM("lstm_lm", "lstm", batch=32)
GRU_LM = RecurrentLM("gru_lm", "gru", batch=32)
