"""Clear errors for arguments of the wrong kind given to the public functions.

Each op function checks what it needs on the way in (shapes, dtypes, devices). An argument of
the wrong kind altogether (``None``, a string, an object array, a dict where a Tensor belongs)
used to surface as Python's own error from deep inside, an AttributeError about ``.shape``.
``autograd`` therefore exports each op function wrapped by :func:`explaining`: when a call
fails with an error in Python's or NumPy's own words (not one of ours, which start with the
name of what failed), it is re-raised naming the function: a TypeError naming the argument of
the wrong kind and what it got, or else an error listing every argument's type, dtype and
shape. The happy path costs one extra call; nothing is checked before the function runs.

>>> import autograd
>>> autograd.matmul(autograd.Tensor(data=[[1.0]]), None)
Traceback (most recent call last):
    ...
TypeError: matmul: argument 'b' got None; expected a Tensor (AttributeError: ...)
"""
import functools
import inspect
import re

import numpy as np

__all__ = ["explaining", "wrap_public_functions"]

_TRANSLATED = (AttributeError, TypeError, ValueError, IndexError, KeyError)


def _is_wrong_kind(value):
    """None, text, object arrays and other objects that no op takes where a Tensor belongs."""
    if value is None or isinstance(value, (str, bytes)):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.hasobject
    return isinstance(value, (dict, set)) or callable(value) and not isinstance(value, type)


_OURS = re.compile(r"[A-Za-z_][\w.]*(\(\))?: ")


def _is_ours(error):
    """Our messages start with the op, layer or function they concern: ``matmul: ...``."""
    return bool(_OURS.match(str(error)))


def explaining(function):
    """``function`` whose failures with an error of Python's or NumPy's own words are
    re-raised naming ``function``: the argument of the wrong kind and what it got, or else
    every argument's type, dtype and shape (the original error is chained)."""
    name = function.__name__

    @functools.wraps(function)
    def call(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except _TRANSLATED as error:
            if _is_ours(error):
                raise
            culprit = _wrong_argument(function, args, kwargs)
            cause = f"{type(error).__name__}: {error}"
            if culprit is not None:
                parameter, value = culprit
                raise TypeError(f"{name}: argument {parameter!r} got {_describe(value)}; "
                                f"expected a Tensor ({cause})") from error
            kind = type(error) if type(error) in (ValueError, IndexError) else TypeError
            described = ", ".join(_describe(value) for value in args)
            raise kind(f"{name}: cannot apply to ({described}) ({cause})") from error

    return call


def _describe(value):
    if value is None:
        return "None"
    if hasattr(value, "dtype") and hasattr(value, "shape"):
        return f"{type(value).__name__} of {value.dtype} {tuple(value.shape)}"
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:37] + '...'}"


def _wrong_argument(function, args, kwargs):
    try:
        bound = inspect.signature(function).bind(*args, **kwargs)
    except TypeError:
        return None
    for parameter, value in bound.arguments.items():
        values = value if isinstance(value, tuple) else (value,)   # *args
        for item in values:
            if _is_wrong_kind(item):
                return parameter, item
    return None


def _only_calls_an_operation(function):
    """Whether ``function`` is ``def f(x): return SomeOperation()(x)``: it reads no global but
    one Operation class and has no local but its one argument, so every error it raises is the
    Operation's, which names it already. Those stay unwrapped: the wrapper's extra call was 3%
    of the tape's cost per op (tanh is one of its three ops), and could add nothing."""
    from .operations.base import Operation
    code = function.__code__
    if code.co_argcount != 1 or code.co_kwonlyargcount or code.co_nlocals != 1 \
            or len(code.co_names) != 1 or function.__defaults__:
        return False
    target = function.__globals__.get(code.co_names[0])
    return isinstance(target, type) and issubclass(target, Operation)


def wrap_public_functions(namespace, module_names):
    """Wrap, in ``namespace`` (``autograd``'s globals), every function that was exported from
    one of ``module_names`` (but those that only call an Operation on their argument)."""
    for key, value in list(namespace.items()):
        if inspect.isfunction(value) and value.__module__ in module_names \
                and not key.startswith("_") and not _only_calls_an_operation(value):
            namespace[key] = explaining(value)
