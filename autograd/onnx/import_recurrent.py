"""ONNX RNN / LSTM / GRU nodes -> the loop over time in the project's operations (part of the
import table of :mod:`autograd.onnx.import_ops`; export_recurrent.py is the other direction).

Supported: forward, reverse and bidirectional, both layouts, optional B and initial states, no
sequence_lens shorter than the sequence, LSTM peepholes (P, a parameter like W and R), no clip
or input_forget, the default activations (RNN: Tanh or Relu), GRU with either
linear_before_reset; anything else is a clear error naming the node.
"""
import numpy as np

import autograd as ops
from .import_ops import register, attribute, _static

__all__ = []


def _import_recurrent(op_type):
    """Every value stays (steps or 1, batch, ...) and a zero initial state is left out of the
    sums rather than built: no shape here names the batch size, so exporting an imported
    network keeps its batch axis symbolic. A reverse direction runs the steps backwards;
    bidirectional runs both and stacks them on the directions axis."""
    def run(context, node, inputs):
        x = context.tensor(inputs[0])
        W, R = context.tensor(inputs[1], x), context.tensor(inputs[2], x)
        _check_supported(node, op_type, inputs, x)
        layout = attribute(node, "layout", 0)
        if layout:
            x = ops.transpose(x, (1, 0, 2))
        direction = attribute(node, "direction", "forward")
        count = W.shape[0]
        parts = {"W": _per_direction(W, count), "R": _per_direction(R, count)}
        for name, index in (("B", 3), ("h", 5), ("c", 6), ("P", 7)):
            value = _static(inputs, index)
            if value is None:                  # omitted, or past RNN's and GRU's six inputs
                parts[name] = [None] * count
                continue
            value = context.tensor(value, x)
            if layout and name in ("h", "c"):          # (batch, directions, H) states
                value = ops.transpose(value, (1, 0, 2))
            parts[name] = _per_direction(value, count)
        results = []
        for d in range(count):
            backwards = direction == "reverse" or d == 1
            state = [parts["h"][d]] + ([parts["c"][d]] if op_type == "LSTM" else [])
            results.append(_one_direction(node, op_type, x, parts["W"][d], parts["R"][d],
                                          parts["B"][d], state, backwards, parts["P"][d]))
        y = results[0][0] if count == 1 else ops.cat([r[0] for r in results], 1)
        finals = [results[0][k] if count == 1 else ops.cat([r[k] for r in results], 0)
                  for k in range(1, len(results[0]))]
        if layout:
            y = ops.transpose(y, (2, 0, 1, 3))
            finals = [ops.transpose(s, (1, 0, 2)) for s in finals]
        return (y, *finals)
    return run


def _per_direction(value, count):
    """(directions, ...) -> one (1, ...) piece per direction."""
    return ops.split(value, 0, count) if count > 1 else [value]


def _one_direction(node, op_type, x, W, R, B, state, backwards, P=None):
    """Y (steps, 1, batch, H) and the final states (1, batch, H) of one direction; ``P``
    (1, 3 H): an LSTM's peepholes, or None."""
    steps = x.shape[0]
    hidden = R.shape[-1]
    w_bias = r_bias = None
    if B is not None:
        w_bias, r_bias = ops.split(ops.squeeze(B, 0), 0, 2)
    projected = ops.matmul(x, ops.transpose(ops.squeeze(W, 0)))      # (steps, batch, G H)
    if w_bias is not None:
        projected = ops.add(projected, w_bias)
    R2 = ops.transpose(ops.squeeze(R, 0))
    pieces = list(ops.split(projected, 0, steps)) if steps > 1 else [projected]
    peepholes = None if P is None else ops.split(ops.squeeze(P, 0), 0, 3)    # (p_i, p_o, p_f)
    hidden_states = []
    for piece in (reversed(pieces) if backwards else pieces):
        state = _STEPS[op_type](node, piece, state, R2, r_bias, hidden, peepholes)
        hidden_states.append(state[0])
    if backwards:
        hidden_states.reverse()                  # Y in the input's time order
    y = ops.cat(hidden_states, 0) if steps > 1 else hidden_states[0]
    return (ops.unsqueeze(y, 1), *state)


def _plus(a, b):
    """a + b where either may be None (a term that is zero)."""
    if a is None or b is None:
        return b if a is None else a
    return ops.add(a, b)


def _hidden_projection(h, R2, r_bias):
    """h R^T + Rb; None where both are zero (no initial state and no bias)."""
    return _plus(None if h is None else ops.matmul(h, R2), r_bias)


def _lstm_step(node, x_gates, state, R2, r_bias, hidden, peepholes=None):
    """ONNX's LSTM: i = s(.. + p_i * c), f = s(.. + p_f * c) with the previous cell c,
    c' = f * c + i * tanh(g), o = s(.. + p_o * c') with the new one, h' = o * tanh(c')."""
    h, c = state
    gates = _plus(x_gates, _hidden_projection(h, R2, r_bias))
    i, o, f, g = ops.split(gates, 2, 4)
    if peepholes is not None:
        p_i, p_o, p_f = peepholes
        if c is not None:                  # a zero cell adds nothing
            i, f = ops.add(i, ops.mul(p_i, c)), ops.add(f, ops.mul(p_f, c))
    kept = None if c is None else ops.mul(ops.sigmoid(f), c)
    c = _plus(kept, ops.mul(ops.sigmoid(i), ops.tanh(g)))
    if peepholes is not None:
        o = ops.add(o, ops.mul(p_o, c))
    return [ops.mul(ops.sigmoid(o), ops.tanh(c)), c]


def _gru_step(node, x_gates, state, R2, r_bias, hidden, peepholes=None):
    (h,) = state
    x_z, x_r, x_h = ops.split(x_gates, 2, 3)
    R_zr, R_h = ops.split(R2, 1, [2 * hidden, hidden])
    b_zr = b_h = None
    if r_bias is not None:
        b_zr, b_h = ops.split(r_bias, 0, [2 * hidden, hidden])
    h_zr = _hidden_projection(h, R_zr, b_zr)
    h_z, h_r = ops.split(h_zr, h_zr.ndim - 1, 2) if h_zr is not None else (None, None)
    z, r = ops.sigmoid(_plus(x_z, h_z)), ops.sigmoid(_plus(x_r, h_r))
    if attribute(node, "linear_before_reset", 0):
        projection = _hidden_projection(h, R_h, b_h)
        candidate = None if projection is None else ops.mul(r, projection)
    else:
        candidate = _hidden_projection(None if h is None else ops.mul(r, h), R_h, b_h)
    n = ops.tanh(_plus(x_h, candidate))
    if h is None:
        return [ops.sub(n, ops.mul(z, n))]                     # (1 - z) * n
    return [ops.add(n, ops.mul(z, ops.sub(h, n)))]          # (1 - z) * n + z * h


def _rnn_step(node, x_gates, state, R2, r_bias, hidden, peepholes=None):
    pre = _plus(x_gates, _hidden_projection(state[0], R2, r_bias))
    activation = (attribute(node, "activations") or ["Tanh"])[0]
    return [ops.relu(pre) if activation == "Relu" else ops.tanh(pre)]


_STEPS = {"LSTM": _lstm_step, "GRU": _gru_step, "RNN": _rnn_step}
_DEFAULT_ACTIVATIONS = {"LSTM": ["Sigmoid", "Tanh", "Tanh"], "GRU": ["Sigmoid", "Tanh"],
                        "RNN": ["Tanh"]}


def _check_supported(node, op_type, inputs, x):
    def refuse(what):
        raise NotImplementedError(f"autograd.onnx: {op_type} node {node.name!r}: {what} is not "
                                  "supported (default activations only)")
    if attribute(node, "direction", "forward") not in ("forward", "reverse", "bidirectional"):
        refuse(f"direction {attribute(node, 'direction')!r}")
    activations = list(attribute(node, "activations") or [])
    allowed = [_DEFAULT_ACTIVATIONS[op_type]] + ([["Relu"]] if op_type == "RNN" else [])
    if activations and not any(activations == kind * k for kind in allowed for k in (1, 2)):
        refuse(f"activations {activations}")
    for name in ("clip", "activation_alpha", "activation_beta"):
        if attribute(node, name) is not None:
            refuse(f"attribute {name}")
    if attribute(node, "input_forget", 0):
        refuse("input_forget=1")
    lengths = _static(inputs, 4)
    steps = x.shape[1 if attribute(node, "layout", 0) else 0]
    if lengths is not None and np.any(context_array(lengths) != steps):
        refuse("sequence_lens shorter than the sequence")


def context_array(value):
    return value.to_numpy() if isinstance(value, ops.Tensor) else np.asarray(value)


for _op_type in _STEPS:
    register(_op_type)(_import_recurrent(_op_type))
