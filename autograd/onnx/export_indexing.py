"""Lookups, indexing, resampling and attention -> ONNX nodes: Embedding and gather as Gather,
basic indexing as Slice (+ Squeeze), where as Where, nearest upsampling as Resize, scaled
dot-product attention as its MatMul / Softmax decomposition. Part of the export table of
:mod:`autograd.onnx.export_ops`.

The ids, indices, conditions and masks are inputs of these operations: graph inputs where they
are the data of one (``export(model, [ids])``), else constants.
"""
import numpy as np

from ..operations import attention, conversion, embedding, indexing, resample
from .export_ops import register_exporter

__all__ = []


@register_exporter(embedding.Embedding)
def _embedding(context, op, inputs, outputs, tensors):
    """Gather of the table's rows; the ids are a graph input when the model was called with
    them (export(model, [ids])), else a constant."""
    context.node("Gather", inputs, outputs, axis=0)


@register_exporter(indexing.Gather)
def _gather(context, op, inputs, outputs, tensors):
    """ONNX's Gather takes negative indices as gather does (counted from the end)."""
    context.node("Gather", inputs, outputs, axis=int(op.axis))


@register_exporter(indexing.Where)
def _where(context, op, inputs, outputs, tensors):
    """Where(condition, x, y); a condition of 0/1 numbers is cast to bool first."""
    x, y, condition = inputs
    if tensors[2].dtype != bool:
        context.node("Cast", [condition], [outputs[0] + "_condition"], to=9)     # BOOL
        condition = outputs[0] + "_condition"
    context.node("Where", [condition, x, y], outputs)


@register_exporter(conversion.Cast)
def _cast(context, op, inputs, outputs, tensors):
    """Cast between floating dtypes (an attention mask given in another float type)."""
    from onnx import helper
    context.node("Cast", inputs, outputs, to=helper.np_dtype_to_tensor_dtype(np.dtype(op.dtype)))


@register_exporter(indexing.GetItem)
def _getitem(context, op, inputs, outputs, tensors):
    """Basic indexing (ints and slices, one per leading axis): a Slice of the axes it narrows,
    then a Squeeze of the ints' axes; axes taken whole are left out, so the batch stays
    symbolic. Other indices (arrays, None, Ellipsis) have no mapping."""
    index = op.template if isinstance(op.template, tuple) else (op.template,)
    shape = tensors[0].shape
    if not all(isinstance(p, (int, np.integer, slice)) for p in index) or len(index) > len(shape):
        raise NotImplementedError("autograd.onnx.export: indexing with arrays, None or "
                                  "Ellipsis has no mapping (ints and slices do)")
    starts, ends, axes, steps, squeezed = [], [], [], [], []
    for axis, part in enumerate(index):
        if isinstance(part, slice):
            if part == slice(None):
                continue
            start, stop, step = part.indices(shape[axis])
            if step < 0 and stop < 0:
                stop = -(2 ** 63)                 # through the first element
        else:
            start = int(part) % shape[axis]
            stop, step = start + 1, 1
            squeezed.append(axis)
        starts.append(start)
        ends.append(stop)
        axes.append(axis)
        steps.append(step)
    sliced = outputs[0] + "_sliced" if squeezed else outputs[0]
    if axes:
        context.node("Slice", [inputs[0]] + [context.constant(np.asarray(v, np.int64)) for v in
                                             (starts, ends, axes, steps)], [sliced])
    else:
        context.node("Identity", inputs, [sliced])
    if squeezed:
        context.node("Squeeze", [sliced, context.constant(np.asarray(squeezed, np.int64))],
                     outputs)


@register_exporter(attention.ScaledDotProductAttention)
def _attention(context, op, inputs, outputs, tensors):
    """Decomposed (ONNX's Attention node is opset 23): P = Softmax(MatMul(q * scale, k^T) +
    additive mask, with -inf where a boolean or causal mask drops a key), y = MatMul(P, v).
    The masks are constants of the traced lengths. A query with every key masked gives NaN in
    ONNX (zeros here). Dropout is off: export runs in eval mode."""
    q, k, v = inputs[:3]
    name, dtype = outputs[0], tensors[0].dtype
    rank = tensors[1].ndim
    perm = list(range(rank - 2)) + [rank - 1, rank - 2]
    context.node("Mul", [q, context.constant(np.asarray(op.scale, dtype))], [name + "_q"])
    context.node("Transpose", [k], [name + "_kT"], perm=perm)
    context.node("MatMul", [name + "_q", name + "_kT"], [name + "_scores"])
    scores = name + "_scores"
    if op.mask_kind == "add":
        context.node("Add", [scores, inputs[3]], [name + "_biased"])
        scores = name + "_biased"
    keep = inputs[3] if op.mask_kind == "keep" else None
    if op.causal:
        causal = context.constant(np.tri(tensors[0].shape[-2], tensors[1].shape[-2], dtype=bool))
        if keep is not None:
            context.node("And", [keep, causal], [name + "_keep"])
            causal = name + "_keep"
        keep = causal
    if keep is not None:
        context.node("Where", [keep, scores,
                               context.constant(np.asarray(-np.inf, dtype))], [name + "_masked"])
        scores = name + "_masked"
    context.node("Softmax", [scores], [name + "_weights"], axis=-1)
    context.node("MatMul", [name + "_weights", v], outputs)


@register_exporter(resample.UpsampleNearest)
def _upsample(context, op, inputs, outputs, tensors):
    """y[i] = x[floor(i / scale)], output floor(n * scale): Resize nearest, asymmetric, floor."""
    scales = context.constant(np.asarray(op.scales, np.float32))
    context.node("Resize", [inputs[0], "", scales], outputs, mode="nearest",
                 coordinate_transformation_mode="asymmetric", nearest_mode="floor")
