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
    compiled = _compiled(shape) if len(leaves) <= _COMPILED_MAX_LEAVES else None
    if compiled is not None:
        return leaves, compiled
    return leaves, lambda new: _build(shape, iter(new))


# A replayed call rebuilds its arguments on every replay: tuples, lists and dicts of plain
# kinds become one compiled expression (``lambda v: ([(v[0], v[1]), (v[2], v[3])], v[4])``)
# instead of a recursive walk over the structure (a fifth of a small step's update call).
_COMPILED_MAX_LEAVES = 4096


class _NotPlain(Exception):
    pass


def _compiled(shape):
    """A function building ``shape`` around a sequence of leaves, or None for a structure with
    another kind of container (a namedtuple) or one too deep to compile."""
    constants = {}
    positions = iter(range(_COMPILED_MAX_LEAVES + 1))

    def expression(shape, depth):
        if shape is None:
            return f"v[{next(positions)}]"
        if depth > 32:
            raise _NotPlain
        kind, items = shape
        if kind is dict:
            parts = []
            for key, item in items:
                name = f"c{len(constants)}"
                constants[name] = key
                parts.append(f"{name}: {expression(item, depth + 1)}")
            return "{" + ", ".join(parts) + "}"
        inner = [expression(item, depth + 1) for item in items]
        if kind is tuple:
            return "(" + "".join(part + ", " for part in inner) + ")"
        if kind is list:
            return "[" + ", ".join(inner) + "]"
        raise _NotPlain

    try:
        body = expression(shape, 0)
    except _NotPlain:
        return None
    build = eval(f"lambda v: {body}", constants)      # noqa: S307 (our own generated source)

    def rebuild(new):
        return build(new if type(new) is list or type(new) is tuple else list(new))
    return rebuild


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
