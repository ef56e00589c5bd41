"""Tests for autograd/layers/container.py (Sequential) and summary.py."""
import numpy as np
import pytest

import autograd
from autograd import Layer, Linear, Sequential, Tensor


def test_sequential_chains_its_layers():
    rng = np.random.default_rng(0)
    model = Sequential(Linear(4, 5), autograd.ReLU(), Linear(5, 2))
    x = rng.standard_normal((3, 4)).astype(np.float32)
    hidden = np.maximum(x @ model[0].W.to_numpy() + model[0].b.to_numpy(), 0)
    expected = hidden @ model[2].W.to_numpy() + model[2].b.to_numpy()
    np.testing.assert_allclose(model(Tensor(data=x)).to_numpy(), expected, rtol=1e-5, atol=1e-6)


def test_sequential_indexing_iteration_and_names():
    first, second = Linear(2, 3), Linear(3, 1)
    model = Sequential({"hidden": first, "out": second})
    assert model["hidden"] is first and model[-1] is second and list(model) == [first, second]
    assert [n for n, _ in model.named_parameters()] == ["hidden.W", "hidden.b", "out.W", "out.b"]
    head = model[1:]
    assert isinstance(head, Sequential) and list(head) == [second]
    model.append(autograd.Sigmoid())
    assert len(model) == 3 and isinstance(model[2], autograd.Sigmoid)
    with pytest.raises(ValueError, match="already taken"):
        model.append(Linear(1, 1), "out")
    with pytest.raises(TypeError, match="expected a Layer"):
        Sequential(lambda x: x)


def test_sequential_rejects_a_misfit_before_any_layer_runs():
    class Counting(Layer):
        calls = 0

        def forward(self, x):
            Counting.calls += 1
            return x

        def output_shape(self, input_shape):
            return tuple(input_shape)

    model = Sequential(Counting(), Linear(4, 3), Linear(5, 2))
    with pytest.raises(ValueError, match=r"Linear\(5->2\): expected input \(N, 5\), got \(2, 3\)"):
        model(Tensor(shape=(2, 4)))
    assert Counting.calls == 0
    with pytest.raises(ValueError, match=r"Linear\(5->2\)"):
        model.output_shape((None, 4))


def test_summary_of_a_sequential_infers_shapes_without_computing():
    model = Sequential(Linear(784, 32), autograd.ReLU(), Sequential(Linear(10)))
    text = autograd.summary(model, (None, 784), print_fn=None)
    lines = text.splitlines()
    assert lines[0].split() == ["Layer", "Type", "Output", "shape", "Params"]
    assert lines[2].split() == ["0", "Linear", "(None,", "32)", str(784 * 32 + 32)]
    assert lines[3].split() == ["1", "ReLU", "(None,", "32)", "0"]
    assert lines[4].split() == ["2.0", "Linear", "(None,", "10)", str(32 * 10 + 10)]
    assert lines[-1] == f"Total params: {784 * 32 + 32 + 330:,}"
    assert model[2][0].W is None                                  # the lazy layer stayed lazy


def test_summary_traces_a_model_with_its_own_forward(capsys):
    class Net(Layer):
        def __init__(self):
            super().__init__()
            self.hidden = Linear(6, 4)
            self.act = autograd.Tanh()
            self.out = Linear(2)

        def forward(self, x):
            return self.out(self.act(self.hidden(x)))

    net = Net()
    net.act.train()
    text = autograd.summary(net, (3, 6))
    assert capsys.readouterr().out.strip() == text
    rows = [line.split() for line in text.splitlines()[2:5]]
    assert rows == [["hidden", "Linear", "(3,", "4)", "28"], ["act", "Tanh", "(3,", "4)", "0"],
                    ["out", "Linear", "(3,", "2)", "10"]]
    assert text.endswith("Total params: 38")
    assert net.training and net.act.training                     # modes restored


def test_summary_tracing_changes_no_statistics_and_no_global_flag():
    class Net(Layer):
        def __init__(self):
            super().__init__()
            self.conv = autograd.Conv2d(2, 3, 3, padding=1)
            self.bn = autograd.BatchNorm2d(3)
            self.drop = autograd.Dropout(0.5)

        def forward(self, x):
            return self.drop(self.bn(self.conv(x)))

    net = Net()
    before = net.state_dict()
    text = autograd.summary(net, (2, 2, 5, 5), print_fn=None)
    assert [line.split()[0] for line in text.splitlines()[2:5]] == ["conv", "bn", "drop"]
    assert autograd.training and net.training and net.bn.training
    for name, value in net.state_dict().items():
        np.testing.assert_array_equal(value, before[name])
    with pytest.raises(ValueError, match="needs a concrete input shape"):
        autograd.summary(net, (None, 2, 5, 5))


def test_summary_of_a_singa_model_leaves_autograd_training_alone():
    class Classifier(autograd.Model):
        def __init__(self):
            super().__init__()
            self.fc = Linear(3, 2)

        def forward(self, x):
            return self.fc(x)

    model = Classifier()
    text = autograd.summary(model, (4, 3), print_fn=None)
    assert text.splitlines()[2].split() == ["fc", "Linear", "(4,", "2)", "8"]
    assert autograd.training and model.training


def test_summary_traces_leaves_only_in_the_dtype_asked_for_and_shows_an_unknown_shape():
    seen = []

    class Pair(Layer):
        def forward(self, x):
            seen.append(x.dtype)
            return (x, x)                       # no .shape: the table shows "?"

    class Net(Layer):
        def __init__(self):
            super().__init__()
            self.block = Sequential(Pair())

        def forward(self, x):
            return self.block(x)[0]

    text = autograd.summary(Net(), (2, 3), dtype=np.float64, print_fn=None)
    rows = [line.split() for line in text.splitlines()[2:-2]]
    assert seen == [np.float64]
    assert rows == [["block.0", "Pair", "?", "0"]]      # the leaf, not the Sequential around it
