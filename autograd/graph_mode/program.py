"""The replay program of a captured step: straight-line Python over raw arrays.

A capture writes one line per call it saw (an Operation's forward or backward, a gradient sum,
an optimizer update, a :func:`~autograd.graph_mode.replayable` function) into a
:class:`ProgramBuilder`. :meth:`ProgramBuilder.build` turns the lines into the source of one
function, compiles it, and returns it: registers are its local variables (``r7``), what stays
the same from replay to replay (bound methods, input buffers, parameters' arrays, constants) is
a global of its namespace (``k3``), and a register is deleted right after its last reader, as
the backward walk drops a gradient once it is consumed. No Tensor, edge or consumer count is
made while it runs. ``CapturedStep.source`` shows the program, e.g.::

    def replay():
        r4 = k1(k0, k2)          # Linear's forward on the input buffer and the weight
        r6 = k5(r4)              # ReLU
        ...
        k30(k2, r21, k31(k2))    # SGD._apply(weight, its gradient, its state)
        return (r6,)
"""
import itertools

import numpy as np

__all__ = ["ProgramBuilder"]


def as_arrays(result):
    """An Operation's result as its output Tensors hold it: NumPy scalars (what reductions
    return) become 0-d arrays, as ``Tensor.new_output`` makes them."""
    if type(result) is tuple:
        return tuple(np.asarray(r) if isinstance(r, np.generic) else r for r in result)
    return np.asarray(result) if isinstance(result, np.generic) else result


class ProgramBuilder:
    """Lines of a replay program and the values they refer to."""

    def __init__(self):
        self.namespace = {"as_arrays": as_arrays}
        self.lines = []           # (targets or None, expression, names read)
        self._numbers = itertools.count()

    def constant(self, value):
        """The global name under which the program reads ``value`` (the same object on every
        replay)."""
        name = f"k{next(self._numbers)}"
        self.namespace[name] = value
        return name

    def register(self):
        """A new local name for a value the program computes."""
        return f"r{next(self._numbers)}"

    def emit(self, targets, expression, reads):
        """Append ``targets = expression`` (``targets`` a list of names, None for an unused
        position; no targets: a bare statement). ``reads`` lists the names it reads."""
        self.lines.append((targets, expression, tuple(reads)))

    def build(self, results, parameters=()):
        """Compile the program returning the values named ``results``, taking the registers
        named ``parameters`` as its arguments; returns ``(function, source)``."""
        last_read = {}
        for index, (_, _, reads) in enumerate(self.lines):
            for name in reads:
                last_read[name] = index
        for name in results:
            last_read[name] = len(self.lines)
        body = []
        for index, (targets, expression, reads) in enumerate(self.lines):
            if targets is None:
                body.append(expression)
            else:
                names = [t if t is not None and t in last_read else "_" for t in targets]
                if len(names) == 1 and not _unpacks(targets):
                    body.append(f"{names[0]} = {expression}")
                else:
                    body.append(f"{', '.join(names)}, = {expression}")
            done = sorted({name for name in reads
                           if name.startswith("r") and last_read[name] == index})
            if done:
                body.append(f"del {', '.join(done)}")
        body.append(f"return ({''.join(name + ', ' for name in results)})")
        source = (f"def replay({', '.join(parameters)}):\n"
                  + "".join(f"    {line}\n" for line in body))
        code = compile(source, "<autograd captured step>", "exec")
        exec(code, self.namespace)      # noqa: S102 (our own generated source)
        return self.namespace["replay"], source


class _Unpacking(list):
    """Targets that unpack a sequence even when there is one (``r1, = f()``)."""


def unpacking(targets):
    """Mark ``targets`` as the items of a returned tuple or list."""
    return _Unpacking(targets)


def _unpacks(targets):
    return isinstance(targets, _Unpacking)
