"""autograd/onnx/export_ops.py: the table lookup (a subclass, the refusal's message), the
context's names and constants, reshapes that only add or drop axes of length 1 (Unsqueeze /
Squeeze, which keep the batch symbolic wherever it moves), and max / min reductions at the
opsets on each side of ONNX's change of the axes from attribute to input (18). Each exported
model runs in onnxruntime against a NumPy formula."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="the onnx extra is not installed")
onnxruntime = pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")

import autograd                                  # noqa: E402
import autograd.onnx                             # noqa: E402
from autograd.onnx import export_ops             # noqa: E402
from autograd.operations import activation, reduction   # noqa: E402
from tests.onnx.onnxruntime_run import run_onnxruntime as _ort   # noqa: E402


def _types(proto):
    return [node.op_type for node in proto.graph.node]


RNG = np.random.default_rng(22)
X = RNG.standard_normal((2, 3, 4)).astype(np.float32)


def test_a_subclass_of_an_exported_operation_uses_its_base_class_exporter():
    class MyReLU(activation.ReLU):
        pass

    proto = autograd.onnx.export(lambda x: MyReLU()(x), [X])
    assert _types(proto) == ["Relu", "Identity"]
    np.testing.assert_array_equal(_ort(proto, {"input": X})[0], np.maximum(X, 0))
    assert export_ops.exporter_for(MyReLU()) is export_ops.EXPORTERS[activation.ReLU]


def test_an_operation_without_exporter_is_refused_with_its_name_and_module():
    class Unmapped(autograd.Operation):
        def forward(self, x):
            return x

    with pytest.raises(NotImplementedError) as caught:
        export_ops.exporter_for(Unmapped())
    assert str(caught.value) == (
        "autograd.onnx.export: no ONNX mapping for the Operation Unmapped (" + __name__ +
        "); add one with autograd.onnx.register_exporter")


def test_has_exporter_is_true_only_for_the_recurrent_layers_and_their_subclasses():
    class MyLSTM(autograd.LSTM):
        pass

    assert export_ops.has_exporter(autograd.LSTM(2, 3))
    assert export_ops.has_exporter(MyLSTM(2, 3))
    assert not export_ops.has_exporter(autograd.Linear(2, 3))
    assert not export_ops.has_exporter(autograd.Sequential(autograd.ReLU()))


def test_a_parameter_used_twice_is_one_initializer_and_constants_are_distinct():
    """x * w + w and two different scalars: one initializer 'w', two constants of their own
    values (a constant that reused another's name would carry the wrong value)."""
    model = autograd.Sequential()
    model.w = autograd.Tensor(data=np.arange(1.0, 5.0, dtype=np.float32), stores_grad=True)

    def forward(x):
        return (x * model.w + model.w) * 3.0 + 0.5

    model.forward = forward
    proto = autograd.onnx.export(model, [X])
    names = [init.name for init in proto.graph.initializer]
    assert names.count("w") == 1 and len(names) == len(set(names)) == 3
    w = np.arange(1.0, 5.0, dtype=np.float32)
    np.testing.assert_allclose(_ort(proto, {"input": X})[0], (X * w + w) * 3.0 + 0.5, rtol=1e-6)


def test_node_outputs_and_constants_are_named_uniquely():
    proto = autograd.onnx.export(
        lambda x: autograd.relu(autograd.relu(x) * 2.0 - 1.0) * 4.0, [X])
    produced = [name for node in proto.graph.node for name in node.output]
    produced += [init.name for init in proto.graph.initializer]
    assert len(produced) == len(set(produced))
    np.testing.assert_allclose(_ort(proto, {"input": X})[0],
                               np.maximum(np.maximum(X, 0) * 2.0 - 1.0, 0) * 4.0, rtol=1e-6)


@pytest.mark.parametrize("opset", [12, 13, 21])
def test_unsqueeze_and_squeeze_keep_the_batch_symbolic_where_it_moves(opset):
    """(N, 3, 4) -> (1, N, 3, 1, 4) -> (N, 3, 4) -> (N, 12) -> (N, 12, 1) -> (N, 12): a
    Reshape would fix the batch once it is not the first axis; run at another batch size."""
    def model(x):
        y = autograd.reshape(x, (1, x.shape[0], 3, 1, 4))
        y = autograd.reshape(y, (x.shape[0], 3, 4)) * 2.0
        y = autograd.reshape(y, (x.shape[0], 12))
        y = autograd.reshape(y, (x.shape[0], 12, 1))
        return autograd.reshape(y, (x.shape[0], 12))

    proto = autograd.onnx.export(model, [X], opset=opset)
    assert _types(proto) == ["Unsqueeze", "Squeeze", "Mul", "Reshape", "Unsqueeze", "Squeeze",
                             "Identity"]
    probe = RNG.standard_normal((5, 3, 4)).astype(np.float32)
    np.testing.assert_array_equal(_ort(proto, {"input": probe})[0],
                                  (probe * 2.0).reshape(5, 12))


def test_a_reshape_of_the_same_rank_is_no_unsqueeze():
    """(2, 1, 1) -> (1, 2, 1) only looks like inserting an axis: a Reshape."""
    x = np.array([[[1.0]], [[2.0]]], np.float32)
    proto = autograd.onnx.export(lambda x: autograd.reshape(x, (1, 2, 1)), [x],
                                 dynamic_batch=False)
    assert _types(proto) == ["Reshape", "Identity"]
    (y,) = _ort(proto, {"input": x})
    assert y.shape == (1, 2, 1) and y.ravel().tolist() == [1.0, 2.0]


@pytest.mark.parametrize("opset", [17, 18, 21])
def test_reductions_over_axes_export_at_each_side_of_opset_18(opset):
    """ReduceSum takes its axes as an input from opset 13, the others from 18 (Sum and Mean's
    exporters are built at import, where mutmut cannot switch a mutant in: planted by hand)."""
    def model(x):
        return (autograd.max(x, axis=1) + autograd.min(x, axis=(1, 2), keepdims=True)[:, 0]
                - autograd.max(x, axis=2, keepdims=True)[:, 0, :] + autograd.sum(x, axis=1)
                + autograd.mean(x, axis=(1, 2), keepdims=True)[:, 0])

    proto = autograd.onnx.export(model, [X], opset=opset)
    assert {"ReduceMax", "ReduceMin", "ReduceSum", "ReduceMean"} <= set(_types(proto))
    probe = RNG.standard_normal((4, 3, 4)).astype(np.float32)
    expected = (probe.max(axis=1) + probe.min(axis=(1, 2), keepdims=True)[:, 0]
                - probe.max(axis=2, keepdims=True)[:, 0, :] + probe.sum(axis=1)
                + probe.mean(axis=(1, 2), keepdims=True)[:, 0])
    np.testing.assert_allclose(_ort(proto, {"input": probe})[0], expected, rtol=1e-6)


@pytest.mark.parametrize("opset", [17, 21])
def test_an_extremum_over_every_axis_given_as_none_reduces_all_of_them(opset):
    """Extremum(axes=None) (what the op means by no axes) is a reduction over every axis."""
    proto = autograd.onnx.export(lambda x: reduction.Extremum(None, True, False)(x), [X],
                                 opset=opset)
    probe = RNG.standard_normal((3, 3, 4)).astype(np.float32)
    (y,) = _ort(proto, {"input": probe})
    assert y.shape == (1, 1, 1) and y.item() == probe.min()


def test_a_nameless_tensor_read_twice_is_one_initializer():
    """A constant Tensor of a function model (no dotted names) used by two ops is bound to
    its initializer once: the second op reads the same name, no copy of the values."""
    c = autograd.Tensor(data=np.linspace(-1.0, 1.0, 4).astype(np.float32), requires_grad=False)
    proto = autograd.onnx.export(lambda x: x * c + c, [X])
    assert len(proto.graph.initializer) == 1
    values = np.linspace(-1.0, 1.0, 4).astype(np.float32)
    np.testing.assert_allclose(_ort(proto, {"input": X})[0], X * values + values, rtol=1e-6)
