"""Adam/AdamW and the Optimizer base where the first mutation run of opt/adaptive.py and
opt/base.py found the suite blind (docs/testing.md): AdamW's PyTorch spellings (betas, eps)
and a decay of exactly 1, the betas message, SINGA's backward_and_update with a dy and
set_states with named parameters. References: the NumPy formulas of tests/opt/test_adaptive.py
and updates worked out by hand."""
import re

import numpy as np
import pytest

import autograd
from autograd import Tensor, opt
from tests.opt.quadratic import (assert_trajectories_close, optimizer_trajectory,
                                 reference_trajectory)
from tests.opt.test_adaptive import adam_reference, STEPS


def test_adamw_takes_betas_eps_and_a_decay_of_one():
    optimizer = opt.AdamW(lr=0.02, betas=(0.6, 0.8), eps=1e-3, weight_decay=1.0)
    reference = adam_reference(0.02, 0.6, 0.8, 1e-3, weight_decay=1.0, decoupled=True)
    assert_trajectories_close(optimizer_trajectory(optimizer, STEPS),
                              reference_trajectory(reference, STEPS), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kind", [opt.Adam, opt.AdamW])
@pytest.mark.parametrize("betas", [(0.9,), 0.9, (0.9, 0.99, 0.999)])
def test_betas_that_are_no_pair_are_refused_by_name(kind, betas):
    message = (f"{kind.__name__}: betas must be a pair (beta_1, beta_2), got {betas!r}")
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        kind(betas=betas)


def test_backward_and_update_passes_dy_on():
    w = Tensor(data=np.array([2.0]), stores_grad=True)
    opt.SGD(lr=0.1).backward_and_update(autograd.sum(w * w), Tensor(data=np.array(3.0)))
    np.testing.assert_allclose(w.to_numpy(), [2.0 - 0.1 * 3.0 * 4.0])   # dy * d(w^2)/dw


def test_set_states_with_named_parameters_continues_the_same_trajectory():
    def fresh():
        return Tensor(data=np.array([2.0, -1.0]), stores_grad=True)

    def step(optimizer, w):
        optimizer(autograd.sum(w * w * w))

    w, first = fresh(), opt.Adam(lr=0.1)
    step(first, w)
    states = first.state_dict({"w": w})
    copy, second = Tensor(data=w.to_numpy().copy(), stores_grad=True), opt.Adam(lr=0.1)
    second.set_states(states, {"w": copy})
    step(first, w)
    step(second, copy)
    np.testing.assert_array_equal(copy.to_numpy(), w.to_numpy())


@pytest.mark.parametrize("make,message", [
    (lambda: opt.RMSProp(rho=1.5), "RMSProp: rho must be in [0.0, 1.0], got 1.5"),
    (lambda: opt.Adam(beta_1=1.0), "Adam: beta_1 must be in [0.0, 1.0), got 1.0"),
    (lambda: opt.SGD(lr=-1.0), "SGD: lr must be in [0.0, inf], got -1.0"),
    (lambda: opt.SGD(lr=0.1, dampening=float("nan")),
     "SGD: dampening must be in [-inf, inf], got nan"),
])
def test_hyperparameter_ranges_are_named_with_their_brackets(make, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        make()


def test_an_inclusive_upper_bound_is_accepted():
    # rho = 1 keeps the running average at its start, 0: the step is -lr g / sqrt(0 + eps)
    w = Tensor(data=np.array([2.0]), stores_grad=True)
    rmsprop = opt.RMSProp(lr=0.1, rho=1.0)
    rmsprop(autograd.sum(w * w))
    np.testing.assert_allclose(w.to_numpy(), [2.0 - 0.1 * 4.0 / np.sqrt(0.0 + 1e-8)])


@pytest.mark.parametrize("name", ["Adam", "RMSProp", "AdaGrad"])
def test_a_coupled_weight_decay_of_exactly_one_is_applied(name):
    from tests.opt.test_adaptive import rmsprop_reference, adagrad_reference
    reference = {"Adam": adam_reference(0.02, weight_decay=1.0),
                 "RMSProp": rmsprop_reference(0.02, weight_decay=1.0),
                 "AdaGrad": adagrad_reference(0.02, weight_decay=1.0)}[name]
    optimizer = getattr(opt, name)(lr=0.02, weight_decay=1.0)
    assert_trajectories_close(optimizer_trajectory(optimizer, STEPS),
                              reference_trajectory(reference, STEPS), rtol=1e-10, atol=1e-12)


def test_adamw_defaults_are_pytorchs():
    """AdamW's own default lr (1e-3, as Adam's and PyTorch's) was changeable unseen: only its
    weight_decay default was checked."""
    assert opt.AdamW().values() == {"lr": 1e-3, "beta_1": 0.9, "beta_2": 0.999,
                                    "epsilon": 1e-8, "weight_decay": 0.01}
    # one step from the defaults against the formula: p (1 - lr wd) - lr m_hat / (|g| + eps)
    w = Tensor(data=np.array([2.0]), stores_grad=True)
    opt.AdamW()(autograd.sum(w * w))
    np.testing.assert_allclose(w.to_numpy(), [2.0 * (1 - 1e-3 * 0.01) - 1e-3 * 4.0 / (4.0 + 1e-8)],
                               rtol=1e-12)
