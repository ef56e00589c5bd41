"""SINGA's operation-only MLP: parameter Tensors and operations, no layers.

    python examples/train_mlp.py
    python examples/train_mlp.py --logdir runs/mlp   # curves for TensorBoard, per step

A two-layer perceptron on the bundled 8x8 digits (flattened to 64 features), written the way
SINGA's examples/mlp/native.py is: matmul, add_bias, relu, softmax_cross_entropy, and
``for p, g in autograd.backward(loss): sgd.update(p, g)``.
"""
import argparse

import numpy as np

from _check_install import checked_autograd

autograd = checked_autograd()     # explains a clash with HIPS autograd (same import name)
from autograd import Tensor, opt  # noqa: E402
from autograd.data import DataLoader, load_digits  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--epochs", type=int, default=20, help="passes over the training set")
    parser.add_argument("--hidden", type=int, default=64, help="units in the hidden layer")
    parser.add_argument("--lr", type=float, default=0.1, help="SGD learning rate")
    parser.add_argument("--limit-batches", type=int, default=None,
                        help="train on at most this many batches per epoch (quick checks)")
    parser.add_argument("--logdir", metavar="DIR", help="log loss, accuracy, learning rate and "
                        "gradient norm per step for TensorBoard (needs the interop extra)")
    args = parser.parse_args(argv)
    writer = autograd.utils.SummaryWriter(args.logdir) if args.logdir else None

    autograd.manual_seed(0)
    (train_x, train_y), (test_x, test_y) = load_digits("train"), load_digits("test")
    train_x, test_x = train_x.reshape(len(train_x), -1), test_x.reshape(len(test_x), -1)
    features, classes = train_x.shape[1], 10

    w0 = Tensor(shape=(features, args.hidden), requires_grad=True, stores_grad=True)
    w0.gaussian(0.0, np.sqrt(2.0 / features))
    b0 = Tensor(shape=(args.hidden,), requires_grad=True, stores_grad=True).set_value(0.0)
    w1 = Tensor(shape=(args.hidden, classes), requires_grad=True, stores_grad=True)
    w1.gaussian(0.0, np.sqrt(1.0 / args.hidden))
    b1 = Tensor(shape=(classes,), requires_grad=True, stores_grad=True).set_value(0.0)

    def forward(x):
        hidden = autograd.relu(autograd.add_bias(autograd.matmul(x, w0), b0))
        return autograd.add_bias(autograd.matmul(hidden, w1), b1)

    sgd = opt.SGD(lr=args.lr, momentum=0.9)
    loader = DataLoader(train_x, train_y, batch_size=64, shuffle=True, seed=0)
    for epoch in range(args.epochs):
        total = 0.0
        for step, (x, y) in enumerate(loader):
            if args.limit_batches is not None and step == args.limit_batches:
                break
            logits = forward(Tensor(data=x, requires_grad=False))
            loss = autograd.softmax_cross_entropy(logits, y)
            lr, grad_squares = sgd.lr_value, 0.0
            for p, gp in autograd.backward(loss):
                grad_squares += float((gp.data * gp.data).sum()) if writer else 0.0
                sgd.update(p, gp)
            sgd.step()
            total += loss.item()
            if writer is not None:
                global_step = epoch * len(loader) + step
                writer.add_scalar("train/loss", loss, global_step)
                writer.add_scalar("train/accuracy",
                                  float((logits.to_numpy().argmax(axis=1) == y).mean()), global_step)
                writer.add_scalar("train/learning_rate", lr, global_step)
                writer.add_scalar("train/gradient_norm", grad_squares ** 0.5, global_step)
        with autograd.no_grad():
            predictions = forward(Tensor(data=test_x, requires_grad=False)).to_numpy()
        accuracy = float((predictions.argmax(axis=1) == test_y).mean())
        print(f"epoch {epoch + 1:2d}  loss {total / (step + 1):.4f}  test accuracy {accuracy:.2%}")
        if writer is not None:
            writer.add_scalar("epoch/test_accuracy", accuracy, epoch)
    if writer is not None:
        writer.close()
    return accuracy


if __name__ == "__main__":
    main()
