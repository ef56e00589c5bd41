"""Tape overhead: a chain of tanh(x * 1.01 + 0.1) on a (4,) float32 tensor, forward + backward.

On four elements every kernel is trivial, so the time per recorded op is the framework's own
cost of recording an op and replaying its backward. Reported in microseconds per recorded op
(3 per link: mul, add, tanh). The floor column is the cost of the bare NumPy calls of the
forward alone (the same 3 ufunc calls per link, no backward): what one NumPy call costs.
"""
import numpy as np

from .common import Bench, require, float32_problems, random_state, as_numpy

NAME = "tape"
DESCRIPTION = "chain of tanh(x*1.01+0.1) on (4,), fwd+bwd, per recorded op"
UNIT = "us"
OPS_PER_LINK = 3


def sizes(quick):
    return {"links": 20 if quick else 100, "elements": 4}


def _start(size):
    return random_state(1).standard_normal(size["elements"]).astype(np.float32) * 0.1


def chain_parts(size):
    """What both the eager and the captured chain use: backward, tanh, the leaf x, dy."""
    (backward, tanh) = require("backward", "tanh")
    from autograd import Tensor
    x = Tensor(data=_start(size), stores_grad=True)
    return backward, tanh, x, np.ones(size["elements"], np.float32)


def build_autograd(size):
    backward, tanh, x, dy = chain_parts(size)
    links = size["links"]
    last = {}

    def run():
        y = x
        for _ in range(links):
            y = tanh(y * 1.01 + 0.1)
        pairs = list(backward(y, dy))
        last["y"], last["dx"] = y, pairs[0][1]
        return y, pairs

    def check():
        y, pairs = run()
        return float32_problems({"y": y}, pairs, {"x": x})

    return Bench(step=run, ops_per_step=OPS_PER_LINK * links, check=check,
                 outcome=lambda: {name: as_numpy(v) for name, v in last.items()})


def build_floor(size):
    x = _start(size)
    links = size["links"]
    last = {}

    def run():
        y = x
        for _ in range(links):
            y = np.tanh(y * 1.01 + 0.1)
        last["y"] = y

    return Bench(step=run, ops_per_step=OPS_PER_LINK * links, outcome=lambda: dict(last))


def build_torch(size, torch):
    x = torch.from_numpy(_start(size)).requires_grad_(True)
    dy = torch.ones(size["elements"])
    links = size["links"]
    last = {}

    def run():
        y = x
        for _ in range(links):
            y = torch.tanh(y * 1.01 + 0.1)
        y.backward(dy)
        last["y"], last["dx"] = y, x.grad
        x.grad = None

    return Bench(step=run, ops_per_step=OPS_PER_LINK * links,
                 outcome=lambda: {name: as_numpy(v) for name, v in last.items()})
