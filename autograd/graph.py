"""The tape: when operations are recorded, and how ``backward`` walks them in reverse.

Every recorded Operation keeps ``input_edges``: for each input, ``None`` when that input takes no
gradient, else ``(creator, output_index, tensor_or_None, shape, dtype)`` where the tensor is kept
only if it stores its gradient (a parameter). Edges point at operations, not at input tensors, so
an intermediate array lives on only if some op saved it for backward.

``backward`` first counts, for every operation reachable from ``y``, how many edges lead to it;
it then runs the operations whose consumers are all done, summing the gradients that meet at a
tensor, and yields each parameter's gradient the moment its last consumer has run. Both passes
are loops over explicit stacks, so depth is limited by memory, not by Python's recursion limit.
"""
import functools
import sys
import threading

from .device import get_array_module

__all__ = ["backward", "gradients", "no_grad", "enable_grad", "is_recording", "set_debug"]

# `autograd.training` is a plain attribute of the package (set in autograd/__init__.py) and the
# only copy of the flag: operations and layers read it there, live, so that SINGA's
# `autograd.training = False` works without any hook on the module.
package = sys.modules[__package__]


class _Config:
    """Process-wide switches besides ``autograd.training`` (which ``training`` reads and sets).

    ``no_thread_in_no_grad`` is True while no thread is inside ``no_grad``: then an op need not
    read the thread-local flag (about 3% of the cost of recording an op)."""
    debug = False

    def __init__(self):
        self._threads_without_grad = 0
        self._lock = threading.Lock()
        self.no_thread_in_no_grad = True

    @property
    def training(self):
        return bool(package.training)

    @training.setter
    def training(self, value):
        package.training = bool(value)

    def count_thread_without_grad(self, change):
        """A thread turned gradients off (+1) or back on (-1)."""
        with self._lock:
            self._threads_without_grad += change
            self.no_thread_in_no_grad = not self._threads_without_grad


config = _Config()


class _ThreadState(threading.local):
    grad_enabled = True      # class attribute: the value every new thread starts with


thread_state = _ThreadState()


def is_recording():
    """True when operations called now are recorded for backward."""
    return bool(package.training) and (config.no_thread_in_no_grad or thread_state.grad_enabled)


class no_grad:
    """Stop recording operations in this thread, as a context manager or a decorator.

    It only stops recording: the train/eval behaviour of BatchNorm and Dropout follows
    ``autograd.training`` and ``Layer.train()/eval()``.

    >>> from autograd import Tensor, relu
    >>> with no_grad():
    ...     y = relu(Tensor(data=[1.0, -1.0]))
    >>> y.creator is None
    True
    """

    _enabled = False

    def __new__(cls, function=None):
        # `@no_grad` without parentheses decorates `function` directly, as PyTorch allows
        self = super().__new__(cls)
        return self if function is None else self(function)

    def __enter__(self):
        self._previous = thread_state.grad_enabled
        self._switch(self._previous, self._enabled)
        return self

    def __exit__(self, *exc):
        self._switch(self._enabled, self._previous)
        return False

    @staticmethod
    def _switch(current, wanted):
        thread_state.grad_enabled = wanted
        if wanted != current:
            config.count_thread_without_grad(-1 if wanted else 1)

    def __call__(self, function):
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            with type(self)():
                return function(*args, **kwargs)
        return wrapper


class enable_grad(no_grad):
    """Turn recording back on inside a ``no_grad`` block (context manager or decorator)."""
    _enabled = True


def set_debug(enabled=True):
    """Debug mode: every op records the user's line that created it, and the first NaN or inf
    produced by a forward or a backward raises FloatingPointError naming the op and that line.
    It costs a stack walk and a finiteness check per op, so it is off by default."""
    config.debug = bool(enabled)


def _describe(op):
    where = getattr(op, "created_at", None)
    return f"{type(op).__name__} (created at {where})" if where else type(op).__name__


def check_finite(op, arrays, phase):
    """Raise FloatingPointError if any of ``arrays`` holds NaN or inf (debug mode only)."""
    for array in arrays:
        if array is not None and array.dtype.kind in "fc":
            if not bool(get_array_module(array).isfinite(array).all()):
                raise FloatingPointError(f"{_describe(op)}: {phase} produced NaN or inf")


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


def _gradient_error(op, index, gradient, shape, dtype):
    """The RuntimeError for a gradient that does not fit its input (the walk's slow path)."""
    name = type(op).__name__
    if not hasattr(gradient, "shape"):    # a Python number or list: say so plainly
        return RuntimeError(f"{name}.backward returned a {type(gradient).__name__} for input "
                            f"{index}; expected an array of shape {shape} (or None)")
    if gradient.shape != shape:
        return RuntimeError(f"{name}.backward returned a gradient of shape {gradient.shape} "
                            f"for input {index}, whose shape is {shape}")
    return RuntimeError(f"{name}.backward returned a {gradient.dtype} gradient for input "
                        f"{index}, which is {dtype}")


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
    """The generator behind :func:`backward`. It runs once per op of every training step, so
    the helpers it would call are written out inline."""
    wrap = type(y).from_gradient
    if y.stores_grad:
        yield y, wrap(dy, y.device)
    slots = [None] * len(root.output_shapes) if root.output_shapes else [None]
    slots[y.output_index] = dy
    output_grads = {}           # op -> gradients of its outputs, while consumers remain
    tensor_grads = {}
    debug = config.debug
    ready = [(root, slots)]     # ops whose every consumer has run, with their output gradients
    del dy, slots
    while ready:
        op, grads = ready.pop()
        edges = op.input_edges
        if len(grads) == 1:
            gradient = grads[0]
            flowing = gradient is not None
            if flowing:
                input_grads = op.backward(gradient)   # cheaper than unpacking *grads
        else:
            flowing = any(g is not None for g in grads)
            if flowing:
                if any(g is None for g in grads):
                    grads = _fill_missing(op, grads)
                input_grads = op.backward(*grads)
        if flowing:
            if type(input_grads) is not tuple:
                input_grads = tuple(input_grads) if type(input_grads) is list else (input_grads,)
            if len(input_grads) != len(edges):
                raise RuntimeError(
                    f"{type(op).__name__}.backward returned {len(input_grads)} gradient(s) for "
                    f"{len(edges)} input(s)")
            if debug:
                check_finite(op, input_grads, "backward")
        else:
            input_grads = (None,) * len(edges)    # nothing flows in: nothing flows out
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
                    index = next(i for i, e in enumerate(edges) if e is edge)
                    raise _gradient_error(op, index, gradient, shape, dtype)
            if tensor is not None:
                # Never `total += gradient`: either may be an array shared with another input.
                total = tensor_grads.pop(tensor, None)
                if total is not None:
                    gradient = total if gradient is None else total + gradient
                remaining = tensor_consumers[tensor] - 1
                if remaining:
                    tensor_consumers[tensor] = remaining
                    tensor_grads[tensor] = gradient
                    continue
                del tensor_consumers[tensor]
                if gradient is None:
                    gradient = get_array_module(tensor.data).zeros(shape, dtype)
                yield tensor, wrap(gradient, tensor.device)
            if source is None:
                continue
            remaining = op_consumers[source] - 1
            if not remaining and source.output_shapes is None:
                # The last consumer of a one-output op (every op of a chain): it is ready, and
                # its gradient skips the dict unless earlier consumers left a partial sum.
                slots = output_grads.pop(source, None)
                if slots is not None and slots[0] is not None:
                    gradient = slots[0] if gradient is None else slots[0] + gradient
                ready.append((source, [gradient]))
                slots = None
                continue
            op_consumers[source] = remaining
            slots = output_grads.get(source)
            if slots is None:
                slots = [None] * len(source.output_shapes) if source.output_shapes else [None]
                output_grads[source] = slots
                slots[output_index] = gradient
            else:
                total = slots[output_index]
                if total is not None and gradient is not None:
                    slots[output_index] = total + gradient
                elif gradient is not None:
                    slots[output_index] = gradient
            if not remaining:
                ready.append((source, output_grads.pop(source)))
            slots = total = None      # a paused walk must not keep consumed gradients alive
        del input_grads, gradient


def _fill_missing(op, grads):
    """Zeros for the outputs of a multi-output op that nothing downstream used."""
    xp = get_array_module(next(g for g in grads if g is not None))
    return [xp.zeros(shape, dtype) if g is None else g
            for g, (shape, dtype) in zip(grads, op.output_shapes)]


def gradients(y, dy=None, retain_graph=False):
    """The pairs of :func:`backward` as a dict ``{param: grad}``."""
    return dict(backward(y, dy, retain_graph))
