"""SINGA's Model API: subclass Model, write forward and train_one_batch, compile, train.

    python examples/train_model.py

Code written for ``singa.model.Model`` runs with ``singa`` renamed to ``autograd``.
"""
import argparse


from _check_install import checked_autograd

autograd = checked_autograd()     # explains a clash with HIPS autograd (same import name)
from autograd import Model, Tensor, opt  # noqa: E402
from autograd.data import DataLoader, load_digits  # noqa: E402


class MLP(Model):
    def __init__(self, hidden=64, classes=10):
        super().__init__()
        self.linear1 = autograd.Linear(hidden)        # SINGA's lazy form: input size from compile
        self.linear2 = autograd.Linear(hidden, classes)

    def forward(self, x):
        return self.linear2(autograd.relu(self.linear1(x)))

    def train_one_batch(self, x, y):
        out = self.forward(x)
        loss = autograd.softmax_cross_entropy(out, y)
        self.optimizer(loss)                          # backward, update every parameter, step
        return out, loss


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--epochs", type=int, default=15, help="passes over the training set")
    parser.add_argument("--limit-batches", type=int, default=None,
                        help="train on at most this many batches per epoch (quick checks)")
    parser.add_argument("--save", metavar="PATH", help="save_states after training")
    args = parser.parse_args(argv)

    autograd.manual_seed(0)
    (train_x, train_y), (test_x, test_y) = load_digits("train"), load_digits("test")
    train_x, test_x = train_x.reshape(len(train_x), -1), test_x.reshape(len(test_x), -1)

    model = MLP()
    model.set_optimizer(opt.SGD(lr=0.1, momentum=0.9))
    model.compile([Tensor(data=train_x[:2], requires_grad=False)], is_train=True)
    loader = DataLoader(train_x, train_y, batch_size=64, shuffle=True, seed=0)
    for epoch in range(args.epochs):
        model.train()
        total, steps = 0.0, 0
        for x, y in loader:
            if args.limit_batches is not None and steps == args.limit_batches:
                break
            _, loss = model(Tensor(data=x, requires_grad=False), y)
            total, steps = total + loss.item(), steps + 1
        model.eval()
        predictions = model(Tensor(data=test_x, requires_grad=False)).to_numpy()
        accuracy = float((predictions.argmax(axis=1) == test_y).mean())
        print(f"epoch {epoch + 1:2d}  loss {total / steps:.4f}  test accuracy {accuracy:.2%}")
    model.train()
    if args.save:
        model.save_states(args.save, aux_states={"epoch": args.epochs, "accuracy": accuracy})
    return accuracy


if __name__ == "__main__":
    main()
