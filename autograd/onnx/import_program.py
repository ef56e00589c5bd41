"""An imported graph's inference pass as one straight-line program per layout of its inputs.

The eval-mode passes that record nothing run import_inference.py's fused steps. Run node by
node, every value went through a dict that kept it to the end of the pass, every step gathered
and checked its arguments by name, and every fused convolution looked its kernel plan up by its
arrays' layouts: SqueezeNet's batch-1 forward spent 0.68 ms of its 5.0 outside the kernels,
largely Python whose caches the kernels had just evicted (benchmarks/NOTES.md, twenty-third
session).

A :class:`Program` is made by one such pass (the trace), in which each step also writes its
line of graph mode's straight-line program (graph_mode/program.py): the graph's inputs are its
arguments, constants and weights its globals, computed values its local variables, deleted
after their last reader (their buffers are free for the next steps, as in eager mode). A fused
convolution, or a Concat of them, with a kernel plan for its input's layout becomes a call of
that plan (import_inference's ``PlannedConv`` and ``PlannedConcat``), which checks only that its
input and weights are the arrays and layouts it was made for (else it runs the step as the
trace did);
every other step calls its handler, as the pass node by node does. Outputs that nothing reads
and that are not the graph's are not asked for (Dropout's mask, LayerNormalization's
statistics). OnnxModel keeps 8 programs, by the inputs' layouts, the kernels switch and the
weights' arrays, and drops them with its folded weights (importer.py).
"""
import copy

from ..graph_mode.program import ProgramBuilder, unpacking
from .import_inference import FusedConcat, FusedConv, PlannedConcat, PlannedConv

__all__ = []


class Program:
    """One traced inference pass: ``program(inputs)`` (the graph's input Tensors, in order)
    returns the tuple of the graph's outputs, as the pass node by node would."""

    def __init__(self, function, source):
        self.function, self.source = function, source

    def __call__(self, inputs):
        return self.function(*inputs)


def trace(steps, values, input_names, output_names, context, arguments_of):
    """Run ``steps`` on ``values`` (names -> values: constants, weights, the graph's inputs) as
    a pass node by node does, writing each step's line; returns ``(outputs, program)``.
    ``arguments_of(values, node)`` gathers a step's arguments (and checks that they exist)."""
    builder = ProgramBuilder()
    names = {name: builder.register() for name in input_names}
    parameters = [names[name] for name in input_names]
    read = set(output_names)
    for _, step in steps:
        read.update(step.input)
    wanted = set(output_names) - set(values)
    for handler, step in steps:
        if not wanted:
            break
        arguments = arguments_of(values, step)
        call, reads = _compiled(handler, step, context, arguments, read)
        outputs = call(*[arguments[index] for index in reads])
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        program_names = [_name_in(builder, names, values, step.input[index]) for index in reads]
        targets = []
        for position, value in enumerate(outputs):
            name = step.output[position] if position < len(step.output) else ""
            targets.append(builder.register() if name else None)
            if name:
                values[name] = value
                names[name] = targets[-1]
                wanted.discard(name)
        expression = f"{builder.constant(call)}({', '.join(program_names)})"
        builder.emit(unpacking(targets) if isinstance(call, _StepCall) else targets, expression,
                     program_names)
    results = [_name_in(builder, names, values, name) for name in output_names if name in values]
    function, source = builder.build(results, parameters)
    return tuple(values[name] for name in output_names if name in values), Program(function,
                                                                                    source)


def _name_in(builder, names, values, name):
    """The program's name for the value ``name``: a register if a step or the caller gives it,
    else a global holding it (a constant, a weight's Tensor, None for an omitted input)."""
    known = names.get(name)
    if known is None:
        known = names[name] = builder.constant(values.get(name) if name else None)
    return known


def _compiled(handler, step, context, arguments, read):
    """(call, positions of the arguments it takes) for one step of the program."""
    if isinstance(step, FusedConv):
        planned = PlannedConv.of(context, step, arguments)
        if planned is not None:
            return planned, [0]
    elif isinstance(step, FusedConcat):
        planned = PlannedConcat.of(context, step, arguments)
        if planned is not None:
            return planned, planned.reads
    else:
        kept = len(step.output)
        while kept > 1 and step.output[kept - 1] not in read:
            kept -= 1
        if kept < len(step.output):         # trailing outputs nothing reads: not asked for
            step = copy.copy(step)
            step.output = step.output[:kept]
    return _StepCall(handler, context, step), list(range(len(arguments)))


class _StepCall:
    """A step as the pass node by node runs it: its handler on its arguments."""

    def __init__(self, handler, context, step):
        self.handler, self.context, self.step = handler, context, step

    def __call__(self, *arguments):
        outputs = self.handler(self.context, self.step, list(arguments))
        return outputs if isinstance(outputs, tuple) else (outputs,)
