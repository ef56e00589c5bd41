"""Elementwise arithmetic where a sampled mutation run of operations/ chunk 1 found the suite
blind (docs/testing.md, issue 22): an integer tensor divided (and raised, subtracted from) by a
Python float keeps SINGA's float32, and pow's exponent gradient at a base <= 0 raises no NumPy
warning."""
import warnings

import numpy as np
import pytest

import autograd
from autograd import Tensor

INTS = np.array([1, 2, 4], np.int32)


@pytest.mark.parametrize("op,reference", [
    (lambda t: t / 2.5, lambda n: n / 2.5),
    (lambda t: 2.5 / t, lambda n: 2.5 / n),
    (lambda t: t ** 0.5, lambda n: n ** 0.5),
    (lambda t: 0.5 ** t, lambda n: 0.5 ** n),
    (lambda t: 2.5 - t, lambda n: 2.5 - n),
], ids=["div", "rdiv", "pow", "rpow", "rsub"])
def test_an_integer_tensor_with_a_python_float_gives_float32(op, reference):
    """`_float32_for_int(x, None)` in DivScalar survived (int32 / 2.5 is float64 in NumPy):
    every scalar op of an integer tensor and a float is float32, as in SINGA."""
    y = op(Tensor(data=INTS))
    assert y.dtype == np.float32
    np.testing.assert_allclose(y.to_numpy(), reference(INTS.astype(np.float64)), rtol=1e-6)


def test_pow_exponent_gradient_at_a_base_of_zero_or_below_warns_not():
    """`ignore_float_warnings(None)` in Pow.backward survived: log(a) for a < 0 (nan) and
    a = 0 (-inf, times y = 0: nan) must not raise NumPy's invalid/divide warnings; where
    a > 0 the gradient is dy * a^b * log a."""
    a = Tensor(data=np.array([-2.0, 0.0, 3.0]), stores_grad=True)
    b = Tensor(data=np.array([2.0, 2.0, 2.0]), stores_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        grads = autograd.gradients(autograd.sum(autograd.pow(a, b)))
    db = grads[b].to_numpy()
    assert np.isnan(db[0]) and np.isnan(db[1])
    assert db[2] == pytest.approx(9.0 * np.log(3.0), rel=1e-12)
    np.testing.assert_allclose(grads[a].to_numpy(), [-4.0, 0.0, 6.0], rtol=1e-12)
