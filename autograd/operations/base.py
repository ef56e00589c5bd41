"""Operation: the unit the tape records. Subclass it to add an op.

A subclass writes ``forward(*arrays)`` and ``backward(*grads)`` on raw NumPy/CuPy arrays; calling
the instance on Tensors runs forward and, when recording is on and some input needs a gradient,
links the outputs to it so that ``autograd.backward`` can call its backward later.

>>> import numpy as np, autograd
>>> class Square(autograd.Operation):
...     '''y = x^2.   dx = 2 x dy'''
...     def forward(self, x):
...         self.save_for_backward(x)
...         return x * x
...     def backward(self, dy):
...         (x,) = self.saved
...         return 2 * x * dy
>>> x = autograd.Tensor(data=[3.0], stores_grad=True)
>>> [g.to_numpy() for _, g in autograd.backward(autograd.sum(Square()(x)))]
[array([6.], dtype=float32)]
"""
import os
import re
import traceback

from ..device import cpu
from ..recording import config, package, thread_state, check_finite
from . import plan_cache

__all__ = ["Operation"]

_NO_INPUT = object()      # what Operation.__call__ gets when called with no input at all
_CPU = cpu()


class Operation:
    """Base class of every differentiable operation.

    Attributes a subclass may read:
      ``saved``            what ``save_for_backward`` stored (a tuple), released after backward;
      ``needs_input_grad`` one bool per input: whether backward must produce that gradient
                           (a data batch needs none, so e.g. a conv can skip its input gradient).
    Set by ``__call__`` for the graph walk: ``input_edges`` (see ``autograd.graph``) and, for ops
    with several outputs, ``output_shapes``.
    """

    saved = ()
    needs_input_grad = ()
    input_edges = None
    output_shapes = None
    recording = True        # False while a call is not recorded: save_for_backward keeps nothing
    forward_plan_key = None  # with forward plans: a method giving the settings they depend on

    def __init__(self, name=None):
        # SINGA's Operator takes a name; subclasses may call super().__init__(name).
        if name is not None:
            self.name = name

    def forward(self, *arrays):
        """Compute the outputs from raw arrays; return an array or a tuple of arrays."""
        raise NotImplementedError(f"{type(self).__name__} does not define forward")

    def backward(self, *grads):
        """Given one gradient per output, return one gradient per input (``None`` for an input
        that takes none), each with that input's shape and dtype."""
        raise NotImplementedError(f"{type(self).__name__} does not define backward")

    def forward_plan(self, *arrays):
        """Optional: a function that computes ``forward``'s outputs from arrays shaped, typed
        and laid out as ``arrays`` (the inputs of a call that records nothing, under
        ``no_grad``), with what ``forward`` decides per call decided once; None (this default)
        where there is none. Graph mode's replay runs such a call through it once the capture
        has checked that it gives ``forward``'s outputs bit for bit; so do eager calls where
        the class also defines ``forward_plan_key(self)``, the hashable settings the plan
        depends on besides the arrays' shapes, strides and dtypes (operations/plan_cache.py)."""
        return None

    def save_for_backward(self, *arrays):
        """Keep ``arrays`` for backward (as ``self.saved``); nothing is kept when not recording."""
        if self.recording:
            self.saved = arrays

    def __call__(self, x=_NO_INPUT, *others):
        """Run ``forward`` on the inputs' arrays; when recording is on and some input needs a
        gradient, record this op with one edge per input and make it the outputs' creator."""
        debug = config.debug
        if debug:
            self.created_at = _user_line()
        if others or x is _NO_INPUT:
            inputs = () if x is _NO_INPUT else (x, *others)
            arrays, edges = self._record_inputs(inputs)
            try:
                if inputs and inputs[0].device is not _CPU:
                    outputs = self._forward_on(inputs[0].device, arrays)
                elif edges is None and inputs and self.forward_plan_key is not None:
                    outputs = plan_cache.forward(self, arrays)     # no_grad: its plan
                else:
                    outputs = self.forward(*arrays)
            except (TypeError, ValueError) as error:
                _explain_forward_error(self, error, arrays)
                raise
        else:
            # One input, the commonest case, without the lists and loops of several: it saves
            # about a fifth of the recording cost of a unary op.
            try:
                array = x.data
                device = x.device
                record = (x.requires_grad and package.training and
                          (config.no_thread_in_no_grad or thread_state.grad_enabled) and
                          (x.stores_grad or x.creator is not None))
            except AttributeError:
                raise _not_tensors(self, (x,)) from None
            if record:
                self.needs_input_grad = (True,)
                edges = (_edge(x, array),)
            else:
                self.recording = False      # the class says True: one attribute write saved
                edges = None
            try:           # free unless raised (Python 3.11's zero-cost exceptions)
                if device is not _CPU:
                    outputs = self._forward_on(device, (array,))
                elif edges is None and self.forward_plan_key is not None:
                    outputs = plan_cache.forward(self, (array,))   # no_grad: its plan
                else:
                    outputs = self.forward(array)
            except (TypeError, ValueError) as error:
                _explain_forward_error(self, error, (array,))
                raise
        if type(outputs) is tuple:
            return self._wrap_outputs(outputs, x, edges)
        if debug:
            check_finite(self, (outputs,), "forward")
        if edges is None:
            return x.new_output(outputs)
        self.input_edges = edges
        return x.new_output(outputs, self, 0)

    def _forward_on(self, device, arrays):
        """``forward`` with the inputs' GPU current, so that what it allocates lands there
        (CuPy allocates on the current device, not on its inputs')."""
        with device.activate():
            return self.forward(*arrays)

    def _record_inputs(self, inputs):
        """``__call__``'s first step for several inputs: their arrays, and the edges to record
        (None when nothing is recorded). Plain loops: a comprehension costs a call."""
        recording = package.training and (config.no_thread_in_no_grad or
                                          thread_state.grad_enabled)
        arrays = []
        needs = [] if recording else None       # no_grad: none to work out (a fifth of this)
        try:
            for t in inputs:
                arrays.append(t.data)
                if recording:
                    needs.append(bool(t.requires_grad and
                                      (t.stores_grad or t.creator is not None)))
            if not inputs:
                raise AttributeError("no input")
            _check_compatible(self, inputs, arrays)
        except AttributeError:
            raise _not_tensors(self, inputs) from None
        if not recording or True not in needs:
            self.recording = False
            return arrays, None
        self.needs_input_grad = tuple(needs)
        edges = []
        for t, a, need in zip(inputs, arrays, needs):
            edges.append(_edge(t, a) if need else None)
        return arrays, edges

    def _wrap_outputs(self, outputs, like, edges):
        """Several outputs: each becomes a Tensor (``like``'s class and device) whose
        ``output_index`` says which it is."""
        if config.debug:
            check_finite(self, outputs, "forward")
        if edges is None:
            return tuple([like.new_output(o) for o in outputs])
        self.input_edges = edges
        self.output_shapes = [(o.shape, o.dtype) for o in outputs]
        return tuple([like.new_output(o, self, i) for i, o in enumerate(outputs)])


def _explain_forward_error(op, error, arrays):
    """A ``forward`` that failed in NumPy's or Python's own words (not a message of ours, which
    names what failed first) is re-raised naming the Operation and its inputs; ours pass."""
    message = str(error)
    if _OURS.match(message):
        return
    described = ", ".join(f"{getattr(a, 'dtype', type(a).__name__)} "
                          f"{tuple(getattr(a, 'shape', ()))}" for a in arrays)
    kind = ValueError if isinstance(error, ValueError) else TypeError
    raise kind(f"{type(op).__name__}: cannot compute on inputs ({described}): "
               f"{type(error).__name__}: {message}") from error


_OURS = re.compile(r"[A-Za-z_][\w.]*(\(\))?: ")


def _edge(t, array):
    """The graph edge of input ``t`` whose array is ``array`` (see autograd.graph)."""
    return (t.creator, t.output_index, t if t.stores_grad else None, array.shape, array.dtype)


def _not_tensors(op, inputs):
    return TypeError(f"{type(op).__name__}: expected Tensor inputs, got "
                     f"({', '.join(type(t).__name__ for t in inputs)})")


def _check_compatible(op, inputs, arrays):
    """One device for all inputs; floating inputs of one dtype (no silent float32->float64)."""
    device = inputs[0].device
    floating = None
    for t, a in zip(inputs, arrays):
        if t.device is not device:
            if not hasattr(t, "creator"):     # an array (NumPy 2 arrays have .device too)
                raise AttributeError("not a Tensor")      # reported by __call__
            raise TypeError(
                f"{type(op).__name__}: inputs are on different devices ({device} and {t.device}); "
                "move one with to_device()")
        if a.dtype.kind == "f":
            if floating is None:
                floating = a.dtype
            elif a.dtype != floating:
                raise TypeError(
                    f"{type(op).__name__}: cannot mix {floating} and {a.dtype} inputs; cast one "
                    "explicitly with as_type()")


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _user_line():
    """The innermost stack frame outside the autograd package, as 'file:line in function'."""
    for frame in reversed(traceback.extract_stack()[:-2]):
        if not os.path.abspath(frame.filename).startswith(_PACKAGE_DIR):
            return f"{frame.filename}:{frame.lineno} in {frame.name}"
    return "<unknown>"
