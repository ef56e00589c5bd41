"""Operation classes -> ONNX nodes: the one table of the export direction.

An exporter is ``function(context, op, input_names, output_names, inputs)`` that appends
nodes (and initializers) to ``context``; ``inputs`` are the op's input Tensors. A user adds
their own Operation with :func:`register_exporter`.
"""
import numpy as np

from ..operations import (activation, conv, elementwise, joining, linalg, normalization,
                          pooling, shape, softmax, dropout, unary, reduction, padding)

__all__ = ["EXPORTERS", "register_exporter", "exporter_for", "ExportContext"]

EXPORTERS = {}


def register_exporter(operation_class):
    """Decorator adding ``function`` as the exporter of ``operation_class``."""
    def decorate(function):
        EXPORTERS[operation_class] = function
        return function
    return decorate


def exporter_for(op):
    """The exporter of ``op``'s class (or of a base class), or a NotImplementedError naming
    the Operation class."""
    for cls in type(op).__mro__:
        if cls in EXPORTERS:
            return EXPORTERS[cls]
    raise NotImplementedError(
        f"autograd.onnx.export: no ONNX mapping for the Operation {type(op).__name__} "
        f"({type(op).__module__}); add one with autograd.onnx.register_exporter")


def has_exporter(layer):
    """Whether ``layer``'s class (not Layer itself) has an exporter of its own: then export
    traces it as one call."""
    return any(cls in EXPORTERS for cls in type(layer).__mro__)


class ExportContext:
    """The nodes and initializers being built, and the names of the Tensors met so far."""

    def __init__(self, parameter_names, opset):
        from onnx import helper, numpy_helper
        self.helper, self.numpy_helper = helper, numpy_helper
        self.parameter_names, self.opset = parameter_names, opset
        self.nodes, self.initializers = [], []
        self._names, self._keep, self._count = {}, [], 0

    def bind(self, tensor, name):
        self._names[id(tensor)] = name
        self._keep.append(tensor)          # ids stay unique while the export runs

    def name_of(self, tensor):
        """The name of an op's input: a graph input, an earlier output, or else an initializer
        (a parameter or buffer by its dotted name, a constant by a fresh one)."""
        name = self._names.get(id(tensor))
        if name is None:
            array = tensor.data if hasattr(tensor, "data") else tensor
            # an op's index or mask input wraps the array of a graph input (an embedding's ids)
            name = next((self._names[id(known)] for known in self._keep
                         if getattr(known, "data", None) is array), None)
            if name is None:
                name = self.constant(array, self.parameter_names.get(id(array)))
            self.bind(tensor, name)
        return name

    def new_name(self, tensor, hint):
        self._count += 1
        name = f"{hint}_{self._count}"
        self.bind(tensor, name)
        return name

    def constant(self, array, name=None):
        """An initializer holding ``array`` (a host copy); returns its name."""
        if name is None:
            self._count += 1
            name = f"constant_{self._count}"
        if any(init.name == name for init in self.initializers):
            return name
        host = array.get() if hasattr(array, "get") else np.asarray(array)
        self.initializers.append(self.numpy_helper.from_array(np.ascontiguousarray(host), name))
        return name

    def node(self, op_type, inputs, outputs, **attributes):
        self.nodes.append(self.helper.make_node(op_type, inputs, outputs, **attributes))


def _same(op_type, **attributes):
    """An exporter to one ``op_type`` node with the same inputs; ``attributes`` maps each ONNX
    attribute to (the Operation's attribute, the type ONNX wants)."""
    def run(context, op, inputs, outputs, tensors):
        context.node(op_type, inputs, outputs, **{name: kind(getattr(op, field))
                                                  for name, (field, kind) in attributes.items()})
    return run


for _class, _type in (
        (elementwise.Add, "Add"), (elementwise.Sub, "Sub"), (elementwise.Mul, "Mul"),
        (elementwise.Div, "Div"), (elementwise.Pow, "Pow"), (elementwise.Maximum, "Max"),
        (elementwise.Minimum, "Min"), (linalg.MatMul, "MatMul"), (activation.ReLU, "Relu"),
        (activation.Tanh, "Tanh"), (activation.Sigmoid, "Sigmoid"), (unary.Exp, "Exp"),
        (unary.Log, "Log"), (unary.Sqrt, "Sqrt"), (unary.Negative, "Neg"),
        (unary.Abs, "Abs"), (unary.Reciprocal, "Reciprocal"), (unary.Identity, "Identity"),
        (pooling.GlobalAvgPool2d, "GlobalAveragePool")):
    register_exporter(_class)(_same(_type))


def _scalar(op_type, reverse=False):
    def run(context, op, inputs, outputs, tensors):
        constant = context.constant(np.asarray(op.c, dtype=tensors[0].dtype))
        pair = [constant, inputs[0]] if reverse else [inputs[0], constant]
        context.node(op_type, pair, outputs)
    return run


for _class, _type, _reverse in (
        (elementwise.AddScalar, "Add", False), (elementwise.MulScalar, "Mul", False),
        (elementwise.DivScalar, "Div", False), (elementwise.RSubScalar, "Sub", True),
        (elementwise.RDivScalar, "Div", True), (elementwise.PowScalar, "Pow", False),
        (elementwise.RPowScalar, "Pow", True)):
    register_exporter(_class)(_scalar(_type, _reverse))


@register_exporter(linalg.AddBias)
def _add_bias(context, op, inputs, outputs, tensors):
    shape = (1, -1) if op.axis == 0 else (-1, 1)
    bias = context.constant(np.asarray(shape, np.int64))
    context.node("Reshape", [inputs[1], bias], [outputs[0] + "_bias"])
    context.node("Add", [inputs[0], outputs[0] + "_bias"], outputs)


@register_exporter(linalg.Gemm)
def _gemm(context, op, inputs, outputs, tensors):
    context.node("Gemm", inputs, outputs, alpha=float(op.alpha), beta=float(op.beta),
                 transA=int(op.transA), transB=int(op.transB))


@register_exporter(conv.Conv2d)
def _conv(context, op, inputs, outputs, tensors):
    geometry = op.geometry
    (top, bottom), (left, right) = op.pads
    context.node("Conv", inputs, outputs, kernel_shape=list(geometry.kernel),
                 strides=list(geometry.stride), dilations=list(geometry.dilation),
                 group=geometry.groups, pads=[top, left, bottom, right])


@register_exporter(pooling.MaxPool2d)
def _max_pool(context, op, inputs, outputs, tensors):
    windows = op.windows
    (top, bottom), (left, right) = windows.pads
    context.node("MaxPool", inputs, outputs, kernel_shape=list(windows.kernel),
                 strides=list(windows.stride), pads=[top, left, bottom, right])


@register_exporter(pooling.AvgPool2d)
def _average_pool(context, op, inputs, outputs, tensors):
    """count_include_pad=1 where every window divides by the kernel's size; count_include_pad=0
    where each divides by its pixels inside the input (what ONNX counts then, padding and
    ceil-mode overhang left out)."""
    windows = op.windows
    (top, bottom), (left, right) = windows.pads
    attributes = dict(kernel_shape=list(windows.kernel), strides=list(windows.stride),
                      pads=[top, left, bottom, right])
    divisor = op.divisor.get() if hasattr(op.divisor, "get") else np.asarray(op.divisor)
    if divisor.ndim == 0 and divisor == np.prod(windows.kernel):
        context.node("AveragePool", inputs, outputs, count_include_pad=1, **attributes)
        return
    inside = []
    for axis, size in enumerate(tensors[0].shape[2:]):
        starts = np.arange(windows.out_size[axis]) * windows.stride[axis] - windows.pads[axis][0]
        inside.append(np.minimum(starts + windows.kernel[axis], size) - np.maximum(starts, 0))
    if np.array_equal(np.broadcast_to(divisor, windows.out_size), np.outer(*inside)):
        context.node("AveragePool", inputs, outputs, count_include_pad=0, **attributes)
        return
    raise NotImplementedError("autograd.onnx.export: AvgPool2d whose ceil_mode windows count "
                              "their padding but not the overhang has no ONNX AveragePool "
                              "equivalent")


@register_exporter(normalization.BatchNorm)
def _batch_norm(context, op, inputs, outputs, tensors):
    if op.training:
        raise NotImplementedError("autograd.onnx.export: BatchNorm in training mode (export "
                                  "runs the model in eval mode; call model.eval())")
    mean = context.constant(op.running_mean, context.parameter_names.get(id(op.running_mean)))
    var = context.constant(op.running_var, context.parameter_names.get(id(op.running_var)))
    context.node("BatchNormalization", inputs + [mean, var], outputs, epsilon=float(op.eps),
                 momentum=float(op.momentum))


@register_exporter(normalization.LayerNorm)
def _layer_norm(context, op, inputs, outputs, tensors):
    x = tensors[0]
    names = list(inputs)
    if not op.has_scale:
        names.insert(1, context.constant(np.ones(x.shape[x.ndim - op.dims:], x.dtype)))
    context.node("LayerNormalization", names, outputs, axis=-op.dims, epsilon=float(op.eps))


def _unit_axes(longer, shorter):
    """The axes of ``longer`` that are ``shorter`` with axes of length 1 inserted, or None."""
    axes, k = [], 0
    for axis, size in enumerate(longer):
        if k < len(shorter) and size == shorter[k]:
            k += 1
        elif size == 1:
            axes.append(axis)
        else:
            return None
    return axes if k == len(shorter) else None


@register_exporter(shape.Reshape)
def _reshape(context, op, inputs, outputs, tensors):
    """A reshape that only inserts or removes axes of length 1 (squeeze, unsqueeze) is an
    Unsqueeze or Squeeze node, which keeps every other dimension symbolic; any other a Reshape
    whose first dimension is copied from the input where it is the batch's."""
    source, target = tuple(tensors[0].shape), tuple(op.shape)
    for op_type, axes in (("Unsqueeze", _unit_axes(target, source)),
                          ("Squeeze", _unit_axes(source, target))):
        if axes and context.opset >= 13:        # axes as an input from opset 13
            context.node(op_type, [inputs[0], context.constant(np.asarray(axes, np.int64))],
                         outputs)
            return
        if axes:
            context.node(op_type, inputs, outputs, axes=axes)
            return
    target = list(op.shape)
    if target and tensors[0].ndim and target[0] == tensors[0].shape[0]:
        target[0] = 0                  # copy the (symbolic) batch dimension
    context.node("Reshape", [inputs[0], context.constant(np.asarray(target, np.int64))],
                 outputs)


@register_exporter(joining.Split)
def _split(context, op, inputs, outputs, tensors):
    if context.opset < 13:                        # split sizes as an attribute before 13
        context.node("Split", inputs, outputs, axis=int(op.axis), split=list(op.sizes))
        return
    sizes = context.constant(np.asarray(op.sizes, np.int64))
    context.node("Split", [inputs[0], sizes], outputs, axis=int(op.axis))


@register_exporter(shape.Transpose)
def _transpose(context, op, inputs, outputs, tensors):
    axes = op.axes if op.axes is not None else tuple(reversed(range(tensors[0].ndim)))
    context.node("Transpose", inputs, outputs, perm=[int(a) for a in axes])


@register_exporter(dropout.Dropout)
def _dropout(context, op, inputs, outputs, tensors):
    context.node("Identity", inputs, outputs)       # export runs in eval mode


def _reduce(op_type):
    def run(context, op, inputs, outputs, tensors):
        axes = list(op.axes) if op.axes is not None else list(range(tensors[0].ndim))
        if op_type == "ReduceSum" or context.opset >= 18:    # axes as an input
            context.node(op_type, [inputs[0], context.constant(np.asarray(axes, np.int64))],
                         outputs, keepdims=int(op.keepdims))
        else:
            context.node(op_type, inputs, outputs, axes=axes, keepdims=int(op.keepdims))
    return run


register_exporter(reduction.Sum)(_reduce("ReduceSum"))
register_exporter(reduction.Mean)(_reduce("ReduceMean"))


@register_exporter(reduction.Extremum)
def _extremum(context, op, inputs, outputs, tensors):
    _reduce("ReduceMax" if op.largest else "ReduceMin")(context, op, inputs, outputs, tensors)


@register_exporter(reduction.ElementwiseSum)
def _elementwise_sum(context, op, inputs, outputs, tensors):
    context.node("Sum", inputs, outputs)


@register_exporter(reduction.ElementwiseExtremum)
def _elementwise_extremum(context, op, inputs, outputs, tensors):
    context.node("Max" if op.largest else "Min", inputs, outputs)


for _class, _type in ((activation.Softplus, "Softplus"), (activation.Softsign, "Softsign"),
                      (activation.Erf, "Erf"), (unary.Sign, "Sign"), (unary.Ceil, "Ceil"),
                      (unary.Floor, "Floor")):
    register_exporter(_class)(_same(_type))


@register_exporter(activation.GELU)
def _gelu(context, op, inputs, outputs, tensors):
    if context.opset < 20:
        raise NotImplementedError("autograd.onnx.export: GELU needs opset 20 or newer (the Gelu "
                                  f"node), got opset {context.opset}")
    context.node("Gelu", inputs, outputs, approximate="tanh" if op.approximate else "none")


@register_exporter(unary.Clip)
def _clip(context, op, inputs, outputs, tensors):
    dtype = tensors[0].dtype
    bounds = ["" if bound is None else context.constant(np.asarray(bound, dtype))
              for bound in (op.low, op.high)]
    context.node("Clip", [inputs[0]] + bounds, outputs)


@register_exporter(padding.Pad)
def _pad(context, op, inputs, outputs, tensors):
    if op.mode == "reflect" and padding._copies_an_axis(op.widths, tensors[0].shape):
        raise NotImplementedError("autograd.onnx.export: a reflect pad equal to its axis length "
                                  "(SINGA's copy of the axis) has no ONNX Pad equivalent")
    pads = [int(before) for before, _ in op.widths] + [int(after) for _, after in op.widths]
    names = [inputs[0], context.constant(np.asarray(pads, np.int64))]
    if op.mode == "constant":
        names.append(context.constant(np.asarray(op.constant, tensors[0].dtype)))
    context.node("Pad", names, outputs, mode=op.mode)


# One node with attributes read from the Operation (SINGA's hardsigmoid gamma is ONNX's beta).
for _class, _type, _attributes in (
        (joining.Concat, "Concat", {"axis": ("axis", int)}),
        (softmax.Softmax, "Softmax", {"axis": ("axis", int)}),
        (softmax.LogSoftmax, "LogSoftmax", {"axis": ("axis", int)}),
        (activation.LeakyReLU, "LeakyRelu", {"alpha": ("a", float)}),
        (activation.ELU, "Elu", {"alpha": ("alpha", float)}),
        (activation.SELU, "Selu", {"alpha": ("alpha", float), "gamma": ("gamma", float)}),
        (activation.HardSigmoid, "HardSigmoid", {"alpha": ("alpha", float),
                                                 "beta": ("gamma", float)})):
    register_exporter(_class)(_same(_type, **_attributes))


from . import export_indexing, export_recurrent    # noqa: E402,F401  (they fill EXPORTERS)
