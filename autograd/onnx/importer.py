"""OnnxModel: an ONNX graph run node by node with the project's operations.

Values flow as Tensors (computed on the tape, so gradients reach the parameters) or as NumPy
arrays: constants, integer initializers, and whatever is computed from shapes alone (Shape ->
Gather -> Concat -> Reshape), which the node handlers evaluate with NumPy and never record.
"""
import numpy as np

from .. import recording
from ..device import get_default_device
from ..layers.base import Layer
from ..model import Model
from ..tensor import Tensor
from ..backend import native
from . import import_fold, import_inference, import_ops, import_program, require_onnx
from .import_inference import layout_of

__all__ = ["OnnxModel", "read_model"]

_NOT_FOLDED = {"Dropout", "BatchNormalization", "RandomNormal", "RandomUniform",
               "RandomNormalLike", "RandomUniformLike", "Multinomial", "Bernoulli"}

_OLDEST_OPSET = 6        # opset 6: the binary ops' broadcast/axis attributes are handled


def read_model(model):
    """An ``onnx.ModelProto`` from a path, bytes or a ModelProto."""
    onnx = require_onnx()
    if isinstance(model, onnx.ModelProto):
        return model
    if isinstance(model, (bytes, bytearray)):
        return onnx.load_model_from_string(bytes(model))
    return onnx.load(str(model))


class OnnxModel(Model):
    """A Model whose forward runs an ONNX graph. ``net(x1, x2, ...)`` takes the graph's inputs
    in order (Tensors or arrays) and returns its output, or a tuple of outputs.

    ``weights`` holds the float initializers as parameters (``stores_grad=True``); the
    initializers that a node reads as a shape, indices, axes or bounds stay constants, and
    BatchNormalization's running statistics are buffers. ``train()`` / ``eval()`` switch
    BatchNorm (batch statistics, updating the buffers) and Dropout.
    """

    def __init__(self, model_proto, device=None):
        super().__init__()
        onnx = require_onnx()
        from onnx import numpy_helper
        device = device or get_default_device()
        graph_proto = model_proto.graph
        # "ai.onnx" is the default domain's other name
        self.opset = {"" if entry.domain in ("", "ai.onnx") else entry.domain: entry.version
                      for entry in model_proto.opset_import}
        newest = onnx.defs.onnx_opset_version()
        version = self.opset.get("", newest)
        if not _OLDEST_OPSET <= version <= newest:
            raise ValueError(f"autograd.onnx.load: opset {version} is not supported (opsets "
                             f"{_OLDEST_OPSET} to {newest}, that of the installed onnx, are)")
        self.nodes = [import_ops.ImportedNode(node) for node in graph_proto.node]
        for node in self.nodes:
            import_ops.handler_for(node)        # unsupported nodes fail at load
        static = import_ops.static_input_names(self.nodes)
        statistics = import_ops.statistics_input_names(self.nodes)
        self.constants = {}
        self.weights = {}
        self._buffers_by_name = {}
        for initializer in graph_proto.initializer:
            array = numpy_helper.to_array(initializer)
            name = initializer.name
            if array.dtype.kind != "f" or name in static:
                self.constants[name] = array
            elif name in statistics:
                tensor = Tensor(data=np.array(array), device=device, requires_grad=False)
                buffer_name = f"buffer_{len(self._buffers_by_name)}"
                self._buffers_by_name[name] = self.register_buffer(buffer_name, tensor)
            else:
                self.weights[name] = Tensor(data=np.array(array), device=device,
                                            stores_grad=True)
        produced = {name for node in self.nodes for name in node.output}
        # Inputs that are initializers (old exporters list them) are not inputs; neither are
        # inputs that a node overwrites (some old graphs declare their weights so).
        self.declared_input_names = [value.name for value in graph_proto.input
                                     if value.name not in self.constants and value.name not in
                                     self.weights and value.name not in self._buffers_by_name]
        self.input_names = [name for name in self.declared_input_names if name not in produced]
        self.nodes = self._fold_constants()
        self.output_names = [value.name for value in graph_proto.output]
        self.device = device
        # eval mode runs Conv + BatchNormalization pairs as one Conv (import_fold.py)
        static = set(self.constants) | set(self.weights) | set(self._buffers_by_name)
        self._folded_pairs = import_fold.foldable_pairs(self.nodes, static,
                                                        set(self.output_names))
        self._steps = self._steps_of(self.nodes)
        self._eval_steps = self._steps_of(import_fold.eval_nodes(self.nodes,
                                                                 self._folded_pairs))
        self._folded = None          # the folded parameters kept for passes that record nothing
        self._programs = {}          # the inputs' layouts and weights -> import_program.Program
        # eval passes that record nothing also fuse Conv + Relu and Concats of convolutions
        self._inference_steps = import_inference.inference_steps(self._eval_steps,
                                                                 self.output_names)
        Layer.train(self, False)

    def _steps_of(self, nodes):
        return [(import_ops.handler_for(node), node) for node in nodes]

    def _fold_constants(self):
        """Run, once at load, every node whose inputs are all constants (Constant,
        ConstantOfShape, shape arithmetic on initializers, ...): its outputs become constants
        and the node is dropped, as onnxruntime's constant folding does. Nodes that draw
        random numbers or depend on the train/eval mode stay."""
        context = import_ops.Context(self.opset, False, get_default_device())
        remaining = []
        for node in self.nodes:
            names = [name for name in node.input if name]
            if node.op_type in _NOT_FOLDED or not all(n in self.constants for n in names):
                remaining.append(node)
                continue
            inputs = [self.constants[name] if name else None for name in node.input]
            outputs = import_ops.handler_for(node)(context, node, inputs)
            outputs = outputs if isinstance(outputs, tuple) else (outputs,)
            for name, value in zip(node.output, outputs):
                if name:
                    self.constants[name] = value.to_numpy() if isinstance(value, Tensor) \
                        else np.asarray(value)
        return remaining

    def __call__(self, *inputs):
        return Layer.__call__(self, *inputs)

    def train(self, mode=True):
        """Training mode for BatchNorm and Dropout in this graph only: unlike SINGA's
        ``Model.train``, ``autograd.training`` (the whole process's switch) is left as it is.
        Either switch drops the folded Conv + BatchNorm parameters and the traced inference
        programs: the next eval pass folds the current ones again."""
        self._forget_folded()
        return Layer.train(self, mode)

    def forward(self, *inputs):
        results = self.values_of(inputs, self.output_names)
        return results[0] if len(results) == 1 else results

    def values_of(self, inputs, names):
        """The tuple of the values called ``names`` (graph outputs or any node's outputs) for
        the graph's ``inputs``: the nodes run in order until every one of them is known."""
        if len(inputs) != len(self.input_names):
            raise ValueError(f"OnnxModel: the graph takes {len(self.input_names)} input(s) "
                             f"{self.input_names}, got {len(inputs)}")
        context = import_ops.Context(self.opset, self.is_training, self.device)
        everything = list(names) == list(self.output_names)
        if (everything and not context.training and not recording.is_recording()
                and import_inference.applies()):
            return self._inference_pass(inputs, context)
        values = self._static_values()
        values.update(zip(self.input_names, (self._input_tensor(value) for value in inputs)))
        steps = self._steps
        if not context.training and self._folded_pairs and everything:
            # the folded graph skips each BatchNormalization: only for the graph's outputs
            steps = self._eval_steps
            values.update(self._folded_parameters(values, context))
        wanted = set(names) - set(values)
        for handler, node in steps:
            if not wanted:
                break
            outputs = handler(context, node, _arguments(values, node))
            if not isinstance(outputs, tuple):
                outputs = (outputs,)
            for name, value in zip(node.output, outputs):
                if name:
                    values[name] = value
                    wanted.discard(name)
        unknown = [name for name in names if name not in values]
        if unknown:
            raise ValueError(f"OnnxModel: no node or input produces {unknown}")
        return tuple(_as_tensor(values[name], self.device) for name in names)

    def _inference_pass(self, inputs, context):
        """An eval pass that records nothing, of the graph's outputs: the program traced for
        these inputs' layouts (import_program.py), traced on the first such pass. NumPy inputs
        on a CPU model are read in place, not copied; an output that would share their memory
        (an Identity graph) is a copy."""
        tensors = [self._input_tensor(value, copy=False) for value in inputs]
        key = (tuple(layout_of(tensor.data) for tensor in tensors), native.enabled(),
               self._sources())
        program = self._programs.get(key)
        if program is not None:
            outputs = program(tensors)
        else:
            values = self._static_values()
            if self._folded_pairs:
                values.update(self._folded_parameters(values, context))
            values.update(zip(self.input_names, tensors))
            outputs, program = import_program.trace(self._inference_steps, values,
                                                    self.input_names, self.output_names,
                                                    context, _arguments)
            if len(outputs) != len(self.output_names):
                unknown = [name for name in self.output_names if name not in values]
                raise ValueError(f"OnnxModel: no node or input produces {unknown}")
            kept = list(self._programs)     # a copy: another thread may run a pass meanwhile
            for oldest in kept[:max(len(kept) - _MOST_PROGRAMS + 1, 0)]:
                self._programs.pop(oldest, None)
            self._programs[key] = program
        inputs = [tensor.data for tensor in tensors]
        return tuple(_as_tensor(_unshared(value, inputs), self.device) for value in outputs)

    def _static_values(self):
        values = dict(self.constants)
        values.update(self.weights)
        values.update(self._buffers_by_name)
        return values

    def _input_tensor(self, value, copy=True):
        if isinstance(value, Tensor):
            return value
        if not copy and type(value) is np.ndarray and self.device.kind == "cpu":
            return Tensor.from_operation(value, self.device)
        return Tensor(data=np.asarray(value) if not hasattr(value, "shape") else value,
                      device=self.device, requires_grad=False)

    def _sources(self):
        """The arrays of the weights and buffers, by identity: a replaced one (a state loaded,
        a move to another device) changes it."""
        return tuple(id(tensor.data) for tensors in (self.weights, self._buffers_by_name)
                     for tensor in tensors.values())

    def _folded_parameters(self, values, context):
        """The folded Conv + BatchNorm weights and biases. Computed on the tape in every pass
        that records (gradients reach the unfolded parameters; an optimizer may then change
        them, so the kept ones are dropped), else kept from the first pass after
        ``eval()``/``train()`` or after a parameter's array was replaced. Parameters changed in
        place by hand in eval mode need ``net.eval()`` again."""
        if recording.is_recording():
            self._forget_folded()
            return import_fold.folded_values(self._folded_pairs, values, context)
        sources = self._sources()
        if self._folded is None or self._folded[0] != sources:
            self._forget_folded()
            self._folded = (sources, import_fold.folded_values(self._folded_pairs, values,
                                                               context))
        return self._folded[1]

    def _forget_folded(self):
        """Drop the kept folded parameters and the programs that hold them as constants."""
        self._folded = None
        self._programs.clear()

    @property
    def is_training(self):
        return bool(self.training) and recording.config.training


_MOST_PROGRAMS = 8        # inference programs kept (a model sees a few batch sizes)


def _arguments(values, node):
    """The values a step reads (None for an omitted input), or a clear error naming what
    nothing produced."""
    arguments = [values.get(name) if name else None for name in node.input]
    if any(argument is None for argument in arguments):
        missing = [name for name, value in zip(node.input, arguments) if name and value is None]
        if missing:
            raise ValueError(f"OnnxModel: node {node.name or node.op_type} ({node.op_type}) "
                             f"reads {missing}, which nothing produced")
    return arguments


def _unshared(value, inputs):
    """``value``, or a copy where its array may share memory with one of the inputs'."""
    data = value.data if isinstance(value, Tensor) else value
    if type(data) is np.ndarray and any(type(x) is np.ndarray and np.may_share_memory(data, x)
                                        for x in inputs):
        copied = data.copy()
        return value.new_output(copied) if isinstance(value, Tensor) else copied
    return value


def _as_tensor(value, device):
    if isinstance(value, Tensor):
        return value
    return Tensor(data=np.asarray(value), device=device, requires_grad=False)
