"""autograd/onnx/__init__.py: the package's wrappers pass every argument on (opset, names,
batch axis, path, device, domain), the missing-extra message is exact, and the lazy
attributes and the supported-type list are what they say. Each test is aimed at mutants of
the issue-22 full run that the round trips of test_export.py let through."""
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="the onnx extra is not installed")
onnxruntime = pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")

import autograd                                  # noqa: E402
import autograd.onnx                             # noqa: E402
from autograd import Tensor                      # noqa: E402
from tests.onnx.onnxruntime_run import run_onnxruntime as _ort   # noqa: E402


def test_without_onnx_require_onnx_says_exactly_which_extra_to_install(monkeypatch):
    """Every word of the message (an emptied or case-changed half survived the substring test)."""
    monkeypatch.setitem(sys.modules, "onnx", None)
    with pytest.raises(ImportError) as caught:
        autograd.onnx.require_onnx()
    assert str(caught.value) == ('autograd.onnx needs the onnx package: pip install -e ".[onnx]" '
                                 '(onnx, and onnxruntime to run exported models)')
    assert isinstance(caught.value.__cause__, ImportError)


def test_export_passes_opset_names_batch_axis_and_path_on(tmp_path):
    """Each argument of autograd.onnx.export reaches exporter.export (a dropped or None one
    changes the file)."""
    model = autograd.Sequential(autograd.Linear(3, 2))
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    path = tmp_path / "fixed.onnx"
    proto = autograd.onnx.export(model, [x], path, 17, ["features"], ["scores"], False)
    assert [entry.version for entry in proto.opset_import if entry.domain == ""] == [17]
    assert [value.name for value in proto.graph.input] == ["features"]
    assert [value.name for value in proto.graph.output] == ["scores"]
    dims = [d.dim_value for d in proto.graph.input[0].type.tensor_type.shape.dim]
    assert dims == [4, 3] and not proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param
    saved = onnx.load(str(path))
    assert saved.SerializeToString() == proto.SerializeToString()
    expected = model(Tensor(data=x, requires_grad=False)).to_numpy()
    np.testing.assert_allclose(_ort(saved, {"features": x})[0], expected, rtol=1e-5, atol=1e-6)


def test_export_defaults_are_opset_21_a_symbolic_batch_and_no_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    model = autograd.Sequential(autograd.Linear(3, 2))
    proto = autograd.onnx.export(model, [np.ones((2, 3), np.float32)])
    assert [entry.version for entry in proto.opset_import if entry.domain == ""] == [21]
    assert proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    assert proto.graph.output[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    assert list(tmp_path.iterdir()) == []


def test_to_onnx_passes_inputs_outputs_calls_and_options_on():
    """The SINGA-style wrapper: a traced forward from x to y, with its options."""
    from autograd.onnx.exporter import trace
    x = Tensor(data=np.array([[-1.0, 2.0, -3.0]], np.float32), requires_grad=False)
    with trace() as calls:
        y = autograd.relu(x) * 2.0
    proto = autograd.onnx.to_onnx([x], [y], calls, opset=18, input_names=["a"],
                                  output_names=["b"], graph_name="wrapped")
    assert proto.graph.name == "wrapped"
    assert [entry.version for entry in proto.opset_import if entry.domain == ""] == [18]
    probe = np.array([[1.0, -2.0, 3.0], [0.5, 0.0, -1.0]], np.float32)
    np.testing.assert_allclose(_ort(proto, {"a": probe})[0], np.maximum(probe, 0) * 2.0)


def test_register_importer_keys_the_handler_by_domain_and_type():
    from autograd.onnx.import_ops import IMPORTERS

    def handler(context, node, inputs):
        return context.tensor(inputs[0])

    try:
        assert autograd.onnx.register_importer("MutantProbe")(handler) is handler
        assert autograd.onnx.register_importer("MutantProbe", "com.example")(handler) is handler
        assert IMPORTERS[("", "MutantProbe")] is handler
        assert IMPORTERS[("com.example", "MutantProbe")] is handler
        listed = autograd.onnx.supported_node_types()
        assert listed.count("MutantProbe") == 1          # the custom domain's is not listed
    finally:
        IMPORTERS.pop(("", "MutantProbe"), None)
        IMPORTERS.pop(("com.example", "MutantProbe"), None)


def test_supported_node_types_lists_the_default_domain_sorted():
    from autograd.onnx.import_ops import IMPORTERS
    listed = autograd.onnx.supported_node_types()
    assert listed == sorted(op_type for domain, op_type in IMPORTERS if domain == "")
    assert {"Relu", "Conv", "LSTM", "Gemm"} <= set(listed) and listed == sorted(listed)


def test_register_exporter_adds_the_function_for_the_class():
    from autograd.onnx.export_ops import EXPORTERS

    class Probe(autograd.Operation):
        pass

    def exporter(context, op, inputs, outputs, tensors):
        pass

    try:
        assert autograd.onnx.register_exporter(Probe)(exporter) is exporter
        assert EXPORTERS[Probe] is exporter
    finally:
        EXPORTERS.pop(Probe, None)


def test_onnx_model_is_a_lazy_attribute_and_other_names_are_refused_by_name():
    from autograd.onnx.importer import OnnxModel
    assert autograd.onnx.OnnxModel is OnnxModel
    with pytest.raises(AttributeError) as caught:
        autograd.onnx.onnxmodel          # noqa: B018
    assert str(caught.value) == "module 'autograd.onnx' has no attribute 'onnxmodel'"
