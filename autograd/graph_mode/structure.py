"""Nested arguments and results (tuples, lists, dicts) as a flat list of leaves and back."""

__all__ = ["flatten"]


def flatten(value):
    """``(leaves, rebuild)``: the non-container values inside ``value`` in order, and a
    function that builds the same structure around a new list of leaves.

    >>> leaves, rebuild = flatten((1, [2, {"a": 3}]))
    >>> leaves, rebuild([4, 5, 6])
    ([1, 2, 3], (4, [5, {'a': 6}]))
    """
    leaves = []
    shape = _shape_of(value, leaves)
    return leaves, lambda new: _build(shape, iter(new))


def _shape_of(value, leaves):
    if isinstance(value, dict):
        return (dict, [(k, _shape_of(v, leaves)) for k, v in value.items()])
    if isinstance(value, (tuple, list)):
        items = [_shape_of(v, leaves) for v in value]
        kind = type(value) if type(value) in (tuple, list) else _remake(type(value))
        return (kind, items)
    leaves.append(value)
    return None


def _remake(cls):
    return lambda items: cls(*items)      # a namedtuple takes its fields positionally


def _build(shape, leaves):
    if shape is None:
        return next(leaves)
    kind, items = shape
    if kind is dict:
        return {k: _build(v, leaves) for k, v in items}
    return kind([_build(v, leaves) for v in items])
