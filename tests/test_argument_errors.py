"""Bad input to public functions gets a clear error naming the function: a property sweep over
every op function with non-Tensor, None and wrong-dtype arguments, and the three messages that
used to mislead."""
import inspect
import re

import numpy as np
import pytest
from hypothesis import given, strategies as st

import autograd
from autograd import Tensor

_OPERATIONS = sorted(
    name for name in dir(autograd)
    if not name.startswith("_") and inspect.isfunction(getattr(autograd, name))
    and getattr(autograd, name).__module__.startswith("autograd.operations."))

# our messages start with what failed: the function, its alias or its Operation class
_OURS = re.compile(r"[A-Za-z_][\w.]*(\(\))?: ")

_BAD = {
    "None": lambda: None,
    "text": lambda: "abc",
    "object array": lambda: np.array([object(), object()]),
    "dict": lambda: {"x": 1},
    "bool Tensor": lambda: Tensor(data=np.ones((2, 3), bool)),
    "int Tensor": lambda: Tensor(data=np.ones((2, 3), np.int64)),
    "complex array": lambda: np.ones((2, 3), np.complex64),
    "float64 Tensor": lambda: Tensor(data=np.ones((2, 3)), dtype=np.float64),
}


def _positional_count(function):
    parameters = inspect.signature(function).parameters.values()
    required = [p for p in parameters if p.default is p.empty
                and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    variadic = any(p.kind is p.VAR_POSITIONAL for p in parameters)
    return max(len(required), 1 if variadic else 0)


def test_the_sweep_covers_the_operations():
    assert len(_OPERATIONS) > 90 and "matmul" in _OPERATIONS and "relu" in _OPERATIONS


@pytest.mark.filterwarnings("ignore::RuntimeWarning", "ignore::numpy.exceptions.ComplexWarning")
@given(name=st.sampled_from(_OPERATIONS), bad=st.sampled_from(sorted(_BAD)),
       position=st.integers(0, 3), shape=st.sampled_from([(2, 3), (1, 2, 3, 4), (3,)]))
def test_bad_arguments_get_an_error_naming_what_failed(name, bad, position, shape):
    function = getattr(autograd, name)
    count = _positional_count(function)
    if count == 0:
        return
    args = [Tensor(data=np.ones(shape, np.float32)) for _ in range(count)]
    args[position % count] = _BAD[bad]()
    try:
        function(*args)
    except (TypeError, ValueError, IndexError) as error:
        assert _OURS.match(str(error)), f"{name}({bad} at {position % count}): {error!r}"
    # success is fine: an int Tensor is a valid input to most ops, None an index of getitem


@pytest.mark.parametrize("name", _OPERATIONS)
def test_none_as_the_first_argument_is_an_error_naming_the_function(name):
    function = getattr(autograd, name)
    count = _positional_count(function)
    if count == 0:
        pytest.skip("takes no positional arguments")
    args = [None] + [Tensor(data=np.ones((2, 3), np.float32)) for _ in range(count - 1)]
    with pytest.raises((TypeError, ValueError)) as info:
        function(*args)
    assert _OURS.match(str(info.value)), repr(info.value)


def test_matmul_with_none_is_a_type_error_naming_matmul_and_what_it_got():
    with pytest.raises(TypeError, match=r"^matmul: argument 'b' got None; expected a Tensor"):
        autograd.matmul(Tensor(data=np.ones((2, 3))), None)


def test_add_with_none_is_an_error_not_nan():
    with pytest.raises(TypeError, match=r"^add: expected a Tensor, an array or a number, "
                                        r"got NoneType"):
        autograd.add(Tensor(data=np.ones(3)), None)


def test_a_bool_tensor_to_relu_names_the_operation_and_the_dtype():
    # relu only calls its Operation, so the Operation's own explanation names it
    with pytest.raises(TypeError, match=r"^ReLU: cannot compute on inputs \(bool \(3,\)\)"):
        autograd.relu(Tensor(data=np.ones(3, bool)))


@pytest.mark.parametrize("labels", [np.array([0.0, 1.0]), Tensor(data=[0.0, 1.0])])
def test_float_labels_to_softmax_cross_entropy_name_the_dtype(labels):
    logits = Tensor(data=np.zeros((2, 3), np.float32))
    with pytest.raises(TypeError, match=r"softmax_cross_entropy: labels of shape \(2,\) must be "
                                        r"integers, got float(32|64) \(cast them"):
        autograd.softmax_cross_entropy(logits, labels)


@pytest.mark.parametrize("shape, kind, message", [
    ((2, -3), ValueError, r"^Tensor: shape must not be negative, got \(2, -3\)"),
    ((2, 1.5), TypeError, r"^Tensor: shape must hold ints, got \(2, 1.5\) \(a float\)"),
    (None, ValueError, r"^Tensor: give a shape, data or both"),
    (object(), TypeError, r"^Tensor: shape must be an int or a sequence of ints, got object"),
])
def test_bad_tensor_shapes_name_tensor(shape, kind, message):
    with pytest.raises(kind, match=message):
        Tensor(shape=shape)


def test_the_wrapped_functions_keep_their_names_signatures_and_docstrings():
    from autograd.operations import linalg
    assert autograd.matmul.__name__ == "matmul"
    assert autograd.matmul.__doc__ == linalg.matmul.__doc__
    assert inspect.signature(autograd.matmul) == inspect.signature(linalg.matmul)


@pytest.mark.filterwarnings("ignore::RuntimeWarning", "ignore::numpy.exceptions.ComplexWarning")
def test_every_operation_every_bad_kind_every_position():
    """The sweep above draws; this walks all of it once for (2, 3) Tensors."""
    failures = []
    for name in _OPERATIONS:
        function = getattr(autograd, name)
        count = _positional_count(function)
        for bad, make in _BAD.items():
            for position in range(count):
                args = [Tensor(data=np.ones((2, 3), np.float32)) for _ in range(count)]
                args[position] = make()
                try:
                    function(*args)
                except (TypeError, ValueError, IndexError) as error:
                    if not _OURS.match(str(error)):
                        failures.append(f"{name}({bad} at {position}): {error!r}")
                except Exception as error:          # noqa: BLE001 - any other kind is a failure
                    failures.append(f"{name}({bad} at {position}): {error!r}")
    assert not failures, "\n".join(failures)
