"""A ResNet basic block, forward + backward: relu(bn(conv3x3(relu(bn(conv3x3(x))))) + x) on
x (32, 64, 32, 32), convolutions without bias, batch norm in training mode. The input needs its
gradient too (the block sits inside a network). Two 64->64 3x3 convolutions make about 7.2 GFLOP
for forward + backward; the batch norms, relus and the skip add are memory traffic.
"""
import numpy as np

from . import floor
from .batchnorm import MOMENTUM, EPS
from .cnn import conv_weight
from .common import Bench, require, random_state, as_numpy, forward_backward_bench

NAME = "resnet"
DESCRIPTION = "ResNet block conv-bn-relu-conv-bn+skip-relu, (32,64,32,32), fwd+bwd"
UNIT = "ms"


def sizes(quick):
    return {"shape": (2, 8, 8, 8) if quick else (32, 64, 32, 32)}


def make_data(size, seed=5):
    rng = random_state(seed)
    shape = size["shape"]
    channels = shape[1]
    data = {"x": rng.standard_normal(shape).astype(np.float32),
            "dy": rng.standard_normal(shape).astype(np.float32),
            "W1": conv_weight(rng, channels, channels, 3),
            "W2": conv_weight(rng, channels, channels, 3)}
    for i in (1, 2):
        data[f"scale{i}"] = np.ones(channels, np.float32)
        data[f"bias{i}"] = np.zeros(channels, np.float32)
    return data


def build_autograd(size, seed=5):
    (backward, conv2d, batch_norm, relu) = require("backward", "conv2d", "batch_norm", "relu")
    from autograd import Tensor
    data = make_data(size, seed)
    channels = size["shape"][1]
    params = {name: Tensor(data=value, stores_grad=True)
              for name, value in data.items() if name != "dy"}
    running = {name: Tensor(data=(np.ones if "var" in name else np.zeros)(channels, np.float32),
                            requires_grad=False)
               for name in ("mean1", "var1", "mean2", "var2")}
    p = params

    def forward():
        h = conv2d(p["x"], p["W1"], None, padding=1)
        h = relu(batch_norm(h, p["scale1"], p["bias1"], running["mean1"], running["var1"],
                            momentum=MOMENTUM, eps=EPS))
        h = conv2d(h, p["W2"], None, padding=1)
        h = batch_norm(h, p["scale2"], p["bias2"], running["mean2"], running["var2"],
                       momentum=MOMENTUM, eps=EPS)
        return relu(h + p["x"])

    return forward_backward_bench(forward, data["dy"], params, backward)


def build_floor(size, seed=5):
    d = make_data(size, seed)
    channels = size["shape"][1]
    running = {name: (np.ones if "var" in name else np.zeros)(channels, np.float32)
               for name in ("mean1", "var1", "mean2", "var2")}
    x = d["x"]
    last = {}

    def run():
        y1, columns1 = floor.conv2d(x, d["W1"], None, 1)
        n1, x_hat1, inv_std1 = floor.batch_norm(y1, d["scale1"], d["bias1"], running["mean1"],
                                                running["var1"], MOMENTUM, EPS)
        a1 = floor.relu(n1)
        y2, columns2 = floor.conv2d(a1, d["W2"], None, 1)
        n2, x_hat2, inv_std2 = floor.batch_norm(y2, d["scale2"], d["bias2"], running["mean2"],
                                                running["var2"], MOMENTUM, EPS)
        n2 += x
        out = floor.relu(n2)

        dsum = floor.relu_backward(d["dy"].copy(), out)
        dy2, dscale2, dbias2 = floor.batch_norm_backward(dsum, x_hat2, inv_std2, d["scale2"])
        da1, dW2, _ = floor.conv2d_backward(dy2, a1.shape, columns2, d["W2"], 1, need_dx=True,
                                            need_dbias=False)
        dn1 = floor.relu_backward(da1, a1)
        dy1, dscale1, dbias1 = floor.batch_norm_backward(dn1, x_hat1, inv_std1, d["scale1"])
        dx, dW1, _ = floor.conv2d_backward(dy1, x.shape, columns1, d["W1"], 1, need_dx=True,
                                           need_dbias=False)
        dx += dsum
        last.update(y=out, x=dx, W1=dW1, W2=dW2, scale1=dscale1, bias1=dbias1, scale2=dscale2,
                    bias2=dbias2)

    return Bench(step=run, outcome=lambda: dict(last))


def build_torch(size, torch, seed=5):
    functional = torch.nn.functional
    data = make_data(size, seed)
    channels = size["shape"][1]
    p = {name: torch.from_numpy(value).requires_grad_(True)
         for name, value in data.items() if name != "dy"}
    running = {name: (torch.ones if "var" in name else torch.zeros)(channels)
               for name in ("mean1", "var1", "mean2", "var2")}
    dy = torch.from_numpy(data["dy"])
    last = {}

    def batch_norm(h, i):
        return functional.batch_norm(h, running[f"mean{i}"], running[f"var{i}"], p[f"scale{i}"],
                                     p[f"bias{i}"], training=True, momentum=1 - MOMENTUM, eps=EPS)

    def run():
        h = torch.relu(batch_norm(functional.conv2d(p["x"], p["W1"], padding=1), 1))
        h = batch_norm(functional.conv2d(h, p["W2"], padding=1), 2)
        y = torch.relu(h + p["x"])
        y.backward(dy)
        last.update(y=y, **{name: t.grad for name, t in p.items()})
        for t in p.values():
            t.grad = None

    return Bench(step=run, outcome=lambda: {name: as_numpy(v) for name, v in last.items()})
