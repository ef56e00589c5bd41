"""SINGA's ``sonnx`` as its programs use it (``from singa import sonnx`` under the hook), over
:mod:`autograd.onnx`:

- ``prepare(onnx_model, device='CPU')`` returns a :class:`SingaRep` whose
  ``run(inputs, last_layers=..., aux_output=())`` gives a list of Tensors;
- ``SONNXModel(onnx_model)`` is a ``Model`` to subclass (SINGA's examples/onnx programs do):
  its ``forward(*inputs, aux_output=(), last_layers=...)`` returns that list, and the graph's
  weights are its parameters, so a subclass can add layers and fine-tune (SINGA's
  examples/onnx/training);
- ``load`` and ``save`` are ``onnx.load`` and ``onnx.save``;
- ``to_onnx(inputs, y)`` exports a forward that has run (under the hook), as SINGA's does.

``last_layers`` keeps SINGA's meaning: the graph's nodes other than Constant, in order, are
SINGA's layers; ``last_layers=k`` runs them up to the k-th and returns its outputs, a negative
k standing for ``(k + 1) mod n`` (SINGA's formula: -2 drops the last node, and -1 is the first
node).

``onnx`` is imported when a function is called, not with this module.

>>> import numpy as np, autograd, onnx
>>> net = autograd.Linear(3, 2)
>>> proto = autograd.onnx.export(net, [np.ones((1, 3), np.float32)])
>>> rep = prepare(proto)
>>> y, = rep.run([np.ones((1, 3), np.float32)])
>>> np.allclose(y.to_numpy(), net(autograd.Tensor(data=np.ones((1, 3), np.float32))).to_numpy())
True
"""
from .. import device as _device
from ..layers.base import Layer
from ..onnx import load as _load_onnx, require_onnx
from ..tensor import Tensor
from .names import Model
from .provenance import calls_between

__all__ = ["prepare", "SingaRep", "SONNXModel", "load", "save", "to_onnx"]


def _device_for(device):
    if isinstance(device, _device.Device):
        return device
    if device is None or str(device).upper() == "CPU":
        return _device.get_default_device()
    if str(device).upper() in ("CUDA", "GPU"):
        return _device.gpu()
    raise ValueError(f"sonnx.prepare: device must be 'CPU', 'CUDA' or a Device, got {device!r}")


class SingaRep(Layer):
    """A prepared ONNX graph (SINGA's ``SingaRep``): ``run(inputs, **kwargs)``. Its
    ``model`` is the :class:`autograd.onnx.OnnxModel` that runs the nodes."""

    def __init__(self, onnx_model, device="CPU"):
        super().__init__()
        self.model = _load_onnx(onnx_model, device=_device_for(device))
        # SINGA's layers: the graph's nodes but its Constants
        self.layer_outputs = [[name for name in node.output if name]
                              for node in _graph(onnx_model).node if node.op_type != "Constant"]

    def output_names(self, last_layers=None, aux_output=()):
        """The names ``run`` returns for SINGA's ``last_layers`` and ``aux_output``."""
        count = len(self.layer_outputs)
        if last_layers is None or last_layers == count - 1:
            names = list(self.model.output_names)
        else:
            index = last_layers if last_layers >= 0 else (last_layers + 1) % count
            if not 0 <= index < count:
                raise ValueError(f"sonnx: last_layers={last_layers} is outside the graph's "
                                 f"{count} nodes")
            names = list(self.layer_outputs[index])
        return names + [name for name in aux_output if name not in names]

    def run(self, x, **kwargs):
        """The list of output Tensors for ``x``, a list of arrays or Tensors (the graph's
        inputs in order); ``last_layers`` and ``aux_output`` as SINGA's."""
        names = self.output_names(kwargs.get("last_layers"), kwargs.get("aux_output", ()))
        return list(self.model.values_of(tuple(x), names))

    def forward(self, *x, **kwargs):
        return self.run(x, **kwargs)


def _graph(onnx_model):
    if hasattr(onnx_model, "graph"):
        return onnx_model.graph
    from ..onnx.importer import read_model
    return read_model(onnx_model).graph


def prepare(model, device="CPU", **kwargs):
    """SINGA's ``sonnx.prepare``: a :class:`SingaRep` for ``model`` (an ``onnx.ModelProto`` or
    a path)."""
    return SingaRep(model, device)


class SONNXModel(Model):
    """SINGA's ``SONNXModel(onnx_model)``: a Model over an ONNX graph, to subclass; its
    ``forward(*inputs, aux_output=(), last_layers=...)`` returns a list of Tensors."""

    def __init__(self, onnx_model):
        super().__init__()
        self.sg_ir = prepare(onnx_model)

    def forward(self, *input, aux_output=(), **kwargs):
        return self.sg_ir.run(input, aux_output=aux_output, **kwargs)


def load(path, *args, **kwargs):
    """``onnx.load``."""
    return require_onnx().load(path, *args, **kwargs)


def save(proto, path, *args, **kwargs):
    """``onnx.save``."""
    return require_onnx().save(proto, path, *args, **kwargs)


def to_onnx(inputs, y, model_name="sonnx"):
    """SINGA's ``sonnx.to_onnx(inputs, y)``: the ``onnx.ModelProto`` of the forward that already
    ran from ``inputs`` (a list; its Tensors are the graph's inputs, in order, other items are
    ignored) to ``y`` (a list of output Tensors, or one Tensor), walked back from ``y`` as SINGA
    does. Parameters and other Tensors no op made become initializers holding their values now;
    shapes are the forward's (SINGA's). It needs the forward to have run while the SINGA hook
    was installed (:mod:`.provenance` notes each op then); ``autograd.onnx.export(model,
    inputs)`` exports from plain autograd."""
    onnx = require_onnx()
    from ..onnx.exporter import to_onnx as build
    graph_inputs = [t for t in inputs if isinstance(t, Tensor)]
    outputs = list(y) if isinstance(y, (list, tuple)) else [y]
    calls, output_values = calls_between(graph_inputs, outputs)
    proto = build(graph_inputs, output_values, calls, dynamic_batch=False, graph_name=model_name)
    onnx.checker.check_model(proto, full_check=True)
    return proto
