"""The class attributes a capture swaps while it records, and puts back afterwards.

See :mod:`autograd.graph_mode.recorder` for what each records or refuses.
"""
import sys

from .. import graph
from ..device import get_array_module
from ..operations.base import Operation
from ..opt.base import Optimizer
from ..tensor import Tensor

__all__ = ["Hooks"]

# Tensor methods that read a value on the host: the step's Python would branch on, print or
# copy a value that a replay never recomputes.
_HOST_READS = ("item", "to_numpy", "numpy", "tolist", "__bool__", "__array__", "__float__",
               "__int__", "__index__", "__repr__", "__dlpack__")
# Tensor methods that write a value in place outside any Operation.
_IN_PLACE_WRITES = ("__iadd__", "__isub__", "__imul__", "__itruediv__", "copy_data",
                    "copy_from", "copy_from_numpy", "bernoulli", "gaussian", "uniform",
                    "set_value")


_ABSENT = object()


class Hooks:
    """The recording versions of Operation.__call__, the walk's sums and yields, the
    optimizer's updates and the Tensor methods that graph mode refuses, for one Recorder."""

    def __init__(self, recorder):
        self.recorder = recorder
        self._restore = []

    def remove(self):
        """Put every swapped attribute back (also after a failed install)."""
        for owner, attribute, original in reversed(self._restore):
            if original is _ABSENT:
                delattr(owner, attribute)
            else:
                setattr(owner, attribute, original)
        self._restore.clear()

    def _swap(self, owner, attribute, replacement):
        self._restore.append((owner, attribute, owner.__dict__.get(attribute, _ABSENT)))
        setattr(owner, attribute, replacement)

    def install(self):
        """Swap every hook in."""
        recorder = self.recorder
        call = Operation.__call__

        def recording_call(op, *inputs):
            if recorder.depth:
                return call(op, *inputs)
            return recorder.record_operation(call, op, inputs)

        self._swap(Operation, "__call__", recording_call)
        accumulate = graph.accumulate

        def recording_accumulate(total, gradient):
            if recorder.depth or total is None or gradient is None:
                return accumulate(total, gradient)
            return recorder.record_sum(total, gradient)

        self._swap(graph, "accumulate", recording_accumulate)
        walk = graph._walk

        def recording_walk(*args):
            for param, grad in walk(*args):
                if not recorder.depth:
                    recorder.yielded.append(grad.data)
                yield param, grad

        self._swap(graph, "_walk", recording_walk)
        apply, step = Optimizer._apply, Optimizer.step

        def recording_apply(optimizer, param, grad, state):
            if recorder.depth:
                return apply(optimizer, param, grad, state)
            return recorder.record_update(apply, optimizer, param, grad, state)

        def recording_step(optimizer):
            if not recorder.depth:
                recorder.program.emit(
                    None, f"{recorder.program.constant(optimizer.step)}()", ())
            return step(optimizer)

        self._swap(Optimizer, "_apply", recording_apply)
        self._swap(Optimizer, "step", recording_step)
        self._refuse_distributed()
        self._record_tensor_copies()
        for name in _HOST_READS:
            self._guard_tensor_method(name, self._host_read_refused)
        for name in _IN_PLACE_WRITES:
            self._guard_tensor_method(name, self._in_place_write)

    def _record_tensor_copies(self):
        """``Tensor(data=x)`` inside the step copies ``x``: when ``x`` is a value of the step
        (an input, a computed array), the copy becomes a line of the program."""
        recorder = self.recorder
        init = Tensor.__init__

        def recording_init(tensor, shape=None, data=None, *args, **kwargs):
            init(tensor, shape, data, *args, **kwargs)
            source = data.data if isinstance(data, Tensor) else data
            name = recorder.names.get(id(source)) if source is not None else None
            if name is not None and not recorder.depth:
                copy = _Copy(tensor.data.dtype, get_array_module(tensor.data))
                if get_array_module(source) is not copy.xp:
                    recorder.refuse("graph mode: Tensor(data=...) moves a value of the step to "
                                    "another device; do that outside the step")
                    return
                recorder.program.emit([recorder.produced(tensor.data)],
                                      f"{recorder.program.constant(copy)}({name})", (name,))

        self._swap(Tensor, "__init__", recording_init)

    def _refuse_distributed(self):
        distributed = sys.modules.get("autograd.opt.distributed")
        if distributed is None:
            return

        apply = distributed.DistOpt._apply
        recorder = self.recorder

        def refused(optimizer, *args, **kwargs):
            recorder.refuse("graph mode: DistOpt (distributed training) cannot be captured "
                            "yet; run distributed steps eagerly (use_graph=False)")
            recorder.depth += 1
            try:
                return apply(optimizer, *args, **kwargs)
            finally:
                recorder.depth -= 1

        self._swap(distributed.DistOpt, "_apply", refused)

    def _guard_tensor_method(self, name, check):
        original = getattr(Tensor, name, None)
        if original is None:
            return
        recorder = self.recorder

        def guarded(tensor, *args, **kwargs):
            if not recorder.depth:
                check(tensor, name)
            return original(tensor, *args, **kwargs)

        guarded.__name__ = name
        self._swap(Tensor, name, guarded)

    def _host_read_refused(self, tensor, name):
        self.recorder.refuse(
            f"graph mode: Tensor.{name} reads a value on the host inside the captured step, "
            "and a replay would not read it again (Python that branches on, prints or copies "
            "a value runs only at capture); return the Tensor from the step and read it "
            "after the call, or run this step eagerly")

    def _in_place_write(self, tensor, name):
        if id(tensor.data) in self.recorder.names:
            self.recorder.refuse(
                f"graph mode: Tensor.{name} writes in place into a Tensor the step already "
                "used, outside any Operation, and a replay would not write it again; use "
                "an Operation, or do it outside the captured step")
        if not tensor.stores_grad:        # a parameter being initialised lazily is fine
            self.recorder.written.add(id(tensor))
            self.recorder.pinned.append(tensor)



class _Copy:
    """``Tensor(data=a)``'s copy of a step's array, as a replay makes it."""

    def __init__(self, dtype, xp):
        self.dtype, self.xp = dtype, xp

    def __call__(self, array):
        return self.xp.array(array, dtype=self.dtype, copy=True)
