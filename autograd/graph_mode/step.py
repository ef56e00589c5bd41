"""CapturedStep: a function captured on its first call and replayed on later ones."""
import warnings
from collections import OrderedDict

from ..backend import native
from ..recording import config, is_recording, package
from ..device import get_array_module
from ..tensor import Tensor
from .recorder import CaptureError, Recorder, _is_array
from .structure import flatten

__all__ = ["CapturedStep", "capture"]


def capture(function=None, *, max_captures=4, recapture=True, on_refusal="raise"):
    """Graph mode for a plain function: ``step = capture(train_step)`` (or ``@capture``).

    The first two calls run ``function`` eagerly and record it (the second recording is
    compared with the first: what changed outside any Operation is found there); later calls
    with inputs of the same shapes and dtypes, in the same training/recording mode, replay the
    recording on the new inputs without the tape. Other inputs (a last, smaller batch; eval mode) are captured
    too, up to ``max_captures`` kept at once; with ``recapture=False`` they raise
    :class:`CaptureError` instead.

    A step that cannot be replayed faithfully (it reads a value on the host, writes a Tensor in
    place, keeps an array computed outside an Operation, ...) still runs to its end eagerly,
    so nothing is half-updated; then ``on_refusal="raise"`` raises :class:`CaptureError`
    naming the reason, and ``on_refusal="eager"`` warns once and runs every later call
    eagerly. See docs/graph_mode.md.

    >>> import numpy as np, autograd
    >>> w = autograd.Tensor(data=[[1.0], [2.0]], stores_grad=True)
    >>> sgd = autograd.opt.SGD(lr=0.1)
    >>> @autograd.capture
    ... def step(x):
    ...     loss = autograd.sum(autograd.matmul(x, w))
    ...     sgd(loss)
    ...     return loss
    >>> x = autograd.Tensor(data=np.ones((3, 2), np.float32))
    >>> [round(step(x).item(), 4) for _ in range(4)]    # two recorded calls, two replays
    [9.0, 7.2, 5.4, 3.6]
    >>> step.replays
    2
    """
    options = dict(max_captures=max_captures, recapture=recapture, on_refusal=on_refusal)
    if function is None:
        return lambda f: CapturedStep(f, **options)
    return CapturedStep(function, **options)


class CapturedStep:
    """A callable that captures ``function`` once per kind of input and replays it.

    Attributes: ``captures`` (how many recordings were made), ``replays`` (how many calls
    replayed one), :meth:`source` (the replay program of the last capture, as Python).
    """

    def __init__(self, function, max_captures=4, recapture=True, on_refusal="raise"):
        if not callable(function):
            raise TypeError(f"capture: expected a function, got {type(function).__name__}")
        if int(max_captures) < 1:
            raise ValueError(f"capture: max_captures must be at least 1, got {max_captures}")
        if on_refusal not in ("raise", "eager"):
            raise ValueError(f"capture: on_refusal must be 'raise' or 'eager', got "
                             f"{on_refusal!r}")
        self.on_refusal = on_refusal
        self.eager_only = False       # set when a refused step made on_refusal="eager" give up
        self.function = function
        self.max_captures = int(max_captures)
        self.recapture = bool(recapture)
        self._recordings = OrderedDict()       # key -> _Recording, oldest first
        self._first_calls = {}                 # key -> the recording of its first call
        self.captures = 0
        self.replays = 0

    def __call__(self, *args, **kwargs):
        if config.debug or self.eager_only or config.recorder is not None:
            # debug mode checks every op; inside another capture, that one records the calls
            return self.function(*args, **kwargs)
        if kwargs or any(type(a) in _CONTAINERS for a in args):
            leaves, rebuild = flatten((args, kwargs))
        else:                              # the common case: a few Tensors or arrays
            leaves, rebuild = list(args), _plain_arguments
        key = _key(leaves)
        recording = self._recordings.get(key)
        if recording is not None and recording.still_valid():
            self._recordings.move_to_end(key)
            self.replays += 1
            return recording.replay(leaves)
        known = list(self._recordings) + list(self._first_calls)
        if known and not self.recapture and key not in known:
            expected = known[-1]
            raise CaptureError(f"capture: the step was captured for {_describe(expected)} and "
                               f"now gets {_describe(key)}; recapture=False forbids a new "
                               "capture")
        recording, result = _Recording.record(self.function, leaves, rebuild)
        first = self._first_calls.pop(key, None)
        if recording.refusal is None and first is None:
            # The first call of these inputs: the second is recorded too and compared with
            # it, which finds what changes from batch to batch outside any Operation.
            self._first_calls[key] = recording
            return result
        if recording.refusal is None:
            recording.refusal = first.differs_from(recording)
        if recording.refusal is not None:
            reason = (f"{recording.refusal} (this call ran eagerly to its end; "
                      f"{getattr(self.function, '__qualname__', 'the step')} cannot be replayed)")
            if self.on_refusal == "raise":
                raise CaptureError(reason)
            warnings.warn(reason + "; every later call runs eagerly", RuntimeWarning,
                          stacklevel=2)
            self.eager_only = True
            return result
        self._recordings[key] = recording
        self._recordings.move_to_end(key)
        while len(self._recordings) > self.max_captures:
            self._recordings.popitem(last=False)
        self.captures += 1
        return result

    def source(self):
        """The Python source of the most recently used replay program."""
        if not self._recordings:
            raise CaptureError("capture: nothing has been captured yet")
        return next(reversed(self._recordings.values())).source

    def reset(self):
        """Forget every capture; the next calls capture again."""
        self._recordings.clear()
        self._first_calls.clear()


_CONTAINERS = (tuple, list, dict)


def _plain_arguments(leaves):
    return leaves, {}


def _key(leaves):
    """What a replay must match: each array's shape, dtype and device kind, each Tensor's
    flags, every other argument's value, the training and recording switches, and whether
    the compiled kernels are on (a recording's forward plans call them)."""
    parts = []
    for leaf in leaves:
        if isinstance(leaf, Tensor):
            if leaf.stores_grad:
                parts.append(("parameter", id(leaf)))
            else:
                data = leaf.data
                parts.append(("tensor", data.shape, data.dtype, leaf.device, leaf.requires_grad))
        elif _is_array(leaf):
            parts.append(("array", leaf.shape, leaf.dtype, type(leaf)))
        else:
            try:
                hash(leaf)
            except TypeError:
                raise CaptureError(f"capture: arguments must be Tensors, arrays or hashable "
                                   f"values (they key the capture), got a {type(leaf).__name__}"
                                   ) from None
            parts.append(("value", type(leaf).__name__, leaf))
    return (bool(package.training), is_recording(), native.enabled(), tuple(parts))


def _same_array(a, b):
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return bool(get_array_module(a).array_equal(a, b, equal_nan=True))


def _describe(key):
    training, recording, kernels, parts = key
    inputs = ", ".join(f"{p[0]} {p[1]} {p[2]}" if p[0] in ("tensor", "array") else
                       f"{p[0]} {p[-1]!r}" for p in parts)
    return (f"training={training}, recording={recording}, compiled kernels={kernels}, "
            f"inputs ({inputs})")


class _Recording:
    """One capture: the input buffers, the compiled replay program and how to rebuild the
    step's result from the program's arrays."""

    @classmethod
    def record(cls, function, leaves, rebuild):
        self = cls()
        buffered = []
        recorder = Recorder()
        with recorder:
            self.buffers = []                     # (position, buffer array)
            for position, leaf in enumerate(leaves):
                buffered.append(self._buffer(recorder, position, leaf))
            args, kwargs = rebuild(buffered)
            result = function(*args, **kwargs)
            outputs, self.rebuild_result = flatten(result)
            self.results = []
            names = []
            for output in outputs:
                array = output.data if isinstance(output, Tensor) else output
                if isinstance(output, Tensor) and output.stores_grad:
                    self.results.append(("same", output))
                elif isinstance(output, Tensor) or _is_array(array):
                    names.append(recorder.name_of(array))
                    self.results.append(("tensor", (type(output), output.device))
                                        if isinstance(output, Tensor) else ("array", None))
                else:
                    self.results.append(("same", output))
            recorder.check_gradients_used(names)
        self.refusal = recorder.refusal
        self.fingerprint = recorder.fingerprint()
        if self.refusal is not None:
            return self, result
        self.replay_program, self.source = recorder.program.build(names)
        self.leaves = recorder.leaves
        return self, result

    def _buffer(self, recorder, position, leaf):
        """The step's own copy of a data argument, refilled before each replay."""
        if isinstance(leaf, Tensor) and leaf.stores_grad:
            return leaf
        if isinstance(leaf, Tensor):
            buffer = leaf.data.copy()
            recorder.keep(buffer)
            self.buffers.append((position, buffer))
            copy = Tensor.from_operation(buffer, leaf.device)
            copy.requires_grad = leaf.requires_grad
            return copy
        if _is_array(leaf):
            buffer = leaf.copy()
            recorder.keep(buffer)
            self.buffers.append((position, buffer))
            return buffer
        return leaf

    def differs_from(self, other):
        """Why the recordings of two calls with alike inputs differ (None if they do not)."""
        lines, constants, settings = self.fingerprint
        other_lines, other_constants, other_settings = other.fingerprint
        if lines != other_lines:
            return ("graph mode: the step ran different operations on its first two calls "
                    "(Python control flow that depends on the data, or on something other than "
                    "the inputs' shapes)")
        for name, array in constants.items():
            if array is not other_constants[name] and not _same_array(array,
                                                                      other_constants[name]):
                return ("graph mode: an array the step computed outside any Operation (with "
                        "NumPy, or from .data) changed between its first two calls, and a "
                        f"replay would keep the first value (shape {tuple(array.shape)}, "
                        f"{array.dtype}); compute it with Operations, or pass it as an input")
        for (op_name, values), (_, other_values) in zip(settings, other_settings):
            for attribute, value in values.items():
                if other_values.get(attribute) != value:
                    return (f"graph mode: {op_name}.{attribute} was {value!r} on the first call "
                            f"and {other_values.get(attribute)!r} on the second (a setting "
                            "computed from the data on the host), and a replay would keep the "
                            "second")
        return None

    def still_valid(self):
        """False when a parameter or buffer the program reads was given a new array (moved to
        another device, loaded with a different shape): then the step is captured again."""
        for tensor, array in self.leaves:
            if tensor.data is not array:
                return False
        return True

    def replay(self, leaves):
        for position, buffer in self.buffers:
            leaf = leaves[position]
            # same array kind and device as the buffer: both are part of the key
            buffer[...] = leaf.data if isinstance(leaf, Tensor) else leaf
        arrays = iter(self.replay_program())
        outputs = []
        for kind, value in self.results:
            if kind == "same":
                outputs.append(value)
            elif kind == "array":
                outputs.append(next(arrays))
            else:
                cls, device = value
                outputs.append(cls.from_operation(next(arrays), device))
        return self.rebuild_result(outputs)
