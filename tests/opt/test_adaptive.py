"""Adam, AdamW, RMSProp and AdaGrad against their update formulas written out in NumPy."""
import numpy as np
import pytest

import autograd
from autograd import opt
from tests.opt.quadratic import (assert_trajectories_close, loss_of, make_params,
                                 optimizer_trajectory, reference_trajectory)

STEPS = 15


def adam_reference(lr, beta_1=0.9, beta_2=0.999, epsilon=1e-8, weight_decay=0.0,
                   decoupled=False):
    def update(p, g, state, t):
        if not decoupled:
            g = g + weight_decay * p
        m = beta_1 * state.get("m", 0.0) + (1 - beta_1) * g
        v = beta_2 * state.get("v", 0.0) + (1 - beta_2) * g * g
        state["m"], state["v"] = m, v
        if decoupled:
            p = p * (1 - lr * weight_decay)
        m_hat = m / (1 - beta_1 ** t)
        v_hat = v / (1 - beta_2 ** t)
        return p - lr * m_hat / (np.sqrt(v_hat) + epsilon)
    return update


def rmsprop_reference(lr, rho=0.9, epsilon=1e-8, weight_decay=0.0):
    def update(p, g, state, t):
        g = g + weight_decay * p
        state["avg"] = rho * state.get("avg", 0.0) + (1 - rho) * g * g
        return p - lr * g / np.sqrt(state["avg"] + epsilon)     # SINGA: eps inside the root
    return update


def adagrad_reference(lr, epsilon=1e-8, weight_decay=0.0):
    def update(p, g, state, t):
        g = g + weight_decay * p
        state["history"] = state.get("history", 0.0) + g * g
        return p - lr * g / np.sqrt(state["history"] + epsilon)
    return update


CASES = [
    ("Adam", opt.Adam(lr=0.05), adam_reference(0.05)),
    ("Adam wd, betas", opt.Adam(lr=0.02, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1),
     adam_reference(0.02, 0.8, 0.99, 1e-6, 0.1)),
    ("Adam SINGA names", opt.Adam(lr=0.02, beta_1=0.7, beta_2=0.9, epsilon=1e-3),
     adam_reference(0.02, 0.7, 0.9, 1e-3)),
    ("AdamW", opt.AdamW(lr=0.05), adam_reference(0.05, weight_decay=0.01, decoupled=True)),
    ("AdamW strong decay", opt.AdamW(lr=0.05, weight_decay=0.5, beta_1=0.5),
     adam_reference(0.05, beta_1=0.5, weight_decay=0.5, decoupled=True)),
    ("RMSProp", opt.RMSProp(lr=0.01), rmsprop_reference(0.01)),
    ("RMSProp wd, big eps", opt.RMSProp(lr=0.02, rho=0.5, epsilon=0.1, weight_decay=0.1),
     rmsprop_reference(0.02, 0.5, 0.1, 0.1)),
    ("AdaGrad", opt.AdaGrad(lr=0.1), adagrad_reference(0.1)),
    ("AdaGrad wd, big eps", opt.AdaGrad(lr=0.2, epsilon=0.5, weight_decay=0.05),
     adagrad_reference(0.2, 0.5, 0.05)),
]


@pytest.mark.parametrize("optimizer, update", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_trajectory_matches_formula(optimizer, update):
    assert_trajectories_close(optimizer_trajectory(optimizer, STEPS),
                              reference_trajectory(update, STEPS), rtol=1e-10, atol=1e-12)


def test_defaults():
    assert opt.Adam().values() == {"lr": 1e-3, "beta_1": 0.9, "beta_2": 0.999,
                                   "epsilon": 1e-8, "weight_decay": 0.0}
    assert opt.AdamW().values()["weight_decay"] == 0.01
    assert opt.RMSProp().values() == {"lr": 0.1, "rho": 0.9, "epsilon": 1e-8,
                                      "weight_decay": 0.0}
    assert opt.AdaGrad().values() == {"lr": 0.1, "epsilon": 1e-8, "weight_decay": 0.0}
    assert opt.Adam(betas=(0.5, 0.6)).betas == (0.5, 0.6)


def test_adam_spellings_conflict():
    with pytest.raises(ValueError, match="Adam: give betas or beta_1/beta_2"):
        opt.Adam(beta_1=0.5, betas=(0.8, 0.9))
    with pytest.raises(ValueError, match="Adam: give eps or epsilon"):
        opt.Adam(epsilon=1e-3, eps=1e-4)
    with pytest.raises(ValueError, match="Adam: beta_1 must be in"):
        opt.Adam(beta_1=1.0)


def test_adam_bias_correction_counts_updates_per_parameter():
    """A parameter first updated at a later step gets t = 1 then (PyTorch's per-parameter
    count), so its first step moves each element by about lr."""
    adam = opt.Adam(lr=0.1)
    w1, w2 = make_params()
    for _ in range(3):
        adam.step()
    for param, grad in autograd.backward(loss_of([w1, w2])):
        adam.update(param, grad)
    np.testing.assert_allclose(w1.to_numpy(), np.array([1.0, -2.0, 0.5]) - 0.1 * np.sign(
        [1.0, -2.0, 0.5]), rtol=1e-6)


@pytest.mark.parametrize("make", [lambda: opt.Adam(lr=0.05, weight_decay=0.1),
                                  lambda: opt.AdamW(lr=0.05), lambda: opt.RMSProp(lr=0.01),
                                  lambda: opt.AdaGrad(lr=0.1)],
                         ids=["Adam", "AdamW", "RMSProp", "AdaGrad"])
def test_float32_stays_float32_and_follows_float64(make):
    trajectory32 = optimizer_trajectory(make(), 5, dtype=np.float32)
    trajectory64 = optimizer_trajectory(make(), 5, dtype=np.float64)
    optimizer = make()
    params = make_params(np.float32)
    optimizer(loss_of(params))
    for param in params:
        assert param.dtype == np.float32
        for value in optimizer.states[param].values():
            if hasattr(value, "dtype"):
                assert value.dtype == np.float32
    for step32, step64 in zip(trajectory32, trajectory64):
        for a, b in zip(step32, step64):
            assert a.dtype == np.float32
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
