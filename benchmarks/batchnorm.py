"""BatchNorm2d in training mode, forward + backward, on x (64, 32, 28, 28): batch statistics,
running statistics updated, gradients for x, scale and bias. Pure memory traffic (about 1.6M
elements read and written a few times each way), no GEMM."""
import numpy as np

from . import floor
from .common import Bench, require, random_state, as_numpy, forward_backward_bench

NAME = "batchnorm"
DESCRIPTION = "BatchNorm2d fwd+bwd (train) on (64,32,28,28)"
UNIT = "ms"
MOMENTUM = 0.9          # SINGA's convention: running = 0.9 * running + 0.1 * batch
EPS = 1e-5


def sizes(quick):
    return {"shape": (4, 8, 6, 6) if quick else (64, 32, 28, 28)}


def make_data(size, seed=4):
    rng = random_state(seed)
    shape = size["shape"]
    channels = shape[1]
    return {
        "x": (rng.standard_normal(shape) * 2 + 0.5).astype(np.float32),
        "dy": rng.standard_normal(shape).astype(np.float32),
        "scale": (1 + 0.1 * rng.standard_normal(channels)).astype(np.float32),
        "bias": (0.1 * rng.standard_normal(channels)).astype(np.float32),
    }


def build_autograd(size, seed=4):
    (backward, batch_norm) = require("backward", "batch_norm")
    from autograd import Tensor
    data = make_data(size, seed)
    channels = size["shape"][1]
    x = Tensor(data=data["x"], stores_grad=True)
    params = {"x": x, "scale": Tensor(data=data["scale"], stores_grad=True),
              "bias": Tensor(data=data["bias"], stores_grad=True)}
    running_mean = Tensor(data=np.zeros(channels, np.float32), requires_grad=False)
    running_var = Tensor(data=np.ones(channels, np.float32), requires_grad=False)

    def forward():
        return batch_norm(x, params["scale"], params["bias"], running_mean, running_var,
                          momentum=MOMENTUM, eps=EPS)

    return forward_backward_bench(forward, data["dy"], params, backward)


def build_floor(size, seed=4):
    data = make_data(size, seed)
    channels = size["shape"][1]
    running_mean = np.zeros(channels, np.float32)
    running_var = np.ones(channels, np.float32)

    last = {}

    def run():
        y, x_hat, inv_std = floor.batch_norm(data["x"], data["scale"], data["bias"],
                                             running_mean, running_var, MOMENTUM, EPS)
        last["y"] = y
        last["x"], last["scale"], last["bias"] = floor.batch_norm_backward(
            data["dy"], x_hat, inv_std, data["scale"])

    return Bench(step=run, outcome=lambda: dict(last))


def build_torch(size, torch, seed=4):
    functional = torch.nn.functional
    data = make_data(size, seed)
    channels = size["shape"][1]
    x = torch.from_numpy(data["x"]).requires_grad_(True)
    scale = torch.from_numpy(data["scale"]).requires_grad_(True)
    bias = torch.from_numpy(data["bias"]).requires_grad_(True)
    running_mean = torch.zeros(channels)
    running_var = torch.ones(channels)
    dy = torch.from_numpy(data["dy"])

    last = {}

    def run():
        y = functional.batch_norm(x, running_mean, running_var, scale, bias, training=True,
                                  momentum=1 - MOMENTUM, eps=EPS)
        y.backward(dy)
        last.update(y=y, x=x.grad, scale=scale.grad, bias=bias.grad)
        for t in (x, scale, bias):
            t.grad = None

    return Bench(step=run, outcome=lambda: {name: as_numpy(v) for name, v in last.items()})
