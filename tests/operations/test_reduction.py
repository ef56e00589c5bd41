"""Reductions and SINGA's n-ary forms: forward against NumPy, float64 gradcheck, float32 kept
(tests/opcase.py); ties share the gradient; SINGA's reduce_sum/reduce_mean defaults; errors."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import autograd
from autograd import Tensor
from tests.opcase import OpCase, floats, check_case

BOX = (2, 3, 4)
AXES = [None, 0, -1, (0, 2), (-1, 0), (1,), ()]


def _reduction_cases(name, fn, reference, **value_options):
    cases = []
    for axis in AXES:
        for keepdims in (False, True):
            cases.append(OpCase(fn, reference, [floats(**value_options)], shape=BOX,
                                kwargs=dict(axis=axis, keepdims=keepdims),
                                name=f"{name}_axis{axis}_keepdims{keepdims}"))
    cases.append(OpCase(fn, reference, [floats(**value_options)], name=f"{name}_drawn_shape"))
    return cases


CASES = (
    _reduction_cases("sum", autograd.sum, np.sum)
    + _reduction_cases("mean", autograd.mean, np.mean)
    + _reduction_cases("max", autograd.max, np.max, distinct=True)
    + _reduction_cases("min", autograd.min, np.min, distinct=True)
    + [
        OpCase(lambda x: x.sum(axis=1), lambda x: x.sum(axis=1), [floats()], shape=BOX,
               name="tensor_sum_method"),
        OpCase(lambda x: x.mean(axis=-1, keepdims=True), lambda x: x.mean(-1, keepdims=True),
               [floats()], shape=BOX, name="tensor_mean_method"),
        OpCase(autograd.reduce_sum, lambda x: x.sum(keepdims=True), [floats()],
               name="reduce_sum_defaults_keep_dims"),
        OpCase(autograd.reduce_sum, lambda x, axes, keepdims: x.sum(axis=tuple(axes)),
               [floats()], shape=BOX, kwargs=dict(axes=[0, -1], keepdims=0),
               name="reduce_sum_axes_keepdims0"),
        OpCase(autograd.reduce_mean, lambda x: x.mean(keepdims=True), [floats()],
               name="reduce_mean_defaults_keep_dims"),
        OpCase(autograd.reduce_mean, lambda x, axes: x.mean(axis=tuple(axes), keepdims=True),
               [floats()], shape=BOX, kwargs=dict(axes=[1]), name="reduce_mean_axes"),
        # SINGA's n-ary forms, with broadcasting
        OpCase(autograd.sum, lambda a, b: a + b, [floats(), floats(broadcast=True)],
               name="sum_of_two"),
        OpCase(autograd.sum, lambda a, b, c: a + b + c,
               [floats(broadcast=True), floats(broadcast=True), floats()], name="sum_of_three"),
        OpCase(autograd.mean, lambda a, b: (a + b) / 2, [floats(broadcast=True), floats()],
               name="mean_of_two"),
        OpCase(autograd.mean, lambda a, b, c: (a + b + c) / 3,
               [floats(), floats(broadcast=True), floats(broadcast=True)], name="mean_of_three"),
        OpCase(autograd.max, lambda a, b, c: np.maximum(np.maximum(a, b), c),
               [floats(), floats(broadcast=True), floats(broadcast=True)], name="max_of_three"),
        OpCase(autograd.min, np.minimum, [floats(broadcast=True), floats()], name="min_of_two"),
        OpCase(lambda a: autograd.max(a, 0.5), lambda a: np.maximum(a, 0.5),
               [floats(avoid=[0.5])], name="max_with_scalar"),
    ]
)


@pytest.mark.parametrize("case", CASES, ids=str)
@given(data=st.data())
def test_op(case, data):
    check_case(case, data)


# ------------------------------------------------------------------ ties

@pytest.mark.parametrize("reduce, data, axis, expected", [
    (autograd.max, [1.0, 3.0, 3.0], None, [0.0, 0.5, 0.5]),
    (autograd.min, [2.0, 2.0, 2.0, 5.0], None, [1 / 3, 1 / 3, 1 / 3, 0.0]),
    (autograd.max, [[4.0, 4.0], [1.0, 2.0]], 1, [[0.5, 0.5], [0.0, 1.0]]),
    (autograd.min, [[4.0, 4.0], [1.0, 4.0]], 0, [[0.0, 0.5], [1.0, 0.5]]),
    (autograd.max, [[7.0, 7.0], [7.0, 1.0]], (0, 1), [[1 / 3, 1 / 3], [1 / 3, 0.0]]),
])
def test_ties_split_the_gradient_evenly(reduce, data, axis, expected):
    x = Tensor(data=data, stores_grad=True)
    y = reduce(x, axis=axis)
    dy = np.full(y.shape, 3.0, np.float32)
    grad = autograd.gradients(y, dy)[x].to_numpy()
    np.testing.assert_allclose(grad, 3.0 * np.array(expected), rtol=1e-6)


def test_nary_max_and_min_split_ties_between_inputs():
    a = Tensor(data=[1.0, 5.0, 2.0], stores_grad=True)
    b = Tensor(data=[1.0, 5.0, 0.0], stores_grad=True)
    c = Tensor(data=[1.0, 4.0, 2.0], stores_grad=True)
    g = autograd.gradients(autograd.sum(autograd.max(a, b, c) * 6.0))
    np.testing.assert_allclose(g[a].to_numpy(), [2.0, 3.0, 3.0])
    np.testing.assert_allclose(g[b].to_numpy(), [2.0, 3.0, 0.0])
    np.testing.assert_allclose(g[c].to_numpy(), [2.0, 0.0, 3.0])
    g = autograd.gradients(autograd.sum(autograd.min(a, b)))
    np.testing.assert_allclose(g[a].to_numpy(), [0.5, 0.5, 0.0])
    np.testing.assert_allclose(g[b].to_numpy(), [0.5, 0.5, 1.0])


def test_nary_tie_with_a_broadcast_input_sums_its_shares():
    a = Tensor(data=[[3.0, 1.0], [3.0, 3.0]], stores_grad=True)
    b = Tensor(data=[3.0], stores_grad=True)
    g = autograd.gradients(autograd.sum(autograd.max(a, b)))
    np.testing.assert_allclose(g[a].to_numpy(), [[0.5, 0.0], [0.5, 0.5]])
    np.testing.assert_allclose(g[b].to_numpy(), [2.5])


# ------------------------------------------------------------------ shapes and dtypes

def test_nary_sum_and_mean_broadcast_a_later_operand_to_a_larger_shape():
    a, b = Tensor(data=[1.0, 2.0, 3.0]), Tensor(data=[1.0, 1.0, 1.0])
    c = Tensor(data=np.arange(6.0, dtype=np.float32).reshape(2, 3))
    np.testing.assert_array_equal(autograd.sum(a, b, c).to_numpy(), a.data + b.data + c.data)
    np.testing.assert_allclose(autograd.mean(a, b, c).to_numpy(), (a.data + b.data + c.data) / 3,
                               rtol=1e-6)


def test_nary_forms_give_an_integer_tensor_the_float_dtype_whichever_comes_first():
    ints = Tensor(data=np.array([1, 5]))
    floats32 = Tensor(data=[2.0, 2.0])
    for combine in (autograd.sum, autograd.mean, autograd.max, autograd.min):
        for operands in ((ints, floats32), (floats32, ints)):
            assert combine(*operands).dtype == np.float32, combine


def test_reductions_of_a_zero_d_tensor():
    x = Tensor(data=2.5, stores_grad=True)
    for reduce in (autograd.sum, autograd.mean, autograd.max, autograd.min):
        y = reduce(x)
        assert y.shape == () and y.item() == 2.5
        assert autograd.gradients(y)[x].item() == 1.0


def test_sum_of_integer_tensor_takes_no_gradient():
    y = autograd.sum(Tensor(data=np.array([[1, 2], [3, 4]])), axis=0)
    np.testing.assert_array_equal(y.to_numpy(), [4, 6])
    assert y.creator is None


@given(values=st.lists(st.integers(-3, 3), min_size=1, max_size=6))
def test_max_gradient_goes_only_to_maxima_and_sums_to_dy(values):
    x = Tensor(data=np.array(values, np.float64), stores_grad=True)
    grad = autograd.gradients(autograd.max(x) * 2.0)[x].to_numpy()
    hits = np.array(values) == max(values)
    np.testing.assert_allclose(grad, np.where(hits, 2.0 / hits.sum(), 0.0))


# ------------------------------------------------------------------ errors

@pytest.mark.parametrize("call, error, message", [
    (lambda x: autograd.sum(x, axis=3), ValueError, r"sum: axis 3 is out of range for a 3-d"),
    (lambda x: autograd.mean(x, axis=(0, -3)), ValueError, r"mean: repeated axis"),
    (lambda x: autograd.max(x, axis=-4), ValueError, r"max: axis -4 is out of range"),
    (lambda x: autograd.min(Tensor(shape=(0, 2))), ValueError,
     r"min: cannot reduce an empty tensor of shape \(0, 2\)"),
    (lambda x: autograd.max(x, Tensor(shape=(4, 3))), ValueError,
     r"max: cannot broadcast shapes \(4, 3\) and \(2, 3, 4\)"),
    (lambda x: autograd.sum(Tensor(shape=(1,)), Tensor(shape=(2,)), Tensor(shape=(3,))),
     ValueError, r"sum: cannot broadcast shapes \(1,\), \(2,\), \(3,\)"),
    (lambda x: autograd.sum(x, x, axis=0), ValueError,
     r"sum: axis applies to one tensor; got 2 tensors and axis=0"),
    (lambda x: autograd.mean(1.0, 2.0), TypeError, r"mean: expected Tensors"),
    (lambda x: autograd.min(), TypeError, r"min: expected at least one tensor"),
    (lambda x: autograd.sum(x, Tensor(shape=(4,), dtype=np.float64)), TypeError,
     r"float32.*float64"),
])
def test_bad_arguments_raise_clear_errors(call, error, message):
    with pytest.raises(error, match=message):
        call(Tensor(shape=BOX))
