"""Recording a step while it runs eagerly once: what graph mode sees, and what it refuses.

While a :class:`Recorder` is active (one at a time, process-wide, like the ONNX exporter's
trace), these class attributes are swapped for recording versions and restored afterwards:

- ``Operation.__call__``: each forward, with the arrays it read and returned; each recorded
  op's ``backward`` is wrapped on the instance, so the walk's calls are seen too;
- ``graph.accumulate``: the gradient sums of the backward walk;
- ``Optimizer._apply`` and ``Optimizer.step``: the updates and the step counter;
- the Tensor methods that read a value on the host (``item``, ``to_numpy``, ``bool`` ...) or
  write one in place (``+=``, ``copy_from_numpy``, ``gaussian`` ...): refused inside the step,
  since a replay would not run them.

Every array a recorded call reads is named: a register (computed by an earlier call), an input
buffer, a parameter's or buffer's array (kept, and checked to be the same array before each
replay), or a constant (a zero or one the walk made, a Tensor the step created from fixed data).
Calls inside a recorded call (the ops an optimizer or an Operation uses internally) are part of
it and not recorded again.
"""
import types

import numpy as np

from .. import recording
from ..operations.plan_cache import verified_plan
from ..tensor import Tensor
from .hooks import Hooks
from .program import ProgramBuilder, unpacking
from .structure import flatten

__all__ = ["CaptureError", "Recorder"]


class CaptureError(RuntimeError):
    """A step that graph mode cannot replay faithfully, or a replay whose guard failed."""


def _is_array(value):
    return isinstance(value, np.ndarray) or type(value).__module__.startswith("cupy")


def _is_plain(value):
    if isinstance(value, (tuple, list)):
        return all(_is_plain(v) for v in value)
    return value is None or isinstance(value, (bool, int, float, str, np.number))


def _arrays_in(value):
    if _is_array(value):
        return [value]
    if isinstance(value, (tuple, list)):
        return [v for v in value if _is_array(v)]
    return []


class Recorder:
    """Records one eager run of a step into a :class:`ProgramBuilder` (use as a context)."""

    def __init__(self):
        self.program = ProgramBuilder()
        self.depth = 0                # > 0 inside a recorded call: nested calls are part of it
        self.names = {}               # id(array) -> its name in the program
        self.pinned = []              # every array named, so that no id is reused meanwhile
        self.kept = set()             # names of input buffers and parameters' arrays
        self.buffers = set()          # names of input buffers
        self.leaves = []              # (tensor, array): checked unchanged before each replay
        self.written = set()          # ids of tensors written in place while capturing
        self.wrapped_ops = []         # ops whose backward is wrapped on the instance
        self.released = set()         # ops whose saved arrays the program releases
        self.refusal = None           # why this step cannot be replayed (the first reason)
        self.yielded = []             # the gradient arrays backward yielded to the step
        self.op_settings = []         # (op class name, its plain settings) in call order
        self._hooks = Hooks(self)

    def refuse(self, reason):
        """Note that the step cannot be replayed. The step still runs to its end eagerly, so
        nothing is left half-updated; the capture then reports the first reason."""
        if self.refusal is None:
            self.refusal = reason

    # ------------------------------------------------------------ naming arrays
    def name_of(self, array, tensor=None):
        """The program's name for ``array`` (read through ``tensor``, if given)."""
        name = self.names.get(id(array))
        if name is not None:
            return name
        name = self.program.constant(array)
        if tensor is not None and tensor.creator is None:
            if id(tensor) in self.written:
                self.refuse(
                    "graph mode: a Tensor written in place inside the step (by gaussian(), "
                    "uniform(), copy_from_numpy(), +=, ...) is read by an operation; a replay "
                    "would not write it again. Draw or compute it with an Operation (as "
                    "dropout does), or do it outside the captured step")
            self.leaves.append((tensor, array))
            self.kept.add(name)
        self._pin(array, name)
        return name

    def keep(self, array):
        """Name an input buffer: the same array on every replay, refilled before it."""
        name = self.program.constant(array)
        self.kept.add(name)
        self.buffers.add(name)
        self._pin(array, name)
        return name

    def produced(self, array):
        """A new register for ``array``, computed by the call being recorded."""
        name = self.program.register()
        self._pin(array, name)
        return name

    def _pin(self, array, name):
        self.names[id(array)] = name
        self.pinned.append(array)

    # ------------------------------------------------------------ what is recorded
    def record_operation(self, call, op, inputs):
        """Run ``call(op, *inputs)`` (the real ``Operation.__call__``) and record its forward."""
        self._check_held_arrays(op)
        seen = []
        bound_forward = op.forward

        def forward(*arrays):
            result = bound_forward(*arrays)
            seen.append((arrays, result))
            return result

        op.forward = forward
        self.depth += 1
        try:
            outputs = call(op, *inputs)
        finally:
            self.depth -= 1
            del op.forward
        arrays, result = seen[0]
        reads = [self.name_of(a, t) for a, t in zip(arrays, inputs)]
        held = outputs if type(outputs) is tuple else (outputs,)
        targets = [self.produced(t.data) for t in held]
        converts = any(t.data is not r for t, r in
                       zip(held, result if type(result) is tuple else (result,)))
        function = bound_forward
        if op.input_edges is None:          # recorded nothing: a forward plan may run it
            function = verified_plan(op, arrays, result) or bound_forward
        expression = f"{self.program.constant(function)}({', '.join(reads)})"
        if converts:
            expression = f"as_arrays({expression})"
        self.program.emit(unpacking(targets) if type(result) is tuple else targets,
                          expression, reads)
        if op.input_edges is not None:
            self._wrap_backward(op)
        return outputs

    def fingerprint(self):
        """What two recordings of alike calls must share: their lines, their constant arrays
        (the same array, such as a parameter's, or equal values), and each op's plain
        settings (numbers, strings, tuples of them)."""
        constants = {name: value for name, value in self.program.namespace.items()
                     if name not in self.buffers and _is_array(value)}
        return list(self.program.lines), constants, self.op_settings

    def _check_held_arrays(self, op):
        """An op that holds an array it was given at construction would replay on that same
        array: fine for an input buffer, a parameter's array or state it updates in place
        (``replay_keeps``), wrong for anything computed in the step."""
        keeps = getattr(op, "replay_keeps", ())
        self.op_settings.append((type(op).__name__, {
            attribute: value for attribute, value in vars(op).items() if _is_plain(value)}))
        for attribute, value in vars(op).items():
            if attribute in keeps or attribute == "saved":
                continue
            for array in _arrays_in(value):
                if self.names.get(id(array)) in self.kept:
                    continue
                self.refuse(
                    f"graph mode: {type(op).__name__} holds an array in .{attribute} that it "
                    "did not get as an input, so a replay would reuse this step's value; pass "
                    "it to the Operation as a Tensor input (or, for state the op updates in "
                    "place, list the attribute in its class's replay_keeps)")

    def _wrap_backward(self, op):
        bound_backward = op.backward
        recorder = self

        def backward(*grads):
            reads = [recorder.name_of(g) for g in grads]
            result = bound_backward(*grads)
            items = result if isinstance(result, (tuple, list)) else (result,)
            targets = [None if g is None else recorder.produced(g) for g in items]
            expression = f"{recorder.program.constant(bound_backward)}({', '.join(reads)})"
            recorder.program.emit(unpacking(targets) if items is result else targets,
                                  expression, reads)
            recorder.program.emit(None, f"{recorder.program.constant(op)}.saved = ()", ())
            recorder.released.add(id(op))
            return result

        op.backward = backward
        self.wrapped_ops.append(op)

    def record_sum(self, total, gradient):
        result = total + gradient
        reads = [self.name_of(total), self.name_of(gradient)]
        self.program.emit([self.produced(result)], f"{reads[0]} + {reads[1]}", reads)
        return result

    def record_update(self, apply, optimizer, param, grad, state):
        name = self.names.get(id(grad))
        if (name is None or not name.startswith("r")) and bool(grad.any()):
            self.refuse(
                f"graph mode: {type(optimizer).__name__} got a gradient for "
                f"{param.name or 'a parameter'} that no recorded call computed (it was made "
                "from .data outside any Operation); a replay would reuse this step's value. "
                "Compute it with Operations, or decorate the function that makes it with "
                "autograd.replayable")
        grad_name = self.name_of(grad)
        param_name = self.program.constant(param)
        self.leaves.append((param, param.data))
        bound_apply = self.program.constant(types.MethodType(apply, optimizer))
        state_for = self.program.constant(optimizer._state_for)
        self.program.emit(None, f"{bound_apply}({param_name}, {grad_name}, "
                                f"{state_for}({param_name}))", (grad_name,))
        self.depth += 1
        try:
            return apply(optimizer, param, grad, state)
        finally:
            self.depth -= 1

    def record_call(self, function, args, kwargs):
        """A :func:`replayable` function's call, as one line of the program."""
        args = tuple(list(a) if isinstance(a, types.GeneratorType) else a for a in args)
        leaves, rebuild = flatten((args, kwargs))
        reads, passed = [], []
        for leaf in leaves:
            if isinstance(leaf, Tensor) and leaf.stores_grad:
                passed.append(self.program.constant(leaf))
                self.leaves.append((leaf, leaf.data))
            elif isinstance(leaf, Tensor) or _is_array(leaf):
                name = self.name_of(leaf.data if isinstance(leaf, Tensor) else leaf, leaf
                                    if isinstance(leaf, Tensor) else None)
                reads.append(name)
                passed.append(name)
            else:
                passed.append(self.program.constant(leaf))
        self.depth += 1
        try:
            result = function(*args, **kwargs)
        finally:
            self.depth -= 1
        outputs, rebuild_result = flatten(result)
        targets = [self.produced(o.data if isinstance(o, Tensor) else o)
                   if isinstance(o, Tensor) or _is_array(o) else None for o in outputs]
        call = self.program.constant(_ReplayedCall(function, leaves, rebuild, outputs))
        self.program.emit(unpacking(targets), f"{call}({', '.join(passed)})", reads)
        return result

    def check_gradients_used(self, results):
        """Backward yielded gradients but no recorded call used any and the step returned
        none: it updates its parameters by hand (``p.data -= lr * g.data``), which a replay
        cannot see. ``results`` names what the step returns."""
        if not self.yielded:
            return
        read = set(results)
        for _, _, names in self.program.lines:
            read.update(names)
        if not any(self.names.get(id(g)) in read for g in self.yielded):
            self.refuse(
                "graph mode: backward yielded gradients, but no optimizer update or replayable "
                "function used any of them (an update written on .data, such as "
                "p.data -= lr * g.data, runs only at capture); update with an optimizer, or "
                "decorate the update function with autograd.replayable")

    # ------------------------------------------------------------ switching the hooks on (hooks.py)
    def __enter__(self):
        if recording.config.recorder is not None:
            raise CaptureError("graph mode: a step is already being captured (captures do "
                               "not nest)")
        recording.config.recorder = self
        try:
            self._hooks.install()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc):
        self._hooks.remove()
        for op in self.wrapped_ops:
            vars(op).pop("backward", None)
        recording.config.recorder = None
        return False

class _ReplayedCall:
    """A :func:`replayable` call as the program runs it: arrays in, arrays out."""

    def __init__(self, function, leaves, rebuild, outputs):
        self.function, self.rebuild = function, rebuild
        # the positions of the Tensors the step made (wrapped again on each replay)
        self.wrapped = [(position, leaf.device) for position, leaf in enumerate(leaves)
                        if isinstance(leaf, Tensor) and not leaf.stores_grad]
        self.outputs_are_tensors = [isinstance(o, Tensor) for o in outputs]

    def __call__(self, *values):
        leaves = list(values)
        for position, device in self.wrapped:
            leaves[position] = Tensor.from_operation(leaves[position], device)
        args, kwargs = self.rebuild(leaves)
        result = self.function(*args, **kwargs)
        if result is None:                     # an update: nothing to flatten
            return (None,)
        outputs, _ = flatten(result)
        return tuple(o.data if is_tensor else o
                     for o, is_tensor in zip(outputs, self.outputs_are_tensors))
