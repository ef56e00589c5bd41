"""How a replayable call names its Tensor and array arguments, and what a replay hands it
(the mutation run of graph_mode/ found the suite blind there: docs/testing.md). References:
the same step run eagerly, and the refusal message word for word."""
import re

import numpy as np
import pytest

import autograd
from autograd import Tensor, opt


@autograd.replayable
def scaled(gradient, scale):
    return gradient.data * scale.data


def train(runner, replace_at=3, steps=5):
    """SGD on sum(x * w) whose gradient a replayable function scales by a Tensor made outside
    the step; at step ``replace_at`` that Tensor gets a new array (as a move or a load does)."""
    w = Tensor(data=np.array([1.0, 2.0], np.float32), stores_grad=True)
    scale = Tensor(data=np.array([1.0, 1.0], np.float32))
    sgd = opt.SGD(lr=0.1)

    def step(x):
        for param, gradient in autograd.backward(autograd.sum(x * w)):
            sgd.update(param, scaled(gradient, scale))

    run = runner(step)
    history = []
    for index in range(steps):
        if index == replace_at:
            scale.data = np.array([10.0, 0.0], np.float32)
        run(Tensor(data=np.full(2, index + 1.0, np.float32)))
        history.append(w.to_numpy().copy())
    return history, run


def test_a_tensor_argument_given_a_new_array_is_read_again():
    """A Tensor made outside the step and passed to a replayable function is a leaf the
    capture checks before each replay: given a new array, the step is captured again."""
    eager, _ = train(lambda step: step)
    captured, run = train(autograd.capture)
    for got, expected in zip(captured, eager):
        np.testing.assert_array_equal(got, expected)
    # by hand: the gradient is x = index + 1; scaled by 1 for steps 1-3, by (10, 0) after
    lr_total = 0.1 * np.array([1 + 2 + 3 + 10 * (4 + 5), 1 + 2 + 3 + 0], np.float32)
    np.testing.assert_allclose(eager[-1], [1.0, 2.0] - lr_total, rtol=1e-6)
    assert run.replays >= 1


def test_a_tensor_written_in_place_then_passed_to_a_replayable_function_is_refused():
    def step(x):
        scale = Tensor(data=np.zeros(2, np.float32))
        scale.copy_from_numpy(np.ones(2, np.float32))
        return scaled(x, scale)

    message = ("graph mode: a Tensor written in place inside the step (by gaussian(), "
               "uniform(), copy_from_numpy(), +=, ...) is read by an operation; a replay would "
               "not write it again. Draw or compute it with an Operation (as dropout does), or "
               "do it outside the captured step (this call ran eagerly to its end; "
               f"{step.__qualname__} cannot be replayed)")
    with pytest.raises(autograd.CaptureError, match=f"^{re.escape(message)}$"):
        autograd.capture(step)(Tensor(data=np.ones(2, np.float32)))


def test_a_replay_hands_the_function_tensors_on_the_steps_device():
    """Tensors the step computed reach a replayed call wrapped again, as Tensors (not raw
    arrays) on the device they had at capture; arrays stay arrays."""
    seen = []

    @autograd.replayable
    def record(tensor, array):
        seen.append((type(tensor), tensor.device, type(array)))
        return tensor.data + array

    w = Tensor(data=np.array([1.0, 2.0], np.float32), stores_grad=True)

    def step(x, offset):
        return record(x * w, offset)

    run = autograd.capture(step)
    results = [run(Tensor(data=np.full(2, value, np.float32)), np.full(2, 0.5, np.float32))
               for value in (1.0, 2.0, 3.0, 4.0)]
    assert run.replays == 2
    assert seen == [(Tensor, w.device, np.ndarray)] * 4
    np.testing.assert_array_equal(np.stack([np.asarray(r) for r in results]),
                                  [[1.5, 2.5], [2.5, 4.5], [3.5, 6.5], [4.5, 8.5]])


def test_an_array_the_step_computed_is_passed_afresh_to_every_replay():
    """A raw array computed in the step (an Operation output's .data) passed to a replayable
    function is a register of the program, not a constant of the first call."""
    @autograd.replayable
    def doubled(array):
        return array * 2

    w = Tensor(data=np.array([1.0, 2.0], np.float32), stores_grad=True)
    run = autograd.capture(lambda x: doubled((x * w).data))
    results = [run(Tensor(data=np.full(2, value, np.float32))) for value in (1.0, 2.0, 3.0)]
    assert run.replays == 1
    np.testing.assert_array_equal(results, [[2.0, 4.0], [4.0, 8.0], [6.0, 12.0]])
