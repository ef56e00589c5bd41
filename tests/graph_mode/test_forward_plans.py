"""A replayed no_grad step runs each call through its op's forward plan
(``Operation.forward_plan``) where the capture found one giving the forward's outputs bit for
bit: the digits CNN's forwards at batch 1 and 8, replayed on new images, equal eager mode's;
a plan that disagrees with its forward, or fails, is not used; a call that records for
backward never asks for one. The op table's no_grad forwards are in
test_operations_replay.py."""
import numpy as np
import pytest

import autograd
from autograd import Operation, Tensor
from autograd.backend import native


def plans_in(captured):
    """The qualified names of the forward plans the captured program calls."""
    names = set()
    for recording in captured._recordings.values():
        for value in recording.replay_program.__globals__.values():
            name = getattr(value, "__qualname__", "")
            if "_plan.<locals>." in name:
                names.add(name.split(".")[0])
    return names


def cnn(seed=0):
    rng = np.random.default_rng(seed)
    shapes = {"W1": (32, 1, 3, 3), "b1": (32,), "W2": (64, 32, 3, 3), "b2": (64,),
              "W3": (256, 10), "b3": (10,)}
    p = {name: Tensor(data=rng.standard_normal(shape).astype(np.float32) * 0.3,
                      stores_grad=True) for name, shape in shapes.items()}

    def infer(x):
        with autograd.no_grad():
            h = autograd.max_pool2d(autograd.relu(autograd.conv2d(x, p["W1"], p["b1"],
                                                                  padding=1)), 2)
            h = autograd.max_pool2d(autograd.relu(autograd.conv2d(h, p["W2"], p["b2"],
                                                                  padding=1)), 2)
            return autograd.gemm(autograd.reshape(h, (x.shape[0], -1)), p["W3"], p["b3"])
    return infer


@pytest.mark.skipif(not native.available(), reason="the compiled kernels are not built")
@pytest.mark.parametrize("batch", [1, 8])
def test_the_digits_cnn_replays_through_its_plans_and_equals_eager(batch):
    infer = cnn()
    captured = autograd.capture(infer)
    rng = np.random.default_rng(batch)
    for step in range(5):
        x = rng.standard_normal((batch, 1, 8, 8)).astype(np.float32)
        x[0, 0, 0, :2] = (np.nan, -0.0) if step == 3 else (1.0, 2.0)
        replayed = captured(Tensor(data=x)).to_numpy()
        np.testing.assert_array_equal(replayed, infer(Tensor(data=x)).to_numpy())
    assert captured.replays == 3          # the first two calls are recorded and compared
    planned = {"conv2d_forward_plan", "relu_plan", "max_pool2d_plan"}
    if batch == 1:                      # at 8, a BLAS product and a separate add: no plan
        planned.add("matmul_add_plan")
    assert plans_in(captured) == planned


class Doubled(Operation):
    """y = 2 x.   dx = 2 dy"""

    plan_calls = 0

    def __init__(self, plan):
        self.plan = plan

    def forward(self, x):
        return 2 * x

    def backward(self, dy):
        return 2 * dy

    def forward_plan(self, x):
        Doubled.plan_calls += 1
        return self.plan

    def forward_plan_key(self):         # eager calls too (tests/operations/test_forward_plans)
        return id(self.plan)            # (a kept plan stays alive: its id is not reused)


def failing(x):
    raise ValueError("a plan that fails")


@pytest.mark.parametrize("plan, used", [
    (lambda x: x + x, True),                         # the same bits: used
    (lambda x: 3 * x, False),                        # other values
    (lambda x: (2 * x).astype(np.float64), False),   # another dtype
    (lambda x: np.asfortranarray(2 * x), False),     # another layout
    (lambda x: (2 * x, 2 * x), False),               # a tuple for an array
    (failing, False),
])
def test_only_a_plan_that_gives_the_forwards_bits_is_replayed(plan, used):
    def step(x):
        with autograd.no_grad():
            return Doubled(plan)(x)

    captured = autograd.capture(step)
    rng = np.random.default_rng(1)
    for _ in range(3):
        x = rng.standard_normal((3, 4)).astype(np.float32)
        np.testing.assert_array_equal(captured(Tensor(data=x)).to_numpy(), 2 * x)
    names = {getattr(value, "__name__", "") for recording in captured._recordings.values()
             for value in recording.replay_program.__globals__.values()}
    assert ("<lambda>" in names) == used


def test_a_call_recorded_for_backward_asks_for_no_plan():
    Doubled.plan_calls = 0
    w = Tensor(data=np.ones(3, np.float32), stores_grad=True)
    sgd = autograd.opt.SGD(lr=0.1)

    def step(x):
        loss = autograd.sum(Doubled(lambda a: a + a)(x * w))
        for param, gradient in autograd.backward(loss):
            sgd.update(param, gradient)
        return loss

    captured = autograd.capture(step)
    for _ in range(3):
        captured(Tensor(data=np.arange(3, dtype=np.float32)))
    assert captured.replays == 1 and Doubled.plan_calls == 0
    np.testing.assert_allclose(w.to_numpy(), 1 - 3 * 0.1 * 2 * np.arange(3))


@pytest.mark.skipif(not native.available(), reason="the compiled kernels are not built")
def test_switching_the_compiled_kernels_off_records_the_step_again_without_plans():
    """A recording's plans call the compiled kernels: with them switched off, the step is
    recorded again (the switch is part of its key) and replays through forward, NumPy's."""
    infer = cnn()
    captured = autograd.capture(infer)
    x = np.random.default_rng(4).standard_normal((1, 1, 8, 8)).astype(np.float32)
    for _ in range(3):
        captured(Tensor(data=x))
    assert captured.captures == 1 and len(plans_in(captured)) == 4
    previous = native.set_enabled(False)
    try:
        expected = infer(Tensor(data=x)).to_numpy()
        for _ in range(3):
            np.testing.assert_array_equal(captured(Tensor(data=x)).to_numpy(), expected)
        assert captured.captures == 2 and captured.replays == 2
        newest = list(captured._recordings.values())[-1]
        assert not any("_plan.<locals>." in getattr(value, "__qualname__", "")
                       for value in newest.replay_program.__globals__.values())
    finally:
        native.set_enabled(previous)
