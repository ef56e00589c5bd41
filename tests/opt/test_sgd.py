"""SGD against its update formula written out in NumPy (PyTorch's momentum convention)."""
import numpy as np
import pytest

from autograd import opt
from tests.opt.quadratic import (assert_trajectories_close, optimizer_trajectory,
                                 reference_trajectory)

STEPS = 12


def sgd_reference(lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
    def update(p, g, state, t):
        g = g + weight_decay * p
        if momentum != 0:
            if "buf" not in state:
                state["buf"] = g.copy()
            else:
                state["buf"] = momentum * state["buf"] + (1 - dampening) * g
            g = g + momentum * state["buf"] if nesterov else state["buf"]
        return p - lr * g
    return update


CONFIGS = [
    dict(lr=0.1),
    dict(lr=0.05, momentum=0.9),
    dict(lr=0.05, momentum=0.9, nesterov=True),
    dict(lr=0.05, momentum=0.8, dampening=0.3),
    dict(lr=0.1, weight_decay=0.05),
    dict(lr=0.03, momentum=0.7, dampening=0.1, weight_decay=0.02),
    dict(lr=0.03, momentum=0.7, weight_decay=0.02, nesterov=True),
]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: ",".join(f"{k}={v}" for k, v in
                                                                  c.items()))
def test_sgd_trajectory_matches_formula(config):
    expected = reference_trajectory(sgd_reference(**config), STEPS)
    assert_trajectories_close(optimizer_trajectory(opt.SGD(**config), STEPS), expected)


def test_sgd_defaults_are_singas():
    sgd = opt.SGD()
    assert sgd.values() == {"lr": 0.1, "momentum": 0.0, "dampening": 0.0, "weight_decay": 0.0}
    assert sgd.nesterov is False


def test_nesterov_needs_momentum_and_no_dampening():
    with pytest.raises(ValueError, match="SGD: Nesterov"):
        opt.SGD(lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="SGD: Nesterov"):
        opt.SGD(lr=0.1, momentum=0.9, dampening=0.1, nesterov=True)


@pytest.mark.parametrize("name, value", [("lr", -0.1), ("momentum", -0.5),
                                         ("weight_decay", -1.0)])
def test_negative_hyperparameters_are_rejected(name, value):
    with pytest.raises(ValueError, match=f"SGD: {name} must be in"):
        opt.SGD(**{"lr": 0.1, name: value})


def test_momentum_schedule_starting_at_zero_switches_momentum_on_later():
    momentum = lambda step: 0.0 if step < 3 else 0.9     # noqa: E731
    lr = 0.05

    def reference(p, g, state, t):
        m = 0.0 if t - 1 < 3 else 0.9
        if m != 0 or "buf" in state:
            state["buf"] = g.copy() if "buf" not in state else m * state["buf"] + g
            g = state["buf"]
        return p - lr * g

    expected = reference_trajectory(reference, 8)
    assert_trajectories_close(optimizer_trajectory(opt.SGD(lr=lr, momentum=momentum), 8),
                              expected)


def test_singa_dtype_argument_is_checked_and_changes_nothing():
    import numpy as np
    import pytest
    import autograd
    from autograd import opt
    results = []
    for dtype in (None, np.float32, np.float16):
        w = autograd.Tensor(data=[1.0, -2.0], stores_grad=True)
        sgd = opt.SGD(0.1, 0.9, 0, 1e-5, False, dtype)        # SINGA's positional order
        for _ in range(2):
            sgd(autograd.sum(w * w))
        results.append(w.to_numpy())
        assert w.dtype == np.float32
    np.testing.assert_array_equal(results[0], results[1])
    np.testing.assert_array_equal(results[0], results[2])
    for make in (opt.SGD, opt.Adam, opt.RMSProp, opt.AdaGrad):
        with pytest.raises(TypeError, match=rf"{make.__name__}: dtype must be a floating "
                                            r"dtype, got int32"):
            make(dtype=np.int32)


def test_singa_distopt_methods_say_what_they_are():
    import pytest
    from autograd import opt
    sgd = opt.SGD(0.1)
    with pytest.raises(AttributeError, match=r"SGD\.backward_and_update_half: a method of "
                                             r"SINGA's DistOpt .*docs/singa\.md"):
        sgd.backward_and_update_half
    assert not hasattr(sgd, "wait")
    with pytest.raises(AttributeError, match=r"'SGD' object has no attribute 'nope'"):
        sgd.nope
