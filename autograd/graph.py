"""The tape's backward walk: how ``backward`` runs the recorded operations in reverse (when
they are recorded, ``no_grad`` and debug mode, is :mod:`autograd.recording`).

A recorded Operation is a node of the graph, and its record is ``input_edges``: for each input,
``None`` when that input takes no gradient, else the edge ``(creator, output_index,
tensor_or_None, shape, dtype)``: where the input's gradient goes (output ``output_index`` of the
op ``creator``, and the tensor itself only if it stores its gradient, a parameter) and the shape
and dtype it must have. An op with several outputs also records ``output_shapes``. Edges point at
operations, not at input tensors, so an intermediate array lives on only if some op saved it.

``backward`` works in two steps: :func:`_count_consumers` counts, for every operation reachable
from ``y``, how many edges lead to it; :func:`_walk` then runs the operations whose consumers are
all done, summing the gradients that meet at one output or parameter (:func:`accumulate`), and
yields each parameter's gradient the moment its last consumer has run. Both are loops over
explicit stacks, so depth is limited by memory, not by Python's recursion limit.
"""
import numpy as np

from .device import get_array_module
from .recording import (config, package, thread_state, is_recording, no_grad,  # noqa: F401
                        enable_grad, set_debug, replayable, not_replayable, check_finite)

_ndarray = np.ndarray

__all__ = ["backward", "gradients", "no_grad", "enable_grad", "is_recording", "set_debug",
           "replayable", "not_replayable"]


def _initial_gradient(y, dy):
    data = y.data
    if dy is None:
        if data.size != 1:
            raise RuntimeError(
                f"backward: y has shape {data.shape}; a non-scalar y needs dy of the same shape")
        return get_array_module(data).ones_like(data)
    if hasattr(dy, "creator"):          # a Tensor (arrays have a .data memoryview)
        dy = dy.data
    if not hasattr(dy, "shape"):
        dy = get_array_module(data).asarray(dy, dtype=data.dtype)
    if dy.shape != data.shape:
        raise RuntimeError(f"backward: dy has shape {dy.shape} but y has shape {data.shape}")
    if dy.dtype != data.dtype:
        raise TypeError(f"backward: dy is {dy.dtype} but y is {data.dtype}; cast dy explicitly")
    if get_array_module(dy) is not get_array_module(data):
        raise TypeError("backward: dy and y are on different devices")
    return dy


def _count_consumers(root):
    """For each op reachable from ``root``: the number of edges that lead to it. A parameter
    tensor counts its own edges, and links to its creator (if any) once."""
    op_consumers = {root: 0}
    tensor_consumers = {}
    stack = [root]
    while stack:
        op = stack.pop()
        edges = op.input_edges
        if edges is None:
            raise RuntimeError(
                f"backward: the graph through {type(op).__name__} was already freed by an earlier "
                "backward; recompute the forward pass (or pass retain_graph=True the first time)")
        for edge in edges:
            if edge is None:
                continue
            source = edge[0]
            tensor = edge[2]
            if tensor is not None:
                seen = tensor_consumers.get(tensor, 0)
                tensor_consumers[tensor] = seen + 1
                if seen:
                    continue
            if source is not None:
                if source in op_consumers:
                    op_consumers[source] += 1
                else:
                    op_consumers[source] = 1
                    stack.append(source)
    return op_consumers, tensor_consumers


def backward(y, dy=None, retain_graph=False):
    """Walk the graph that produced ``y`` and yield ``(param, grad)`` for every tensor with
    ``stores_grad=True`` that ``y`` depends on, each once, as soon as its gradient is complete.

    ``dy`` (a Tensor or array of y's shape and dtype) defaults to ones for a scalar ``y``. The
    graph's saved arrays are released as it goes; ``retain_graph=True`` keeps them for another
    backward. ``grad`` is a Tensor on the parameter's device. Treat ``grad.data`` as read-only
    (compute new arrays from it, as the optimizers do): it may be the very array yielded for
    another parameter, or one the walk still passes on to other operations.

    Misuse (a y no op recorded, a freed graph, a missing or wrong dy) raises here, at the call,
    before anything is yielded.

    >>> import numpy as np, autograd
    >>> w = autograd.Tensor(data=[1.0, 2.0], stores_grad=True)
    >>> [(p is w, g.to_numpy()) for p, g in backward(autograd.sum(w * w))]
    [(True, array([2., 4.], dtype=float32))]
    """
    root = y.creator
    if root is None:
        raise RuntimeError(
            "backward: y was not produced by a recorded operation (it is a leaf, or it was "
            "computed under no_grad / with autograd.training off, or from inputs that need no "
            "gradient)")
    dy = _initial_gradient(y, dy)
    op_consumers, tensor_consumers = _count_consumers(root)
    return _walk(y, dy, root, op_consumers, tensor_consumers, retain_graph)


def _walk(y, dy, root, op_consumers, tensor_consumers, retain_graph):
    """The generator behind :func:`backward`. Each turn takes an op whose consumers have all
    run, calls its backward on its output gradients, checks each input gradient against the
    edge it flows along, and passes it on: to a parameter (yielded once its sum is complete)
    and to the op that made that input (ready once its last consumer is done).

    A ready op carries its gradient: one array (or None) for a one-output op, a list for several
    outputs. It runs once per op of every step, so the chain's path (one output, one consumer)
    is written out here and the helpers are only on the others."""
    if y.stores_grad:
        yield y, y.new_output(dy)
    ready = [(root, dy if root.output_shapes is None else _slots(root, y.output_index, dy))]
    del dy
    pending = {}                # op -> what its outputs received, while consumers remain
    partial_sums = {}           # parameter -> its gradient so far, while consumers remain
    debug = config.debug
    while ready:
        op, grads = ready.pop()
        edges = op.input_edges
        if type(grads) is _ndarray:
            input_grads = op.backward(grads)          # one output: no *grads unpacking
        elif grads is None or type(grads) is list:
            input_grads = _backward_of_several(op, grads, len(edges))
        else:
            input_grads = _backward_on_device_of(grads, op, (grads,))
        if type(input_grads) is not tuple:
            input_grads = tuple(input_grads) if type(input_grads) is list else (input_grads,)
        if len(input_grads) != len(edges):
            raise RuntimeError(f"{type(op).__name__}.backward returned {len(input_grads)} "
                               f"gradient(s) for {len(edges)} input(s)")
        if debug:
            check_finite(op, input_grads, "backward")
        if not retain_graph:
            op.saved = ()
            op.input_edges = None
        del grads
        for edge, gradient in zip(edges, input_grads):
            if edge is None:
                continue
            source, output_index, tensor, shape, dtype = edge
            if gradient is not None:
                try:
                    fits = gradient.shape == shape and (gradient.dtype is dtype or
                                                        gradient.dtype == dtype)
                except AttributeError:
                    fits = False
                if not fits:
                    raise _gradient_error(op, edges, edge, gradient)
            if tensor is not None:
                gradient = _gather(partial_sums, tensor_consumers, tensor, gradient, shape, dtype)
                if gradient is None:
                    continue            # more consumers of this parameter to come
                yield tensor, tensor.new_output(gradient)
            if source is None:
                continue
            remaining = op_consumers[source] - 1
            if remaining or source.output_shapes is not None or source in pending:
                op_consumers[source] = remaining
                _add_pending(pending, source, output_index, gradient)
                if not remaining:
                    ready.append((source, pending.pop(source)))
            else:
                ready.append((source, gradient))    # its only consumer: straight on
        del input_grads, gradient   # a paused walk must not keep consumed gradients alive


def accumulate(total, gradient):
    """The sum of two gradients that meet at one tensor or output (None: nothing flowed).
    Never ``total += gradient``: either may be an array shared with another input's gradient."""
    if total is None:
        return gradient
    if gradient is None:
        return total
    return total + gradient


def _slots(op, output_index, gradient):
    """The gradients of a several-output op's outputs: ``gradient`` at one, None elsewhere."""
    slots = [None] * len(op.output_shapes)
    slots[output_index] = gradient
    return slots


def _add_pending(pending, op, output_index, gradient):
    """Sum ``gradient`` into what ``op``'s output ``output_index`` has received so far."""
    if op.output_shapes is None:
        pending[op] = accumulate(pending.get(op), gradient)
    elif op in pending:
        slots = pending[op]
        slots[output_index] = accumulate(slots[output_index], gradient)
    else:
        pending[op] = _slots(op, output_index, gradient)


def _gather(partial_sums, consumers, tensor, gradient, shape, dtype):
    """One more consumer's gradient for a parameter: its complete gradient after the last one
    (zeros if nothing flowed), else None."""
    gradient = accumulate(partial_sums.pop(tensor, None), gradient)
    remaining = consumers[tensor] - 1
    if remaining:
        consumers[tensor] = remaining
        partial_sums[tensor] = gradient
        return None
    del consumers[tensor]
    if gradient is None:
        gradient = get_array_module(tensor.data).zeros(shape, dtype)
    return gradient


def _backward_of_several(op, grads, count):
    """An op's input gradients when it has several outputs (those nothing used get zeros) or
    when no gradient flowed into it (then none flows out)."""
    if grads is None or all(g is None for g in grads):
        return (None,) * count
    first = next(g for g in grads if g is not None)
    if any(g is None for g in grads):
        xp = get_array_module(first)
        grads = [xp.zeros(shape, dtype) if g is None else g
                 for g, (shape, dtype) in zip(grads, op.output_shapes)]
    if type(first) is _ndarray:
        return op.backward(*grads)
    return _backward_on_device_of(first, op, grads)


def _backward_on_device_of(array, op, grads):
    """``op.backward(*grads)`` with ``array``'s GPU current (a CuPy array's ``device`` is a
    context manager; NumPy's, a string, is not), so that what it allocates lands there."""
    device = getattr(array, "device", None)
    if not hasattr(device, "__enter__"):
        return op.backward(*grads)
    with device:
        return op.backward(*grads)


def _gradient_error(op, edges, edge, gradient):
    """The RuntimeError for a gradient that does not fit the input its ``edge`` leads to."""
    name = type(op).__name__
    index = next(i for i, e in enumerate(edges) if e is edge)
    shape, dtype = edge[3], edge[4]
    if not hasattr(gradient, "shape"):    # a Python number or list: say so plainly
        return RuntimeError(f"{name}.backward returned a {type(gradient).__name__} for input "
                            f"{index}; expected an array of shape {shape} (or None)")
    if gradient.shape != shape:
        return RuntimeError(f"{name}.backward returned a gradient of shape {gradient.shape} "
                            f"for input {index}, whose shape is {shape}")
    return RuntimeError(f"{name}.backward returned a {gradient.dtype} gradient for input "
                        f"{index}, which is {dtype}")


def gradients(y, dy=None, retain_graph=False):
    """The pairs of :func:`backward` as a dict ``{param: grad}``."""
    return dict(backward(y, dy, retain_graph))
