"""Lookups, indexing, resampling and attention -> ONNX nodes: Embedding and gather as Gather,
indexing as Slice, Gather, Squeeze and Unsqueeze, where as Where, nearest upsampling as
Resize, scaled dot-product attention as its MatMul / Softmax decomposition. Part of the
export table of :mod:`autograd.onnx.export_ops`.

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
    """NumPy indexing: Ellipsis expanded to whole axes; a Slice of the axes that slices and
    ints narrow (axes taken whole are left out, so the batch stays symbolic); a Gather of at
    most one index array (an integer array of any shape, or a 1-D boolean mask as the
    positions of its True values: a constant, or NonZero of a graph input) on its axis; a
    Squeeze of the ints' axes; an Unsqueeze at the positions of None. Ints beside the array
    join it, as NumPy's advanced indexing does; several arrays, or ints apart from the array
    (NumPy then moves the array's axes first), have no mapping."""
    shape = tensors[0].shape
    index = _expanded(op.template, len(shape), tensors[1:])
    starts, ends, axes, steps, squeezed, unsqueezed = [], [], [], [], [], []
    array, axis, position = None, 0, 0    # the array part; x's axis; the output's axis
    for part in index:
        if part is None:
            unsqueezed.append(position)
            position += 1
            continue
        if part is indexing._ARRAY_PART:
            if array is not None:
                raise NotImplementedError("autograd.onnx.export: indexing with several arrays "
                                          "has no mapping (one array, ints, slices, None and "
                                          "Ellipsis do)")
            array = (axis, position)
            position += _index_ndim(tensors[1])
        elif isinstance(part, slice):
            if part != slice(None):
                start, stop, step = part.indices(shape[axis])
                if step < 0 and stop < 0:
                    stop = -(2 ** 63)                 # through the first element
                starts.append(start)
                ends.append(stop)
                axes.append(axis)
                steps.append(step)
            position += 1
        else:
            start = int(part) % shape[axis]
            starts.append(start)
            ends.append(start + 1)
            axes.append(axis)
            steps.append(1)
            squeezed.append(axis)
        axis += 1
    if array is not None and squeezed and not _ints_beside(index):
        raise NotImplementedError("autograd.onnx.export: ints apart from an index array (NumPy "
                                  "moves the array's axes first) have no mapping")
    name = outputs[0]
    current = inputs[0]
    if axes:
        context.node("Slice", [current] + [context.constant(np.asarray(v, np.int64)) for v in
                                           (starts, ends, axes, steps)], [name + "_sliced"])
        current = name + "_sliced"
    if array is not None:
        context.node("Gather", [current, _positions(context, inputs[1], tensors[1], name)],
                     [name + "_gathered"], axis=array[0])
        current = name + "_gathered"
        extra = _index_ndim(tensors[1]) - 1         # the array's axes replace its one axis
        squeezed = [a if a < array[0] else a + extra for a in squeezed]
    if squeezed:
        context.node("Squeeze", [current, context.constant(np.asarray(squeezed, np.int64))],
                     [name + "_squeezed"])
        current = name + "_squeezed"
    if unsqueezed:
        context.node("Unsqueeze", [current, context.constant(np.asarray(unsqueezed, np.int64))],
                     [name + "_unsqueezed"])
        current = name + "_unsqueezed"
    context.node("Identity", [current], outputs)


def _expanded(template, ndim, index_tensors):
    """The index as a tuple covering every axis of x: Ellipsis (or the axes left at the end)
    as whole slices. A boolean mask of more than one axis has no mapping."""
    parts = template if isinstance(template, tuple) else (template,)
    for tensor in index_tensors:
        if tensor.dtype == bool and tensor.ndim != 1:
            raise NotImplementedError("autograd.onnx.export: a boolean mask of more than one "
                                      "axis has no mapping (a 1-D mask does)")
    used = sum(part is not None and part is not Ellipsis for part in parts)
    if used > ndim:
        raise IndexError(f"too many indices for a tensor of {ndim} axes")
    whole = (slice(None),) * (ndim - used)
    if any(part is Ellipsis for part in parts):
        at = next(k for k, part in enumerate(parts) if part is Ellipsis)
        return parts[:at] + whole + tuple(p for p in parts[at + 1:] if p is not Ellipsis)
    return parts + whole


def _ints_beside(index):
    """Whether the ints and the array of ``index`` stand next to each other (None and slices
    not between them): then NumPy keeps the array's axes in place."""
    kinds = [k for k, part in enumerate(index)
             if part is indexing._ARRAY_PART or isinstance(part, (int, np.integer))]
    return kinds[-1] - kinds[0] == len(kinds) - 1


def _index_ndim(tensor):
    return 1 if tensor.dtype == bool else tensor.ndim


def _positions(context, name, tensor, hint):
    """Gather's int64 indices for an index array: the array (Cast to int64 where it is another
    integer type), or the positions of a 1-D mask's True values: a constant where the mask is
    one, else NonZero of it."""
    if tensor.dtype == bool:
        if any(initializer.name == name for initializer in context.initializers):
            return context.constant(np.flatnonzero(tensor.to_numpy()).astype(np.int64))
        context.node("NonZero", [name], [hint + "_nonzero"])
        context.node("Squeeze", [hint + "_nonzero", context.constant(np.asarray([0], np.int64))],
                     [hint + "_positions"])
        return hint + "_positions"
    if tensor.dtype != np.int64:
        context.node("Cast", [name], [hint + "_indices"], to=7)      # INT64
        return hint + "_indices"
    return name


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
