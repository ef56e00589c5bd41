"""summary(model, input_shape): a table of each layer's output shape and parameter count.

>>> import autograd
>>> text = autograd.summary(autograd.Sequential(autograd.Linear(784, 10), autograd.Softmax()),
...                         (32, 784))
Layer  Type     Output shape  Params
------------------------------------
0      Linear   (32, 10)        7850
1      Softmax  (32, 10)           0
====================================
Total params: 7,850
"""
import numpy as np

from .. import recording
from ..device import get_default_device
from ..tensor import Tensor
from .base import Layer, call_hooks, shape_text
from .container import Sequential

__all__ = ["summary"]


def summary(model, input_shape, dtype=np.float32, print_fn=print):
    """Print (with ``print_fn``; None prints nothing) and return a table of the layers of
    ``model`` with their output shapes and parameter counts, and the total.

    ``input_shape`` includes the batch dimension, e.g. ``(1, 1, 28, 28)``. When every layer
    can infer its output shape (Sequentials of built-in layers), nothing is computed and the
    batch size may be None. Otherwise (a model with its own ``forward``) one forward pass runs
    on zeros of ``input_shape`` in evaluation mode without recording, and the table lists the
    layer calls in the order they happen; train/eval flags are restored afterwards (a lazy
    layer does get built by that pass).
    """
    if not isinstance(model, Layer):
        raise TypeError(f"summary: expected a Layer, got {type(model).__name__}")
    input_shape = tuple(input_shape)
    try:
        rows = _inferred_rows(model, "", input_shape)
        total = model.count_parameters(input_shape)
    except NotImplementedError:
        rows = _traced_rows(model, input_shape, dtype)
        total = model.count_parameters()
    text = _table(rows, total)
    if print_fn is not None:
        print_fn(text)
    return text


def _label(layer):
    return type(layer).__name__


def _inferred_rows(layer, name, shape):
    """Rows for ``layer`` (dotted ``name``, "" for the model itself) by shape inference."""
    if isinstance(layer, Sequential):
        rows = []
        for child_name, child in layer._layer_items():
            child_rows = _inferred_rows(child, f"{name}.{child_name}" if name else child_name,
                                        shape)
            rows += child_rows
            shape = child_rows[-1][2] if child_rows else shape
        return rows
    out = tuple(layer.output_shape(shape))
    return [(name or _label(layer), _label(layer), out, layer.count_parameters(shape))]


def _traced_rows(model, input_shape, dtype):
    if any(not isinstance(n, (int, np.integer)) for n in input_shape):
        raise ValueError(f"summary: {_label(model)} has its own forward, so summary runs it and "
                         f"needs a concrete input shape, got {input_shape}")
    names = {id(layer): name for name, layer in model.named_layers()}
    layers = [model] + [layer for _, layer in model.named_layers()]
    modes = [layer.training for layer in layers]
    parameters = model.parameters()
    device = parameters[0].device if parameters else get_default_device()
    rows = []

    def record(layer, output):
        if next(layer._children(), None) is None and layer is not model:
            shape = tuple(output.shape) if hasattr(output, "shape") else "?"
            rows.append((names.get(id(layer), "?"), _label(layer), shape,
                         layer.count_parameters()))

    for layer in layers:        # not model.eval(): a Model's eval() also flips autograd.training
        layer.training = False
    global_training = recording.config.training
    previous = call_hooks.active
    call_hooks.active = previous + (record,)
    try:
        with recording.no_grad():
            output = model(Tensor(shape=input_shape, dtype=dtype, device=device,
                                  requires_grad=False))
    finally:
        call_hooks.active = previous
        recording.config.training = global_training
        for layer, mode in zip(layers, modes):
            layer.training = mode
    if not rows:
        rows.append((_label(model), _label(model), tuple(output.shape), model.count_parameters()))
    return rows


def _table(rows, total):
    header = ("Layer", "Type", "Output shape", "Params")
    body = [(name, kind, shape_text(shape) if isinstance(shape, tuple) else str(shape),
             str(count)) for name, kind, shape, count in rows]
    widths = [max(len(r[i]) for r in [header] + body) for i in range(4)]

    def line(row):
        return "  ".join([row[0].ljust(widths[0]), row[1].ljust(widths[1]),
                          row[2].ljust(widths[2]), row[3].rjust(widths[3])]).rstrip()

    rule = sum(widths) + 6
    lines = [line(header), "-" * rule] + [line(r) for r in body]
    lines += ["=" * rule, f"Total params: {total:,}"]
    return "\n".join(lines)
