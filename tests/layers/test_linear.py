"""Tests for autograd/layers/linear.py: Linear (eager and lazy), Embedding, Flatten."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import autograd
from autograd import Linear, Tensor


def _array(rng, *shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


@given(st.integers(1, 5), st.integers(1, 6), st.integers(1, 6), st.booleans(),
       st.integers(0, 2 ** 31))
def test_linear_forward_is_x_at_W_plus_b(n, d_in, d_out, bias, seed):
    rng = np.random.default_rng(seed)
    layer = Linear(d_in, d_out, bias=bias)
    if bias:
        layer.b.data[...] = _array(rng, d_out)
    x = _array(rng, n, d_in)
    y = layer(Tensor(data=x))
    expected = x.astype(np.float64) @ layer.W.to_numpy()
    if bias:
        expected = expected + layer.b.to_numpy()
    assert y.dtype == np.float32 and y.shape == (n, d_out)
    np.testing.assert_allclose(y.to_numpy(), expected, rtol=1e-5, atol=1e-5)


def test_linear_parameters_follow_singa():
    layer = Linear(5, 3)
    assert [(n, p.shape, p.dtype) for n, p in layer.named_parameters()] == [
        ("W", (5, 3), np.float32), ("b", (3,), np.float32)]
    assert np.all(layer.b.to_numpy() == 0) and np.any(layer.W.to_numpy() != 0)
    assert Linear(5, 3, bias=False).parameters()[0].shape == (5, 3)
    assert len(Linear(5, 3, bias=False).parameters()) == 1


def test_linear_gradients_pass_gradcheck():
    rng = np.random.default_rng(0)
    layer = Linear(4, 3)
    x = Tensor(data=rng.standard_normal((5, 4)), requires_grad=False)

    def through_layer(W, b, inputs):
        layer.W, layer.b = W, b
        return layer(inputs)

    W = Tensor(data=rng.standard_normal((4, 3)))
    b = Tensor(data=rng.standard_normal(3))
    assert autograd.gradcheck(through_layer, [W, b, Tensor(data=x.data)])


def test_lazy_linear_builds_its_parameters_on_the_first_call():
    layer = Linear(7)
    assert layer.parameters() == [] and repr(layer) == "Linear(?->7)"
    assert layer.output_shape((2, 11)) == (2, 7)
    x = np.random.default_rng(1).standard_normal((2, 11))          # float64 input
    y = layer(Tensor(data=x))
    assert layer.W.shape == (11, 7) and layer.W.dtype == np.float64 and y.dtype == np.float64
    assert [n for n, _ in layer.named_parameters()] == ["W", "b"]
    np.testing.assert_allclose(y.to_numpy(), x @ layer.W.to_numpy())
    with pytest.raises(ValueError, match=r"Linear\(11->7\): expected input \(N, 11\), got "
                                         r"\(2, 12\)"):
        layer(Tensor(data=np.ones((2, 12))))


def test_lazy_linear_loads_a_state_dict_before_any_call():
    source = Linear(6, 4)
    source.b.data[...] = 1.5
    target = autograd.Sequential(Linear(4))
    target.load_state_dict({"0." + k: v for k, v in source.state_dict().items()})
    np.testing.assert_array_equal(target[0].W.to_numpy(), source.W.to_numpy())
    np.testing.assert_array_equal(target[0].b.to_numpy(), source.b.to_numpy())
    with pytest.raises(ValueError, match=r"0\.W: expected shape \(6, 5\), got \(6, 4\)"):
        autograd.Sequential(Linear(5)).load_state_dict(
            {"0." + k: v for k, v in source.state_dict().items()})


def test_wrong_input_shape_is_a_value_error_before_any_arithmetic():
    layer = Linear(784, 10)
    with pytest.raises(ValueError) as info:
        layer(Tensor(shape=(32, 100)))
    assert str(info.value) == "Linear(784->10): expected input (N, 784), got (32, 100)"
    with pytest.raises(ValueError, match=r"expected input \(N, 784\), got \(784,\)"):
        layer.output_shape((784,))
    assert layer.output_shape((None, 784)) == (None, 10)


@pytest.mark.parametrize("arguments, message", [
    ((0, 3), "in_features must be a positive int"),
    ((3, 2.5), "out_features must be a positive int"),
    ((3, 2, True, "glorot"), "init must be one of"),
])
def test_linear_rejects_bad_arguments(arguments, message):
    with pytest.raises(ValueError, match=message):
        Linear(*arguments)


def test_flatten_matches_singa_flatten():
    x = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    for axis in range(-4, 5):
        layer = autograd.Flatten(axis)
        rows = int(np.prod(x.shape[:axis])) if axis else 1
        expected = x.reshape(rows, -1)
        np.testing.assert_array_equal(layer(Tensor(data=x)).to_numpy(), expected)
        assert layer.output_shape(x.shape) == expected.shape
    assert autograd.Flatten().output_shape((None, 3, 4)) == (None, 12)
    with pytest.raises(ValueError, match=r"Flatten\(axis=3\): expected input with at least 3 "
                                         r"dimensions, got \(2, 3\)"):
        autograd.Flatten(3).output_shape((2, 3))


def test_embedding_looks_up_rows_and_accumulates_repeated_ids():
    layer = autograd.Embedding(5, 3)
    assert [(n, p.shape) for n, p in layer.named_parameters()] == [("W", (5, 3))]
    ids = np.array([[0, 4], [4, 2]])
    y = layer(Tensor(data=ids))
    W = layer.W.to_numpy()
    np.testing.assert_array_equal(y.to_numpy(), W[ids])
    assert layer.output_shape(ids.shape) == y.shape == (2, 2, 3)
    dy = np.random.default_rng(0).standard_normal((2, 2, 3)).astype(np.float32)
    (grad,) = autograd.gradients(y, dy).values()
    expected = np.zeros((5, 3), np.float32)
    np.add.at(expected, ids, dy)
    np.testing.assert_allclose(grad.to_numpy(), expected, rtol=1e-6)
    np.testing.assert_array_equal(layer([1, 1]).to_numpy(), W[[1, 1]])
    with pytest.raises(TypeError, match=r"Embedding\(5, 3\): expected integer ids, got float32"):
        layer(Tensor(data=np.zeros(2, np.float32)))


def test_embedding_argument_messages_name_it_exactly():
    with pytest.raises(ValueError, match=r"^Embedding: embedding_dim must be a positive int, "
                                         r"got 0$"):
        autograd.Embedding(3, 0)
    with pytest.raises(ValueError, match=r"^Embedding: init must be one of \['gaussian', 'he', "
                                         r"'none', 'uniform', 'xavier'\] or a callable, got "
                                         r"'bad'$"):
        autograd.Embedding(3, 2, init="bad")


def test_linear_names_a_bad_init_exactly():
    with pytest.raises(ValueError, match=r"^Linear: init must be one of \['gaussian', 'he', "
                                         r"'none', 'uniform', 'xavier'\] or a callable, got "
                                         r"'bad'$"):
        Linear(2, 3, init="bad")
