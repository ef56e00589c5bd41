"""Small batches (latency: serving, online learning, RL): the MLP 784-512-256-10, the CNN of
cnn.py on digits-sized 8x8 images and the LSTM language model of recurrent_lm.py at batch 1 and
8, each as a training step and as a no_grad forward (inference).

At batch 1 the arithmetic is tiny (the MLP's step is 1.6 MFLOP), so what a step costs is the
framework: kernel choice for degenerate shapes (a weight gradient ``x^T @ dy`` with an inner
dimension of 1 is an outer product), the tape, allocation. The training steps reuse the builders
of mlp.py, cnn.py and recurrent_lm.py at these sizes; the inference forwards are below.
"""
import numpy as np

from . import cnn, floor, mlp
from .common import Bench, require, as_numpy, float32_problems
from .recurrent_lm import RecurrentLM

__all__ = ["WORKLOADS"]

BATCHES = (1, 8)
DIGITS_IMAGE = 8              # load_digits: 8x8 images


class SmallBatch:
    """A workload (the interface of a benchmark module) from mlp.py or cnn.py at one batch."""

    UNIT = "ms"

    def __init__(self, base, batch, train):
        self.base, self.batch, self.train = base, batch, train
        self.NAME = f"{base.NAME}_b{batch}" + ("" if train else "_infer")
        model = ("MLP 784-512-256-10" if base is mlp else
                 f"CNN conv32-pool-conv64-pool-fc10 on 1x{DIGITS_IMAGE}x{DIGITS_IMAGE}")
        self.DESCRIPTION = f"{model}, batch {batch}, " + (
            "softmax CE, SGD step" if train else "no_grad forward")

    def sizes(self, quick):
        size = dict(self.base.sizes(quick), batch=self.batch)
        if self.base is cnn and not quick:
            size["image"] = DIGITS_IMAGE
        return size

    def build_autograd(self, size):
        if self.train:
            return self.base.build_autograd(size)
        (gemm, relu, conv2d, max_pool2d, reshape, no_grad) = require(
            "gemm", "relu", "conv2d", "max_pool2d", "reshape", "no_grad")
        from autograd import Tensor
        x_data, _, initial = self.base.make_data(size)
        x = Tensor(data=x_data, requires_grad=False)
        p = {name: Tensor(data=value, stores_grad=True) for name, value in initial.items()}
        last = {}

        def infer():
            with no_grad():
                if self.base is mlp:
                    h = x
                    count = len(size["layers"]) - 1
                    for i in range(1, count + 1):
                        h = gemm(h, p[f"W{i}"], p[f"b{i}"])     # PyTorch: addmm
                        h = relu(h) if i < count else h
                else:
                    h = max_pool2d(relu(conv2d(x, p["W1"], p["b1"], padding=1)), 2)
                    h = max_pool2d(relu(conv2d(h, p["W2"], p["b2"], padding=1)), 2)
                    h = gemm(reshape(h, (self.batch, -1)), p["W3"], p["b3"])
            last["logits"] = h

        def check():
            infer()
            return float32_problems({"logits": last["logits"]}, [])

        return Bench(step=infer, check=check,
                     outcome=lambda: {"logits": as_numpy(last["logits"])})

    def build_floor(self, size):
        if self.train:
            return self.base.build_floor(size)
        x, _, p = self.base.make_data(size)
        last = {}

        def infer():
            if self.base is mlp:
                h = x
                count = len(size["layers"]) - 1
                for i in range(1, count + 1):
                    h = h @ p[f"W{i}"]
                    h += p[f"b{i}"]
                    if i < count:
                        np.maximum(h, 0, out=h)
            else:
                h, _ = floor.max_pool2(floor.relu(floor.conv2d(x, p["W1"], p["b1"], 1)[0]))
                h, _ = floor.max_pool2(floor.relu(floor.conv2d(h, p["W2"], p["b2"], 1)[0]))
                h = h.reshape(self.batch, -1) @ p["W3"]
                h += p["b3"]
            last["logits"] = h

        return Bench(step=infer, outcome=lambda: {"logits": last["logits"].copy()})

    def build_torch(self, size, torch):
        if self.train:
            return self.base.build_torch(size, torch)
        functional = torch.nn.functional
        x_data, _, initial = self.base.make_data(size)
        x = torch.from_numpy(x_data)
        p = {name: torch.from_numpy(value).requires_grad_(True)
             for name, value in initial.items()}
        last = {}

        def infer():
            with torch.no_grad():
                if self.base is mlp:
                    h = x
                    count = len(size["layers"]) - 1
                    for i in range(1, count + 1):
                        h = torch.addmm(p[f"b{i}"], h, p[f"W{i}"])
                        h = torch.relu(h) if i < count else h
                else:
                    h = functional.max_pool2d(torch.relu(
                        functional.conv2d(x, p["W1"], p["b1"], padding=1)), 2)
                    h = functional.max_pool2d(torch.relu(
                        functional.conv2d(h, p["W2"], p["b2"], padding=1)), 2)
                    h = torch.addmm(p["b3"], h.reshape(self.batch, -1), p["W3"])
            last["logits"] = h

        return Bench(step=infer, outcome=lambda: {"logits": as_numpy(last["logits"])})


WORKLOADS = []
for _batch in BATCHES:
    for _train in (True, False):
        suffix = "" if _train else "_infer"
        WORKLOADS += [SmallBatch(mlp, _batch, _train), SmallBatch(cnn, _batch, _train),
                      RecurrentLM(f"lstm_b{_batch}{suffix}", "lstm", _batch, train=_train)]
