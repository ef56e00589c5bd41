"""MLP 784-512-256-10 training step: gemm (matmul + bias, as PyTorch's addmm) + relu twice, a linear head, softmax
cross-entropy on integer labels, then a plain SGD update in place (p -= lr * g).

At batch 128 the three GEMMs of the forward and five of the backward dominate (about 0.9 GFLOP
a step), so this measures how close a framework stays to the BLAS floor on a real batch.
"""
import numpy as np

from . import floor
from .common import Bench, require, float32_problems, random_state, as_numpy, replayable_sgd

NAME = "mlp"
DESCRIPTION = "MLP 784-512-256-10, batch 128, softmax CE, SGD step"
UNIT = "ms"
LEARNING_RATE = 0.01


def sizes(quick):
    if quick:
        return {"batch": 16, "layers": (784, 64, 32, 10)}
    return {"batch": 128, "layers": (784, 512, 256, 10)}


def make_data(size, seed=2):
    """Inputs, labels and initial parameters (W (in, out) as in SINGA, b (out,)), float32."""
    rng = random_state(seed)
    widths = size["layers"]
    x = rng.standard_normal((size["batch"], widths[0])).astype(np.float32)
    labels = rng.integers(0, widths[-1], size["batch"])
    params = {}
    for i, (fan_in, fan_out) in enumerate(zip(widths[:-1], widths[1:]), start=1):
        params[f"W{i}"] = (rng.standard_normal((fan_in, fan_out)) * np.sqrt(2.0 / fan_in)
                           ).astype(np.float32)
        params[f"b{i}"] = np.zeros(fan_out, np.float32)
    return x, labels, params


def build_autograd(size, seed=2):
    (backward, gemm, relu, softmax_cross_entropy) = require(
        "backward", "gemm", "relu", "softmax_cross_entropy")
    from autograd import Tensor
    x_data, label_data, initial = make_data(size, seed)
    x = Tensor(data=x_data, requires_grad=False)
    labels = Tensor(data=label_data)
    params = {name: Tensor(data=value, stores_grad=True) for name, value in initial.items()}
    layer_count = len(size["layers"]) - 1

    def loss_of_batch():
        h = x
        for i in range(1, layer_count + 1):
            h = gemm(h, params[f"W{i}"], params[f"b{i}"])      # as PyTorch's addmm below
            if i < layer_count:
                h = relu(h)
        return softmax_cross_entropy(h, labels)

    update = replayable_sgd()

    def step():
        update(backward(loss_of_batch()), LEARNING_RATE)

    def check():
        loss = loss_of_batch()
        pairs = list(backward(loss))
        for p, g in pairs:
            p.data -= LEARNING_RATE * g.data
        return float32_problems({"loss": loss}, pairs, params)

    return Bench(step=step, check=check, outcome=lambda: {
        name: as_numpy(value) for name, value in params.items()})


def build_floor(size, seed=2):
    x, labels, params = make_data(size, seed)
    layer_count = len(size["layers"]) - 1

    def step():
        activations = [x]
        h = x
        for i in range(1, layer_count + 1):
            h = h @ params[f"W{i}"]
            h += params[f"b{i}"]
            if i < layer_count:
                np.maximum(h, 0, out=h)
            activations.append(h)
        _, dh = floor.softmax_cross_entropy(h, labels)
        for i in range(layer_count, 0, -1):
            below = activations[i - 1]
            dweight = below.T @ dh
            dbias = dh.sum(axis=0)
            if i > 1:
                dh = floor.relu_backward(dh @ params[f"W{i}"].T, below)
            params[f"W{i}"] -= LEARNING_RATE * dweight
            params[f"b{i}"] -= LEARNING_RATE * dbias

    return Bench(step=step, outcome=lambda: {
        name: as_numpy(value) for name, value in params.items()})


def build_torch(size, torch, seed=2):
    functional = torch.nn.functional
    x_data, label_data, initial = make_data(size, seed)
    x = torch.from_numpy(x_data)
    labels = torch.from_numpy(label_data)
    params = {name: torch.from_numpy(value).requires_grad_(True)
              for name, value in initial.items()}
    layer_count = len(size["layers"]) - 1

    def step():
        h = x
        for i in range(1, layer_count + 1):
            h = torch.addmm(params[f"b{i}"], h, params[f"W{i}"])
            if i < layer_count:
                h = torch.relu(h)
        functional.cross_entropy(h, labels).backward()
        with torch.no_grad():
            for p in params.values():
                p.add_(p.grad, alpha=-LEARNING_RATE)
                p.grad = None

    return Bench(step=step, outcome=lambda: {
        name: as_numpy(value) for name, value in params.items()})
