"""The MLP step of ``mlp`` written the way a user writes it: ``autograd.Linear`` layers and
``autograd.opt.SGD`` driven as ``sgd(loss)`` (backward, check every pair, update), against
``torch.nn.Linear`` + ``torch.optim.SGD``. Same data, same initial weights, same arithmetic as
``mlp``: the difference between the two rows is the cost of the layer and optimizer code."""
import numpy as np

from . import mlp
from .common import Bench, Missing, require, float32_problems, as_numpy

NAME = "mlp_layers"
DESCRIPTION = "the MLP step with Linear layers and opt.SGD / nn.Linear + optim.SGD"
UNIT = "ms"
LEARNING_RATE = mlp.LEARNING_RATE
sizes = mlp.sizes
build_floor = mlp.build_floor


def build_autograd(size, seed=2):
    (Linear, relu, softmax_cross_entropy, backward) = require(
        "Linear", "relu", "softmax_cross_entropy", "backward")
    import autograd
    if not hasattr(getattr(autograd, "opt", None), "SGD"):
        raise Missing("opt.SGD")
    from autograd import Tensor
    x_data, label_data, initial = mlp.make_data(size, seed)
    x = Tensor(data=x_data, requires_grad=False)
    labels = Tensor(data=label_data)
    widths = size["layers"]
    layers = [Linear(fan_in, fan_out) for fan_in, fan_out in zip(widths[:-1], widths[1:])]
    params = {}
    for i, layer in enumerate(layers, start=1):
        if layer.W is None:                 # a lazily built layer: one call creates W and b
            layer(x if i == 1 else Tensor(shape=(1, widths[i - 1])))
        np.copyto(layer.W.data, initial[f"W{i}"])
        np.copyto(layer.b.data, initial[f"b{i}"])
        params[f"W{i}"], params[f"b{i}"] = layer.W, layer.b
    sgd = autograd.opt.SGD(lr=LEARNING_RATE)

    def loss_of_batch():
        h = x
        for i, layer in enumerate(layers, start=1):
            h = layer(h)
            if i < len(layers):
                h = relu(h)
        return softmax_cross_entropy(h, labels)

    def step():
        sgd(loss_of_batch())

    def check():
        loss = loss_of_batch()
        pairs = list(backward(loss))
        for param, grad in pairs:
            sgd.update(param, grad)
        sgd.step()
        return float32_problems({"loss": loss}, pairs, params)

    return Bench(step=step, check=check, outcome=lambda: {
        name: as_numpy(value) for name, value in params.items()})


def build_torch(size, torch, seed=2):
    x_data, label_data, initial = mlp.make_data(size, seed)
    x = torch.from_numpy(x_data)
    labels = torch.from_numpy(label_data)
    widths = size["layers"]
    layers = []
    with torch.no_grad():
        for i, (fan_in, fan_out) in enumerate(zip(widths[:-1], widths[1:]), start=1):
            layer = torch.nn.Linear(fan_in, fan_out)
            layer.weight.copy_(torch.from_numpy(initial[f"W{i}"].T.copy()))
            layer.bias.copy_(torch.from_numpy(initial[f"b{i}"]))
            layers.append(layer)
    model = torch.nn.Sequential(*[part for layer in layers
                                  for part in (layer, torch.nn.ReLU())][:-1])
    sgd = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE)
    loss_function = torch.nn.CrossEntropyLoss()

    def step():
        sgd.zero_grad(set_to_none=True)
        loss_function(model(x), labels).backward()
        sgd.step()

    def outcome():
        result = {}
        for i, layer in enumerate(layers, start=1):
            result[f"W{i}"] = as_numpy(layer.weight).T.copy()
            result[f"b{i}"] = as_numpy(layer.bias)
        return result

    return Bench(step=step, outcome=outcome)
