"""Fused steps for the passes of an imported graph that record nothing (eval mode under
``autograd.no_grad()``): what onnxruntime fuses at load, run on the backend's kernels.

* ``Conv -> Relu``, the Relu the conv output's only reader: one convolution whose bias and ReLU
  are applied in place on the GEMM's output (``convolution.inference_forward``), no ReLU pass
  over a new array.
* ``Concat(axis=1)`` of convolutions (with or without their Relu) that only it reads, as in
  SqueezeNet's fire modules and Inception's branches: each convolution's GEMM writes straight
  into its channels of the one batch-last output, no copy.

A convolution the compiled shifted products take runs through a kernel plan made once per
layout of its arrays (``backend.forward_plans.shifted_rows_plan``): the node's checks and the
backend's rules run when the plan is made, not on every pass.

A pass that records, or one in training mode, runs the graph as it is (the fused steps take no
part in gradients), nor does a pass traced for export (:func:`unfused`: the exporter must see
each node's operations) or captured by graph mode (``autograd.capture`` replays Operations).
NumPy only: elsewhere each fused step runs its nodes one by one.
"""
import contextlib

import numpy as np

import autograd as ops
from .. import recording
from ..backend import buffer_cache, convolution, native
from ..backend.forward_plans import shifted_rows_plan
from ..backend.layout import from_batch_last
from ..operations.conv import convolve
from .import_network import _check_conv, _conv, _remember, _window_geometry

__all__ = []

_unfused_depth = [0]        # > 0 inside unfused(): every pass runs the graph as it is


@contextlib.contextmanager
def unfused():
    """Inside the block, imported graphs run node by node even in passes that record nothing
    (the exporter's trace hooks each Operation call, which the fused steps do not make)."""
    _unfused_depth[0] += 1
    try:
        yield
    finally:
        _unfused_depth[0] -= 1


def applies():
    """Whether a pass that records nothing may run the fused steps now: not inside
    :func:`unfused`, nor while graph mode captures a step (it replays Operations only)."""
    return not _unfused_depth[0] and recording.config.recorder is None


class FusedConv:
    """A Conv node (``conv``), then optionally an Add/Sum (``add``) of its output and the value
    ``residual`` (a name), then optionally a Relu (``relu``) of the result, as one step."""

    def __init__(self, conv, relu=None, add=None, residual=None):
        self.conv, self.relu, self.add, self.residual = conv, relu, add, residual
        self.input = list(conv.input) + ([residual] if residual else [])
        self.output = list((relu or add or conv).output)
        self.op_type, self.name = "Conv", conv.name
        self.plans = {}     # the arrays' layouts -> (output size, kernel plan) or None

    @property
    def nodes(self):
        return [node for node in (self.conv, self.add, self.relu) if node is not None]


class FusedConcat:
    """A Concat along the channels of FusedConvs' outputs that only it reads."""

    def __init__(self, concat, parts):
        self.concat, self.parts = concat, parts
        self.input = [name for part in parts for name in part.input]
        self.output = list(concat.output)
        self.op_type, self.name = "Concat", concat.name


def inference_steps(steps, output_names):
    """``steps`` ((handler, node) pairs, in order) with the fusions above: the steps the
    passes that record nothing run."""
    nodes = [node for _, node in steps]
    readers = {}
    for node in nodes:
        for name in node.input:
            readers[name] = readers.get(name, 0) + 1
    outputs = set(output_names)

    def only_reader(name):
        """The node that alone reads ``name`` (not a graph output), else None."""
        if readers.get(name) != 1 or name in outputs:
            return None
        return reader_of.get(name)

    reader_of = {name: node for node in nodes for name in node.input}
    fused = {}                  # id(node) -> the FusedConv or FusedConcat it is part of
    convs = {}                  # output name -> FusedConv
    for node in nodes:
        if node.op_type != "Conv" or len(node.output) != 1 or id(node) in fused:
            continue
        add = residual = relu = None
        last = node
        reader = only_reader(node.output[0])
        if (reader is not None and reader.op_type in ("Add", "Sum") and len(reader.input) == 2
                and len(set(reader.input)) == 2 and id(reader) not in fused):
            add, last = reader, reader
            residual = [name for name in reader.input if name != node.output[0]][0]
            reader = only_reader(reader.output[0])
        if reader is not None and reader.op_type == "Relu":
            relu = last = reader
        step = FusedConv(node, relu, add, residual)
        for part in step.nodes:
            fused[id(part)] = step
        convs[last.output[0]] = step
    for node in nodes:
        if (node.op_type != "Concat" or node.attributes.get("axis") not in (1, -3)
                or len(node.input) < 2 or len(set(node.input)) != len(node.input)
                or not all(name in convs and only_reader(name) is node for name in node.input)
                or any(convs[name].add is not None for name in node.input)):
            continue
        step = FusedConcat(node, [convs[name] for name in node.input])
        fused[id(node)] = step
        for part in step.parts:
            for member in part.nodes:
                fused[id(member)] = step
    result, placed = [], set()
    for handler, node in steps:
        step = fused.get(id(node))
        if step is None:
            result.append((handler, node))
        elif _placed_at(step) is node and id(step) not in placed:
            placed.add(id(step))
            result.append((_run_conv if isinstance(step, FusedConv) else _run_concat, step))
    return result


def _placed_at(step):
    """The node at whose place a fused step runs: its last one (every input is known there)."""
    if isinstance(step, FusedConcat):
        return step.concat
    return step.nodes[-1]


def _prepared(context, step, inputs):
    """(x, W, b, geometry, pads) as arrays for the backend, or None where the fused kernel does
    not apply (not NumPy float images, a 1-D conv)."""
    x = context.tensor(inputs[0])
    if type(x.data) is not np.ndarray or x.ndim != 4 or x.dtype.kind != "f":
        return None
    w = context.tensor(inputs[1], x)
    b = inputs[2] if len(inputs) > 2 else None
    b = None if b is None else context.tensor(b, x).data
    node = step.conv
    _check_conv(node, x, w, b)
    kernel = tuple(node.attributes.get("kernel_shape") or w.shape[2:])
    geometry = _remember(node, ("geometry", 2, kernel), lambda: _window_geometry(
        node, 2, kernel, "Conv", node.attributes.get("group", 1)))
    pads = _remember(node, ("pads", x.shape, w.shape), lambda: _checked_pads(
        x, w, geometry))
    return x, w.data, b, geometry, pads


def _checked_pads(x, w, geometry):
    """The pads, after the checks of the convolution op: it runs once per input shape."""
    convolve(x, w, None, geometry)
    return geometry.pads(x.shape[2:])


def _unfused_conv(context, step, inputs):
    count = len(step.conv.input)
    y = _conv(context, step.conv, inputs[:count])
    if step.add is not None:
        y = ops.add(y, context.tensor(inputs[count], y))
    return ops.relu(y) if step.relu is not None else y


def _planned(context, step, inputs):
    """((OH, OW), plan, x, W, b) where the step (no Add) has a compiled plan for these
    Tensors' layouts (forward_plans.shifted_rows_plan), its checks and rules run on the first
    pass with them; else None. A fire module's convolutions spent 13 us each deciding per
    pass (the node's checks, the backend's rules) around kernels of 20 to 300 us."""
    if step.add is not None or len(inputs) < 2:
        return None
    x, w = inputs[0], inputs[1]
    b = inputs[2] if len(inputs) > 2 else None
    if not (isinstance(x, ops.Tensor) and isinstance(w, ops.Tensor)
            and (b is None or isinstance(b, ops.Tensor)) and type(x.data) is np.ndarray):
        return None
    x_data, w_data, b_data = x.data, w.data, None if b is None else b.data
    key = (x_data.shape, x_data.strides, x_data.dtype, w_data.shape, w_data.strides,
           w_data.dtype, None if b is None else (b_data.shape, b_data.strides, b_data.dtype),
           native.enabled())
    plan = step.plans.get(key, _UNSEEN)
    if plan is _UNSEEN:
        prepared = _prepared(context, step, inputs)
        plan = None if prepared is None else shifted_rows_plan(
            x_data, *prepared[1:], step.relu is not None)
        if len(step.plans) < _MOST_PLANS:
            step.plans[key] = plan
    return None if plan is None else (*plan, x, w_data, b_data)


_UNSEEN = object()
_MOST_PLANS = 64            # layouts kept per step (a model sees a few batch sizes)


class PlannedConv:
    """A FusedConv (no Add) with the kernel plan of its arrays' layouts bound (``of`` makes it,
    None where the step has no plan): called with its input x, it runs the plan where x, W
    and b are laid out as when it was made and W and b are still the weights' arrays;
    otherwise the step as :func:`_run_conv` runs it. import_program.py's programs call it."""

    @classmethod
    def of(cls, context, step, inputs):
        planned = _planned(context, step, inputs)
        return None if planned is None else cls(context, step, inputs, planned)

    def __init__(self, context, step, inputs, planned):
        (out_h, out_w), self.plan, x, self.weight, self.bias = planned
        self.context, self.step, self.inputs = context, step, list(inputs)
        self.layout = layout_of(x.data)
        self.out_shape = (self.weight.shape[0], out_h, out_w, x.shape[0])

    def applies(self, x):
        """Whether the plan takes x: its data laid out as when the plan was made, and W and b
        still the weights' arrays."""
        bias = self.inputs[2] if len(self.inputs) > 2 else None
        return (layout_of(x.data) == self.layout and self.inputs[1].data is self.weight
                and (bias is None or bias.data is self.bias))

    def rows(self, x, out=None):
        """The plan's batch-last rows (O, OH * OW * N) for x, into ``out`` where given."""
        return self.plan(x.data, self.weight, self.bias, out)

    def __call__(self, x):
        if not self.applies(x):
            return _run_conv(self.context, self.step, [x] + self.inputs[1:])
        return x.new_output(from_batch_last(self.rows(x).reshape(self.out_shape)))


class PlannedConcat:
    """A FusedConcat whose parts all have plans (``of``; else None), writing into one
    batch-last output: called with each part's input x (``reads``: their positions among the
    step's inputs), else the step as :func:`_run_concat` runs it."""

    @classmethod
    def of(cls, context, step, inputs):
        parts = []
        for start, part, part_inputs in _parts_of(step, inputs):
            planned = PlannedConv.of(context, part, part_inputs)
            if planned is None:
                return None
            parts.append((start, planned))
        first = parts[0][1]
        if any(planned.out_shape[1:] != first.out_shape[1:] or planned.layout[3] !=
               first.layout[3] for _, planned in parts):
            return None
        return cls(context, step, inputs, parts)

    def __init__(self, context, step, inputs, parts):
        self.context, self.step, self.inputs = context, step, list(inputs)
        self.reads = [start for start, _ in parts]
        self.parts = [planned for _, planned in parts]
        self.out_h, self.out_w = self.parts[0].out_shape[1:3]

    def __call__(self, *xs):
        if all(planned.applies(x) for planned, x in zip(self.parts, xs)):
            return _channels_joined(xs[0], self.out_h, self.out_w, [
                (planned.weight.shape[0], lambda rows, planned=planned, x=x: planned.rows(x, rows))
                for planned, x in zip(self.parts, xs)])
        inputs = list(self.inputs)
        for position, x in zip(self.reads, xs):
            inputs[position] = x
        return _run_concat(self.context, self.step, inputs)


def layout_of(array):
    """What a plan depends on in an array: its type, shape, strides and dtype."""
    return type(array), array.shape, array.strides, array.dtype


def _parts_of(step, inputs):
    """(position of its first input, part, its inputs) for each part of a FusedConcat."""
    start = 0
    for part in step.parts:
        count = len(part.input)
        yield start, part, inputs[start:start + count]
        start += count


def _run_conv(context, step, inputs):
    """A FusedConv without its plan (a planned one is a PlannedConv): the node's checks and the
    backend's rules on every call."""
    prepared = _prepared(context, step, inputs[:len(step.conv.input)])
    residual = None
    if prepared is not None and step.add is not None:
        residual = inputs[-1]
        residual = residual.data if isinstance(residual, ops.Tensor) else None
        x, w = prepared[:2]
        shape = (x.shape[0], w.shape[0]) + prepared[3].output_size(x.shape[2:], prepared[4])
        if (type(residual) is not np.ndarray or residual.shape != shape
                or residual.dtype != x.dtype):
            prepared = None
    if prepared is None:
        return _unfused_conv(context, step, inputs)
    x, w, b, geometry, pads = prepared
    y = convolution.inference_forward(x.data, w, b, geometry, pads, step.relu is not None,
                                      residual=residual)
    return x.new_output(y)


def _run_concat(context, step, inputs):
    """A FusedConcat without plans for all its parts (else a PlannedConcat), as _run_conv."""
    groups = [(part, part_inputs) for _, part, part_inputs in _parts_of(step, inputs)]
    prepared = [_prepared(context, part, part_inputs) for part, part_inputs in groups]
    sizes = None
    if all(p is not None for p in prepared):
        sizes = {(p[0].shape[0],) + p[3].output_size(p[0].shape[2:], p[4]) for p in prepared}
    if sizes is None or len(sizes) != 1 or len({p[0].dtype for p in prepared}) != 1:
        outputs = [_unfused_conv(context, part, part_inputs) for part, part_inputs in groups]
        return ops.cat(outputs, 1)
    _, out_h, out_w = sizes.pop()
    return _channels_joined(prepared[0][0], out_h, out_w, [
        (p[1].shape[0], lambda rows, p=p, relu=part.relu is not None: (
            convolution.inference_forward(p[0].data, *p[1:], relu, out=rows)))
        for p, part in zip(prepared, step.parts)])


def _channels_joined(x, out_h, out_w, parts):
    """A Concat along the channels of convolutions of x's batch, written in place: parts are
    (channels, write), write(rows) filling its (channels, OH * OW * N) rows of the one
    batch-last output."""
    n = x.shape[0]
    out = buffer_cache.empty(np, (sum(count for count, _ in parts), out_h * out_w * n), x.dtype)
    first = 0
    for count, write in parts:
        write(out[first:first + count])
        first += count
    return x.new_output(from_batch_last(out.reshape(-1, out_h, out_w, n)))
