"""SINGA's Model API: compile, train_one_batch dispatch, train/eval, save/load_states."""
import numpy as np
import pytest

import autograd
from autograd import Model, Tensor, opt


class TwoLayer(Model):
    def __init__(self):
        super().__init__()
        self.hidden = autograd.Linear(4)                  # lazy: sized by compile
        self.out = autograd.Linear(4, 2)

    def forward(self, x):
        return self.out(autograd.relu(self.hidden(x)))

    def train_one_batch(self, x, y):
        out = self.forward(x)
        loss = autograd.mse_loss(out, y)
        self.optimizer(loss)
        return out, loss


@pytest.fixture(autouse=True)
def restore_training_flag():
    yield
    autograd.training = True


def batch(seed=0):
    rng = np.random.default_rng(seed)
    return (Tensor(data=rng.standard_normal((8, 3)).astype(np.float32), requires_grad=False),
            Tensor(data=rng.standard_normal((8, 2)).astype(np.float32), requires_grad=False))


def make_model():
    autograd.manual_seed(0)
    model = TwoLayer()
    model.set_optimizer(opt.SGD(lr=0.05, momentum=0.9))
    model.compile([batch()[0]], is_train=True)
    return model


def test_compile_builds_lazy_parameters_and_call_dispatches_on_mode():
    model = make_model()
    assert model.hidden.W.shape == (3, 4)
    x, y = batch()
    before = model.hidden.W.to_numpy().copy()
    out, loss = model(x, y)                                # training: train_one_batch
    assert out.shape == (8, 2) and loss.size == 1
    assert not np.array_equal(before, model.hidden.W.to_numpy())
    model.eval()
    assert autograd.training is False and not model.out.training
    prediction = model(x)                                  # eval: forward only
    assert prediction.creator is None
    np.testing.assert_allclose(prediction.to_numpy(),
                               np.maximum(x.to_numpy() @ model.hidden.W.to_numpy()
                                          + model.hidden.b.to_numpy(), 0)
                               @ model.out.W.to_numpy() + model.out.b.to_numpy(), rtol=1e-5)
    model.train()
    assert autograd.training is True


def test_losses_fall_over_training():
    model = make_model()
    x, y = batch()
    losses = [model(x, y)[1].item() for _ in range(30)]
    assert losses[-1] < 0.5 * losses[0]


def test_save_and_load_states_resume_exactly(tmp_path):
    path = tmp_path / "model.ckpt"
    x, y = batch()
    reference = make_model()
    for _ in range(6):
        reference(x, y)
    interrupted = make_model()
    for _ in range(3):
        interrupted(x, y)
    interrupted.save_states(path, aux_states={"epoch": 3})
    resumed = make_model()
    assert resumed.load_states(path) == {"epoch": 3}
    for _ in range(3):
        resumed(x, y)
    for (name, a), (_, b) in zip(reference.named_parameters(), resumed.named_parameters()):
        np.testing.assert_array_equal(a.to_numpy(), b.to_numpy(), err_msg=name)


def test_train_one_batch_must_be_defined():
    class ForwardOnly(Model):
        def forward(self, x):
            return x
    with pytest.raises(NotImplementedError, match="train_one_batch"):
        ForwardOnly()(batch()[0])


def test_initialize_runs_once_before_the_first_forward_even_when_called_directly():
    # SINGA's Model subclasses create state in initialize(x) and call self.forward directly
    # from compile and train_one_batch.
    import numpy as np
    import autograd as ag

    calls = []

    class Net(ag.Model):
        def initialize(self, x):
            calls.append(x.shape)
            self.scale = ag.Tensor(data=np.full((x.shape[1],), 2.0, np.float32),
                                   stores_grad=True)

        def forward(self, x):
            return x * self.scale

        def train_one_batch(self, x, y):
            out = self.forward(x)
            loss = ag.mse_loss(out, y)
            self.optimizer(loss)
            return out, loss

    net = Net()
    net.set_optimizer(ag.opt.SGD(lr=0.1))
    x = ag.Tensor(data=np.ones((2, 3), np.float32))
    net.compile([x], is_train=True)
    assert calls == [(2, 3)] and "scale" in net.get_params()
    net(x, ag.Tensor(data=np.ones((2, 3), np.float32)))
    net.eval()
    # d mean((x s - 1)^2) / d s_j = 2 (s - 1) * 2 rows / 6 elements
    expected = 2.0 - 0.1 * (2 * (2.0 - 1.0) * 2 / 6)
    np.testing.assert_allclose(net(x).to_numpy(), np.full((2, 3), expected), rtol=1e-6)
    assert calls == [(2, 3)]
