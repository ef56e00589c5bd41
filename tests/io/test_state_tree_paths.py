"""encode/decode name the exact place of a bad value deep inside a state (``extras['a'][1]``),
refuse structured arrays and array-like objects without a dtype, and keep keys that start with
'$' apart from the tags. Mutation testing found these unchecked (docs/testing.md)."""
import re

import numpy as np
import pytest

from autograd.io.state_tree import decode, encode, is_array


@pytest.mark.parametrize("value,where", [
    ({"a": [1, object()]}, "extras['a'][1]"),
    ({"a": (1, {"b": object()})}, "extras['a'][1]['b']"),
    ({"$a": {2: [object()]}}, "extras['$a'][2][0]"),
])
def test_encode_names_where_a_value_it_cannot_store_sits(value, where):
    with pytest.raises(TypeError, match=f"^save: cannot store {re.escape(where)} of type "
                                        r"object: expected None, bool, int, float, str, a NumPy "
                                        r"array or scalar, a Tensor, or a list, tuple or dict of "
                                        r"those$"):
        encode(value, {}, "extras")


def test_encode_refuses_structured_arrays_and_shapes_without_dtype():
    record = np.zeros(2, dtype=[("x", np.float32), ("y", np.int32)])
    with pytest.raises(TypeError, match=r"^save: cannot store extras\['r'\]: arrays of dtype "):
        encode({"r": record}, {}, "extras")

    class ShapeOnly:
        shape = (2,)

    assert not is_array(ShapeOnly())
    with pytest.raises(TypeError, match=r"^save: cannot store extras of type ShapeOnly"):
        encode(ShapeOnly(), {}, "extras")


def test_keys_with_a_dollar_and_non_string_keys_round_trip_with_their_arrays():
    arrays = {}
    value = {"$array": np.arange(3.0), 5: [np.float32(2.5), (1, "x")], "plain": {"k": None}}
    tree = encode(value, arrays, "extras")
    back = decode(tree, arrays, "extras")
    assert set(back) == {"$array", 5, "plain"} and back["plain"] == {"k": None}
    np.testing.assert_array_equal(back["$array"], np.arange(3.0))
    assert back[5][0] == np.float32(2.5) and back[5][1] == (1, "x")


@pytest.mark.parametrize("tree,message", [
    ({"a": [1, {"$array": "a9"}]}, "extras['a'][1] refers to array 'a9', which the file lacks"),
    ({"a": {"$tuple": [{"$array": "a9"}]}}, "extras['a'][0] refers to array 'a9'"),
    ({"a": {"$tuple": 3}}, "extras['a']: expected a list inside a tagged value, got int"),
    ({"a": {"$dict": "x"}}, "extras['a']: expected a list inside a tagged value, got str"),
    ({"a": {"$dict": [[{"$array": "a9"}, 1]]}}, "a key of extras['a'] refers to array 'a9'"),
    ({"a": {"$dict": [[[1], 2]]}}, "extras['a']: a dict key decodes to an unhashable list"),
    ({"a": {"$dict": [["k", {"$array": "a9"}]]}}, "extras['a']['k'] refers to array 'a9'"),
])
def test_decode_names_where_a_broken_structure_sits(tree, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}"):
        decode(tree, {}, "extras")


@pytest.mark.parametrize("value", [{"$array": "a0"}, {"$note": 1.5, "plain": 2}])
def test_string_keys_that_look_like_tags_are_not_read_as_tags(value):
    arrays = {"a0": np.zeros(1)}
    assert decode(encode(value, dict(arrays), "extras"), arrays, "extras") == value


def test_zero_dimensional_arrays_stay_arrays_and_scalars_stay_scalars():
    arrays = {}
    value = {"a": np.array(3.0), "s": np.float32(1.5), "v": np.arange(2)}
    back = decode(encode(value, arrays, "extras"), arrays, "extras")
    assert isinstance(back["a"], np.ndarray) and back["a"].ndim == 0 and back["a"] == 3.0
    assert isinstance(back["s"], np.float32) and back["s"] == 1.5
    assert isinstance(back["v"], np.ndarray) and back["v"].tolist() == [0, 1]


def test_dict_keys_are_encoded_like_values():
    arrays = {}
    value = {np.float32(1.5): "a", 2: "b"}
    back = decode(encode(value, arrays, "extras"), arrays, "extras")
    assert back == value and isinstance(list(back)[0], np.float32)
    with pytest.raises(TypeError, match=r"^save: cannot store a key of extras of type frozenset"):
        encode({frozenset([1]): 1}, {}, "extras")
