"""state_tree: nested states to JSON plus arrays and back, exactly, for any supported mix."""
import json

import numpy as np
import pytest
from hypothesis import given, strategies as st

import autograd
from autograd.io.state_tree import encode, decode


def _assert_same(expected, got):
    """Equality that also compares types, dtypes and array contents bit for bit."""
    if isinstance(expected, np.ndarray):
        assert isinstance(got, np.ndarray) and got.dtype == expected.dtype
        assert got.shape == expected.shape and got.tobytes() == expected.tobytes()
    elif isinstance(expected, np.generic):
        assert type(got) is type(expected) and got.tobytes() == expected.tobytes()
    elif isinstance(expected, (list, tuple)):
        assert type(got) is type(expected) and len(got) == len(expected)
        for e, g in zip(expected, got):
            _assert_same(e, g)
    elif isinstance(expected, dict):
        assert type(got) is dict and list(got) == list(expected)
        for key in expected:
            _assert_same(expected[key], got[key])
    elif isinstance(expected, float) and np.isnan(expected):
        assert isinstance(got, float) and np.isnan(got)
    else:
        assert type(got) is type(expected) and got == expected


arrays_strategy = st.builds(
    lambda dtype, shape, seed: np.random.default_rng(seed).normal(size=shape).astype(dtype),
    st.sampled_from([np.float32, np.float64, np.int64, np.uint8, np.bool_, np.float16]),
    st.lists(st.integers(0, 3), max_size=3).map(tuple), st.integers(0, 1000))
scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70),
                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=5),
                    st.builds(np.float32, st.floats(-1e3, 1e3, width=32)),
                    st.builds(np.int64, st.integers(-2**40, 2**40)), arrays_strategy)
keys = st.one_of(st.text(max_size=4), st.integers(-5, 5))
trees = st.recursive(scalars, lambda children: st.one_of(
    st.lists(children, max_size=3), st.lists(children, max_size=3).map(tuple),
    st.dictionaries(keys, children, max_size=3)), max_leaves=12)


@given(trees)
def test_round_trip_through_json_is_exact(tree):
    arrays = {}
    text = json.dumps(encode(tree, arrays, "state"))
    _assert_same(tree, decode(json.loads(text), arrays, "state"))


def test_integer_keys_tuples_and_dollar_keys_survive():
    state = {0: {"m": np.ones(2)}, "$array": 1, (1, 2): "pair", "betas": (0.9, 0.999)}
    arrays = {}
    got = decode(json.loads(json.dumps(encode(state, arrays, "s"))), arrays, "s")
    assert got[(1, 2)] == "pair" and got["$array"] == 1 and got["betas"] == (0.9, 0.999)
    np.testing.assert_array_equal(got[0]["m"], np.ones(2))


def test_tensors_are_stored_as_their_arrays():
    arrays = {}
    tree = encode({"w": autograd.Tensor(data=np.arange(3.0, dtype=np.float32))}, arrays, "m")
    got = decode(tree, arrays, "m")["w"]
    assert isinstance(got, np.ndarray) and got.dtype == np.float32
    np.testing.assert_array_equal(got, [0, 1, 2])


@pytest.mark.parametrize("value, message", [
    (object(), r"cannot store model\['bad'\] of type object"),
    (np.array([object()]), r"dtype object need pickle"),
    ({1.5j}, "of type set"),
])
def test_unsupported_values_are_type_errors_naming_where(value, message):
    with pytest.raises(TypeError, match=message):
        encode({"ok": 1, "bad": value}, {}, "model")


@pytest.mark.parametrize("tree, message", [
    ({"$array": "a9"}, "refers to array 'a9', which the file lacks"),
    ({"$tuple": 3}, "expected a list"),
    ({"$dict": [[1]]}, r"\[key, value\] pairs"),
    ({"$dict": [[[1, 2], 3]]}, "unhashable list"),
    ({"$what": 1, "x": 2}, "unknown tagged value"),
])
def test_malformed_trees_are_value_errors(tree, message):
    with pytest.raises(ValueError, match=message):
        decode(tree, {}, "state")
