"""ONNX Resize and Upsample with ``mode="nearest"`` -> one ``gather`` per resized axis, whose
indices follow ONNX's rules (every coordinate_transformation_mode but tf_crop_and_resize, every
nearest_mode), so gradients flow back to the input. Part of the import table of
:mod:`autograd.onnx.import_ops`. Linear and cubic modes, ``antialias`` and
``keep_aspect_ratio_policy`` are a clear error naming the node.

>>> _nearest_indices(4, 8, 2.0, "half_pixel", "round_prefer_floor").tolist()
[0, 0, 1, 1, 2, 2, 3, 3]
"""
import numpy as np

import autograd as ops
from .import_ops import register, attribute, _static

__all__ = []


def _nearest_indices(size, out_size, scale, transform, rounding):
    """For each output position along an axis, the input position ONNX's nearest mode reads."""
    i = np.arange(out_size, dtype=np.float64)
    if transform == "asymmetric":
        original = i / scale
    elif transform == "align_corners":
        original = i * (size - 1) / (out_size - 1) if out_size > 1 else np.zeros_like(i)
    elif transform == "pytorch_half_pixel":
        original = (i + 0.5) / scale - 0.5 if out_size > 1 else np.zeros_like(i)
    elif transform == "tf_half_pixel_for_nn":
        original = (i + 0.5) / scale
    elif transform == "half_pixel_symmetric":
        adjustment = out_size / (scale * size)
        center = size / 2
        offset = center * (1 - adjustment)
        original = offset + (i + 0.5) / scale - 0.5
    else:                                                   # half_pixel
        original = (i + 0.5) / scale - 0.5
    if rounding == "floor":
        index = np.floor(original)
    elif rounding == "ceil":
        index = np.ceil(original)
    elif rounding == "round_prefer_ceil":
        index = np.floor(original + 0.5)
    else:                                                   # round_prefer_floor
        index = np.ceil(original - 0.5)
    return np.clip(index, 0, size - 1).astype(np.int64)


def _resize(context, node, x, scales, sizes, transform, rounding, axes=None):
    """``scales`` or ``sizes`` for every axis, or for ``axes`` only (the others kept)."""
    x = context.tensor(x)
    shape = np.asarray(x.shape)
    axes = list(range(x.ndim)) if axes is None else [a % x.ndim for a in axes]
    if scales is not None and np.asarray(scales).size:
        scales_given = np.ones(x.ndim)
        scales_given[axes] = context.array(scales).astype(np.float64)
        scales = scales_given
        sizes = np.floor(shape * scales).astype(np.int64)
    elif sizes is not None:
        sizes_given = shape.copy()
        sizes_given[axes] = context.array(sizes).astype(np.int64)
        sizes = sizes_given
        scales = sizes / shape.astype(np.float64)
    else:
        raise ValueError(f"autograd.onnx: {node.op_type} node {node.name!r} has neither scales "
                         "nor sizes")
    y = x
    for axis, (size, out_size, scale) in enumerate(zip(x.shape, sizes, scales)):
        if out_size != size or scale != 1:
            indices = _nearest_indices(size, int(out_size), float(scale), transform, rounding)
            y = ops.gather(y, axis, indices)
    return y


@register("Resize")
def _resize_node(context, node, inputs):
    mode = attribute(node, "mode", "nearest")
    for name, default in (("antialias", 0), ("keep_aspect_ratio_policy", "stretch")):
        if attribute(node, name, default) != default:
            raise NotImplementedError(f"autograd.onnx: Resize node {node.name!r}: attribute "
                                      f"{name} is not supported")
    transform = attribute(node, "coordinate_transformation_mode", "half_pixel")
    if mode != "nearest" or transform == "tf_crop_and_resize":
        raise NotImplementedError(f"autograd.onnx: Resize node {node.name!r}: mode {mode!r} "
                                  f"with {transform!r} is not supported (nearest is)")
    if context.version < 11:                 # opset 10: (X, scales), asymmetric floor
        return _resize(context, node, inputs[0], inputs[1], None, "asymmetric", "floor")
    return _resize(context, node, inputs[0], _static(inputs, 2), _static(inputs, 3), transform,
                   attribute(node, "nearest_mode", "round_prefer_floor"),
                   attribute(node, "axes"))


@register("Upsample")
def _upsample_node(context, node, inputs):
    mode = attribute(node, "mode", "nearest")
    if mode != "nearest":
        raise NotImplementedError(f"autograd.onnx: Upsample node {node.name!r}: mode {mode!r} "
                                  "is not supported (nearest is)")
    scales = attribute(node, "scales") if context.version < 9 else inputs[1]
    return _resize(context, node, inputs[0], scales, None, "asymmetric", "floor")
