"""ONNX node types -> the project's operations: the one table of the import direction.

A handler is ``function(context, node, inputs) -> output or tuple of outputs``; ``inputs`` has
one entry per node input: a Tensor, a NumPy array (a constant or a value computed from shapes
alone) or None for an omitted optional input. ``STATIC_INPUTS`` names the input positions that
are shapes, axes, indices or bounds: initializers read there stay constants, never parameters.
Old opsets give some of those as attributes and new ones as inputs; each handler takes both.
"""
import numpy as np

import autograd as ops

__all__ = ["IMPORTERS", "register", "handler_for", "Context", "ImportedNode"]

IMPORTERS = {}
STATIC_INPUTS = {
    "Reshape": (1,), "Unsqueeze": (1,), "Squeeze": (1,), "Slice": (1, 2, 3, 4), "Pad": (1, 2),
    "Tile": (1,), "Expand": (1,), "Gather": (1,), "Split": (1,), "Clip": (1, 2),
    "Dropout": (1, 2), "ReduceSum": (1,), "ReduceMean": (1,), "ReduceMax": (1,),
    "ReduceMin": (1,), "ConstantOfShape": (0,), "Resize": (1, 2, 3), "Upsample": (1,),
}


def register(op_type, domain=""):
    """Decorator adding ``function`` as the handler of ``op_type`` nodes."""
    def decorate(function):
        IMPORTERS[(domain, op_type)] = function
        return function
    return decorate


def handler_for(node):
    """The handler of ``node``, or a NotImplementedError naming its type and name."""
    domain = "" if node.domain in ("", "ai.onnx") else node.domain
    handler = IMPORTERS.get((domain, node.op_type))
    if handler is None:
        raise NotImplementedError(
            f"autograd.onnx: node {node.name!r} has type {node.op_type!r}"
            f"{' in domain ' + repr(node.domain) if node.domain else ''}, which is not "
            "supported (see docs/onnx.md; autograd.onnx.register_importer adds one)")
    return handler


def static_input_names(nodes):
    """Names read at a static position of some node (see STATIC_INPUTS)."""
    names = set()
    for node in nodes:
        for index in STATIC_INPUTS.get(node.op_type, ()):
            if index < len(node.input) and node.input[index]:
                names.add(node.input[index])
    return names


def statistics_input_names(nodes):
    """BatchNormalization's running mean and variance inputs: buffers, not parameters."""
    return {name for node in nodes if node.op_type == "BatchNormalization"
            for name in node.input[3:5]}


class Context:
    """What handlers share: the opset, the train/eval mode and the device."""

    def __init__(self, opset, training, device):
        self.opset, self.training, self.device = opset, training, device

    @property
    def version(self):
        return self.opset.get("", 21)

    def tensor(self, value, like=None):
        """``value`` as a Tensor: constants become Tensors outside the graph, in ``like``'s
        floating dtype when they are floating."""
        if isinstance(value, ops.Tensor):
            return value
        array = np.asarray(value)
        if like is not None and array.dtype.kind == "f" and like.dtype.kind == "f":
            array = array.astype(like.dtype, copy=False)
        return ops.Tensor(data=array, device=self.device, requires_grad=False)

    @staticmethod
    def array(value):
        """``value`` as a NumPy array (a static input: shape, axes, indices, bounds)."""
        if isinstance(value, ops.Tensor):
            return value.to_numpy()
        return np.asarray(value)


class ImportedNode:
    """A graph node as the importer runs it: the NodeProto's fields, its attributes parsed once
    (:func:`attribute` reads them without touching the protobuf on every call), and ``memo``,
    where a handler keeps what it derives from the attributes and the input shapes (a conv's
    geometry), so a forward pass repeats no parsing."""

    __slots__ = ("op_type", "name", "domain", "input", "output", "attribute", "attributes",
                 "memo")

    def __init__(self, proto, op_type=None, inputs=None, outputs=None):
        self.op_type = op_type or proto.op_type
        self.name, self.domain, self.attribute = proto.name, proto.domain, proto.attribute
        self.input = list(proto.input if inputs is None else inputs)
        self.output = list(proto.output if outputs is None else outputs)
        self.attributes = {entry.name: _attribute_value(entry) for entry in proto.attribute}
        self.memo = {}

    def remember(self, key, compute):
        """``compute()``, computed once per ``key``."""
        value = self.memo.get(key)
        if value is None:
            value = self.memo[key] = compute()
        return value


def _attribute_value(entry):
    from onnx import helper, numpy_helper
    value = helper.get_attribute_value(entry)
    if hasattr(value, "dims") and hasattr(value, "data_type"):
        return numpy_helper.to_array(value)
    if isinstance(value, list) and value and isinstance(value[0], bytes):
        return [item.decode() for item in value]
    return value.decode() if isinstance(value, bytes) else value


def attribute(node, name, default=None):
    """The value of attribute ``name`` of ``node`` (an :class:`ImportedNode` or a NodeProto):
    ints, floats, strings, lists, tensors as arrays."""
    attributes = getattr(node, "attributes", None)
    if attributes is not None:
        return attributes.get(name, default)
    for entry in node.attribute:
        if entry.name == name:
            return _attribute_value(entry)
    return default


def _static(inputs, index):
    return inputs[index] if index < len(inputs) else None


def _is_static(*values):
    return all(not isinstance(v, ops.Tensor) for v in values if v is not None)


# ---------------------------------------------------------------- elementwise

def _legacy_broadcast(node, a, b):
    """Opsets before 7: ``broadcast=1`` with ``axis`` aligns b's axes from ``axis`` of a."""
    axis = attribute(node, "axis")
    if not attribute(node, "broadcast", 0) or axis is None or b.ndim == 0:
        return b
    trailing = a.ndim - (axis % a.ndim) - b.ndim
    shape = tuple(b.shape) + (1,) * trailing
    return ops.reshape(b, shape) if isinstance(b, ops.Tensor) else np.reshape(b, shape)


def _binary(numpy_function, operation):
    def run(context, node, inputs):
        a, b = inputs
        b = _legacy_broadcast(node, a, b)
        if _is_static(a, b) or (a.dtype.kind in "iub" and b.dtype.kind in "iub"):
            return numpy_function(context.array(a), context.array(b))
        like = a if isinstance(a, ops.Tensor) else b
        return operation(context.tensor(a, like), context.tensor(b, like))
    return run


def _divide(a, b):
    if a.dtype.kind in "iu" and b.dtype.kind in "iu":     # ONNX: integer division truncates
        return np.trunc(a / b).astype(np.result_type(a, b))
    return a / b


for _name, _numpy, _operation in (
        ("Add", np.add, ops.add), ("Sub", np.subtract, ops.sub), ("Mul", np.multiply, ops.mul),
        ("Div", _divide, ops.div), ("Pow", np.power, ops.pow)):
    register(_name)(_binary(_numpy, _operation))


def _comparison(numpy_function):
    """Comparisons have no gradient: computed on the arrays, a bool result outside the tape."""
    def run(context, node, inputs):
        a, b = (context.array(v) for v in inputs)
        return numpy_function(a, _legacy_broadcast(node, a, b))
    return run


for _name, _numpy in (("Equal", np.equal), ("Less", np.less), ("Greater", np.greater),
                      ("LessOrEqual", np.less_equal), ("GreaterOrEqual", np.greater_equal)):
    register(_name)(_comparison(_numpy))

_UNARY = {
    "Relu": ops.relu, "Sigmoid": ops.sigmoid, "Tanh": ops.tanh, "Exp": ops.exp, "Log": ops.log,
    "Sqrt": ops.sqrt, "Neg": ops.neg, "Abs": ops.abs, "Reciprocal": ops.reciprocal,
    "Floor": ops.floor, "Ceil": ops.ceil, "Sin": ops.sin, "Cos": ops.cos, "Erf": ops.erf,
    "Softplus": ops.softplus, "Softsign": ops.softsign, "Identity": ops.identity,
}


def _unary(operation):
    def run(context, node, inputs):
        (x,) = inputs
        if _is_static(x) and operation is ops.identity:
            return x
        return operation(context.tensor(x))
    return run


for _name, _operation in _UNARY.items():
    register(_name)(_unary(_operation))


@register("LeakyRelu")
def _leaky_relu(context, node, inputs):
    return ops.leakyrelu(context.tensor(inputs[0]), attribute(node, "alpha", 0.01))


@register("Elu")
def _elu(context, node, inputs):
    return ops.elu(context.tensor(inputs[0]), attribute(node, "alpha", 1.0))


@register("Selu")
def _selu(context, node, inputs):
    return ops.selu(context.tensor(inputs[0]), attribute(node, "alpha", 1.67326319217681884765625),
                    attribute(node, "gamma", 1.05070102214813232421875))


@register("HardSigmoid")
def _hard_sigmoid(context, node, inputs):
    return ops.hardsigmoid(context.tensor(inputs[0]), attribute(node, "alpha", 0.2),
                           attribute(node, "beta", 0.5))


@register("Gelu")
def _gelu(context, node, inputs):
    return ops.gelu(context.tensor(inputs[0]), attribute(node, "approximate", "none"))


@register("Clip")
def _clip(context, node, inputs):
    x = inputs[0]
    if context.version < 11:
        low, high = attribute(node, "min"), attribute(node, "max")
    else:
        low, high = (None if v is None else context.array(v).reshape(-1)[0]
                     for v in (_static(inputs, 1), _static(inputs, 2)))
    if low is None and high is None:
        return x
    if _is_static(x) or x.dtype.kind in "iu":
        return np.clip(context.array(x), low, high)
    return ops.clip(x, None if low is None else float(low), None if high is None else
                    float(high))


@register("Where")
def _where(context, node, inputs):
    condition, a, b = inputs
    if _is_static(condition, a, b):
        return np.where(condition, a, b)
    like = a if isinstance(a, ops.Tensor) else b
    return ops.where(context.tensor(a, like), context.tensor(b, like),
                     context.array(condition).astype(bool))


@register("Cast")
def _cast(context, node, inputs):
    from onnx import helper
    dtype = helper.tensor_dtype_to_np_dtype(attribute(node, "to"))
    (x,) = inputs
    if _is_static(x):
        return np.asarray(x).astype(dtype)
    return ops.cast(x, dtype)


def _nary(numpy_function, operation):
    def run(context, node, inputs):
        if _is_static(*inputs):
            return numpy_function([np.asarray(v) for v in inputs])
        like = next(v for v in inputs if isinstance(v, ops.Tensor))
        tensors = [context.tensor(v, like) for v in inputs]
        return tensors[0] if len(tensors) == 1 else operation(*tensors)
    return run


register("Sum")(_nary(lambda arrays: np.sum(np.broadcast_arrays(*arrays), axis=0), ops.sum))
register("Mean")(_nary(lambda arrays: np.mean(np.broadcast_arrays(*arrays), axis=0), ops.mean))
register("Max")(_nary(lambda arrays: np.max(np.broadcast_arrays(*arrays), axis=0), ops.max))
register("Min")(_nary(lambda arrays: np.min(np.broadcast_arrays(*arrays), axis=0), ops.min))


# they fill IMPORTERS
from . import import_network, import_recurrent, import_resize, import_shape  # noqa: E402,F401
