"""The Optimizer base: the three driving styles, checks before writes, dtype and state keys."""
import numpy as np
import pytest

import autograd
from autograd import Operation, Tensor, opt
from tests.opt.quadratic import loss_of, make_params, numpy_gradients

STEPS = 6


def drive_by_call(optimizer, params):
    optimizer(loss_of(params))


def drive_by_update(optimizer, params):
    for param, grad in autograd.backward(loss_of(params)):
        optimizer.update(param, grad)
    optimizer.step()


def drive_by_raw_arrays(optimizer, params):
    for param, grad in autograd.backward(loss_of(params)):
        optimizer.apply(param.name, param, grad.data)
    optimizer.step()


def drive_by_backward_and_update(optimizer, params):
    optimizer.backward_and_update(loss_of(params))


MAKERS = {
    "SGD": lambda: opt.SGD(lr=opt.StepDecay(0.05, 2, 0.5), momentum=0.9, weight_decay=0.01),
    "Adam": lambda: opt.Adam(lr=0.05, weight_decay=0.01),
    "AdamW": lambda: opt.AdamW(lr=0.05),
    "RMSProp": lambda: opt.RMSProp(lr=0.01),
    "AdaGrad": lambda: opt.AdaGrad(lr=0.1),
}


@pytest.mark.parametrize("name", MAKERS)
def test_the_driving_styles_agree_bit_for_bit(name):
    results = []
    for drive in (drive_by_call, drive_by_update, drive_by_raw_arrays,
                  drive_by_backward_and_update):
        optimizer = MAKERS[name]()
        params = make_params(np.float32)
        for _ in range(STEPS):
            drive(optimizer, params)
        assert optimizer.step_counter == STEPS
        assert all(p.dtype == np.float32 for p in params)
        results.append([p.to_numpy().copy() for p in params])
    for other in results[1:]:
        for a, b in zip(results[0], other):
            np.testing.assert_array_equal(a, b)


def test_update_without_step_keeps_the_schedule_at_its_step():
    sgd = opt.SGD(lr=opt.StepDecay(0.1, 1, 0.5))
    params = make_params()
    for param, grad in autograd.backward(loss_of(params)):
        sgd.update(param, grad)
    assert sgd.step_counter == 0 and sgd.lr_value == 0.1
    sgd.step()
    assert sgd.step_counter == 1 and sgd.lr_value == 0.05


class Exploding(Operation):
    """Identity forward; its backward fails (a bug in a user's op)."""

    def forward(self, x):
        return x.copy()

    def backward(self, dy):
        raise RuntimeError("Exploding.backward: boom")


def exploding_loss(params):
    w1, w2 = params
    deep = Exploding()(w2) * 2.0 * 3.0
    return autograd.sum(deep * deep) + autograd.sum(w1 * w1)


def test_a_naive_loop_would_update_some_parameters_before_backward_fails():
    """Makes the next test meaningful: w1's gradient is yielded before the failure."""
    sgd = opt.SGD(lr=0.1)
    params = make_params()
    with pytest.raises(RuntimeError, match="boom"):
        for param, grad in autograd.backward(exploding_loss(params)):
            sgd.update(param, grad)
    assert not np.array_equal(params[0].to_numpy(), [1.0, -2.0, 0.5])


@pytest.mark.parametrize("name", MAKERS)
def test_failing_backward_changes_nothing(name):
    optimizer = MAKERS[name]()
    params = make_params()
    optimizer(loss_of(params))                  # some state to keep intact
    before = [p.to_numpy().copy() for p in params]
    states = {p: {k: (v.copy() if hasattr(v, "copy") else v) for k, v in s.items()}
              for p, s in optimizer.states.items()}
    with pytest.raises(RuntimeError, match="boom"):
        optimizer(exploding_loss(params))
    assert optimizer.step_counter == 1
    for p, b in zip(params, before):
        np.testing.assert_array_equal(p.to_numpy(), b)
    for p, s in optimizer.states.items():
        for key, value in s.items():
            np.testing.assert_array_equal(value, states[p][key])


@pytest.mark.parametrize("name", MAKERS)
def test_update_with_a_wrong_gradient_changes_nothing_and_names_the_parameter(name):
    optimizer = MAKERS[name]()
    w1, w2 = params = make_params()
    optimizer(loss_of(params))
    before = w1.to_numpy().copy()
    state_before = {k: (v.copy() if hasattr(v, "copy") else v)
                    for k, v in optimizer.states[w1].items()}
    with pytest.raises(ValueError, match=rf"{name}: parameter 'w1' of shape \(3,\) got a "
                                         r"gradient of shape \(2, 2\)"):
        optimizer.update(w1, np.ones((2, 2)))
    with pytest.raises(TypeError, match=f"{name}: parameter 'w1' of shape \\(3,\\) is "
                                        "float64 but its gradient is float32"):
        optimizer.update(w1, Tensor(data=np.ones(3, np.float32)))
    with pytest.raises(TypeError, match="must be a Tensor or an array, got list"):
        optimizer.update(w1, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(w1.to_numpy(), before)
    for key, value in optimizer.states[w1].items():
        np.testing.assert_array_equal(value, state_before[key])


def test_unnamed_parameter_is_described_by_shape():
    with pytest.raises(ValueError, match=r"SGD: unnamed parameter of shape \(2,\) got a "
                                         r"gradient of shape \(3,\)"):
        opt.SGD().update(Tensor(data=[1.0, 2.0], stores_grad=True), np.ones(3, np.float32))


def test_a_new_parameter_gets_no_state_when_its_update_is_rejected():
    sgd = opt.SGD(lr=0.1, momentum=0.9)
    w1, _ = make_params()
    with pytest.raises(ValueError):
        sgd.update(w1, np.ones(4))
    assert sgd.states == {}


def test_gradient_is_never_written_to():
    sgd = opt.SGD(lr=0.1, momentum=0.9, weight_decay=0.1, nesterov=True)
    params = make_params()
    grads = [g.copy() for g in numpy_gradients([p.to_numpy() for p in params])]
    kept = [g.copy() for g in grads]
    for _ in range(3):
        for param, grad in zip(params, grads):
            sgd.update(param, grad)
    for g, k in zip(grads, kept):
        np.testing.assert_array_equal(g, k)


def test_state_is_keyed_by_the_parameter_object_in_first_update_order():
    sgd = opt.SGD(lr=0.1, momentum=0.5)
    first, second = make_params(names=("same", "same"))     # equal names, distinct objects
    sgd.update(second, np.ones((2, 2)))
    sgd.update(first, np.ones(3))
    assert sgd.parameters() == [second, first]
    assert sgd.states[first]["momentum_buffer"].shape == (3,)
    assert sgd.states[second]["momentum_buffer"].shape == (2, 2)


def test_state_arrays_follow_the_parameter_dtype():
    sgd = opt.SGD(lr=0.1, momentum=0.9)
    w1, w2 = make_params(np.float32)
    sgd.update(w1, np.ones(3, np.float32))
    assert sgd.states[w1]["momentum_buffer"].dtype == np.float32


def test_repr_and_hyperparameter_names():
    assert opt.Adam.hyperparameter_names() == ["lr", "beta_1", "beta_2", "epsilon",
                                               "weight_decay"]
    assert repr(opt.SGD(lr=0.5)).startswith("SGD(lr=Constant(init_value=0.5)")
