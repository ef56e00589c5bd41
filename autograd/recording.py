"""When operations are recorded: the training flag, ``no_grad``/``enable_grad``, debug mode's
finiteness checks, and the hooks graph mode reads (``replayable``, ``not_replayable``).

:mod:`autograd.graph` walks what was recorded; both are the tape, split by what a reader looks
for (its names are re-exported there, so ``autograd.graph.no_grad`` keeps working).
"""
import functools
import sys
import threading

from .device import get_array_module

__all__ = ["no_grad", "enable_grad", "is_recording", "set_debug", "replayable",
           "not_replayable", "check_finite", "config", "thread_state", "package"]

# `autograd.training` is a plain attribute of the package (set in autograd/__init__.py) and the
# only copy of the flag: operations and layers read it there, live, so that SINGA's
# `autograd.training = False` works without any hook on the module.
package = sys.modules[__package__]


class _Config:
    """Process-wide switches besides ``autograd.training`` (which ``training`` reads and sets).

    ``no_thread_in_no_grad`` is True while no thread is inside ``no_grad``: then an op need not
    read the thread-local flag (about 3% of the cost of recording an op). Both flags are
    instance attributes: Python 3.11 reads those faster than class attributes."""

    def __init__(self):
        self.debug = False
        self._threads_without_grad = 0
        self._lock = threading.Lock()
        self.no_thread_in_no_grad = True
        self.recorder = None          # the graph-mode Recorder capturing a step now, if any

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


def replayable(function):
    """Mark ``function``, which computes on raw arrays outside any Operation (gradient
    clipping, a custom update rule), so that graph mode (:func:`autograd.capture`) records each
    call to it as one call and replays it on the new arrays; outside a capture it runs as is.

    Its Tensor and array arguments and results (also inside tuples, lists and dicts) are what a
    replay passes and takes; every other argument is kept as it was at capture.
    """
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        recorder = config.recorder
        if recorder is None or recorder.depth:
            return function(*args, **kwargs)
        return recorder.record_call(function, args, kwargs)
    return wrapper


def not_replayable(reason):
    """Called by code whose result graph mode could not replay faithfully (an output shape
    that depends on values, such as nonzero or a boolean mask): a step being captured now is
    refused with ``reason``; otherwise nothing happens."""
    recorder = config.recorder
    if recorder is not None and not recorder.depth:
        recorder.refuse(f"graph mode: {reason}; a replay would keep the captured shape")


def _describe(op):
    where = getattr(op, "created_at", None)
    return f"{type(op).__name__} (created at {where})" if where else type(op).__name__


def check_finite(op, arrays, phase):
    """Raise FloatingPointError if any of ``arrays`` holds NaN or inf (debug mode only)."""
    for array in arrays:
        if array is not None and array.dtype.kind in "fc":
            if not bool(get_array_module(array).isfinite(array).all()):
                raise FloatingPointError(f"{_describe(op)}: {phase} produced NaN or inf")
