"""Write your own Operation, check it with gradcheck, and train with it.

    python examples/custom_operation.py [--steps 300] [--lr 0.05]

An Operation works on raw arrays: ``forward`` computes the output and saves what ``backward``
needs; ``backward`` turns the gradient of the output into one gradient per input. Use the
array module of the inputs (``xp``) and the same code runs on NumPy and CuPy.
"""
import argparse

import numpy as np

from _check_install import checked_autograd

autograd = checked_autograd()     # explains a clash with HIPS autograd (same import name)
from autograd import Tensor  # noqa: E402
from autograd.device import get_array_module  # noqa: E402


class Swish(autograd.Operation):
    """y = x * sigmoid(beta * x).   dx = dy * (s + beta * x * s * (1 - s)), s = sigmoid(beta x)"""

    def __init__(self, beta=1.0):
        super().__init__()
        self.beta = beta

    def forward(self, x):
        xp = get_array_module(x)
        s = 1 / (1 + xp.exp(-self.beta * x))
        self.save_for_backward(x, s)          # kept only while the graph is recorded
        return x * s

    def backward(self, dy):
        x, s = self.saved
        return dy * (s + self.beta * x * s * (1 - s))


def swish(x, beta=1.0):
    """The functional form users call: ``swish(t)``."""
    return Swish(beta)(x)


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--steps", type=int, default=300, help="training steps")
    parser.add_argument("--lr", type=float, default=0.05, help="SGD learning rate")
    return parser.parse_args(argv)


def main(argv=None, steps=None):
    args = parse_arguments(argv)
    steps = args.steps if steps is None else steps
    # 1. Check the backward against finite differences (float64, random upstream gradient).
    x = Tensor(data=np.random.default_rng(0).standard_normal((4, 5)))
    assert autograd.gradcheck(lambda t: swish(t, beta=1.5), [x])
    print("gradcheck passed: Swish.backward matches finite differences")

    # 2. Train with it: fit y = sin(3x) with a one-hidden-layer network using swish.
    autograd.manual_seed(0)
    rng = np.random.default_rng(0)
    inputs = rng.uniform(-1, 1, (256, 1)).astype(np.float32)
    targets = np.sin(3 * inputs)
    w0 = Tensor(shape=(1, 32), stores_grad=True).gaussian(0.0, 1.0)
    b0 = Tensor(shape=(32,), stores_grad=True)
    w1 = Tensor(shape=(32, 1), stores_grad=True).gaussian(0.0, 0.2)
    sgd = autograd.opt.SGD(lr=args.lr, momentum=0.9)
    x, t = Tensor(data=inputs, requires_grad=False), Tensor(data=targets, requires_grad=False)
    for step in range(steps):
        prediction = autograd.matmul(swish(autograd.add_bias(autograd.matmul(x, w0), b0)), w1)
        loss = autograd.mse_loss(prediction, t)
        for p, g in autograd.backward(loss):
            sgd.update(p, g)
        sgd.step()
        if step % 100 == 0 or step == steps - 1:
            print(f"step {step:3d}  mse {loss.item():.5f}")
    return loss.item()


if __name__ == "__main__":
    main()
