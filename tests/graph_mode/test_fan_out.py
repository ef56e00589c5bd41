"""Graph mode where gradients meet: a tensor used twice in a captured step (its two gradients
summed), replayed to the same bits as the step run eagerly. No graph_mode test had one: the
mutation run of graph_mode/ found the recorded sum reached by no test (docs/testing.md)."""
import numpy as np

import autograd
from autograd import Tensor, opt


def train(step_runner):
    w = Tensor(data=np.array([[1.0, -0.5], [0.5, 2.0]], np.float32), stores_grad=True)
    sgd = opt.SGD(lr=0.01)

    def step(x):
        h = autograd.matmul(x, w)
        loss = autograd.sum(autograd.mul(h, h)) + autograd.sum(autograd.matmul(h, w))
        sgd(loss)                       # h feeds two ops, w two matmuls: both sums recorded
        return loss

    run = step_runner(step)
    history = []
    for value in (1.0, 0.5, -1.0, 2.0, 0.25):
        loss = run(Tensor(data=np.full((3, 2), value, np.float32)))
        history.append((float(loss.to_numpy()), w.to_numpy().copy()))
    return history, run


def test_summed_gradients_replay_to_the_eager_values():
    eager, _ = train(lambda step: step)
    captured, run = train(autograd.capture)
    assert run.replays == 3
    for (loss, w), (loss_eager, w_eager) in zip(captured, eager):
        assert loss == loss_eager
        np.testing.assert_array_equal(w, w_eager)


def test_the_first_step_matches_the_gradient_by_hand():
    # loss = sum((x w)^2) + sum(x w w): dW = 2 x^T (x w) + x^T 1 w^T + (x w)^T 1
    x = np.ones((3, 2))
    w = np.array([[1.0, -0.5], [0.5, 2.0]])
    h = x @ w
    ones = np.ones((3, 2))
    grad = 2 * x.T @ h + x.T @ ones @ w.T + h.T @ ones
    history, _ = train(autograd.capture)
    np.testing.assert_allclose(history[0][1], w - 0.01 * grad, rtol=1e-6)
