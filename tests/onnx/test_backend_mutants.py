"""autograd/onnx/backend.py: the paths of AutogradRep.run that ONNX's conformance suite
(test_backend_suite.py) does not take: inputs by name, a graph that declares an input a node
overwrites, a wrong number of inputs, several outputs, run_model and supports_device. The
expected values are NumPy formulas."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="the onnx extra is not installed")
from onnx import TensorProto, helper              # noqa: E402

import autograd.onnx                                # noqa: E402
from autograd.onnx.backend import AutogradBackend, AutogradRep  # noqa: E402


def _info(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def _two_outputs():
    """y = relu(a) + b, z = a * b: two inputs, two outputs."""
    nodes = [helper.make_node("Relu", ["a"], ["r"]), helper.make_node("Add", ["r", "b"], ["y"]),
             helper.make_node("Mul", ["a", "b"], ["z"])]
    graph = helper.make_graph(nodes, "g", [_info("a", [2]), _info("b", [2])],
                              [_info("y", [2]), _info("z", [2])])
    return helper.make_model(graph)


def _overwritten_input():
    """Declares inputs x and w, but a Constant node produces w (as some old graphs do; onnx's
    checker refuses it, so the tests build the AutogradRep without prepare)."""
    constant = helper.make_tensor("value", TensorProto.FLOAT, [2], [10.0, 20.0])
    nodes = [helper.make_node("Constant", [], ["w"], value=constant),
             helper.make_node("Add", ["x", "w"], ["y"])]
    graph = helper.make_graph(nodes, "g", [_info("x", [2]), _info("w", [2])], [_info("y", [2])])
    return helper.make_model(graph)


A = np.array([-1.0, 2.0], np.float32)
B = np.array([3.0, -4.0], np.float32)


def test_run_model_gives_every_output_as_a_numpy_array_in_order():
    y, z = AutogradBackend.run_model(_two_outputs(), [A, B])
    np.testing.assert_array_equal(y, np.maximum(A, 0) + B)
    np.testing.assert_array_equal(z, A * B)
    assert isinstance(y, np.ndarray) and isinstance(z, np.ndarray)


def test_run_takes_inputs_by_name():
    rep = AutogradBackend.prepare(_two_outputs())
    y, z = rep.run({"b": B, "a": A})
    np.testing.assert_array_equal(y, np.maximum(A, 0) + B)
    np.testing.assert_array_equal(z, A * B)


def test_run_drops_a_declared_input_that_a_node_overwrites():
    rep = AutogradRep(autograd.onnx.load(_overwritten_input()))
    assert rep.model.input_names == ["x"] and rep.model.declared_input_names == ["x", "w"]
    x = np.array([1.0, 2.0], np.float32)
    (y,) = rep.run([x, np.array([-100.0, -100.0], np.float32)])   # w is the Constant's
    np.testing.assert_array_equal(y, x + np.array([10.0, 20.0], np.float32))
    (y,) = rep.run([x])                                            # or given the graph's inputs
    np.testing.assert_array_equal(y, x + np.array([10.0, 20.0], np.float32))


def test_run_with_a_wrong_number_of_inputs_is_refused_by_the_model():
    rep = AutogradRep(autograd.onnx.load(_overwritten_input()))
    x = np.ones(2, np.float32)
    with pytest.raises(ValueError, match=r"takes 1 input\(s\) \['x'\], got 3"):
        rep.run([x, x, x])


def test_prepare_checks_the_model_and_keeps_it():
    model = _two_outputs()
    rep = AutogradBackend.prepare(model)
    assert rep.model.input_names == ["a", "b"] and rep.model.output_names == ["y", "z"]
    broken = _two_outputs()
    broken.graph.node[1].input[0] = "nowhere"
    with pytest.raises(onnx.checker.ValidationError):
        AutogradBackend.prepare(broken)


def test_only_the_cpu_is_supported():
    assert AutogradBackend.supports_device("CPU") is True
    assert AutogradBackend.supports_device("CUDA") is False
    assert AutogradBackend.supports_device("cpu") is False
