"""Nested states (dicts, lists, tuples, numbers, strings, arrays) as JSON plus named arrays.

A checkpoint stores a model's and an optimizer's ``state_dict()`` and the user's extras without
pickle: every array becomes a named NumPy ``.npy`` member and the structure around it JSON.
Values JSON cannot hold exactly are tagged with a one-key object whose key starts with ``$``:
``{"$array": "a0"}`` (an array), ``{"$scalar": "a1"}`` (a NumPy scalar, its dtype kept),
``{"$tuple": [...]}``, and ``{"$dict": [[key, value], ...]}`` for a dict whose keys are not all
strings (optimizer states keyed by parameter index) or that has a key starting with ``$``.

>>> arrays = {}
>>> tree = encode({"step": 3, "lr": 0.1, "buffers": (np.zeros(2, np.float32),)}, arrays, "state")
>>> tree["buffers"], sorted(arrays)
({'$tuple': [{'$array': 'a0'}]}, ['a0'])
>>> decode(tree, arrays, "state")["buffers"][0].dtype
dtype('float32')
"""
from collections.abc import Mapping

import numpy as np

__all__ = ["encode", "decode", "as_host_array", "is_array"]

_TAGS = ("$array", "$scalar", "$tuple", "$dict")


def is_array(value):
    """True for a NumPy or CuPy array or an autograd Tensor (anything with shape and dtype that
    is not a NumPy scalar)."""
    return (hasattr(value, "shape") and hasattr(value, "dtype")
            and not isinstance(value, np.generic))


def as_host_array(value):
    """A NumPy array holding ``value`` (a NumPy or CuPy array, or a Tensor)."""
    if hasattr(value, "to_numpy"):          # an autograd Tensor
        value = value.to_numpy()
    if hasattr(value, "get") and not isinstance(value, np.ndarray):   # a CuPy array
        value = value.get()
    return np.asarray(value)


def encode(value, arrays, where):
    """``value`` as JSON-ready data; its arrays are added to ``arrays`` under new names.

    ``where`` names the value in error messages (``model['fc.W']``). Raises TypeError for a value
    that cannot be stored without pickle.
    """
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, np.generic) or is_array(value):
        array = as_host_array(value)
        if array.dtype.hasobject or array.dtype.kind == "V":
            raise TypeError(f"save: cannot store {where}: arrays of dtype {array.dtype} need "
                            "pickle; store numeric, boolean or string arrays")
        name = f"a{len(arrays)}"
        arrays[name] = array
        return {"$scalar" if isinstance(value, np.generic) else "$array": name}
    if isinstance(value, list):
        return [encode(item, arrays, f"{where}[{i}]") for i, item in enumerate(value)]
    if isinstance(value, tuple):
        return {"$tuple": [encode(item, arrays, f"{where}[{i}]") for i, item in enumerate(value)]}
    if isinstance(value, Mapping):
        if all(isinstance(key, str) and not key.startswith("$") for key in value):
            return {key: encode(item, arrays, f"{where}[{key!r}]") for key, item in value.items()}
        return {"$dict": [[encode(key, arrays, f"a key of {where}"),
                           encode(item, arrays, f"{where}[{key!r}]")]
                          for key, item in value.items()]}
    raise TypeError(f"save: cannot store {where} of type {type(value).__name__}: expected None, "
                    "bool, int, float, str, a NumPy array or scalar, a Tensor, or a list, tuple "
                    "or dict of those")


def decode(tree, arrays, where):
    """The value ``encode`` turned into ``tree``, its arrays taken from ``arrays`` (NumPy).

    Raises ValueError naming ``where`` for a structure ``encode`` cannot have written.
    """
    if isinstance(tree, list):
        return [decode(item, arrays, f"{where}[{i}]") for i, item in enumerate(tree)]
    if not isinstance(tree, dict):
        return tree
    if len(tree) == 1:
        (tag, body), = tree.items()
        if tag in ("$array", "$scalar"):
            if not isinstance(body, str) or body not in arrays:
                raise ValueError(f"{where} refers to array {body!r}, which the file lacks")
            return arrays[body] if tag == "$array" else arrays[body][()]
        if tag == "$tuple":
            return tuple(decode(_expect_list(body, where), arrays, where))
        if tag == "$dict":
            pairs = _expect_list(body, where)
            if not all(isinstance(pair, list) and len(pair) == 2 for pair in pairs):
                raise ValueError(f"{where}: a $dict must hold [key, value] pairs")
            keys = [_hashable(decode(key, arrays, f"a key of {where}"), where) for key, _ in pairs]
            return {key: decode(item, arrays, f"{where}[{key!r}]")
                    for key, (_, item) in zip(keys, pairs)}
    if any(key.startswith("$") for key in tree):
        raise ValueError(f"{where}: unknown tagged value {sorted(tree)} (expected one of {_TAGS})")
    return {key: decode(item, arrays, f"{where}[{key!r}]") for key, item in tree.items()}


def _expect_list(body, where):
    if not isinstance(body, list):
        raise ValueError(f"{where}: expected a list inside a tagged value, got "
                         f"{type(body).__name__}")
    return body


def _hashable(key, where):
    try:
        hash(key)
    except TypeError:
        raise ValueError(f"{where}: a dict key decodes to an unhashable "
                         f"{type(key).__name__}") from None
    return key
