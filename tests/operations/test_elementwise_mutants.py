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


@pytest.mark.parametrize("op,reference", [
    (lambda t: t + 2.5, lambda n: n + 2.5),
    (lambda t: 2.5 + t, lambda n: n + 2.5),
    (lambda t: t - 2.5, lambda n: n - 2.5),
], ids=["add", "radd", "sub"])
def test_an_integer_tensor_plus_a_python_float_gives_float32(op, reference):
    """AddScalar's integer branch (`x = None`, `_float32_for_int(x, None)`, the call without
    its scalar) survived: no own test added a float to an integer tensor."""
    y = op(Tensor(data=INTS))
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y.to_numpy(), reference(INTS.astype(np.float32)))


@pytest.mark.parametrize("fn,value,slope", [
    (lambda t: autograd.add(2.5, t), lambda x: x + 2.5, 1.0),
    (lambda t: 2.5 + t, lambda x: x + 2.5, 1.0),
    (lambda t: autograd.sub(t, 2.5), lambda x: x - 2.5, 1.0),
    (lambda t: t - 2.5, lambda x: x - 2.5, 1.0),
    (lambda t: autograd.sub(2.5, t), lambda x: 2.5 - x, -1.0),
], ids=["add_left", "radd", "sub_right", "sub_operator", "rsub"])
def test_a_python_scalar_on_either_side_of_add_and_sub(fn, value, slope):
    """`AddScalar(c)(None)` / `AddScalar(None)(b)` in add and sub survived: the scalar forms
    of the functions were not called with the scalar on that side."""
    x_values = np.array([-1.0, 0.5, 3.0])
    x = Tensor(data=x_values, stores_grad=True)
    y = fn(x)
    np.testing.assert_array_equal(y.to_numpy(), value(x_values))
    np.testing.assert_array_equal(autograd.gradients(autograd.sum(y))[x].to_numpy(),
                                  np.full(3, slope))


@pytest.mark.parametrize("name,value,da", [
    ("add", lambda a, b: a + b, lambda a, b: np.ones_like(a)),
    ("sub", lambda a, b: a - b, lambda a, b: np.ones_like(a)),
    ("mul", lambda a, b: a * b, lambda a, b: np.broadcast_to(b, a.shape)),
    ("div", lambda a, b: a / b, lambda a, b: np.broadcast_to(1 / b, a.shape)),
    ("maximum", np.maximum, lambda a, b: (a > b) + 0.5 * (a == b)),
    ("minimum", np.minimum, lambda a, b: (a < b) + 0.5 * (a == b)),
])
def test_an_array_on_the_right_of_a_binary_function(name, value, da):
    """`_operands` converting a right-hand array like `None` survived, and so did maximum's
    and minimum's gradient split reading the other input's need (`needs[1]` for a's): here
    only a needs a gradient and b is a constant array."""
    a_values = np.array([[1.0, -2.0, 3.0], [0.5, 2.0, -1.0]])
    b_values = np.array([2.0, -2.0, 0.25])
    a = Tensor(data=a_values, stores_grad=True)
    y = getattr(autograd, name)(a, b_values)
    np.testing.assert_allclose(y.to_numpy(), value(a_values, b_values), rtol=1e-12)
    grads = autograd.gradients(autograd.sum(y))
    assert list(grads) == [a]
    np.testing.assert_allclose(grads[a].to_numpy(), da(a_values, b_values), rtol=1e-12)


def test_sub_names_itself():
    """sub's own name in `_operands` ("XXsubXX" survived: test_elementwise.py pins add, div
    and pow only)."""
    with pytest.raises(TypeError, match=r"^sub: expected a Tensor, an array or a number, "
                                        r"got str$"):
        autograd.sub(Tensor(data=[1.0]), "a")
    with pytest.raises(ValueError, match=r"^sub: cannot broadcast shapes \(2, 3\) and \(4,\)$"):
        autograd.sub(Tensor(shape=(2, 3)), Tensor(shape=(4,)))


@pytest.mark.parametrize("c", [2, 3, 2.0, 0.5, -1])
def test_power_by_a_number_and_its_gradient(c):
    """PowScalar's c == 2 fast path tested against c == 3 survived (x ** 3 was never
    differentiated): d/dx x^c = c x^(c - 1), for the fast path and the general one."""
    x_values = np.array([0.5, 1.5, 3.0])
    x = Tensor(data=x_values, stores_grad=True)
    y = x ** c
    np.testing.assert_allclose(y.to_numpy(), x_values ** c, rtol=1e-12)
    np.testing.assert_allclose(autograd.gradients(autograd.sum(y))[x].to_numpy(),
                               c * x_values ** (c - 1), rtol=1e-12)


# ---------------------------------------------------------------- chunk 1, elementwise whole

def test_bool_and_integer_tensors_combine_without_a_cast_to_bool():
    """`_operands` casts only an integer/bool side to the *floating* other side (`and`
    turned into `or` survived: it would cast the integers 2, 3, 4 to bool)."""
    flags = Tensor(data=np.array([True, False, True]))
    counts = Tensor(data=np.array([2, 3, 4]))
    np.testing.assert_array_equal(autograd.add(flags, counts).to_numpy(), [3, 3, 5])
    np.testing.assert_array_equal(autograd.add(counts, flags).to_numpy(), [3, 3, 5])
    np.testing.assert_array_equal(autograd.mul(counts, flags).to_numpy(), [2, 0, 4])


@pytest.mark.parametrize("name", ["add", "mul"])
@pytest.mark.parametrize("scalar_first", [False, True])
def test_an_integer_tensor_and_a_float_through_the_function_is_float32(name, scalar_first):
    """add and mul with a float on either side take the scalar op (`c = None` survived: the
    general path makes 2.5 a float64 constant, so an integer tensor would give float64)."""
    operands = (2.5, Tensor(data=INTS)) if scalar_first else (Tensor(data=INTS), 2.5)
    y = getattr(autograd, name)(*operands)
    assert y.dtype == np.float32
    expected = INTS + 2.5 if name == "add" else INTS * 2.5
    np.testing.assert_array_equal(y.to_numpy(), expected.astype(np.float32))


@pytest.mark.parametrize("name", ["sub", "maximum"])
def test_a_bad_operand_on_the_left_is_named(name):
    """The name in `_operands` for a left-hand operand (None survived), and maximum's own name
    ("XXmaximumXX" survived: test_elementwise.py pins minimum's)."""
    with pytest.raises(TypeError, match=f"^{name}: expected a Tensor, an array or a number, "
                                        "got str$"):
        getattr(autograd, name)("a", Tensor(data=[1.0]))
