"""Train a small CNN on the handwritten digits that ship with autograd (or on MNIST files).

    python examples/train_cnn.py                     # 8x8 digits, CPU, about half a minute
    python examples/train_cnn.py --device gpu        # the same on an NVIDIA GPU (needs CuPy)
    python examples/train_cnn.py --data ~/mnist      # MNIST IDX files from a folder
    python examples/train_cnn.py --save run.ckpt     # checkpoint after each epoch
    python examples/train_cnn.py --resume run.ckpt   # ... and carry on from it

It is a plain eager loop: forward, ``autograd.backward(loss)`` into the optimizer, repeat.
"""
import argparse
import os
import sys
import time

import numpy as np

import autograd
from autograd import Tensor, opt
from autograd.data import DataLoader, load_digits, load_mnist


class CNN(autograd.Layer):
    """conv3x3(32)-bn-relu-maxpool2 -> conv3x3(64)-bn-relu-maxpool2 -> linear(classes)."""

    def __init__(self, in_channels=1, num_classes=10):
        super().__init__()
        self.conv1 = autograd.Conv2d(in_channels, 32, 3, padding=1, bias=False)
        self.bn1 = autograd.BatchNorm2d(32)
        self.pool1 = autograd.MaxPool2d(2)
        self.conv2 = autograd.Conv2d(32, 64, 3, padding=1, bias=False)
        self.bn2 = autograd.BatchNorm2d(64)
        self.pool2 = autograd.MaxPool2d(2)
        self.fc = autograd.Linear(num_classes)     # input size taken from the first batch

    def forward(self, x):
        x = self.pool1(autograd.relu(self.bn1(self.conv1(x))))
        x = self.pool2(autograd.relu(self.bn2(self.conv2(x))))
        return self.fc(autograd.flatten(x))


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--momentum", type=float, default=0.9)
    parser.add_argument("--device", choices=["cpu", "gpu"], default="cpu")
    parser.add_argument("--data", metavar="DIR", help="train on MNIST IDX files in DIR")
    parser.add_argument("--save", metavar="PATH", help="write a checkpoint after each epoch")
    parser.add_argument("--resume", metavar="PATH", help="continue from a checkpoint")
    parser.add_argument("--plot", metavar="PNG", default="train_cnn_curves.png",
                        help="where to draw the loss and accuracy curves ('' for none)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--limit-batches", type=int, default=None,
                        help="train on at most this many batches per epoch (quick checks)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    return parser.parse_args(argv)


def load_data(directory):
    if directory:
        return load_mnist(directory, "train"), load_mnist(directory, "test")
    return load_digits("train"), load_digits("test")


def evaluate(model, images, labels, device, batch_size=256):
    """Accuracy over a whole split, in eval mode and without recording."""
    model.eval()
    correct = 0
    with autograd.no_grad():
        for x, y in DataLoader(images, labels, batch_size=batch_size):
            logits = model(Tensor(data=x, device=device, requires_grad=False))
            correct += int((logits.to_numpy().argmax(axis=1) == y).sum())
    model.train()
    return correct / len(labels)


def main(argv=None):
    args = parse_arguments(argv)
    from tqdm import tqdm

    autograd.manual_seed(args.seed)
    device = autograd.device.gpu(0) if args.device == "gpu" else autograd.device.cpu()
    (train_x, train_y), (test_x, test_y) = load_data(args.data)
    model = CNN(in_channels=train_x.shape[1], num_classes=int(train_y.max()) + 1)
    model.to_device(device)
    optimizer = opt.SGD(lr=args.lr, momentum=args.momentum)
    loader = DataLoader(train_x, train_y, batch_size=args.batch_size, shuffle=True,
                        seed=args.seed)
    history = {"loss": [], "accuracy": []}
    first_epoch = 0
    if args.resume:
        model(Tensor(data=train_x[:2], device=device, requires_grad=False))   # build lazy W
        extras = autograd.io.load(args.resume, model=model, optimizer=optimizer)
        first_epoch = int(extras["epoch"]) + 1
        history = {"loss": list(extras["loss"]), "accuracy": list(extras["accuracy"])}
        for _ in range(first_epoch):    # the shuffle carries on where the saved run stopped:
            next(iter(loader), None)    # each started epoch draws one permutation

    start = time.perf_counter()
    for epoch in range(first_epoch, args.epochs):
        model.train()
        steps = len(loader) if args.limit_batches is None else min(len(loader),
                                                                   args.limit_batches)
        bar = tqdm(total=steps, desc=f"epoch {epoch + 1}/{args.epochs}", unit="batch",
                   disable=args.quiet, leave=False, file=sys.stdout)
        loss_sum, seen, epoch_start = 0.0, 0, time.perf_counter()
        for step, (x, y) in enumerate(loader):
            if step == steps:
                break
            logits = model(Tensor(data=x, device=device, requires_grad=False))
            loss = autograd.softmax_cross_entropy(logits, y)
            for param, grad in autograd.backward(loss):
                optimizer.update(param, grad)
            optimizer.step()
            # Sum the loss where it lives; reading it to the host every step would make a
            # GPU wait for each step to finish.
            loss_sum = loss_sum + loss.data * len(x)
            seen += len(x)
            bar.update(1)
            if step % 10 == 9 or step == steps - 1:
                bar.set_postfix(loss=f"{float(loss_sum) / seen:.4f}",
                                images_per_s=f"{seen / (time.perf_counter() - epoch_start):.0f}")
        bar.close()
        loss_sum = float(loss_sum)
        accuracy = evaluate(model, test_x, test_y, device)
        history["loss"].append(loss_sum / max(seen, 1))
        history["accuracy"].append(accuracy)
        print(f"epoch {epoch + 1:2d}  train loss {history['loss'][-1]:.4f}  "
              f"test accuracy {accuracy:.2%}  ({time.perf_counter() - start:.1f} s)")
        if args.save:
            autograd.io.save(args.save, model=model, optimizer=optimizer, epoch=epoch,
                             loss=history["loss"], accuracy=history["accuracy"])

    elapsed = time.perf_counter() - start
    final = history["accuracy"][-1] if history["accuracy"] else float("nan")
    print(f"final test accuracy {final:.2%} in {elapsed:.1f} s on {device}")
    if args.plot and history["loss"]:
        plot_curves(history, args.plot)
        print(f"curves written to {args.plot}")
    return {"accuracy": final, "seconds": elapsed, "history": history}


def plot_curves(history, path):
    import matplotlib
    matplotlib.use("Agg")                 # no display needed
    import matplotlib.pyplot as plt
    epochs = np.arange(1, len(history["loss"]) + 1)
    figure, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5))
    left.plot(epochs, history["loss"], marker="o")
    left.set(xlabel="epoch", ylabel="train loss", title="loss")
    right.plot(epochs, np.array(history["accuracy"]) * 100, marker="o", color="tab:green")
    right.set(xlabel="epoch", ylabel="test accuracy (%)", title="accuracy")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


if __name__ == "__main__":
    os.environ.setdefault("OPENBLAS_NUM_THREADS", str(os.cpu_count() or 1))
    main()
