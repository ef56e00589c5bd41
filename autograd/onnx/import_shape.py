"""ONNX shape, indexing, constant and reduction nodes -> operations. Each runs with NumPy when
all its inputs are static (a shape computation: Shape -> Gather -> Concat -> Reshape is never
recorded), and on the tape otherwise. Part of the table of :mod:`autograd.onnx.import_ops`."""
import numpy as np

import autograd as ops
from .import_ops import register, attribute, _static, _is_static

__all__ = []


def _axes(context, node, inputs, index, since):
    """Axes given as an attribute (opsets before ``since``) or as input ``index``."""
    if context.version >= since and _static(inputs, index) is not None:
        return [int(a) for a in context.array(inputs[index]).ravel()]
    value = attribute(node, "axes")
    return None if value is None else [int(a) for a in value]


@register("Shape")
def _shape(context, node, inputs):
    shape = np.array(inputs[0].shape, np.int64)
    start, end = attribute(node, "start", 0), attribute(node, "end")
    return shape[start:end]


@register("Size")
def _size(context, node, inputs):
    return np.array(int(np.prod(inputs[0].shape)), np.int64)


@register("Constant")
def _constant(context, node, inputs):
    for name in ("value", "value_float", "value_floats", "value_int", "value_ints"):
        value = attribute(node, name)
        if value is not None:
            array = np.asarray(value)
            if name.startswith("value_float"):
                array = array.astype(np.float32)
            elif name.startswith("value_int"):
                array = array.astype(np.int64)
            return array
    raise NotImplementedError(f"autograd.onnx: Constant {node.name!r} has no value this "
                              "importer reads (value, value_float(s), value_int(s))")


@register("ConstantOfShape")
def _constant_of_shape(context, node, inputs):
    value = attribute(node, "value")
    value = np.zeros(1, np.float32) if value is None else np.asarray(value).ravel()
    return np.full(tuple(context.array(inputs[0]).astype(np.int64)), value[0], value.dtype)


@register("Reshape")
def _reshape(context, node, inputs):
    x = inputs[0]
    shape = [int(s) for s in context.array(inputs[1]).ravel()] if len(inputs) > 1 else \
        list(attribute(node, "shape"))
    if not attribute(node, "allowzero", 0):
        shape = [x.shape[i] if s == 0 else s for i, s in enumerate(shape)]
    if _is_static(x):
        return np.reshape(x, shape)
    return ops.reshape(x, tuple(shape))


@register("Flatten")
def _flatten(context, node, inputs):
    x = inputs[0]
    axis = attribute(node, "axis", 1)
    axis = axis + x.ndim if axis < 0 else axis
    rows = int(np.prod(x.shape[:axis], dtype=np.int64))
    if _is_static(x):
        return np.reshape(x, (rows, -1))
    return ops.reshape(x, (rows, -1))


@register("Transpose")
def _transpose(context, node, inputs):
    x = inputs[0]
    perm = attribute(node, "perm")
    if _is_static(x):
        return np.transpose(x, perm)
    return ops.transpose(x, None if perm is None else tuple(perm))


@register("Squeeze")
def _squeeze(context, node, inputs):
    x = inputs[0]
    axes = _axes(context, node, inputs, 1, 13)
    if _is_static(x):
        return np.squeeze(x, None if axes is None else tuple(axes))
    return ops.squeeze(x, axes)


@register("Unsqueeze")
def _unsqueeze(context, node, inputs):
    x = inputs[0]
    axes = _axes(context, node, inputs, 1, 13)
    if _is_static(x):
        return np.expand_dims(x, tuple(axes))
    return ops.unsqueeze(x, axes)


@register("Concat")
def _concat(context, node, inputs):
    axis = attribute(node, "axis")
    if _is_static(*inputs):
        return np.concatenate([np.atleast_1d(v) for v in inputs], axis)
    like = next(v for v in inputs if isinstance(v, ops.Tensor))
    return ops.concat([context.tensor(v, like) for v in inputs], axis)


@register("Split")
def _split(context, node, inputs):
    x = context.tensor(inputs[0])
    axis = attribute(node, "axis", 0) % x.ndim
    sizes = attribute(node, "split")
    if _static(inputs, 1) is not None:
        sizes = [int(s) for s in context.array(inputs[1]).ravel()]
    if sizes is None:
        count = attribute(node, "num_outputs") or len(node.output)
        step = -(-x.shape[axis] // count)
        sizes = [min(step, x.shape[axis] - k * step) for k in range(count)]
    parts = ops.split(x, axis, list(sizes))
    return tuple(parts) if isinstance(parts, (list, tuple)) else (parts,)


@register("NonZero")
def _nonzero(context, node, inputs):
    """(ndim, count) int64 positions of the non-zero elements: integer values, never on the
    tape (the exporter's boolean masks given as graph inputs)."""
    return np.asarray(np.nonzero(context.array(inputs[0])), np.int64).reshape(
        np.ndim(inputs[0]), -1)


@register("Gather")
def _gather(context, node, inputs):
    x, indices = inputs
    axis = attribute(node, "axis", 0)
    indices = context.array(indices).astype(np.int64)
    if _is_static(x):
        return np.take(x, indices, axis=axis)
    return ops.gather(x, axis, indices)


@register("Slice")
def _slice(context, node, inputs):
    x = inputs[0]
    if context.version < 10:
        starts, ends = attribute(node, "starts"), attribute(node, "ends")
        axes, steps = attribute(node, "axes"), None
    else:
        starts, ends = (list(context.array(v).ravel()) for v in inputs[1:3])
        axes, steps = (None if _static(inputs, i) is None else
                       list(context.array(inputs[i]).ravel()) for i in (3, 4))
    axes = list(range(len(starts))) if axes is None else [int(a) % x.ndim for a in axes]
    steps = [1] * len(starts) if steps is None else [int(s) for s in steps]
    index = [slice(None)] * x.ndim
    for axis, start, end, step in zip(axes, starts, ends, steps):
        index[axis] = slice(*slice(int(start), int(max(min(end, 2**62), -2**62)),
                                   step).indices(x.shape[axis]))
        if index[axis].stop < 0:        # a negative step ran past the front: to the start
            index[axis] = slice(index[axis].start, None, step)
    if _is_static(x):
        return np.asarray(x)[tuple(index)]
    return x[tuple(index)]


@register("Pad")
def _pad(context, node, inputs):
    x = context.tensor(inputs[0])
    mode = attribute(node, "mode", "constant")
    if context.version < 11:
        pads, value = attribute(node, "pads"), attribute(node, "value", 0.0)
    else:
        pads = [int(p) for p in context.array(inputs[1]).ravel()]
        value = _static(inputs, 2)
        value = 0.0 if value is None else float(context.array(value).reshape(-1)[0])
    if _static(inputs, 3) is not None:       # opset 18: pads for the given axes only
        axes = [int(a) % x.ndim for a in context.array(inputs[3]).ravel()]
        full = [0] * (2 * x.ndim)
        for k, axis in enumerate(axes):
            full[axis], full[x.ndim + axis] = pads[k], pads[len(axes) + k]
        pads = full
    if mode == "reflect" and any(p >= n for p, n in zip(pads, tuple(x.shape) * 2) if p):
        # ONNX reflects within the axis; ops.pad copies the axis for a pad equal to its length
        raise NotImplementedError(f"autograd.onnx: Pad {node.name!r} reflects by {list(pads)}, "
                                  f"as long as an axis of shape {tuple(x.shape)}")
    return ops.pad(x, mode, list(pads), value)


@register("Expand")
def _expand(context, node, inputs):
    x = inputs[0]
    shape = tuple(np.broadcast_shapes(tuple(x.shape),
                                      tuple(int(s) for s in context.array(inputs[1]))))
    if _is_static(x):
        return np.broadcast_to(x, shape).copy()
    return ops.expand(x, shape)


@register("Tile")
def _tile(context, node, inputs):
    x = inputs[0]
    repeats = [int(r) for r in context.array(inputs[1]).ravel()]
    if _is_static(x):
        return np.tile(x, repeats)
    return ops.tile(x, repeats)


def _reduce(numpy_function, operation, since):
    def run(context, node, inputs):
        x = inputs[0]
        axes = _axes(context, node, inputs, 1, since)
        keepdims = bool(attribute(node, "keepdims", 1))
        if axes == [] or (axes is None and attribute(node, "noop_with_empty_axes", 0)):
            if attribute(node, "noop_with_empty_axes", 0):
                return x
            axes = None
        axis = None if axes is None else tuple(axes)
        if _is_static(x):
            return numpy_function(np.asarray(x), axis=axis, keepdims=keepdims)
        return operation(context.tensor(x), axis=axis, keepdims=keepdims)
    return run


register("ReduceSum")(_reduce(np.sum, ops.sum, 13))
register("ReduceMean")(_reduce(np.mean, ops.mean, 18))
register("ReduceMax")(_reduce(np.max, ops.max, 18))
register("ReduceMin")(_reduce(np.min, ops.min, 18))
