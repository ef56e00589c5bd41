"""A small MLP training step (784-256-10, batch 32: bookkeeping is a large part of it) written
with Linear layers and ``opt.SGD`` as ``sgd(loss)``, captured once with ``autograd.capture`` and
replayed, beside the same step in PyTorch eager (nn.Linear + optim.SGD) and the NumPy floor."""
import numpy as np

from . import mlp, mlp_layers
from .common import Bench, Missing, as_numpy, float32_problems

NAME = "mlp_replay"
DESCRIPTION = "MLP 784-256-10, batch 32, Linear + opt.SGD step captured and replayed"
UNIT = "ms"
build_floor = mlp.build_floor
build_torch = mlp_layers.build_torch


def sizes(quick):
    return {"batch": 8 if quick else 32, "layers": (784, 64, 10) if quick else (784, 256, 10)}


def build_autograd(size, seed=2):
    return build_autograd_layers(size, seed)


def build_autograd_layers(size, seed=2):
    """The captured step for any ``size`` with ``batch`` and ``layers`` (memory.py uses the
    big MLP's)."""
    import autograd
    if not hasattr(autograd, "capture"):
        raise Missing("capture")
    from autograd import Tensor
    x_data, label_data, initial = mlp.make_data(size, seed)
    x = Tensor(data=x_data, requires_grad=False)
    labels = Tensor(data=label_data)
    widths = size["layers"]
    layers = [autograd.Linear(fan_in, fan_out) for fan_in, fan_out in zip(widths[:-1],
                                                                           widths[1:])]
    params = {}
    for i, layer in enumerate(layers, start=1):
        if layer.W is None:
            layer(Tensor(shape=(1, widths[i - 1])))
        np.copyto(layer.W.data, initial[f"W{i}"])
        np.copyto(layer.b.data, initial[f"b{i}"])
        params[f"W{i}"], params[f"b{i}"] = layer.W, layer.b
    sgd = autograd.opt.SGD(lr=mlp.LEARNING_RATE)

    def train_step(x, labels):
        h = x
        for i, layer in enumerate(layers, start=1):
            h = layer(h)
            if i < len(layers):
                h = autograd.relu(h)
        loss = autograd.softmax_cross_entropy(h, labels)
        sgd(loss)
        return loss

    step = autograd.capture(train_step)

    def check():
        for _ in range(3):                     # two recorded calls, then a replay
            loss = step(x, labels)
        # the replayed updates' gradients are not visible: check the loss and the parameters
        return float32_problems({"loss": loss, **params}, [])

    return Bench(step=lambda: step(x, labels), check=check, outcome=lambda: {
        name: as_numpy(value) for name, value in params.items()})
