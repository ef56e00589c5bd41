"""BatchNormalization folded into the Conv before it, for an imported graph in eval mode.

With fixed statistics, BatchNorm after a convolution is a per-channel affine map, so it folds
into the convolution's weights and bias (what onnxruntime does at load):

    s = scale / sqrt(var + epsilon),   W' = W * s (per output channel),   b' = (b - mean) * s + bias

and the pair runs as one Conv: no pass over the activations for the BatchNorm. The folded
parameters are computed with the project's operations from the current parameters, so when
recording they are on the tape and gradients reach W, b, scale and bias exactly as through the
unfolded pair; :class:`~autograd.onnx.importer.OnnxModel` keeps them between passes that record
nothing. Training mode runs the unfolded graph (BatchNorm then uses batch statistics).

>>> import numpy as np
>>> from autograd import Tensor
>>> W, s = Tensor(data=np.ones((2, 1, 1, 1), np.float32)), np.float32([1, 4])
>>> W2, b2 = folded_conv(W, None, Tensor(data=s), Tensor(data=np.zeros(2, np.float32)),
...                      Tensor(data=np.float32([0, 1])), Tensor(data=np.float32([0, 3])), 1.0)
>>> W2.to_numpy().ravel(), b2.to_numpy()
(array([1., 2.], dtype=float32), array([ 0., -2.], dtype=float32))
"""
from collections import namedtuple

import autograd as ops
from .import_ops import ImportedNode, attribute

__all__ = []

# conv, batch_norm: the two ImportedNodes; fused: the Conv node that replaces them, reading
# the folded weight and bias under the names ``fused.input[1:3]``
FoldedPair = namedtuple("FoldedPair", "conv batch_norm fused")


def foldable_pairs(nodes, static_names, output_names):
    """The (Conv, BatchNormalization) pairs of ``nodes`` that fold: the BatchNorm reads a Conv's
    only consumed output, its parameters and the conv's weight and bias are all in
    ``static_names`` (initializers: parameters, buffers or constants), and it has one output
    and no training_mode."""
    consumers = {}
    for node in nodes:
        for name in node.input:
            consumers[name] = consumers.get(name, 0) + 1
    producers = {node.output[0]: node for node in nodes if node.op_type == "Conv"}
    pairs = []
    for node in nodes:
        if node.op_type != "BatchNormalization" or len(node.input) < 5:
            continue
        conv = producers.get(node.input[0])
        if (conv is None or consumers.get(conv.output[0]) != 1 or conv.output[0] in output_names
                or attribute(node, "training_mode", 0)
                or any(name for name in node.output[1:])
                or not all(name in static_names for name in node.input[1:5])
                or not all(name in static_names for name in conv.input[1:] if name)):
            continue
        folded = (f"{node.output[0]}::folded_weight", f"{node.output[0]}::folded_bias")
        fused = ImportedNode(conv, inputs=[conv.input[0], *folded], outputs=[node.output[0]])
        pairs.append(FoldedPair(conv, node, fused))
    return pairs


def eval_nodes(nodes, pairs):
    """``nodes`` with each pair replaced by its fused Conv, at the BatchNorm's place."""
    fused = {id(pair.batch_norm): pair.fused for pair in pairs}
    dropped = {id(pair.conv) for pair in pairs}
    return [fused.get(id(node), node) for node in nodes if id(node) not in dropped]


def folded_values(pairs, values, context):
    """{folded name: Tensor} for every pair, from the current ``values`` (recorded on the tape
    when recording is on)."""
    folded = {}
    for pair in pairs:
        conv, norm = pair.conv, pair.batch_norm
        like = values[conv.input[1]]
        weight = context.tensor(like)
        bias = values.get(conv.input[2]) if len(conv.input) > 2 and conv.input[2] else None
        scale, shift, mean, var = (context.tensor(values[name], weight)
                                   for name in norm.input[1:5])
        folded_weight, folded_bias = folded_conv(
            weight, None if bias is None else context.tensor(bias, weight), scale, shift, mean,
            var, attribute(norm, "epsilon", 1e-5))
        folded[pair.fused.input[1]], folded[pair.fused.input[2]] = folded_weight, folded_bias
    return folded


def folded_conv(weight, bias, scale, shift, mean, var, epsilon):
    """(W', b') of a Conv (weight W (O, C/G, ...), bias b (O,) or None) followed by a BatchNorm
    (scale, shift, running mean and var, each (O,)): W' = W * s, b' = (b - mean) * s + shift with
    s = scale / sqrt(var + epsilon)."""
    gain = ops.div(scale, ops.sqrt(var + float(epsilon)))
    folded_weight = ops.mul(weight, ops.reshape(gain, (-1,) + (1,) * (weight.ndim - 1)))
    centred = ops.neg(mean) if bias is None else ops.sub(bias, mean)
    return folded_weight, ops.add(ops.mul(centred, gain), shift)
