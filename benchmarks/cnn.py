"""CNN training step: conv(1->32, 3x3, pad 1) - relu - maxpool 2 - conv(32->64, 3x3, pad 1) -
relu - maxpool 2 - linear(3136->10), softmax cross-entropy, SGD update, batch 64 of 1x28x28.

About 1.5 GFLOP a step; the GEMM floor is a few ms, so the rest of a NumPy step is memory
traffic: im2col copies, col2im adds and pooling masks.
"""
import numpy as np

from . import floor
from .common import Bench, require, float32_problems, random_state, as_numpy, replayable_sgd

NAME = "cnn"
DESCRIPTION = "CNN conv32-pool-conv64-pool-fc10, batch 64 1x28x28, SGD step"
UNIT = "ms"
LEARNING_RATE = 0.01


def sizes(quick):
    if quick:
        return {"batch": 4, "image": 8, "channels": (1, 4, 8), "classes": 10}
    return {"batch": 64, "image": 28, "channels": (1, 32, 64), "classes": 10}


def conv_weight(rng, out_channels, in_channels, kernel):
    fan_in = in_channels * kernel * kernel
    return (rng.standard_normal((out_channels, in_channels, kernel, kernel))
            * np.sqrt(2.0 / fan_in)).astype(np.float32)


def make_data(size, seed=3):
    rng = random_state(seed)
    c0, c1, c2 = size["channels"]
    side = size["image"]
    x = rng.standard_normal((size["batch"], c0, side, side)).astype(np.float32)
    labels = rng.integers(0, size["classes"], size["batch"])
    flat = c2 * (side // 4) ** 2
    params = {
        "W1": conv_weight(rng, c1, c0, 3), "b1": np.zeros(c1, np.float32),
        "W2": conv_weight(rng, c2, c1, 3), "b2": np.zeros(c2, np.float32),
        "W3": (rng.standard_normal((flat, size["classes"])) * np.sqrt(1.0 / flat)
               ).astype(np.float32),
        "b3": np.zeros(size["classes"], np.float32),
    }
    return x, labels, params


def build_autograd(size, seed=3):
    (backward, conv2d, max_pool2d, relu, reshape, gemm,
     softmax_cross_entropy) = require("backward", "conv2d", "max_pool2d", "relu", "reshape",
                                      "gemm", "softmax_cross_entropy")
    from autograd import Tensor
    x_data, label_data, initial = make_data(size, seed)
    x = Tensor(data=x_data, requires_grad=False)
    labels = Tensor(data=label_data)
    params = {name: Tensor(data=value, stores_grad=True) for name, value in initial.items()}
    p = params
    batch = size["batch"]

    def loss_of_batch():
        h = max_pool2d(relu(conv2d(x, p["W1"], p["b1"], padding=1)), 2)
        h = max_pool2d(relu(conv2d(h, p["W2"], p["b2"], padding=1)), 2)
        logits = gemm(reshape(h, (batch, -1)), p["W3"], p["b3"])    # PyTorch: addmm
        return softmax_cross_entropy(logits, labels)

    update = replayable_sgd()

    def step():
        update(backward(loss_of_batch()), LEARNING_RATE)

    def check():
        loss = loss_of_batch()
        pairs = list(backward(loss))
        for param, grad in pairs:
            param.data -= LEARNING_RATE * grad.data
        return float32_problems({"loss": loss}, pairs, params)

    return Bench(step=step, check=check, outcome=lambda: {
        name: as_numpy(value) for name, value in params.items()})


def build_floor(size, seed=3):
    x, labels, p = make_data(size, seed)
    batch = size["batch"]

    def step():
        y1, columns1 = floor.conv2d(x, p["W1"], p["b1"], 1)
        a1 = floor.relu(y1)
        h1, mask1 = floor.max_pool2(a1)
        y2, columns2 = floor.conv2d(h1, p["W2"], p["b2"], 1)
        a2 = floor.relu(y2)
        h2, mask2 = floor.max_pool2(a2)
        flat = h2.reshape(batch, -1)
        logits = flat @ p["W3"]
        logits += p["b3"]
        _, dlogits = floor.softmax_cross_entropy(logits, labels)

        grads = {"W3": flat.T @ dlogits, "b3": dlogits.sum(axis=0)}
        dh2 = (dlogits @ p["W3"].T).reshape(h2.shape)
        dy2 = floor.relu_backward(floor.max_pool2_backward(dh2, mask2), a2)
        dh1, grads["W2"], grads["b2"] = floor.conv2d_backward(dy2, h1.shape, columns2, p["W2"], 1,
                                                              need_dx=True)
        dy1 = floor.relu_backward(floor.max_pool2_backward(dh1, mask1), a1)
        _, grads["W1"], grads["b1"] = floor.conv2d_backward(dy1, x.shape, columns1, p["W1"], 1,
                                                            need_dx=False)
        for name, grad in grads.items():
            p[name] -= LEARNING_RATE * grad

    return Bench(step=step, outcome=lambda: {
        name: as_numpy(value) for name, value in p.items()})


def build_torch(size, torch, seed=3):
    functional = torch.nn.functional
    x_data, label_data, initial = make_data(size, seed)
    x = torch.from_numpy(x_data)
    labels = torch.from_numpy(label_data)
    p = {name: torch.from_numpy(value).requires_grad_(True) for name, value in initial.items()}
    batch = size["batch"]

    def step():
        h = functional.max_pool2d(torch.relu(functional.conv2d(x, p["W1"], p["b1"], padding=1)), 2)
        h = functional.max_pool2d(torch.relu(functional.conv2d(h, p["W2"], p["b2"], padding=1)), 2)
        logits = torch.addmm(p["b3"], h.reshape(batch, -1), p["W3"])
        functional.cross_entropy(logits, labels).backward()
        with torch.no_grad():
            for param in p.values():
                param.add_(param.grad, alpha=-LEARNING_RATE)
                param.grad = None

    return Bench(step=step, outcome=lambda: {
        name: as_numpy(value) for name, value in p.items()})
