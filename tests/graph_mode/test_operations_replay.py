"""Every op of the OpCase table, captured on one set of values and replayed on another, gives
exactly what eager mode gives on the second set: forward and every input's gradient, and the
forward alone under no_grad (through the op's forward plan where it has one).

The table's cases (tests/operations/test_*.py, each module's ``*CASES`` lists) are collected
here, so a new op is checked for graph mode the moment it joins the table. Float inputs that
take a gradient are parameters whose values are changed in place between the calls; integer
inputs and constant floats are arguments of the captured step, copied into its buffers.
"""
import importlib
import pkgutil

import numpy as np
import pytest

import autograd
import tests.operations
from autograd import Tensor
from tests.opcase import Floats, Integers, OpCase, _broadcast_variant, _values


def table():
    cases = []
    for info in pkgutil.iter_modules(tests.operations.__path__):
        module = importlib.import_module(f"tests.operations.{info.name}")
        for name in sorted(vars(module)):
            value = getattr(module, name)
            if name.endswith("CASES") and isinstance(value, list):
                cases += [(f"{info.name}.{case}", case) for case in value
                          if isinstance(case, OpCase)]
    return cases


CASES = table()


def shapes_for(case, rng):
    if case.shape is not None:
        base = case.shape
    else:
        dims = min(max(2, case.min_dims), case.max_dims)
        base = (min(max(3, case.min_side), case.max_side),) * dims
    shapes = []
    for spec in case.inputs:
        shape = spec.shape if spec.shape is not None else base
        if isinstance(spec, Floats) and spec.broadcast and spec.shape is None:
            shape = _broadcast_variant(base, rng)
        shapes.append(shape)
    return shapes


def values(case, shapes, seed):
    rng = np.random.default_rng(seed)
    arrays = []
    for spec, shape in zip(case.inputs, shapes):
        array = _values(spec, shape, rng)
        arrays.append(array if isinstance(spec, Integers) else array.astype(np.float32))
    return arrays


def is_parameter(spec):
    return isinstance(spec, Floats) and spec.requires_grad


def make_step(case, parameters):
    def step(*arguments):
        arguments = iter(arguments)
        inputs = [parameters[i] if is_parameter(spec) else next(arguments)
                  for i, spec in enumerate(case.inputs)]
        out = case.fn(*inputs, **case.kwargs)
        if not (case.grad and out.creator is not None):
            return out, []
        dy = np.linspace(-1.0, 1.0, out.size, dtype=out.dtype).reshape(out.shape)
        grads = dict(autograd.backward(out, dy))
        return out, [grads.get(parameters.get(i)) for i in range(len(case.inputs))]
    return step


def run(step, case, arrays, parameters):
    for i, (spec, array) in enumerate(zip(case.inputs, arrays)):
        if is_parameter(spec):
            parameters[i].data[...] = array
    arguments = [Tensor(data=a, requires_grad=False) for spec, a in zip(case.inputs, arrays)
                 if not is_parameter(spec)]
    autograd.manual_seed(5)
    out, grads = step(*arguments)
    return [out.to_numpy().copy()] + [None if g is None else g.to_numpy().copy() for g in grads]


# Cases graph mode must refuse, and the words its CaptureError must use.
REFUSED = {
    "getitem_bool_mask": "boolean mask",          # the result's length is the number of True values
    "bool_tensor": "boolean mask",
    "mask_from_values": "boolean mask",
    "numpy_labels": "Tensor.to_numpy",     # the case itself reads its labels on the host
    "one_hot": "Tensor.to_numpy",
    "where_scalar": "computed outside any Operation",   # the condition is x.data > 0
}


def expected_refusal(name):
    return next((words for part, words in REFUSED.items() if part in name), None)


@pytest.mark.parametrize("name,case", CASES, ids=[name for name, _ in CASES])
def test_replay_equals_eager(name, case):
    refusal = expected_refusal(name)
    if refusal is not None:
        check_refused(name, case, refusal)
        return
    shapes = shapes_for(case, np.random.default_rng(0))
    first, second = values(case, shapes, 1), values(case, shapes, 2)
    parameters = {i: Tensor(data=a, stores_grad=True)
                  for i, (spec, a) in enumerate(zip(case.inputs, first)) if is_parameter(spec)}
    eager = run(make_step(case, parameters), case, second, parameters)
    captured = autograd.capture(make_step(case, parameters))
    run(captured, case, first, parameters)
    run(captured, case, values(case, shapes, 3), parameters)
    replayed = run(captured, case, second, parameters)
    assert captured.replays == 1, name
    for position, (expected, actual) in enumerate(zip(eager, replayed)):
        if expected is None:
            assert actual is None, f"{name}: result {position}"
        else:
            np.testing.assert_array_equal(actual, expected, err_msg=f"{name}: result {position}")


@pytest.mark.parametrize("name,case", CASES, ids=[name for name, _ in CASES])
def test_a_no_grad_replay_equals_eager(name, case):
    """Under no_grad nothing is recorded for backward: the replay runs each call through its
    op's forward plan where it has one (graph_mode/recorder.py), else its forward."""
    if expected_refusal(name) is not None:
        return
    shapes = shapes_for(case, np.random.default_rng(0))
    first, second = values(case, shapes, 1), values(case, shapes, 2)
    parameters = {i: Tensor(data=a, stores_grad=True)
                  for i, (spec, a) in enumerate(zip(case.inputs, first)) if is_parameter(spec)}

    def step(*arguments):
        with autograd.no_grad():
            return make_step(case, parameters)(*arguments)[0], []

    eager = run(step, case, second, parameters)
    captured = autograd.capture(step)
    run(captured, case, first, parameters)
    run(captured, case, values(case, shapes, 3), parameters)
    replayed = run(captured, case, second, parameters)
    assert captured.replays == 1, name
    np.testing.assert_array_equal(replayed[0], eager[0], err_msg=name)


def check_refused(name, case, words):
    shapes = shapes_for(case, np.random.default_rng(0))
    first = values(case, shapes, 1)
    parameters = {i: Tensor(data=a, stores_grad=True)
                  for i, (spec, a) in enumerate(zip(case.inputs, first)) if is_parameter(spec)}
    captured = autograd.capture(make_step(case, parameters))
    with pytest.raises(autograd.CaptureError, match=words):
        run(captured, case, first, parameters)
        run(captured, case, values(case, shapes, 3), parameters)
