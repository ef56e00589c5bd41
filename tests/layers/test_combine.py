"""Tests for autograd/layers/combine.py: Add, Cat and Reshape against NumPy, their gradients,
shape inference and the input checks naming the layer."""
import numpy as np
import pytest

import autograd
from autograd import Add, Cat, Reshape, Tensor


def test_add_broadcasts_like_numpy_and_sums_gradients_back():
    rng = np.random.default_rng(0)
    a = Tensor(data=rng.standard_normal((2, 3)), stores_grad=True)
    b = Tensor(data=rng.standard_normal(3), stores_grad=True)
    y = Add()(a, b)
    np.testing.assert_array_equal(y.to_numpy(), a.to_numpy() + b.to_numpy())
    assert Add().output_shape((2, 3), (3,)) == (2, 3)
    dy = rng.standard_normal((2, 3))
    grads = autograd.gradients(y, dy)
    np.testing.assert_allclose(grads[a].to_numpy(), dy)
    np.testing.assert_allclose(grads[b].to_numpy(), dy.sum(axis=0))


def test_add_rejects_shapes_that_do_not_broadcast():
    with pytest.raises(ValueError, match=r"Add\(\): expected inputs that broadcast together, "
                                         r"got \(2, 3\) and \(4,\)"):
        Add()(Tensor(shape=(2, 3)), Tensor(shape=(4,)))


def test_cat_joins_a_list_along_its_axis():
    rng = np.random.default_rng(1)
    parts = [rng.standard_normal((2, n, 3)) for n in (1, 4, 2)]
    tensors = [Tensor(data=p, stores_grad=True) for p in parts]
    layer = Cat(axis=1)
    y = layer(tensors)
    np.testing.assert_array_equal(y.to_numpy(), np.concatenate(parts, axis=1))
    assert layer.output_shape([p.shape for p in parts]) == y.shape == (2, 7, 3)
    assert Cat(axis=-1)([tensors[0], tensors[0]]).shape == (2, 1, 6)
    assert Cat()(tuple(tensors[:1])).shape == (2, 1, 3)              # a tuple is a list too
    assert autograd.gradcheck(lambda *ts: Cat(axis=1)(list(ts)), parts)


def test_cat_input_checks_name_the_layer():
    with pytest.raises(ValueError, match=r"Cat\(axis=0\): expected inputs whose shapes match "
                                         r"except along axis 0, got \(2, 3\) and \(2, 4\)"):
        Cat()([Tensor(shape=(2, 3)), Tensor(shape=(2, 4))])
    with pytest.raises(ValueError, match=r"Cat\(axis=2\): axis 2 is out of range for inputs "
                                         r"of shape \(2, 3\)"):
        Cat(axis=2)([Tensor(shape=(2, 3))])
    with pytest.raises(ValueError, match=r"Cat\(axis=0\): expected a list of at least one"):
        Cat()([])
    with pytest.raises(TypeError, match=r"Cat\(axis=0\): expected a list of tensors, got one"):
        Cat()(Tensor(shape=(2, 3)))


def test_reshape_takes_the_shape_in_the_call_or_at_construction():
    rng = np.random.default_rng(2)
    data = rng.standard_normal((2, 3, 4))
    x = Tensor(data=data, stores_grad=True)
    np.testing.assert_array_equal(Reshape()(x, (4, 6)).to_numpy(), data.reshape(4, 6))
    fixed = Reshape((6, -1))
    np.testing.assert_array_equal(fixed(x).to_numpy(), data.reshape(6, 4))
    assert fixed(x, [24]).shape == (24,)                              # the call's shape wins
    assert Reshape()(x, (0, -1)).shape == (2, 12)                     # 0 copies, as ONNX
    assert Reshape()(x, (0, 0, 2, 2)).shape == (2, 3, 2, 2)
    assert Reshape((-1, 12)).output_shape((None, 3, 4)) == (None, 12)
    assert autograd.gradcheck(lambda t: Reshape()(t, (3, 8)), [data])


def test_reshape_errors_name_the_layer():
    x = Tensor(shape=(2, 3))
    with pytest.raises(ValueError, match=r"Reshape\(\): cannot reshape \(2, 3\) \(6 elements\) "
                                         r"into \(4, 2\)"):
        Reshape()(x, (4, 2))
    with pytest.raises(ValueError, match=r"Reshape\(\): no shape given"):
        Reshape()(x)
    with pytest.raises(ValueError, match=r"Reshape: shape must be ints >= 0 with at most one -1"):
        Reshape((-1, -1))
    with pytest.raises(ValueError, match=r"Reshape\(\): a 0 copies the input's dimension"):
        Reshape()(x, (2, 3, 0))


def test_cat_and_reshape_messages_are_exact():
    with pytest.raises(ValueError, match=r"^Cat\(axis=0\): expected a list of at least one "
                                         r"tensor, got none$"):
        Cat()([])
    with pytest.raises(ValueError, match=r"^Reshape\(\): no shape given; call "
                                         r"Reshape\(\)\(x, shape\) or build Reshape\(shape\)$"):
        Reshape().output_shape((2, 3))
