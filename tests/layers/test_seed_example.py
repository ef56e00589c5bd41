"""The seed example of issue 4 (SINGA's CNN) written as a SINGA user would, with ``singa``
renamed to ``autograd``: it runs, and its loss falls over a few plain SGD steps."""
import numpy as np

import autograd
from autograd import Tensor


class CNN(autograd.Layer):
    def __init__(self):
        super().__init__()
        self.conv1 = autograd.Conv2d(1, 32, 3, padding=1, bias=False)
        self.bn1 = autograd.BatchNorm2d(32)
        self.pooling1 = autograd.MaxPool2d(3, 1, padding=1)
        self.conv21 = autograd.Conv2d(32, 16, 3, padding=1)
        self.conv22 = autograd.Conv2d(32, 16, 3, padding=1)
        self.bn2 = autograd.BatchNorm2d(32)
        self.pooling2 = autograd.AvgPool2d(3, 1, padding=1)
        self.linear = autograd.Linear(32 * 28 * 28, 10)

    def forward(self, x):
        y = self.pooling1(self.bn1(autograd.relu(self.conv1(x))))
        y = autograd.cat((self.conv21(y), self.conv22(y)), 1)
        return self.linear(autograd.flatten(self.pooling2(self.bn2(autograd.relu(y)))))


def test_the_seed_cnn_trains():
    autograd.manual_seed(0)
    rng = np.random.default_rng(0)
    x = Tensor(data=rng.standard_normal((4, 1, 28, 28)).astype(np.float32), requires_grad=False)
    t = Tensor(data=rng.integers(0, 10, size=4), requires_grad=False)
    model = CNN()
    assert [name for name, _ in model.named_parameters()] == [
        "conv1.W", "bn1.scale", "bn1.bias", "conv21.W", "conv21.b", "conv22.W", "conv22.b",
        "bn2.scale", "bn2.bias", "linear.W", "linear.b"]
    text = autograd.summary(model, (4, 1, 28, 28), print_fn=None)
    rows = [line.split() for line in text.splitlines()[2:-2]]
    assert [row[0] for row in rows] == ["conv1", "bn1", "pooling1", "conv21", "conv22", "bn2",
                                        "pooling2", "linear"]
    assert rows[6] == ["pooling2", "AvgPool2d", "(4,", "32,", "28,", "28)", "0"]
    assert rows[3][-1] == str(32 * 16 * 9 + 16)
    assert text.endswith(f"Total params: {sum(p.size for p in model.parameters()):,}")
    losses = []
    lr = 0.001
    for _ in range(4):
        loss = autograd.softmax_cross_entropy(model(x), t)
        losses.append(loss.item())
        pairs = list(autograd.backward(loss))
        assert {id(p) for p, _ in pairs} == {id(p) for p in model.parameters()}
        for p, g in pairs:
            p.data -= lr * g.data
    assert np.isfinite(losses).all()
    assert all(b < a for a, b in zip(losses, losses[1:])), losses
    assert losses[-1] < 0.5 * losses[0], losses
    assert np.any(model.bn1.running_mean.to_numpy() != 0)      # training updated the stats


def test_a_tiny_conv_net_passes_gradcheck_through_every_layer():
    rng = np.random.default_rng(1)
    model = autograd.Sequential(
        autograd.Conv2d(1, 2, 3, padding=1), autograd.BatchNorm2d(2), autograd.ReLU(),
        autograd.MaxPool2d(2), autograd.Flatten(), autograd.Linear(2 * 2 * 2, 3),
        autograd.Tanh())
    names = list(model.get_params())

    def through_model(x, *params):
        for name, value in zip(names, params):
            owner, attribute = name.rsplit(".", 1)
            setattr(model[owner], attribute, value)
        return model(x)

    params = [rng.standard_normal(p.shape) for p in model.parameters()]
    assert autograd.gradcheck(through_model, [rng.standard_normal((3, 1, 4, 4))] + params)
