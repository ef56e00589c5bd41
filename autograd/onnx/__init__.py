"""ONNX: import real ONNX networks to run and fine-tune with this package's operations.

``autograd.onnx.load(path_or_model)`` returns an :class:`OnnxModel` (a ``Model``, hence a
``Layer``) whose forward runs the graph node by node with the project's own operations, so
gradients flow: float initializers become parameters, BatchNorm statistics buffers, and
``train()`` / ``eval()`` switch BatchNorm and Dropout. The mapping from ONNX node types to
operations lives in :mod:`autograd.onnx.import_ops`; :func:`register_importer` adds a node type.

The ``onnx`` package is an optional extra (``pip install -e ".[onnx]"``); without it these
functions raise an ImportError that names the extra, and the rest of autograd works.
"""
__all__ = ["export", "to_onnx", "load", "OnnxModel", "register_exporter", "register_importer",
           "supported_node_types", "require_onnx"]


def require_onnx():
    """The ``onnx`` module, or an ImportError naming the extra to install."""
    try:
        import onnx
    except ImportError as error:
        raise ImportError("autograd.onnx needs the onnx package: pip install -e \".[onnx]\" "
                          "(onnx, and onnxruntime to run exported models)") from error
    return onnx


def load(model, device=None):
    """An :class:`OnnxModel` for ``model``: a path to a .onnx file, bytes, or an
    ``onnx.ModelProto``. Parameters go to ``device`` (default: the default device)."""
    from .importer import OnnxModel, read_model
    return OnnxModel(read_model(model), device=device)


def export(model, example_inputs, path=None, opset=21, input_names=None, output_names=None,
           dynamic_batch=True):
    """Trace ``model`` on ``example_inputs`` in eval mode and return its ``onnx.ModelProto``
    (written to ``path`` when given); see :func:`autograd.onnx.export.export`."""
    from .exporter import export as export_model
    return export_model(model, example_inputs, path, opset, input_names, output_names,
                        dynamic_batch)


def to_onnx(inputs, outputs, calls, **options):
    """SINGA's ``sonnx.to_onnx``: the ModelProto of traced ``calls`` from inputs to outputs."""
    from .exporter import to_onnx as build
    return build(inputs, outputs, calls, **options)


def register_exporter(operation_class):
    """Decorator: ``function(context, op, input_names, output_names, inputs)`` appends the
    ONNX nodes of ``operation_class`` (see :mod:`autograd.onnx.export_ops`)."""
    require_onnx()
    from .export_ops import register_exporter as register
    return register(operation_class)


def register_importer(op_type, domain=""):
    """Decorator: ``function(context, node, inputs) -> output or tuple of outputs`` runs ONNX
    nodes of ``op_type`` (see :mod:`autograd.onnx.import_ops` for the context's helpers)."""
    from .import_ops import register
    return register(op_type, domain)


def supported_node_types():
    """The ONNX node types :func:`load` can run."""
    from .import_ops import IMPORTERS
    return sorted(op_type for domain, op_type in IMPORTERS if domain == "")


def __getattr__(name):
    if name == "OnnxModel":
        from .importer import OnnxModel
        return OnnxModel
    raise AttributeError(f"module 'autograd.onnx' has no attribute {name!r}")
