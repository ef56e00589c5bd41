"""SINGA's graph switch: ``Model.compile(..., use_graph=True)`` replays train_one_batch and
forward to the same bits as the same model run eagerly."""
import copy

import numpy as np
import pytest

import autograd
from autograd import Tensor, opt


class Net(autograd.Model):
    def __init__(self):
        super().__init__()
        self.conv = autograd.Conv2d(1, 3, 3, padding=1)
        self.norm = autograd.BatchNorm2d(3)
        self.drop = autograd.Dropout(0.2)
        self.head = autograd.Linear(3 * 4 * 4, 5)

    def forward(self, x):
        y = autograd.relu(self.norm(self.conv(x)))
        return self.head(self.drop(autograd.flatten(y)))

    def train_one_batch(self, x, y, dist_option="plain", spars=None):
        out = self.forward(x)
        loss = autograd.softmax_cross_entropy(out, y)
        self.optimizer(loss)
        return out, loss


def make_pair():
    autograd.manual_seed(0)
    eager = Net()
    eager.set_optimizer(opt.SGD(lr=opt.StepDecay(0.1, step_size=4, gamma=0.5), momentum=0.9))
    graphed = copy.deepcopy(eager)
    x = Tensor(data=np.zeros((6, 1, 4, 4), np.float32))
    eager.compile([x], is_train=True, use_graph=False)
    graphed.compile([x], is_train=True, use_graph=True)
    return eager, graphed


def test_train_one_batch_and_eval_replay_bit_for_bit():
    eager, graphed = make_pair()
    rng = np.random.default_rng(1)
    tx, ty = Tensor(shape=(6, 1, 4, 4)), Tensor(data=np.zeros(6, np.int32))
    for step in range(10):                       # SINGA's driver: one reused pair of Tensors
        tx.copy_from_numpy(rng.standard_normal((6, 1, 4, 4)).astype(np.float32))
        ty.copy_from_numpy(rng.integers(0, 5, 6).astype(np.int32))
        results = []
        for model in (eager, graphed):
            autograd.manual_seed(100 + step)
            out, loss = model(tx, ty, "plain", None)
            results.append((out.to_numpy().copy(), loss.to_numpy().copy()))
        for a, b in zip(*results):
            np.testing.assert_array_equal(a, b, err_msg=f"step {step}")
    for (name, p), (_, q) in zip(eager.named_parameters(), graphed.named_parameters()):
        np.testing.assert_array_equal(p.to_numpy(), q.to_numpy(), err_msg=name)
    for (name, p), (_, q) in zip(eager.named_buffers(), graphed.named_buffers()):
        np.testing.assert_array_equal(p.to_numpy(), q.to_numpy(), err_msg=name)
    assert graphed.graph_step.replays == 8
    assert eager.optimizer.step_counter == graphed.optimizer.step_counter == 10

    eager.eval(), graphed.eval()
    for _ in range(3):
        np.testing.assert_array_equal(graphed(tx).to_numpy(), eager(tx).to_numpy())
    assert graphed.graph_step.replays == 9


def test_a_step_graph_mode_refuses_raises_capture_error_for_autograd_models():
    class Reading(Net):
        def train_one_batch(self, x, y):
            out, loss = super().train_one_batch(x, y)
            return out, loss.item()

    model = Reading()
    model.set_optimizer(opt.SGD(lr=0.1))
    x = Tensor(data=np.ones((2, 1, 4, 4), np.float32))
    model.compile([x], is_train=True, use_graph=True)
    with pytest.raises(autograd.CaptureError, match="Tensor.item"):
        model(x, Tensor(data=np.array([0, 1])))
