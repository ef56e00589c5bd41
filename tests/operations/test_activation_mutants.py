"""Activations where the op table never looks: exactly at the kinks. The table keeps its draws
away from them (finite differences straddle a kink), so a `x > 0` turned into `x >= 0`, or a
strict bound turned inclusive, survived mutation testing (docs/testing.md). The gradient at a
kink is a convention; these pin the one each docstring states (and PyTorch uses): the
negative-side slope at x = 0, and zero at hardsigmoid's two corners."""
import re

import numpy as np
import pytest

import autograd
from autograd import Tensor

DY = np.array([3.0, 5.0, 7.0])


def _value_and_gradient(fn, x_values):
    x = Tensor(data=np.array(x_values, np.float64), stores_grad=True)
    y = fn(x)
    (grad,) = [g for _, g in autograd.backward(y, DY.copy())]
    return y.to_numpy(), grad.to_numpy()


@pytest.mark.parametrize("fn,slope", [
    (lambda x: autograd.leakyrelu(x, a=0.3), 0.3),
    (lambda x: autograd.leakyrelu(x), 0.01),
    (lambda x: autograd.elu(x, alpha=2.5), 2.5),
    (lambda x: autograd.selu(x), 1.0507 * 1.67326),
    (lambda x: autograd.selu(x, alpha=0.5, gamma=2.0), 1.0),
    (lambda x: autograd.prelu(x, 0.25), 0.25),
], ids=["leakyrelu_a", "leakyrelu_default", "elu_alpha", "selu_default", "selu_alpha_gamma",
        "prelu"])
def test_gradient_at_zero_takes_the_negative_side_slope(fn, slope):
    """`x > 0` -> `x >= 0` in LeakyReLU/ELU/SELU/PRelu forward: the value at 0 is 0 either way,
    but the gradient there would become dy instead of slope * dy."""
    y, grad = _value_and_gradient(fn, [-1.0, 0.0, 2.0])
    assert y[1] == 0.0
    # left of zero the slope is that of the negative branch at x = -1, right of it the
    # positive one; at zero exactly the negative branch's limit (d/dx alpha (e^x - 1) = alpha)
    assert grad[1] == pytest.approx(slope * DY[1], rel=1e-12)


def test_selu_gradient_on_each_side_of_zero():
    """The two branches of SELU's gradient by hand: gamma on the right, gamma alpha e^x on the
    left (so that the kink test above compares with the right constant)."""
    _, grad = _value_and_gradient(lambda x: autograd.selu(x, alpha=0.5, gamma=2.0),
                                  [-1.0, 0.0, 2.0])
    np.testing.assert_allclose(grad, [2.0 * 0.5 * np.exp(-1.0) * 3.0, 1.0 * 5.0, 2.0 * 7.0],
                               rtol=1e-12)


@pytest.mark.parametrize("x_values,expected_grad", [
    ([-0.5, 0.0, 1.5], [0.0, 0.5 * 5.0, 0.0]),      # alpha x + gamma = 0, 0.25, 1 exactly
    ([-0.25, 0.5, 1.0], [0.5 * 3.0, 0.5 * 5.0, 0.5 * 7.0]),
])
def test_hardsigmoid_gradient_is_zero_at_both_corners(x_values, expected_grad):
    """`z > 0` -> `z >= 0` and `z < 1` -> `z <= 1` in HardSigmoid: with alpha 0.5 and gamma
    0.25, x = -0.5 and x = 1.5 reach the corners exactly (binary fractions); the gradient there
    is 0, as PyTorch's hardsigmoid gives at +-3."""
    y, grad = _value_and_gradient(lambda x: autograd.hardsigmoid(x, alpha=0.5, gamma=0.25),
                                  x_values)
    np.testing.assert_array_equal(y, np.clip(0.5 * np.array(x_values) + 0.25, 0, 1))
    np.testing.assert_array_equal(grad, expected_grad)


@pytest.mark.parametrize("slope,kind", [(None, "NoneType"), ("0.25", "str")])
def test_prelu_refuses_a_slope_that_is_no_number_naming_itself(slope, kind):
    """The name prelu passes when it converts its slope (mutated to None or "XXpreluXX",
    survived: no test gave a slope that cannot be converted)."""
    message = f"prelu: expected a Tensor, an array or a number, got {kind}"
    with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
        autograd.prelu(Tensor(data=[-1.0, 1.0]), slope)
