"""Operation: tests written from the mutants of autograd/operations/base.py that the suite let
through (issue 22).

Debug mode's creation line: the tests in tests/test_graph.py read their own frame and compare,
which under mutmut sees mutmut's trampoline (they are deselected there). These tests read no
frame: they hand ``_user_line`` a made-up stack (``traceback.extract_stack`` replaced), so the
expected line is known word for word, under mutmut too.
"""
import traceback

import numpy as np
import pytest

import autograd
from autograd import Tensor, Operation
from autograd.operations import base


def _param(array):
    return Tensor(data=np.asarray(array, np.float64), stores_grad=True)


def _frame(filename, lineno, name):
    return traceback.FrameSummary(filename, lineno, name, lookup_line=False)


def _package(relative, lineno, name):
    return _frame(base._PACKAGE_DIR + relative, lineno, name)


@pytest.fixture
def stack(monkeypatch):
    """Set the stack ``_user_line`` sees: outermost first, as extract_stack returns it; its
    last two entries stand for _user_line's and Operation.__call__'s own frames."""
    frames = []
    monkeypatch.setattr(base.traceback, "extract_stack", lambda *args, **kwargs: list(frames))

    def set_frames(*new):
        frames[:] = new
    return set_frames


@pytest.fixture
def debug_mode():
    autograd.set_debug(True)
    yield
    autograd.set_debug(False)


_OWN = (_frame("/own/call.py", 1, "__call__"), _frame("/own/user_line.py", 2, "_user_line"))


def test_user_line_is_the_innermost_frame_outside_the_package(stack):
    """Innermost first (mutant without reversed: the outermost), package frames skipped
    (mutant `not startswith`), the last two frames never (mutants of the [:-2] slice:
    _OWN's files are outside the package, so a slice keeping one of them returns it; [:2]
    and [:-3] pick an outer frame)."""
    stack(_frame("/home/me/main.py", 30, "<module>"),
          _frame("/home/me/loop.py", 20, "fit"),
          _frame("/home/me/train.py", 12, "step"),
          _package("layers/linear.py", 80, "forward"),
          _package("layers/base.py", 40, "__call__"), *_OWN)
    assert base._user_line() == "/home/me/train.py:12 in step"
    stack(_frame("/home/me/main.py", 30, "<module>"),
          _frame("/home/me/train.py", 12, "step"), *_OWN)
    assert base._user_line() == "/home/me/train.py:12 in step"


def test_user_line_inside_the_package_only_is_unknown(stack):
    stack(_package("graph.py", 1, "backward"), _package("tensor.py", 2, "f"), *_OWN)
    assert base._user_line() == "<unknown>"
    stack(*_OWN)
    assert base._user_line() == "<unknown>"


def test_debug_mode_records_the_user_line_on_the_op(stack, debug_mode):
    stack(_frame("/home/me/train.py", 7, "step"), *_OWN)
    y = _param([1.0, 2.0]) * 2.0
    assert y.creator.created_at == "/home/me/train.py:7 in step"
    s, d = _SumAndDifference()(_param([1.0]), _param([2.0]))
    assert s.creator.created_at == "/home/me/train.py:7 in step"


def test_without_debug_mode_no_line_is_recorded(stack):
    stack(_frame("/home/me/train.py", 7, "step"), *_OWN)
    y = _param([1.0]) * 2.0
    assert not hasattr(y.creator, "created_at")


def test_debug_nan_in_a_forward_names_the_op_and_its_line_exactly(stack, debug_mode):
    stack(_frame("/home/me/train.py", 9, "step"), *_OWN)
    with pytest.raises(FloatingPointError) as info:
        with np.errstate(invalid="ignore"):
            autograd.log(_param([1.0, -1.0]))
    assert str(info.value) == ("Log (created at /home/me/train.py:9 in step): forward produced "
                               "NaN or inf")


def test_debug_nan_in_a_backward_names_the_op_and_its_line_exactly(stack, debug_mode):
    stack(_frame("/home/me/train.py", 11, "step"), *_OWN)
    y = autograd.sqrt(_param([0.0, 4.0]))           # finite, but d sqrt(x)/dx = inf at 0
    with pytest.raises(FloatingPointError) as info:
        with np.errstate(divide="ignore"):
            autograd.gradients(autograd.sum(y))
    assert str(info.value) == ("Sqrt (created at /home/me/train.py:11 in step): backward "
                               "produced NaN or inf")


# ---------------------------------------------------------------- several outputs
class _SumAndDifference(Operation):
    """(a + b, a - b).   da = ds + dd, db = ds - dd"""

    def forward(self, a, b):
        return a + b, a - b

    def backward(self, d_sum, d_difference):
        return d_sum + d_difference, d_sum - d_difference


class _LogAndExp(Operation):
    """(log x, exp x): the first is NaN for x < 0."""

    def forward(self, x):
        return np.log(x), np.exp(x)

    def backward(self, d_log, d_exp):
        raise AssertionError("not reached")


def test_debug_nan_in_one_of_several_outputs_is_caught(stack, debug_mode):
    stack(_frame("/home/me/train.py", 5, "step"), *_OWN)
    with pytest.raises(FloatingPointError) as info:
        with np.errstate(invalid="ignore"):
            _LogAndExp()(_param([-1.0]))
    assert str(info.value) == ("_LogAndExp (created at /home/me/train.py:5 in step): forward "
                               "produced NaN or inf")
    with np.errstate(invalid="ignore"):                 # debug off: NaN passes
        autograd.set_debug(False)
        log, _ = _LogAndExp()(_param([-1.0]))
    assert np.isnan(log.data).all()


def test_an_operation_without_backward_says_so():
    class NoBackward(Operation):
        def forward(self, x):
            return x * 2.0

    y = NoBackward()(_param([1.0]))
    with pytest.raises(NotImplementedError) as info:
        autograd.gradients(autograd.sum(y))
    assert str(info.value) == "NoBackward does not define backward"


# ---------------------------------------------------------------- forward errors explained
class _Add(Operation):
    def forward(self, a, b):
        return a + b

    def backward(self, dy):
        return dy, dy


class _Raises(Operation):
    """forward raises ``error`` (set per test)."""

    def __init__(self, error):
        super().__init__()
        self.error = error

    def forward(self, *arrays):
        raise self.error

    def backward(self, dy):
        return dy


def _numpy_error(function):
    try:
        function()
    except (TypeError, ValueError) as error:
        return error
    raise AssertionError("no error")


def test_a_numpy_error_in_forward_names_the_op_its_inputs_and_the_error():
    """Several inputs: ValueError stays ValueError (mutant `and False` made it TypeError),
    the inputs joined by ", ", NumPy's words kept after the error's class name."""
    a, b = np.ones((2, 3)), np.ones(4)
    expected = _numpy_error(lambda: a + b)
    with pytest.raises(ValueError) as info:
        _Add()(Tensor(data=a), Tensor(data=b))
    assert str(info.value) == ("_Add: cannot compute on inputs (float64 (2, 3), float64 (4,)): "
                               f"ValueError: {expected}")
    assert type(info.value.__cause__) is ValueError
    assert str(info.value.__cause__) == str(expected)


def test_a_type_error_in_a_one_input_forward_stays_a_type_error():
    error = TypeError("unsupported operand type(s)")
    with pytest.raises(TypeError) as info:
        _Raises(error)(Tensor(data=np.ones((2, 3), np.int64)))
    assert str(info.value) == ("_Raises: cannot compute on inputs (int64 (2, 3)): TypeError: "
                               "unsupported operand type(s)")
    assert info.value.__cause__ is error


@pytest.mark.parametrize("message", ["sum: axis 3 is out of range", "reshape(): bad shape",
                                     "autograd.ops.f: no"])
def test_our_own_messages_pass_unchanged(message):
    error = ValueError(message)
    with pytest.raises(ValueError) as info:
        _Raises(error)(Tensor(data=np.ones(2)), Tensor(data=np.ones(2)))
    assert info.value is error


@pytest.mark.parametrize("message", ["could not broadcast: (2,3)", "3d: no", ": empty"])
def test_messages_not_starting_with_a_name_are_explained(message):
    with pytest.raises(ValueError) as info:
        _Raises(ValueError(message))(Tensor(data=np.ones(2, np.float32)))
    assert str(info.value) == ("_Raises: cannot compute on inputs (float32 (2,)): ValueError: "
                               + message)


class _TensorLike:
    """Has what Operation reads of a Tensor, with data that is not an array."""

    def __init__(self, data):
        self.data, self.device = data, autograd.device.cpu()
        self.requires_grad = self.stores_grad = False
        self.creator = None


def test_inputs_without_dtype_or_shape_are_described_by_their_type():
    """The described inputs fall back on the type's name and () (mutants of those defaults)."""
    with pytest.raises(TypeError) as info:
        _Raises(TypeError("no"))(_TensorLike([1.0, 2.0]))
    assert str(info.value) == "_Raises: cannot compute on inputs (list ()): TypeError: no"
