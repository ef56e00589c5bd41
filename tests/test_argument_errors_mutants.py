"""argument_errors survivors of the full mutation run. ``explaining`` and
``wrap_public_functions`` run when autograd is imported, before mutmut picks a mutant, so the
sweep of test_argument_errors.py only ever saw the original wrappers: here they are applied
afresh, to functions written in the test, and every message is checked word for word."""
import numpy as np
import pytest

from autograd import Operation
from autograd.argument_errors import _only_calls_an_operation, explaining, wrap_public_functions


class Double(Operation):
    def forward(self, x):
        return 2 * x

    def backward(self, dy):
        return 2 * dy


class NotAnOperation:
    def __init__(self, x):
        self.x = x


def _helper(x):
    return x


def only_op(x):
    return Double()(x)


def two_arguments(x, y):
    return Double()(x)


def a_local(x):
    y = Double()(x)
    return y


def two_globals(x):
    return Double()(_helper(x))


def a_default(x=1):
    return Double()(x)


def keyword_only(x, *, scale):
    return Double()(x)


def star(*values):
    return Double()(values)


def other_class(x):
    return NotAnOperation(x)


def unknown_global(x):
    return Missing(x)          # noqa: F821 - never called


def test_only_a_one_argument_call_of_an_operation_is_left_unwrapped():
    assert _only_calls_an_operation(only_op) is True
    for function in (two_arguments, a_local, two_globals, a_default, keyword_only,
                     star, other_class, unknown_global, _helper):
        assert _only_calls_an_operation(function) is False, function.__name__


def test_wrap_public_functions_wraps_exactly_the_public_functions_of_the_modules_named():
    def public(x):
        return x.shape
    public.__module__ = "package.ops"
    private = lambda x: x.shape                                  # noqa: E731
    private.__module__ = "package.ops"
    elsewhere = lambda x: x.shape                               # noqa: E731
    elsewhere.__module__ = "package.other"
    namespace = {"public": public, "_private": private, "elsewhere": elsewhere,
                 "only_op": only_op, "Double": Double, "constant": 3}
    only_op.__module__, saved = "package.ops", only_op.__module__
    try:
        wrap_public_functions(namespace, {"package.ops"})
    finally:
        only_op.__module__ = saved
    assert [key for key, value in namespace.items() if getattr(value, "__wrapped__", None)] \
        == ["public"]
    assert namespace["public"].__wrapped__ is public
    assert (namespace["_private"], namespace["elsewhere"], namespace["only_op"],
            namespace["Double"], namespace["constant"]) == (private, elsewhere, only_op,
                                                            Double, 3)
    with pytest.raises(TypeError) as info:
        namespace["public"](None)
    assert str(info.value) == ("public: argument 'x' got None; expected a Tensor "
                               "(AttributeError: 'NoneType' object has no attribute 'shape')")


def scale(x, factor=1.0):
    return x.shape, factor * x.sum()


def total(*tensors):
    return sum(t.sum() for t in tensors)


def _message(function, *args, **kwargs):
    with pytest.raises(Exception) as info:
        explaining(function)(*args, **kwargs)
    return type(info.value), str(info.value)


def test_an_argument_of_the_wrong_kind_given_by_keyword_is_named():
    assert _message(scale, x=None) == (TypeError, "scale: argument 'x' got None; expected a "
                                       "Tensor (AttributeError: 'NoneType' object has no "
                                       "attribute 'shape')")


def test_an_argument_of_the_wrong_kind_among_star_args_is_named():
    kind, text = _message(total, np.ones(2), None)
    assert (kind, text) == (TypeError, "total: argument 'tensors' got None; expected a Tensor "
                            "(AttributeError: 'NoneType' object has no attribute 'sum')")


def test_a_dict_passed_for_a_tensor_is_the_culprit():
    assert _message(scale, {"x": 1}) == (TypeError, "scale: argument 'x' got dict {'x': 1}; "
                                         "expected a Tensor (AttributeError: 'dict' object has "
                                         "no attribute 'shape')")


def test_a_function_passed_for_a_tensor_is_the_culprit_but_a_class_is_not():
    kind, text = _message(scale, print)
    assert kind is TypeError and text.startswith(
        "scale: argument 'x' got builtin_function_or_method <built-in function print>; "
        "expected a Tensor (AttributeError: ")
    kind, text = _message(scale, int)
    assert kind is TypeError and text.startswith("scale: cannot apply to (type <class 'int'>) "
                                                 "(AttributeError: ")


def failing(*values):
    raise ValueError("operands could not be broadcast together")


def test_every_argument_is_described_when_none_is_of_the_wrong_kind():
    class DtypeOnly:
        dtype = "float32"

        def __repr__(self):
            return "DtypeOnly()"

    class ShapeOnly:
        shape = (2,)

        def __repr__(self):
            return "ShapeOnly()"
    forty = [10] + [1] * 12                                      # repr of exactly 40 characters
    forty_one = [10, 10] + [1] * 11                              # 41: cut to 37 and "..."
    assert len(repr(forty)) == 40 and len(repr(forty_one)) == 41
    kind, text = _message(failing, np.zeros((2, 3), np.float32), DtypeOnly(), ShapeOnly(),
                          forty, forty_one, 1.5)
    assert kind is ValueError
    assert text == ("failing: cannot apply to (ndarray of float32 (2, 3), DtypeOnly DtypeOnly(), "
                    "ShapeOnly ShapeOnly(), list " + repr(forty) + ", list "
                    + repr(forty_one)[:37] + "..., float 1.5) "
                    "(ValueError: operands could not be broadcast together)")
