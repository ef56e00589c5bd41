"""Model survivors of the full mutation run: compile's defaults and mode handling, graph mode
switched on through compile and graph(), keyword arguments through __call__, the refusal policy
of a subclass, the train_one_batch message word for word, and a model saved without an
optimizer. Expected values are NumPy formulas or an eager twin of the same model."""
import numpy as np
import pytest

import autograd
from autograd import Model, Tensor, opt
from autograd.graph_mode import CapturedStep
from autograd.graph_mode.recorder import CaptureError
from autograd.recording import config


@pytest.fixture(autouse=True)
def restore_training_flag():
    yield
    config.training = True


class Affine(Model):
    """y = x W + shift; loss = weight * mean((y - target)^2); records the modes forward saw."""

    def __init__(self):
        super().__init__()
        self.W = Tensor(data=np.array([[0.5, -1.0], [2.0, 0.25], [1.0, 1.0]]), stores_grad=True)
        self.seen = []

    def forward(self, x, shift=0.0):
        self.seen.append((self.training, config.training))
        return autograd.matmul(x, self.W) + shift

    def train_one_batch(self, x, target, weight=1.0):
        out = self.forward(x)
        loss = autograd.mse_loss(out, target) * weight
        self.optimizer(loss)
        return out, loss


def data(seed=0):
    rng = np.random.default_rng(seed)
    return (Tensor(data=rng.standard_normal((4, 3)), requires_grad=False),
            Tensor(data=rng.standard_normal((4, 2)), requires_grad=False))


def fresh(**compile_options):
    model = Affine()
    model.set_optimizer(opt.SGD(lr=0.1))
    model.compile([data()[0]], **compile_options)
    return model


def test_compile_defaults_train_eagerly_without_graph_or_sequential():
    model = Affine()
    assert model.optimizer is None and model.compiled is False
    model.set_optimizer(opt.SGD(lr=0.1))
    model.compile([data()[0]])
    assert model.compiled is True
    assert model.training is True and config.training is True      # is_train=True
    assert model.graph_step is None and model.sequential is False
    assert model.seen == [(False, False)]         # the shape pass ran in eval mode


def test_compile_for_eval_leaves_eval_mode_and_its_pass_ran_in_eval_mode():
    model = fresh(is_train=False)
    assert model.training is False and config.training is False
    model.train()
    model.compile([data()[0]], is_train=True)       # from training mode too: eval for the pass
    assert model.seen == [(False, False), (False, False)]
    assert model.training is True


def test_a_compile_whose_forward_fails_puts_training_mode_back():
    class Failing(Affine):
        def forward(self, x, shift=0.0):
            raise ValueError("Failing: cannot size the layers")
    model = Failing().train()
    with pytest.raises(ValueError, match="cannot size"):
        model.compile([data()[0]], is_train=False)
    assert model.training is True and config.training is True and model.compiled is False


def _numpy_steps(x, target, weight, steps, lr=0.1):
    w = np.array([[0.5, -1.0], [2.0, 0.25], [1.0, 1.0]])
    losses = []
    for _ in range(steps):
        residual = x @ w - target
        losses.append(weight * np.mean(residual ** 2))
        w = w - lr * weight * 2 * x.T @ residual / residual.size
    return w, losses


def test_compile_with_use_graph_captures_and_replays_the_training_step():
    model = fresh(use_graph=True, sequential=True)
    assert isinstance(model.graph_step, CapturedStep) and model.sequential is True
    x, target = data()
    losses = [float(model(x, target)[1].item()) for _ in range(4)]
    assert model.graph_step.replays == 2                 # two recorded calls, two replays
    w, expected = _numpy_steps(x.to_numpy(), target.to_numpy(), 1.0, 4)
    np.testing.assert_allclose(losses, expected, rtol=1e-12)
    np.testing.assert_allclose(model.W.to_numpy(), w, rtol=1e-12)


def test_graph_switches_graph_mode_on_by_default_and_off():
    model = fresh()
    model.graph()
    assert isinstance(model.graph_step, CapturedStep) and model.sequential is False
    model.graph(True, True)
    assert model.sequential is True
    model.graph(False)
    assert model.graph_step is None and model.sequential is False


@pytest.mark.parametrize("use_graph", [False, True])
def test_keyword_arguments_reach_train_one_batch_and_forward(use_graph):
    model = fresh(use_graph=use_graph)
    x, target = data()
    for _ in range(3):
        _, loss = model(x, target=target, weight=3.0)
    w, expected = _numpy_steps(x.to_numpy(), target.to_numpy(), 3.0, 3)
    np.testing.assert_allclose(float(loss.item()), expected[-1], rtol=1e-12)
    np.testing.assert_allclose(model.W.to_numpy(), w, rtol=1e-12)
    model.eval()
    np.testing.assert_allclose(model(x, shift=5.0).to_numpy(), x.to_numpy() @ w + 5.0,
                               rtol=1e-12)


class ReadsTheLoss(Affine):
    """A step graph mode cannot replay: it reads the loss on the host."""

    def train_one_batch(self, x, target, weight=1.0):
        out, loss = super().train_one_batch(x, target, weight)
        self.last = float(loss.item())
        return out, loss


def test_a_refused_step_raises_by_default():
    model = ReadsTheLoss()
    model.set_optimizer(opt.SGD(lr=0.1))
    model.compile([data()[0]], use_graph=True)
    assert model.graph_step.on_refusal == "raise"
    with pytest.raises(CaptureError):
        for _ in range(3):
            model(*data())


def test_a_subclass_that_asks_for_eager_on_refusal_gets_it():
    class Lenient(ReadsTheLoss):
        _graph_refusal = "eager"
    model = Lenient()
    model.set_optimizer(opt.SGD(lr=0.1))
    model.compile([data()[0]], use_graph=True)
    assert model.graph_step.on_refusal == "eager"
    x, target = data()
    with pytest.warns(RuntimeWarning, match="every later call runs eagerly"):
        losses = [model(x, target)[1].item() for _ in range(4)]
    np.testing.assert_allclose(losses, _numpy_steps(x.to_numpy(), target.to_numpy(), 1.0, 4)[1],
                               rtol=1e-12)


def test_train_one_batch_left_undefined_is_explained_word_for_word():
    class ForwardOnly(Model):
        def forward(self, x):
            return x
    with pytest.raises(NotImplementedError) as info:
        ForwardOnly()(data()[0])
    assert str(info.value) == ("ForwardOnly must define train_one_batch(x, y) to be called in "
                               "training mode (or call model.eval() to run forward)")


def test_a_model_without_an_optimizer_saves_and_loads_its_parameters(tmp_path):
    model = Affine()
    model.save_states(tmp_path / "m.ckpt", aux_states={"epoch": 1})
    other = Affine()
    other.W.data[...] = 0.0
    assert other.load_states(tmp_path / "m.ckpt") == {"epoch": 1}
    np.testing.assert_array_equal(other.W.to_numpy(), model.W.to_numpy())
    assert autograd.io.read(tmp_path / "m.ckpt")["optimizer"] is None
