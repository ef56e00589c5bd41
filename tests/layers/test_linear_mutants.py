"""Tests written from the surviving mutants of autograd/layers/linear.py (issue 22): the repr
without a bias, Embedding's argument messages and the fans it gives its init, a lazy Linear
loaded from a state (its dtype, its shape message) and counting its parameters."""
import re

import numpy as np
import pytest

import autograd
from autograd import Embedding, Linear, Sequential, Tensor


def _exact(message):
    return f"^{re.escape(message)}$"


def test_linear_repr_says_when_there_is_no_bias():
    """extra_repr's `", bias=False"` emptied, upper-cased or always hidden."""
    assert repr(Linear(2, 3, bias=False)) == "Linear(2->3, bias=False)"
    assert repr(Linear(2, 3)) == "Linear(2->3)"
    assert repr(Linear(5, bias=False)) == "Linear(?->5, bias=False)"


@pytest.mark.parametrize("arguments, message", [
    ((0, 3), "Embedding: num_embeddings must be a positive int, got 0"),
    ((2.5, 3), "Embedding: num_embeddings must be a positive int, got 2.5"),
])
def test_embedding_names_a_bad_num_embeddings_exactly(arguments, message):
    """positive_int(num_embeddings, ...) with its argument or layer name mutated."""
    with pytest.raises(ValueError, match=_exact(message)):
        Embedding(*arguments)


def test_embedding_gives_its_init_the_table_fans_and_the_wscale():
    """initialize(..., num_embeddings, embedding_dim, wscale) with an argument dropped, and the
    wscale default 1.0 changed."""
    seen = []

    def record(tensor, fan_in, fan_out, wscale):
        seen.append((tensor.shape, fan_in, fan_out, wscale))
        return tensor.set_value(wscale)

    layer = Embedding(7, 3, init=record, wscale=0.25)
    Embedding(5, 2, init=record)
    assert seen == [((7, 3), 7, 3, 0.25), ((5, 2), 5, 2, 1.0)]
    assert np.all(layer.W.to_numpy() == 0.25)


def test_embedding_default_init_is_glorot_uniform_over_the_table():
    """The default xavier bound sqrt(6 / (num + dim)) times wscale: a wrong default wscale or
    wrong fans change the range."""
    autograd.manual_seed(0)
    W = Embedding(300, 200).W.to_numpy()
    bound = np.sqrt(6 / 500)
    assert np.abs(W).max() <= bound and np.abs(W).max() > 0.99 * bound


def test_lazy_linear_names_a_one_dimensional_weight_with_its_unknown_rows():
    """`rows = value.shape[0] if value.ndim == 2 or True`: the message would claim a row count."""
    layer = Linear(4)
    with pytest.raises(ValueError, match=_exact(
            "Linear.load_state_dict: W: expected shape (None, 4), got (6,)")):
        layer.load_state_dict({"W": np.zeros(6, np.float32), "b": np.zeros(4, np.float32)})
    assert layer.W is None


def test_lazy_linear_refuses_integer_weights_as_float32_expected():
    """The dtype a lazy layer expects: the state's float dtype, else float32 (mutants: always
    the state's dtype, never it, `!= "f"`, "F", np.dtype(None) = float64)."""
    layer = Linear(4)
    with pytest.raises(ValueError, match=_exact(
            "Linear.load_state_dict: W: expected dtype float32, got int64; "
            "b: expected dtype float32, got int64")):
        layer.load_state_dict({"W": np.zeros((6, 4), np.int64), "b": np.zeros(4, np.int64)})
    assert layer.W is None and layer.b is None


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_lazy_linear_loaded_from_a_state_takes_its_float_dtype_and_values(dtype):
    """`_build(rows, None, None)` in _materialize_from_state would build float32 and cast."""
    rng = np.random.default_rng(0)
    W = rng.standard_normal((6, 4)).astype(dtype)
    b = rng.standard_normal(4).astype(dtype)
    model = Sequential(Linear(4))
    model.load_state_dict({"0.W": W, "0.b": b})
    layer = model[0]
    assert layer.W.dtype == dtype and layer.b.dtype == dtype and layer.in_features == 6
    np.testing.assert_array_equal(layer.W.to_numpy(), W)
    x = rng.standard_normal((3, 6)).astype(dtype)
    np.testing.assert_allclose(layer(Tensor(data=x)).to_numpy(), x @ W + b, rtol=1e-6)


def test_linear_counts_its_parameters_lazy_and_built():
    """A lazy layer without bias counts in * out (mutants: `else 1`, bias always counted); a
    built layer counts what it holds, whatever input_shape says (`W is None or ...`)."""
    assert Linear(3, bias=False).count_parameters((2, 4)) == 12
    assert Linear(3).count_parameters((2, 4)) == 15
    assert Linear(4, 3).count_parameters((2, 7)) == 15
    assert Linear(4, 3, bias=False).count_parameters() == 12
    assert Sequential(Linear(3, bias=False), Linear(2)).count_parameters((None, 5)) == 15 + 8


def test_lazy_linear_builds_float32_parameters_for_integer_input():
    """`dtype = x.dtype if x.dtype.kind == "f" or True`: integer weights cannot be trained."""
    layer = Linear(3)
    x = np.arange(8).reshape(2, 4)
    y = layer(Tensor(data=x))
    assert layer.W.dtype == np.float32 and layer.b.dtype == np.float32
    assert y.dtype == np.float32
    np.testing.assert_allclose(y.to_numpy(), x @ layer.W.to_numpy().astype(np.float64),
                               rtol=1e-5, atol=1e-6)


def test_lazy_linear_names_its_unknown_input_width_in_the_message():
    with pytest.raises(ValueError, match=_exact(
            "Linear(?->4): expected input (N, in_features), got (2, 3, 4)")):
        Linear(4)(Tensor(shape=(2, 3, 4)))


@pytest.mark.parametrize("arguments, message", [
    ((3, 0), "Linear: out_features must be a positive int, got 0"),
    ((-1,), "Linear: out_features must be a positive int, got -1"),
    ((0, 3), "Linear: in_features must be a positive int, got 0"),
])
def test_linear_names_a_bad_size_exactly(arguments, message):
    with pytest.raises(ValueError, match=_exact(message)):
        Linear(*arguments)


def test_linear_gives_its_init_the_fans_and_a_default_wscale_of_one():
    """Linear's default `wscale=1.0` changed to 2.0 (test_init.py always passes one)."""
    seen = []

    def record(tensor, fan_in, fan_out, wscale):
        seen.append((tensor.shape, fan_in, fan_out, wscale))
        return tensor

    Linear(4, 3, init=record)
    Linear(2, init=record)(Tensor(shape=(1, 5)))
    assert seen == [((4, 3), 4, 3, 1.0), ((5, 2), 5, 2, 1.0)]
