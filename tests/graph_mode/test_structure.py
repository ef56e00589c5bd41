"""flatten's rebuild (compiled for plain containers, recursive otherwise) against the
structure it came from: the same containers, keys and order around new leaves."""
import collections

import pytest
from hypothesis import given, strategies as st

from autograd.graph_mode import structure

Pair = collections.namedtuple("Pair", "a b")

_nested = st.recursive(
    st.integers(),
    lambda inner: (st.lists(inner, max_size=4) | st.lists(inner, max_size=4).map(tuple)
                   | st.dictionaries(st.text(max_size=2) | st.tuples(st.integers()), inner,
                                     max_size=3)
                   | st.tuples(inner, inner).map(lambda t: Pair(*t))),
    max_leaves=20)


def _scaled(value):
    """The structure with every leaf times 10, built by hand."""
    if isinstance(value, dict):
        return {k: _scaled(v) for k, v in value.items()}
    if isinstance(value, Pair):
        return Pair(*[_scaled(v) for v in value])
    if isinstance(value, (tuple, list)):
        return type(value)(_scaled(v) for v in value)
    return value * 10


def _same(a, b):
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


@given(_nested)
def test_rebuild_gives_the_same_structure_around_new_leaves(value):
    leaves, rebuild = structure.flatten(value)
    new = [leaf * 10 for leaf in leaves]
    assert _same(rebuild(new), _scaled(value))
    assert _same(rebuild(iter(new)), _scaled(value))


@pytest.mark.parametrize("count", [3, structure._COMPILED_MAX_LEAVES + 1])
def test_long_and_deep_structures(count):
    value = [(i, [i]) for i in range(count)]
    deep = 0
    for _ in range(40):
        deep = [deep]
    for item in (value, deep):
        leaves, rebuild = structure.flatten(item)
        assert rebuild(leaves) == item
