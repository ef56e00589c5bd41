"""Which Operation made each Tensor, while the hook is installed: what SINGA's
``sonnx.to_onnx(inputs, outputs)`` walks back from a forward that has already run.

SINGA's Tensors keep their creator Operation and its inputs, so SINGA can export a finished
forward. autograd's tape records an op only when some input needs a gradient, and an edge keeps
only what backward needs (not a plain input's identity or a constant's value), so while the hook
is installed every ``Operation.__call__`` is also noted here: each output Tensor (held weakly)
maps to a :class:`Made` record holding the op and, per input, either the Made record of the
Tensor that produced it or, for a Tensor no op made (a data batch, a parameter, a constant),
the Tensor itself. Calls inside a graph-mode capture are not noted (they run on the
capture's copies of the inputs). Intermediate Tensors are not held, so a forward's activations are freed as
usual; the records of a forward live as long as one of its outputs.

>>> import numpy as np, autograd
>>> install_provenance()
>>> x = autograd.Tensor(data=np.ones((1, 2), np.float32))
>>> y = autograd.relu(x) * 2.0
>>> calls, values = calls_between([x], [y])
>>> [type(op).__name__ for op, _, _ in calls], values[0].shape
(['ReLU', 'MulScalar'], (1, 2))
>>> uninstall_provenance()
"""
import weakref

from ..operations.base import Operation
from ..recording import config
from ..tensor import Tensor

__all__ = ["Made", "Value", "made_by", "calls_between", "install_provenance",
           "uninstall_provenance"]

# id of an output Tensor -> (weak reference to it, Made, output index). Not a
# WeakKeyDictionary: that compares keys with ==, which is elementwise on Tensors. Entries of
# freed Tensors are swept when the table doubles (an id reused meanwhile is told apart by
# its dead reference).
_made = {}
_restore = []


class Value:
    """Stands for an output of a recorded op at export time: its shape and dtype (the
    exporters read those), not its array."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(shape), dtype

    @property
    def ndim(self):
        return len(self.shape)


class Made:
    """One Operation call: ``op``, ``sources`` (per input a ``(Made, index)`` or a Tensor) and
    ``outputs`` (per output its ``(shape, dtype)``)."""

    __slots__ = ("op", "sources", "outputs")

    def __init__(self, op, sources, outputs):
        self.op, self.sources, self.outputs = op, sources, outputs


def _noting_call(call):
    def noted_call(op, *inputs):
        outputs = call(op, *inputs)
        if config.recorder is not None:
            # a graph-mode capture runs on its own copies of the inputs, and its replays make
            # no calls: an export of either would be wrong, so neither is noted
            return outputs
        # plain tuples and references without callbacks: this runs for every op of a program
        sources = tuple([made_by(t) or t for t in inputs])
        if type(outputs) is tuple:
            record = Made(op, sources, tuple([(o.data.shape, o.data.dtype) for o in outputs]))
            for index, output in enumerate(outputs):
                _made[id(output)] = (weakref.ref(output), record, index)
        else:
            record = Made(op, sources, ((outputs.data.shape, outputs.data.dtype),))
            _made[id(outputs)] = (weakref.ref(outputs), record, 0)
        if len(_made) > _sweep_at[0]:
            _sweep()
        return outputs
    noted_call.__wrapped__ = call
    return noted_call


_sweep_at = [1024]


def _sweep():
    """Drop the entries of freed Tensors (amortized: when the table has doubled)."""
    for key in [key for key, entry in _made.items() if entry[0]() is None]:
        del _made[key]
    _sweep_at[0] = max(1024, 2 * len(_made))


def install_provenance():
    """Note every Operation call from now on (until :func:`uninstall_provenance`)."""
    if not _restore:
        _restore.append(Operation.__dict__["__call__"])
        Operation.__call__ = _noting_call(Operation.__call__)


def uninstall_provenance():
    if _restore:
        Operation.__call__ = _restore.pop()
        _made.clear()


def made_by(tensor):
    """``(Made, output index)`` of ``tensor``, or None when no noted op made it."""
    entry = _made.get(id(tensor))
    if entry is None or entry[0]() is not tensor:
        return None
    return entry[1], entry[2]


def calls_between(inputs, outputs):
    """The calls that lead from ``inputs`` (Tensors) to ``outputs`` (Tensors), each after
    the calls it reads from, as :func:`autograd.onnx.exporter.trace` gives them: ``(op, input values, output
    values)``, a value being a Tensor no op made, or a :class:`Value`; and the values that stand
    for ``outputs``. A ValueError names an output no noted op made."""
    stops = {}                                   # an input some op made stands for itself
    for t in inputs:
        if made_by(t) is not None:
            record, index = made_by(t)
            stops[(id(record), index)] = t
    values = []
    for position, y in enumerate(outputs):
        source = y if any(y is t for t in inputs) else made_by(y)
        if source is None:
            raise ValueError(
                f"sonnx.to_onnx: output {position} was not made by an operation run eagerly "
                "while the SINGA hook was installed: run the forward under python -m "
                "autograd.singa, outside a graph-mode training step (model.eval(); y = "
                "model(x) runs eagerly, as in SINGA), then export")
        values.append(source)
    order, seen, made_values = [], set(), {}

    def value_of(source):
        if isinstance(source, Tensor):
            return source
        record, index = source
        key = (id(record), index)
        if key in stops:
            return stops[key]
        if key not in made_values:
            made_values[key] = Value(*record.outputs[index])
        return made_values[key]

    def visit(source):                            # iterative post-order: deep nets recurse
        stack = [(source, False)]
        while stack:
            item, expanded = stack.pop()
            if isinstance(item, Tensor) or (id(item[0]), item[1]) in stops:
                continue
            record = item[0]
            if expanded:
                if id(record) not in seen:
                    seen.add(id(record))
                    order.append(record)
                continue
            if id(record) in seen:
                continue
            stack.append((item, True))
            stack.extend((s, False) for s in reversed(record.sources))

    for source in values:
        visit(source)
    calls = [(r.op, tuple(value_of(s) for s in r.sources),
              tuple(value_of((r, index)) for index in range(len(r.outputs)))) for r in order]
    return calls, [value_of(source) for source in values]
