"""RNN, LSTM and GRU layers -> one ONNX RNN / LSTM / GRU node each (part of the export table of
:mod:`autograd.onnx.export_ops`; import_recurrent.py is the other direction).

The layers follow PyTorch's equations, which are ONNX's with the gate blocks in another order
(LSTM: ours i, f, g, o, ONNX i, o, f, c; GRU: ours r, z, n, ONNX z, r, h) and, for GRU,
``linear_before_reset=1`` (r multiplies h W_hn + b_hn). Our weights are (in, G * hidden), ONNX's
(directions, G * hidden, in); B is ONNX's [Wb, Rb]. The export traces the layer as one call
(exporter.trace records a Layer whose class has an exporter whole, not the operations inside).
"""
import numpy as np

from ..layers import recurrent
from .export_ops import register_exporter

__all__ = []

# for each layer class: the ONNX node, and our gate blocks in ONNX's order
_KINDS = {recurrent.LSTM: ("LSTM", (0, 3, 1, 2)), recurrent.GRU: ("GRU", (1, 0, 2)),
          recurrent.RNN: ("RNN", (0,))}


def _onnx_blocks(matrix, order, hidden):
    """(G * hidden, ...) rows of ``matrix`` in ONNX's gate order, with a directions axis."""
    blocks = [matrix[k * hidden:(k + 1) * hidden] for k in order]
    return np.concatenate(blocks, axis=0)[None]


def _export_recurrent(context, layer, inputs, outputs, tensors):
    op_type, order = _KINDS[type(layer)]
    hidden, count = layer.hidden_size, layer.gate_count
    host = [np.asarray(p.data.get() if hasattr(p.data, "get") else p.data)
            for p in (layer.W_ih, layer.W_hh)]
    biases = ([np.asarray(p.data.get() if hasattr(p.data, "get") else p.data)
               for p in (layer.b_ih, layer.b_hh)] if layer.bias else
              [np.zeros(count * hidden, host[0].dtype)] * 2)
    dotted = context.parameter_names.get(id(layer.W_ih.data))
    # without dotted names (a function, to_onnx) the layer's own first output names it
    prefix = dotted.rsplit(".", 1)[0] if dotted is not None else outputs[0]
    weights = [context.constant(_onnx_blocks(host[0].T, order, hidden), f"{prefix}.onnx_W"),
               context.constant(_onnx_blocks(host[1].T, order, hidden), f"{prefix}.onnx_R"),
               context.constant(np.concatenate([_onnx_blocks(b, order, hidden)[0]
                                                for b in biases])[None], f"{prefix}.onnx_B")]
    x = inputs[0]
    if layer.batch_first:
        context.node("Transpose", [x], [outputs[0] + "_time_major"], perm=[1, 0, 2])
        x = outputs[0] + "_time_major"      # this layer's own: others may read the same x
    axis0 = context.constant(np.asarray([0], np.int64))
    states = []
    for k, name in enumerate(inputs[1:1 + layer.state_count]):
        context.node("Unsqueeze", [name, axis0], [f"{outputs[0]}_initial_{k}"])
        states.append(f"{outputs[0]}_initial_{k}")
    node_inputs = [x] + weights + [""] + states
    raw = [f"{outputs[0]}_{part}" for part in ("Y", "Y_h", "Y_c")[:1 + layer.state_count]]
    attributes = {"hidden_size": hidden}
    if op_type == "GRU":
        attributes["linear_before_reset"] = 1
    if op_type == "RNN":
        attributes["activations"] = ["Tanh" if layer.nonlinearity == "tanh" else "Relu"]
    context.node(op_type, node_inputs, raw, **attributes)
    # outputs: (output, h) or (output, h, c), as the layer's (output, state) flattened
    if layer.return_sequences:
        squeezed = outputs[0] + ("_steps" if layer.batch_first else "")
        context.node("Squeeze", [raw[0], context.constant(np.asarray([1], np.int64))],
                     [squeezed])
        if layer.batch_first:
            context.node("Transpose", [squeezed], [outputs[0]], perm=[1, 0, 2])
    else:
        context.node("Squeeze", [raw[1], axis0], [outputs[0]])
    for name, state in zip(outputs[1:], raw[1:]):
        context.node("Squeeze", [state, axis0], [name])


for _class in _KINDS:
    register_exporter(_class)(_export_recurrent)


