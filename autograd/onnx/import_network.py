"""ONNX network nodes -> operations: Gemm, MatMul, Conv, pooling, normalization, softmax,
dropout. Part of the import table of :mod:`autograd.onnx.import_ops`."""
import numpy as np

import autograd as ops
from ..geometry import ConvGeometry
from ..operations.conv import check_conv_arguments, convolve
from .import_ops import register, attribute, _static

__all__ = []


@register("MatMul")
def _matmul(context, node, inputs):
    a, b = inputs
    like = a if isinstance(a, ops.Tensor) else b
    return ops.matmul(context.tensor(a, like), context.tensor(b, like))


@register("Gemm")
def _gemm(context, node, inputs):
    a, b = context.tensor(inputs[0]), inputs[1]
    b = context.tensor(b, a)
    c = _static(inputs, 2)
    c = None if c is None else context.tensor(c, a)
    return ops.gemm(a, b, c, attribute(node, "alpha", 1.0), attribute(node, "beta", 1.0),
                    bool(attribute(node, "transA", 0)), bool(attribute(node, "transB", 0)))


def _as_images(x):
    """(N, C, L) sequences as (N, C, 1, L) images, and how to undo it."""
    if x.ndim == 3:
        return ops.reshape(x, (x.shape[0], x.shape[1], 1, x.shape[2])), True
    if x.ndim != 4:
        raise ValueError(f"autograd.onnx: only 1-D and 2-D windows are supported, got an input "
                         f"of shape {tuple(x.shape)}")
    return x, False


def _from_images(y, was_sequence):
    return ops.reshape(y, (y.shape[0], y.shape[1], y.shape[3])) if was_sequence else y


def _remember(node, key, compute):
    """``compute()`` kept on an ImportedNode (see its ``memo``); a bare NodeProto recomputes."""
    remember = getattr(node, "remember", None)
    return compute() if remember is None else remember(key, compute)


def _window_geometry(node, spatial, kernel, name, groups=1):
    """A 2-D ConvGeometry from an ONNX node's strides, pads, dilations and auto_pad; 1-D
    attributes are given height 1. (Only its pads, kernel, stride and dilation are read, so a
    pool's ``ceil_mode`` is left to the pooling op.)"""
    def per_axis(values, default):
        values = list(values) if values else [default] * spatial
        return ([default] + values) if spatial == 1 else values
    pads = list(attribute(node, "pads", []) or [0] * (2 * spatial))
    begins, ends = pads[:spatial], pads[spatial:]
    if spatial == 1:
        begins, ends = [0] + begins, [0] + ends
    mode = attribute(node, "auto_pad", "") or "NOTSET"     # an empty string is NOTSET too
    return ConvGeometry(per_axis(kernel, 1), per_axis(attribute(node, "strides"), 1),
                        (begins[0], ends[0], begins[1], ends[1]),
                        per_axis(attribute(node, "dilations"), 1), groups, mode, name=name)


def _check_conv(node, x, w, b):
    """The conv op's checks of x, W, b and group (once per shape), naming the node: a channel
    mismatch is a clear error, not a matrix product's."""
    axes = (("k",), ("L",)) if x.ndim == 3 else (("kh", "kw"), ("H", "W"))
    _remember(node, ("checked", x.shape, w.shape), lambda: check_conv_arguments(
        f"autograd.onnx: Conv {node.name!r}", x, w, b, attribute(node, "group", 1), *axes))


@register("Conv")
def _conv(context, node, inputs):
    x, w = context.tensor(inputs[0]), inputs[1]
    w = context.tensor(w, x)
    b = _static(inputs, 2)
    b = None if b is None else context.tensor(b, x)
    images, was_sequence = _as_images(x)            # refuses what is not 1-D or 2-D first
    _check_conv(node, x, w, b)
    if was_sequence:
        w = ops.reshape(w, (w.shape[0], w.shape[1], 1, w.shape[2]))
    spatial = x.ndim - 2
    kernel = tuple(attribute(node, "kernel_shape") or w.shape[4 - spatial:])
    geometry = _remember(node, ("geometry", spatial, kernel), lambda: _window_geometry(
        node, spatial, kernel, "Conv", attribute(node, "group", 1)))
    return _from_images(convolve(images, w, b, geometry), was_sequence)


def _pool(context, node, inputs, is_max):
    x = context.tensor(inputs[0])
    images, was_sequence = _as_images(x)
    spatial = x.ndim - 2
    kernel = list(attribute(node, "kernel_shape"))
    ceil_mode = bool(attribute(node, "ceil_mode", 0))
    geometry = _remember(node, ("geometry", spatial), lambda: _window_geometry(
        node, spatial, kernel, node.op_type))
    if geometry.dilation != (1, 1):
        raise NotImplementedError(f"autograd.onnx: {node.op_type} {node.name!r} has dilations "
                                  f"{geometry.dilation}; only 1 is supported")
    (top, bottom), (left, right) = geometry.pads(images.shape[2:])
    include_pad = bool(attribute(node, "count_include_pad", 0))
    kh, kw = geometry.kernel
    if top == bottom <= kh // 2 and left == right <= kw // 2 and not ceil_mode:
        if is_max:
            y = ops.max_pool2d(images, geometry.kernel, geometry.stride, (top, left))
        else:
            y = ops.avg_pool2d(images, geometry.kernel, geometry.stride, (top, left),
                               count_include_pad=include_pad)
        return _from_images(y, was_sequence)
    padded = images
    if top or bottom or left or right:
        padded = ops.pad(images, "constant", [0, 0, top, left, 0, 0, bottom, right],
                         -np.inf if is_max else 0.0)
    if is_max:
        y = ops.max_pool2d(padded, geometry.kernel, geometry.stride, ceil_mode=ceil_mode)
        return _from_images(y, was_sequence)
    y = ops.avg_pool2d(padded, geometry.kernel, geometry.stride, ceil_mode=ceil_mode,
                       count_include_pad=False)
    if include_pad or not (top or bottom or left or right):
        return _from_images(y, was_sequence)
    # count_include_pad=0 with explicit padding: rescale each window to the pixels inside x
    counts = []
    for axis, (before, _) in enumerate(((top, bottom), (left, right))):
        size, k, s = images.shape[2 + axis], geometry.kernel[axis], geometry.stride[axis]
        starts = np.arange(y.shape[2 + axis]) * s - before
        inside = np.minimum(starts + k, size) - np.maximum(starts, 0)
        within = np.minimum(starts + k, padded.shape[2 + axis] - before) - starts
        counts.append((inside, within))
    scale = np.outer(counts[0][1], counts[1][1]) / np.outer(counts[0][0], counts[1][0])
    return _from_images(ops.mul(y, context.tensor(scale, x)), was_sequence)


register("MaxPool")(lambda context, node, inputs: _pool(context, node, inputs, True))
register("AveragePool")(lambda context, node, inputs: _pool(context, node, inputs, False))


@register("GlobalAveragePool")
def _global_average_pool(context, node, inputs):
    x = context.tensor(inputs[0])
    return ops.mean(x, axis=tuple(range(2, x.ndim)), keepdims=True)


@register("GlobalMaxPool")
def _global_max_pool(context, node, inputs):
    x = context.tensor(inputs[0])
    return ops.max(x, axis=tuple(range(2, x.ndim)), keepdims=True)


@register("BatchNormalization")
def _batch_norm(context, node, inputs):
    x, scale, bias, mean, var = inputs[:5]
    x = context.tensor(x)
    scale, bias = context.tensor(scale, x), context.tensor(bias, x)
    training = context.training or bool(attribute(node, "training_mode", 0))
    shape = x.shape
    if x.ndim not in (2, 4):
        x = ops.reshape(x, (shape[0], shape[1], -1, 1))
    y = ops.batch_norm(x, scale, bias, mean, var, momentum=attribute(node, "momentum", 0.9),
                       eps=attribute(node, "epsilon", 1e-5), training=training)
    return ops.reshape(y, shape) if y.shape != shape else y


@register("LayerNormalization")
def _layer_norm(context, node, inputs):
    """Over the axes from ``axis`` on; scale and bias broadcast. With one output and a scale of
    the normalised shape it is the fused op; else the formula, giving Mean and InvStdDev."""
    x = context.tensor(inputs[0])
    axis = attribute(node, "axis", -1) % x.ndim
    epsilon = attribute(node, "epsilon", 1e-5)
    scale, bias = context.tensor(inputs[1], x), _static(inputs, 2)
    bias = None if bias is None else context.tensor(bias, x)
    normalized = tuple(x.shape[axis:])
    if len(node.output) == 1 and scale.shape == normalized and (
            bias is None or bias.shape == normalized):
        return ops.layer_norm(x, normalized, scale, bias, epsilon)
    axes = tuple(range(axis, x.ndim))
    mean = ops.mean(x, axis=axes, keepdims=True)
    centered = ops.sub(x, mean)
    variance = ops.mean(ops.mul(centered, centered), axis=axes, keepdims=True)
    inverse = ops.reciprocal(ops.sqrt(ops.add(variance, context.tensor(epsilon, x))))
    y = ops.mul(ops.mul(centered, inverse), scale)
    if bias is not None:
        y = ops.add(y, bias)
    return y, mean, inverse


def _softmax(context, node, inputs, operation):
    x = context.tensor(inputs[0])
    if context.version >= 13:
        return operation(x, attribute(node, "axis", -1))
    axis = attribute(node, "axis", 1) % max(x.ndim, 1)    # old opsets: 2-D at axis
    if all(size == 1 for size in x.shape[axis + 1:]):
        return operation(x, axis)   # the 2-D rows are x's axis (a classifier's (N, C, 1, 1))
    rows = int(np.prod(x.shape[:axis], dtype=np.int64))
    y = operation(ops.reshape(x, (rows, -1)), 1)
    return ops.reshape(y, x.shape)


register("Softmax")(lambda context, node, inputs: _softmax(context, node, inputs, ops.softmax))
register("LogSoftmax")(lambda context, node, inputs: _softmax(context, node, inputs,
                                                              ops.log_softmax))


@register("Dropout")
def _dropout(context, node, inputs):
    x = context.tensor(inputs[0])
    ratio = attribute(node, "ratio", 0.5)
    if _static(inputs, 1) is not None:
        ratio = float(context.array(inputs[1]))
    training = context.training
    if _static(inputs, 2) is not None:
        training = training or bool(context.array(inputs[2]))
    wants_mask = len(node.output) > 1 and bool(node.output[1])
    if not (training and ratio > 0):
        return (x, np.ones(x.shape, bool)) if wants_mask else x
    if not wants_mask:
        return ops.dropout(x, ratio, training=True)
    # the mask is an output too: drawn as ops.dropout draws it, applied as a product
    keep = x.device.random.random(x.shape, dtype=x.dtype) >= ratio
    scale = ops.Tensor(data=keep.astype(x.dtype) * x.dtype.type(1.0 / (1.0 - ratio)),
                       device=x.device, requires_grad=False)
    return ops.mul(x, scale), keep


@register("LRN")
def _local_response_norm(context, node, inputs):
    """y = x / (bias + alpha / size * sum of x^2 over ``size`` neighbouring channels)^beta:
    the channel sum is an average pooling of x^2 over (N, 1, C, H * W) with a (size, 1) window."""
    x = context.tensor(inputs[0])
    size = attribute(node, "size")
    alpha, beta = attribute(node, "alpha", 1e-4), attribute(node, "beta", 0.75)
    bias = attribute(node, "bias", 1.0)
    n, channels = x.shape[:2]
    squares = ops.reshape(ops.mul(x, x), (n, 1, channels, -1))
    before, after = (size - 1) // 2, size // 2       # ONNX: floor before, ceil after
    padded = ops.pad(squares, "constant", [0, 0, before, 0, 0, 0, after, 0])
    window_sum = ops.mul(ops.avg_pool2d(padded, (size, 1), (1, 1)),
                         context.tensor(float(size), x))
    scale = ops.add(ops.mul(window_sum, context.tensor(alpha / size, x)),
                    context.tensor(bias, x))
    denominator = ops.pow(scale, context.tensor(beta, x))
    return ops.div(x, ops.reshape(denominator, x.shape))
