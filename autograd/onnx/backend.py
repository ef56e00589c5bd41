"""An ``onnx.backend.base.Backend`` over the importer, so that ONNX's own conformance suite
(``onnx.backend.test.BackendTest``, shipped inside the onnx wheel) can run against it.

>>> import numpy as np
>>> from onnx import helper, TensorProto
>>> node = helper.make_node("Relu", ["x"], ["y"])
>>> graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
...     [2])], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
>>> AutogradBackend.run_model(helper.make_model(graph), [np.array([-1.0, 2.0], np.float32)])
(array([0., 2.], dtype=float32),)
"""
from onnx.backend.base import Backend, BackendRep

from . import load

__all__ = ["AutogradBackend"]


class AutogradRep(BackendRep):
    """A prepared model: ``run(inputs)`` gives a tuple of NumPy arrays."""

    def __init__(self, model):
        self.model = model

    def run(self, inputs, **kwargs):
        names = self.model.input_names
        if isinstance(inputs, dict):
            inputs = [inputs[name] for name in names]
        elif len(inputs) != len(names) and len(inputs) == len(self.model.declared_input_names):
            given = dict(zip(self.model.declared_input_names, inputs))
            inputs = [given[name] for name in names]       # drop what the graph overwrites
        outputs = self.model(*inputs)
        if not isinstance(outputs, tuple):
            outputs = (outputs,)
        return tuple(output.to_numpy() for output in outputs)


class AutogradBackend(Backend):
    """Runs ONNX models on the CPU with autograd's operations."""

    @classmethod
    def prepare(cls, model, device="CPU", **kwargs):
        super().prepare(model, device, **kwargs)
        return AutogradRep(load(model))

    @classmethod
    def run_model(cls, model, inputs, device="CPU", **kwargs):
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def supports_device(cls, device):
        return device == "CPU"
