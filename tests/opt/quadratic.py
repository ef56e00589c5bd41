"""A small quadratic problem the optimizer tests share, with its gradient written in NumPy.

loss(w1, w2) = sum(A * w1 * w1) + sum(B * (w2 - C) * (w2 - C))
d/dw1 = 2 * A * w1,   d/dw2 = 2 * B * (w2 - C)
"""
import numpy as np

import autograd
from autograd import Tensor

A = np.array([0.5, 1.0, 2.0])
B = np.array([[1.0, 3.0], [0.2, 0.7]])
C = np.array([[1.0, -1.0], [0.5, 2.0]])
INITIAL = (np.array([1.0, -2.0, 0.5]), np.array([[0.3, -0.7], [1.2, 0.1]]))


def make_params(dtype=np.float64, names=("w1", "w2")):
    params = []
    for value, name in zip(INITIAL, names):
        param = Tensor(data=value.astype(dtype), stores_grad=True)
        param.name = name
        params.append(param)
    return params


def loss_of(params):
    w1, w2 = params
    dtype = w1.dtype
    a = Tensor(data=A.astype(dtype), requires_grad=False)
    b = Tensor(data=B.astype(dtype), requires_grad=False)
    c = Tensor(data=C.astype(dtype), requires_grad=False)
    difference = w2 - c
    return autograd.sum(a * w1 * w1) + autograd.sum(b * difference * difference)


def numpy_gradients(values):
    w1, w2 = values
    return [2 * A * w1, 2 * B * (w2 - C)]


def reference_trajectory(update, steps):
    """Run ``update(value, grad, state, t) -> value`` (t = 1, 2, ...) from INITIAL in float64;
    returns the values after each step."""
    values = [v.copy() for v in INITIAL]
    states = [{} for _ in values]
    trajectory = []
    for t in range(1, steps + 1):
        grads = numpy_gradients(values)
        values = [update(v, g, s, t) for v, g, s in zip(values, grads, states)]
        trajectory.append([v.copy() for v in values])
    return trajectory


def optimizer_trajectory(optimizer, steps, dtype=np.float64):
    """Drive ``optimizer(loss)`` for ``steps`` steps from INITIAL; the values after each."""
    params = make_params(dtype)
    trajectory = []
    for _ in range(steps):
        optimizer(loss_of(params))
        trajectory.append([p.to_numpy().copy() for p in params])
    return trajectory


def assert_trajectories_close(actual, expected, rtol=1e-12, atol=1e-12):
    assert len(actual) == len(expected)
    for step, (got, want) in enumerate(zip(actual, expected)):
        for index, (g, w) in enumerate(zip(got, want)):
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol,
                                       err_msg=f"step {step + 1}, parameter {index}")
