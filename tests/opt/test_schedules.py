"""Schedules against their formulas, and optimizers evaluating them at step_counter."""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from autograd import opt
from autograd.opt.schedules import schedule_config, schedule_from_config
from tests.opt.quadratic import (assert_trajectories_close, optimizer_trajectory,
                                 reference_trajectory)

steps = st.integers(min_value=0, max_value=10_000)


@given(steps)
def test_constant(step):
    assert opt.Constant(0.3)(step) == 0.3


@given(steps, st.integers(1, 50), st.floats(0.1, 1.0), st.booleans())
def test_exponential_decay(step, decay_steps, rate, staircase):
    schedule = opt.ExponentialDecay(0.2, decay_steps, rate, staircase)
    exponent = math.floor(step / decay_steps) if staircase else step / decay_steps
    assert schedule(step) == pytest.approx(0.2 * rate ** exponent, rel=1e-12)


@given(steps, st.integers(1, 50), st.floats(0.1, 1.0))
def test_step_decay(step, step_size, gamma):
    expected = 0.5 * gamma ** math.floor(step / step_size)
    assert opt.StepDecay(0.5, step_size, gamma)(step) == pytest.approx(expected, rel=1e-12)


@given(steps, st.integers(1, 500), st.floats(0.0, 0.05))
def test_cosine_decay(step, total, final):
    t = min(step, total)
    expected = final + (0.1 - final) * 0.5 * (1 + math.cos(math.pi * t / total))
    assert opt.CosineDecay(0.1, total, final)(step) == pytest.approx(expected, rel=1e-12,
                                                                       abs=1e-15)


@given(steps, st.integers(1, 100))
def test_linear_warmup_of_a_schedule(step, warmup):
    inner = opt.StepDecay(1.0, 7, 0.5)
    expected = 0.5 ** (step // 7) * min(1.0, (step + 1) / warmup)
    assert opt.LinearWarmup(inner, warmup)(step) == pytest.approx(expected, rel=1e-12)


def test_linear_warmup_of_a_value_reaches_it_at_warmup_end():
    warm = opt.LinearWarmup(0.4, 4)
    assert [warm(s) for s in range(6)] == pytest.approx([0.1, 0.2, 0.3, 0.4, 0.4, 0.4])


def test_bad_schedule_arguments():
    with pytest.raises(ValueError, match="ExponentialDecay: decay_steps must be a positive number"):
        opt.ExponentialDecay(0.1, 0, 0.5)
    with pytest.raises(ValueError, match="CosineDecay: total_steps"):
        opt.CosineDecay(0.1, -3)
    with pytest.raises(TypeError, match="SGD: lr must be a number, a schedule or a function"):
        opt.SGD(lr="fast")


def test_built_in_schedules_round_trip_through_their_description():
    for schedule in [opt.Constant(0.1), opt.ExponentialDecay(0.1, 3, 0.5, True),
                     opt.StepDecay(1.0, 2, 0.3), opt.CosineDecay(0.2, 10, 0.01),
                     opt.LinearWarmup(opt.CosineDecay(0.2, 10), 3)]:
        rebuilt = schedule_from_config(schedule_config(schedule))
        assert rebuilt == schedule
        assert [rebuilt(s) for s in range(12)] == [schedule(s) for s in range(12)]
    assert schedule_config(opt.LinearWarmup(lambda s: 0.1, 3)) is None


def test_optimizer_evaluates_every_hyperparameter_at_step_counter():
    lr = opt.ExponentialDecay(0.1, 2, 0.5, staircase=True)
    momentum = lambda step: 0.5 + 0.01 * step                   # noqa: E731  a plain function
    weight_decay = opt.CosineDecay(0.1, 6)

    def update(p, g, state, t):
        step = t - 1                     # the update of step t happens at step_counter t - 1
        m, wd = 0.5 + 0.01 * step, 0.1 * 0.5 * (1 + math.cos(math.pi * min(step, 6) / 6))
        g = g + wd * p
        state["buf"] = g.copy() if "buf" not in state else m * state["buf"] + g
        return p - 0.1 * 0.5 ** (step // 2) * state["buf"]

    sgd = opt.SGD(lr=lr, momentum=momentum, weight_decay=weight_decay)
    assert_trajectories_close(optimizer_trajectory(sgd, 10), reference_trajectory(update, 10))
    assert sgd.step_counter == 10
    assert sgd.lr_value == pytest.approx(0.1 * 0.5 ** 5)


def test_assigning_a_hyperparameter_takes_effect_at_once():
    sgd = opt.SGD(lr=0.1)
    assert sgd.lr_value == 0.1
    sgd.lr = 0.01
    assert sgd.lr_value == 0.01
    sgd.lr = opt.StepDecay(1.0, 1, 0.5)
    sgd.step()
    assert sgd.lr_value == 0.5
    with pytest.raises(ValueError, match="SGD: lr must be in"):
        sgd.lr = -1.0
    assert sgd.lr_value == 0.5
