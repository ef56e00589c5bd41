"""autograd/onnx/exporter.py: the paths the round trips of test_export.py do not take (several
outputs, a 0-d output, a fixed batch, to_onnx's own defaults, a graph cut at an inner Tensor,
a dead branch, a model that is a plain function or has no train()), each checked by running
the exported model in onnxruntime against a NumPy formula, or by the ModelProto's fields."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="the onnx extra is not installed")
onnxruntime = pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")

import autograd                                  # noqa: E402
import autograd.onnx                             # noqa: E402
from autograd import Tensor                      # noqa: E402
from autograd.onnx import exporter               # noqa: E402
from tests.onnx.onnxruntime_run import run_onnxruntime as _ort   # noqa: E402


def _dims(value):
    return [d.dim_param or d.dim_value for d in value.type.tensor_type.shape.dim]


X = np.array([[-1.0, 2.0, -3.0], [4.0, -5.0, 6.0]], np.float32)


def test_a_function_with_two_outputs_exports_both_in_order():
    """A tuple of outputs is output_0, output_1 (each traced back to the inputs)."""
    proto = autograd.onnx.export(lambda x: (autograd.relu(x), x * 3.0), [X])
    assert [value.name for value in proto.graph.output] == ["output_0", "output_1"]
    probe = X[::-1] * 0.5
    relu, tripled = _ort(proto, {"input": probe})
    np.testing.assert_array_equal(relu, np.maximum(probe, 0))
    np.testing.assert_array_equal(tripled, probe * 3.0)


def test_a_list_of_outputs_is_taken_like_a_tuple():
    proto = autograd.onnx.export(lambda x: [x * 2.0, autograd.tanh(x)], [X])
    doubled, tanh = _ort(proto, {"input": X})
    np.testing.assert_array_equal(doubled, X * 2.0)
    np.testing.assert_allclose(tanh, np.tanh(X), rtol=1e-6)


def test_a_0d_output_keeps_an_empty_shape_under_a_symbolic_batch():
    proto = autograd.onnx.export(lambda x: autograd.sum(x * x), [X])
    assert _dims(proto.graph.output[0]) == [] and _dims(proto.graph.input[0]) == ["batch", 3]
    probe = np.arange(12, dtype=np.float32).reshape(4, 3)
    np.testing.assert_allclose(_ort(proto, {"input": probe})[0], np.sum(probe * probe))


def test_a_fixed_batch_writes_the_example_shape():
    proto = autograd.onnx.export(lambda x: autograd.relu(x), [X], dynamic_batch=False)
    assert _dims(proto.graph.input[0]) == [2, 3] and _dims(proto.graph.output[0]) == [2, 3]


def test_parameters_are_initializers_named_by_their_dotted_names():
    model = autograd.Sequential(autograd.Linear(3, 2), autograd.ReLU(), autograd.Linear(2, 2))
    proto = autograd.onnx.export(model, [X])
    names = {init.name for init in proto.graph.initializer}
    assert {"0.W", "0.b", "2.W", "2.b"} <= names
    weights = {init.name: onnx.numpy_helper.to_array(init) for init in proto.graph.initializer}
    np.testing.assert_array_equal(weights["0.W"], model[0].W.to_numpy())
    np.testing.assert_array_equal(weights["2.b"], model[2].b.to_numpy())
    hidden = np.maximum(X @ model[0].W.to_numpy() + model[0].b.to_numpy(), 0)
    np.testing.assert_allclose(_ort(proto, {"input": X})[0],
                               hidden @ model[2].W.to_numpy() + model[2].b.to_numpy(),
                               rtol=1e-5, atol=1e-6)


def test_a_model_left_in_eval_mode_stays_in_it():
    model = autograd.Sequential(autograd.Linear(3, 2), autograd.Dropout(0.5))
    model.eval()
    autograd.onnx.export(model, [X])
    assert model.training is False and autograd.training is True


class _Scaler:
    """A callable with a ``training`` flag but no train() or eval() (not a Layer)."""
    training = False

    def __call__(self, x):
        return x * 2.0


def test_a_callable_without_train_keeps_its_flag_and_exports():
    model = _Scaler()
    proto = autograd.onnx.export(model, [X])
    assert model.training is False
    np.testing.assert_array_equal(_ort(proto, {"input": X})[0], X * 2.0)


def test_a_tensor_example_input_is_used_as_given():
    """A Tensor example is not rewrapped: the model sees that very Tensor."""
    seen = []
    example = Tensor(data=X.copy(), requires_grad=False)

    def model(x):
        seen.append(x)
        return autograd.relu(x)

    proto = autograd.onnx.export(model, [example])
    assert seen[0] is example
    np.testing.assert_array_equal(_ort(proto, {"input": X})[0], np.maximum(X, 0))


def test_to_onnx_defaults_opset_21_a_symbolic_batch_and_its_names():
    x = Tensor(data=X, requires_grad=False)
    with exporter.trace() as calls:
        y = autograd.relu(x)
    proto = exporter.to_onnx([x], [y], calls)
    assert [entry.version for entry in proto.opset_import if entry.domain == ""] == [21]
    assert proto.graph.name == "autograd" and proto.producer_name == "autograd"
    assert _dims(proto.graph.input[0]) == ["batch", 3]
    assert [value.name for value in proto.graph.input] == ["input"]
    assert [value.name for value in proto.graph.output] == ["output"]


def test_to_onnx_from_an_inner_tensor_leaves_out_what_computed_it():
    """The walk stops at the inputs: y = h * 2 from h = exp(x) is one Mul of the input h."""
    x = Tensor(data=X, requires_grad=False)
    with exporter.trace() as calls:
        h = autograd.exp(x)
        y = h * 2.0
    proto = exporter.to_onnx([h], [y], calls)
    assert [node.op_type for node in proto.graph.node] == ["Mul", "Identity"]
    np.testing.assert_array_equal(_ort(proto, {"input": X})[0], X * 2.0)


def test_a_dead_branch_and_a_diamond_export_exactly_the_needed_nodes():
    """relu(x) + x * x, with an unused tanh(x) traced between: the Add needs the Relu and the
    Mul, both reading the input, and the Tanh is left out."""
    def model(x):
        autograd.tanh(x)
        return autograd.relu(x) + autograd.mul(x, x)

    proto = autograd.onnx.export(model, [X])
    assert sorted(node.op_type for node in proto.graph.node) == ["Add", "Identity", "Mul", "Relu"]
    probe = X * -0.5 + 1.0
    np.testing.assert_allclose(_ort(proto, {"input": probe})[0],
                               np.maximum(probe, 0) + probe * probe, rtol=1e-6)


def test_a_traced_layer_flattens_tensors_in_lists_and_dicts():
    a, b, c = (Tensor(data=np.full(2, k, np.float32), requires_grad=False) for k in (1, 2, 3))
    flat = list(exporter._flat_tensors(([a, (b, "text")], {"state": [c], "other": 4})))
    assert len(flat) == 3 and flat[0] is a and flat[1] is b and flat[2] is c


def test_a_model_in_training_mode_is_traced_in_eval_mode_and_put_back(monkeypatch):
    """With the process flag on (a test run may have left it off, under which BatchNorm is in
    eval mode anyway), export must call eval(): BatchNorm then uses its running statistics,
    which the exported BatchNormalization holds."""
    monkeypatch.setattr(autograd, "training", True)
    rng = np.random.default_rng(9)
    model = autograd.Sequential(autograd.BatchNorm2d(2))
    model(Tensor(data=rng.standard_normal((4, 2, 3, 3)).astype(np.float32) * 3 + 1,
                 requires_grad=False))                     # running statistics move
    model.train()
    x = rng.standard_normal((2, 2, 3, 3)).astype(np.float32)
    proto = autograd.onnx.export(model, [x])
    assert model.training is True and autograd.training is True
    bn = model[0]
    mean, var = (t.to_numpy().reshape(1, 2, 1, 1) for t in (bn.running_mean, bn.running_var))
    scale, bias = (t.to_numpy().reshape(1, 2, 1, 1) for t in (bn.scale, bn.bias))
    expected = (x - mean) / np.sqrt(var + bn.eps) * scale + bias
    np.testing.assert_allclose(_ort(proto, {"input": x})[0], expected, rtol=1e-5, atol=1e-5)


def test_exporter_export_defaults_are_opset_21_and_a_symbolic_batch():
    """exporter.export's own defaults (autograd.onnx.export always passes both)."""
    proto = exporter.export(lambda x: autograd.relu(x), [X])
    assert [entry.version for entry in proto.opset_import if entry.domain == ""] == [21]
    assert _dims(proto.graph.input[0]) == ["batch", 3]
