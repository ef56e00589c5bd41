"""Export: run one forward pass in eval mode, record every Operation called, and write the
ONNX nodes of the operations the outputs depend on (the table is export_ops.EXPORTERS).

Parameters and buffers become initializers named by their dotted names; the inputs are named
``input`` (``input_1``, ...) unless named, the outputs ``output`` (...); the batch axis is
symbolic (``batch``), so the exported model runs at any batch size.
"""
import contextlib
import threading

import numpy as np

from .. import recording
from ..layers.base import Layer
from ..operations.base import Operation
from ..tensor import Tensor
from . import import_inference, require_onnx

__all__ = ["export", "to_onnx", "trace"]

_lock = threading.Lock()


@contextlib.contextmanager
def trace():
    """Record ``(operation, input Tensors, output Tensors)`` of every Operation called inside
    the block (in any thread), in order: a list filled as the block runs. A Layer whose class
    has an exporter (RNN, LSTM, GRU: one ONNX node each) is recorded whole, as
    ``(layer, its Tensor arguments, its Tensor outputs flattened)``, and the operations inside
    it are not. The recording hooks are removed when the block ends."""
    from .export_ops import has_exporter
    calls = []
    inside = threading.local()
    original, original_layer = Operation.__call__, Layer.__call__

    def traced(op, *inputs):
        outputs = original(op, *inputs)
        if not getattr(inside, "layer", None):
            calls.append((op, inputs, outputs if isinstance(outputs, tuple) else (outputs,)))
        return outputs

    def traced_layer(layer, *args, **kwargs):
        if getattr(inside, "layer", None) or not has_exporter(layer):
            return original_layer(layer, *args, **kwargs)
        inside.layer = layer
        try:
            output = original_layer(layer, *args, **kwargs)
        finally:
            inside.layer = None
        calls.append((layer, tuple(_flat_tensors((args, kwargs))), tuple(_flat_tensors(output))))
        return output

    with _lock, import_inference.unfused():
        Operation.__call__, Layer.__call__ = traced, traced_layer
        try:
            yield calls
        finally:
            Operation.__call__, Layer.__call__ = original, original_layer


def _flat_tensors(value):
    """The Tensors in nested tuples, lists and dicts, in order."""
    if isinstance(value, Tensor):
        yield value
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _flat_tensors(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _flat_tensors(item)


def export(model, example_inputs, path=None, opset=21, input_names=None, output_names=None,
           dynamic_batch=True):
    """The ``onnx.ModelProto`` of ``model`` (a Layer, or any callable on Tensors) traced on
    ``example_inputs`` (a list of Tensors or arrays) in eval mode; also written to ``path``
    when given. ``onnx.checker.check_model(..., full_check=True)`` passes on the result."""
    onnx = require_onnx()
    inputs = [x if isinstance(x, Tensor) else Tensor(data=np.asarray(x), requires_grad=False)
              for x in example_inputs]
    training, process_training = getattr(model, "training", None), recording.package.training
    if hasattr(model, "eval"):
        model.eval()
    try:
        with recording.no_grad(), trace() as calls:
            outputs = model(*inputs)
    finally:
        if hasattr(model, "train") and training is not None:
            model.train(training)
        recording.package.training = process_training     # Model.eval() also switched it
    outputs = outputs if isinstance(outputs, (tuple, list)) else (outputs,)
    names = _parameter_names(model)
    proto = to_onnx(inputs, list(outputs), calls=calls, names=names, opset=opset,
                    input_names=input_names, output_names=output_names,
                    dynamic_batch=dynamic_batch)
    onnx.checker.check_model(proto, full_check=True)
    if path is not None:
        onnx.save(proto, str(path))
    return proto


def _parameter_names(model):
    """{id of a parameter's or buffer's array: dotted name}."""
    names = {}
    if hasattr(model, "_named_tensors"):
        for name, tensor, _ in model._named_tensors():
            names[id(tensor.data)] = name
    return names


def to_onnx(inputs, outputs, calls, names=None, opset=21, input_names=None, output_names=None,
            dynamic_batch=True, graph_name="autograd"):
    """SINGA's ``sonnx.to_onnx``: the ModelProto of the ``calls`` (from :func:`trace`) that
    lead from ``inputs`` to ``outputs`` (Tensors)."""
    onnx = require_onnx()
    from onnx import helper
    from .export_ops import ExportContext, exporter_for
    context = ExportContext(names or {}, opset)
    input_names = input_names or (["input"] if len(inputs) == 1 else
                                  [f"input_{k}" for k in range(len(inputs))])
    output_names = output_names or (["output"] if len(outputs) == 1 else
                                    [f"output_{k}" for k in range(len(outputs))])
    for tensor, name in zip(inputs, input_names):
        context.bind(tensor, name)
    producer = {}
    for call in calls:
        for output in call[2]:
            producer[id(output)] = call
    needed = _needed_calls(outputs, producer, {id(t) for t in inputs})
    for op, op_inputs, op_outputs in calls:
        if id(op) in needed:
            exporter_for(op)(context, op, [context.name_of(t) for t in op_inputs],
                             [context.new_name(t, type(op).__name__) for t in op_outputs],
                             op_inputs)
    for tensor, name in zip(outputs, output_names):
        context.nodes.append(helper.make_node("Identity", [context.name_of(tensor)], [name]))
    batch = "batch" if dynamic_batch else None
    graph_proto = helper.make_graph(
        context.nodes, graph_name,
        [_value_info(name, t, batch) for name, t in zip(input_names, inputs)],
        [_value_info(name, t, batch) for name, t in zip(output_names, outputs)],
        initializer=context.initializers)
    model = helper.make_model(graph_proto, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="autograd")
    return onnx.shape_inference.infer_shapes(model)


def _needed_calls(outputs, producer, input_ids):
    """The ids of the operations the outputs depend on."""
    needed, stack, seen = set(), list(outputs), set()
    while stack:
        tensor = stack.pop()
        if id(tensor) in seen or id(tensor) in input_ids:
            continue
        seen.add(id(tensor))
        call = producer.get(id(tensor))
        if call is not None:
            needed.add(id(call[0]))
            stack.extend(call[1])
    return needed


def _value_info(name, tensor, batch):
    from onnx import helper
    shape = list(tensor.shape)
    if batch and shape:
        shape[0] = batch
    return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(tensor.dtype),
                                         shape)
