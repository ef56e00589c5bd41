"""Train a small CNN on the handwritten digits that ship with autograd (or on MNIST files).

    python examples/train_cnn.py                     # 8x8 digits, CPU, about half a minute
    python examples/train_cnn.py --device gpu        # the same on an NVIDIA GPU (needs CuPy)
    python examples/train_cnn.py --data ~/mnist      # MNIST IDX files from a folder
    python examples/train_cnn.py --save run.ckpt     # checkpoint after each epoch
    python examples/train_cnn.py --resume run.ckpt   # ... and carry on from it
    python examples/train_cnn.py --logdir runs/cnn   # live curves: tensorboard --logdir runs
    mpiexec -n 2 python examples/train_cnn.py --distributed   # data-parallel, 2 processes

With ``--distributed`` (``pip install -e ".[dist]"``; ``mpiexec`` is beside the interpreter)
each process trains on its shard of every batch and ``opt.DistOpt`` averages the gradients;
``--batch-size`` stays the global batch, so the run follows the one-process run. Only rank 0
prints, plots and writes checkpoints. Give each process its share of the cores, e.g.
``OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 mpiexec -n 2 ...`` on 2 cores.

It is a plain eager loop: forward, ``autograd.backward(loss)`` into the optimizer, repeat.
"""
import argparse
import os
import sys
import time

import numpy as np
from tqdm import tqdm

from _check_install import checked_autograd

autograd = checked_autograd()     # explains a clash with HIPS autograd (same import name)
from autograd import Tensor, opt  # noqa: E402
from autograd.data import DataLoader, load_digits, load_mnist  # noqa: E402


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
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--epochs", type=int, default=12, help="passes over the training set")
    parser.add_argument("--batch-size", type=int, default=32, help="images per step")
    parser.add_argument("--lr", type=float, default=0.05, help="SGD learning rate")
    parser.add_argument("--momentum", type=float, default=0.9, help="SGD momentum")
    parser.add_argument("--device", choices=["cpu", "gpu"], default="cpu",
                        help="gpu needs CuPy (pip install \"tapegrad[gpu]\")")
    parser.add_argument("--data", metavar="DIR", help="train on MNIST IDX files in DIR")
    parser.add_argument("--save", metavar="PATH", help="write a checkpoint after each epoch")
    parser.add_argument("--resume", metavar="PATH", help="continue from a checkpoint")
    parser.add_argument("--plot", metavar="PNG", default="train_cnn_curves.png",
                        help="where to draw the loss and accuracy curves ('' for none)")
    parser.add_argument("--logdir", metavar="DIR",
                        help="log loss, accuracy, learning rate and gradient norm per step "
                             "for TensorBoard (needs the interop extra)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seeds initial weights, shuffling and dropout")
    parser.add_argument("--limit-batches", type=int, default=None,
                        help="train on at most this many batches per epoch (quick checks)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--graph", action="store_true",
                        help="graph mode: capture the training step once, then replay it "
                             "without the tape (autograd.capture; not with --distributed or "
                             "--logdir)")
    parser.add_argument("--distributed", action="store_true",
                        help="data-parallel over the processes started by mpiexec")
    args = parser.parse_args(argv)
    if args.graph and (args.distributed or args.logdir):
        parser.error("--graph runs the plain training step; it cannot be combined with "
                     "--distributed or --logdir")
    return args


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

    autograd.manual_seed(args.seed)
    optimizer = opt.SGD(lr=args.lr, momentum=args.momentum)
    rank, world_size, gpu_index = 0, 1, 0
    if args.distributed:            # GPUs talk over NCCL, one per process on each machine
        optimizer = opt.DistOpt(optimizer, communicator=opt.NcclCommunicator()
                                if args.device == "gpu" else None)
        rank, world_size, gpu_index = (optimizer.rank, optimizer.world_size,
                                       optimizer.local_rank)
    device = autograd.device.gpu(gpu_index) if args.device == "gpu" else autograd.device.cpu()
    (train_x, train_y), (test_x, test_y) = load_data(args.data)
    model = CNN(in_channels=train_x.shape[1], num_classes=int(train_y.max()) + 1)
    model.to_device(device)
    if args.distributed:
        model.eval()                    # build the lazy layer without touching BN statistics
        with autograd.no_grad():
            model(Tensor(data=train_x[:2], device=device, requires_grad=False))
        model.train()
        optimizer.broadcast_parameters(model)
    loader = DataLoader(train_x, train_y, batch_size=max(1, args.batch_size // world_size),
                        shuffle=True, seed=args.seed, rank=rank, world_size=world_size)
    quiet = args.quiet or rank != 0
    history = {"loss": [], "accuracy": []}
    first_epoch = 0
    if args.resume:
        model(Tensor(data=train_x[:2], device=device, requires_grad=False))   # build lazy W
        extras = autograd.io.load(args.resume, model=model, optimizer=optimizer)
        first_epoch = int(extras["epoch"]) + 1
        # where the shuffling and the random generators were: the rest of the run is then
        # the same, bit for bit, as if it had never stopped
        loader.load_state_dict(extras["loader"])
        autograd.set_rng_state(extras["rng"])
        history = {"loss": list(extras["loss"]), "accuracy": list(extras["accuracy"])}

    writer = autograd.utils.SummaryWriter(args.logdir) if args.logdir and rank == 0 else None

    def train_step(x, y):
        """Forward, backward into the optimizer, step: what --graph captures and replays."""
        logits = model(Tensor(data=x, device=device, requires_grad=False))
        loss = autograd.softmax_cross_entropy(logits, y)
        for param, grad in autograd.backward(loss):
            optimizer.update(param, grad)
        optimizer.step()
        return logits, loss

    step_function = autograd.capture(train_step) if args.graph else train_step
    start = time.perf_counter()
    for epoch in range(first_epoch, args.epochs):
        model.train()
        steps = len(loader) if args.limit_batches is None else min(len(loader),
                                                                   args.limit_batches)
        bar = tqdm(total=steps, desc=f"epoch {epoch + 1}/{args.epochs}", unit="batch",
                   disable=quiet, leave=False, file=sys.stdout)
        loss_sum, seen, epoch_start = 0.0, 0, time.perf_counter()
        for step, (x, y) in enumerate(loader):
            if step == steps:
                break
            lr, grad_squares = optimizer.lr_value, 0.0       # the rate this step uses
            if writer is None and not args.distributed:
                logits, loss = step_function(x, y)
            else:
                logits = model(Tensor(data=x, device=device, requires_grad=False))
                loss = autograd.softmax_cross_entropy(logits, y)
            if args.distributed:        # all-reduce overlapped with backward, then update
                optimizer.backward_and_update(loss)
            elif writer is not None:
                for param, grad in autograd.backward(loss):
                    grad_squares = grad_squares + (grad.data * grad.data).sum()
                    optimizer.update(param, grad)
                optimizer.step()
            if writer is not None:
                log_step(writer, epoch * steps + step, loss, logits, y, lr, grad_squares)
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
        if args.distributed:            # every rank's loss, over all the samples seen
            totals = optimizer.all_reduce(np.array([loss_sum, seen], np.float64))
            loss_sum, seen = float(totals[0]), int(totals[1])
        accuracy = evaluate(model, test_x, test_y, device)
        history["loss"].append(loss_sum / max(seen, 1))
        history["accuracy"].append(accuracy)
        now = time.perf_counter()
        if rank == 0:
            print(f"epoch {epoch + 1:2d}  train loss {history['loss'][-1]:.4f}  "
                  f"test accuracy {accuracy:.2%}  ({now - epoch_start:.1f} s, "
                  f"{now - start:.1f} s in all)")
        if writer is not None:
            log_epoch(writer, epoch, history, model)
        if args.save:
            autograd.io.save(args.save, model=model, optimizer=optimizer, epoch=epoch,
                             loss=history["loss"], accuracy=history["accuracy"],
                             loader=loader.state_dict(), rng=autograd.get_rng_state())

    if writer is not None:
        writer.close()
    elapsed = time.perf_counter() - start
    final = history["accuracy"][-1] if history["accuracy"] else float("nan")
    if rank == 0:
        processes = f" x {world_size} processes" if args.distributed else ""
        print(f"final test accuracy {final:.2%} in {elapsed:.1f} s on {device}{processes}")
    if args.plot and history["loss"] and rank == 0:
        plot_curves(history, args.plot)
    return {"accuracy": final, "seconds": elapsed, "history": history}


def log_step(writer, step, loss, logits, labels, lr, grad_squares):
    """One training step for TensorBoard (reads the loss and logits to the host)."""
    accuracy = float((logits.to_numpy().argmax(axis=1) == labels).mean())
    writer.add_scalar("train/loss", loss, step)
    writer.add_scalar("train/accuracy", accuracy, step)
    writer.add_scalar("train/learning_rate", lr, step)
    writer.add_scalar("train/gradient_norm", float(grad_squares) ** 0.5, step)


def log_epoch(writer, epoch, history, model):
    """The epoch's mean loss, test accuracy and weight distributions for TensorBoard."""
    writer.add_scalar("epoch/train_loss", history["loss"][-1], epoch)
    writer.add_scalar("epoch/test_accuracy", history["accuracy"][-1], epoch)
    for name, param in model.get_params().items():
        writer.add_histogram(f"weights/{name}", param, epoch)
    writer.flush()


def plot_curves(history, path):
    """Draw the curves to ``path``; without matplotlib (an optional extra), print them."""
    try:
        import matplotlib
    except ImportError:
        print("matplotlib is not installed, so no PNG (pip install \"tapegrad[examples]\"); "
              "the curves:")
        print(curves_as_text(history))
        return
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
    print(f"curves written to {path}")


def curves_as_text(history):
    """One line per epoch: loss and accuracy, with a bar for the accuracy."""
    lines = ["epoch  train loss  test accuracy"]
    for epoch, (loss, accuracy) in enumerate(zip(history["loss"], history["accuracy"]), 1):
        lines.append(f"{epoch:5d}  {loss:10.4f}  {accuracy:8.2%}  {'#' * round(accuracy * 40)}")
    return "\n".join(lines)


if __name__ == "__main__":
    os.environ.setdefault("OPENBLAS_NUM_THREADS", str(os.cpu_count() or 1))
    main()
