"""A replayable function's keyword arguments, at capture and in every replay: the captured
step matches the same step run eagerly, step after step (the mutation run of graph_mode/
found a capture or a replay that dropped ``**kwargs`` unseen: docs/testing.md)."""
import numpy as np

import autograd
from autograd import Tensor, opt


@autograd.replayable
def scaled(pairs, factor=1.0, shift=None):
    """Each gradient times ``factor``, plus ``shift`` (an array) when given."""
    return [(p, g.data * factor + (0.0 if shift is None else shift)) for p, g in pairs]


def train(step_runner, shift):
    w = Tensor(data=np.array([[1.0], [2.0]], np.float32), stores_grad=True)
    sgd = opt.SGD(lr=0.1)

    def step(x):
        pairs = autograd.backward(autograd.sum(autograd.matmul(x, w)))
        for p, g in scaled(pairs, factor=0.25, shift=shift):
            sgd.update(p, g)

    run = step_runner(step)
    history = []
    for value in (1.0, 2.0, 3.0, 4.0, 5.0):
        shift[...] = value / 10
        run(Tensor(data=np.full((3, 2), value, np.float32)))
        history.append(w.to_numpy().copy())
    return history, run


def test_keyword_arguments_reach_the_function_at_capture_and_in_every_replay():
    eager, _ = train(lambda step: step, np.zeros((2, 1), np.float32))
    captured, run = train(autograd.capture, np.zeros((2, 1), np.float32))
    assert run.replays == 3
    for got, expected in zip(captured, eager):
        np.testing.assert_array_equal(got, expected)
    # the reference in numbers: dW = 0.25 * 3 * value + value / 10 per step, lr 0.1
    total = sum(0.1 * (0.75 * v + v / 10) for v in (1.0, 2.0, 3.0, 4.0, 5.0))
    np.testing.assert_allclose(eager[-1][:, 0], [1.0 - total, 2.0 - total], rtol=1e-6)
