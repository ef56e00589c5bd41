"""Layer: the base of everything that owns parameters (SINGA's ``autograd.Layer``).

A layer finds its parameters by looking at its attributes, in the order they were first
assigned: a Tensor with ``stores_grad=True`` is a parameter, a Tensor registered with
:meth:`Layer.register_buffer` is a buffer (running statistics), and a Layer (or a list, tuple or
dict of Layers) is a sub-layer whose names are prefixed by the attribute's (``conv1.W``,
``blocks.0.b``). Nothing has to be registered by hand except buffers.

>>> import numpy as np, autograd
>>> class TwoLayers(autograd.Layer):
...     def __init__(self):
...         super().__init__()
...         self.hidden = autograd.Linear(4, 3)
...         self.out = autograd.Linear(3, 2)
...     def forward(self, x):
...         return self.out(autograd.matmul(self.hidden(x), autograd.Tensor(data=np.eye(3))))
>>> [name for name, _ in TwoLayers().named_parameters()]
['hidden.W', 'hidden.b', 'out.W', 'out.b']
"""
from __future__ import annotations

from typing import Any

import threading
from collections import namedtuple

import numpy as np

from .. import recording
from ..device import move_array
from ..tensor import Tensor

__all__ = ["Layer"]

LoadResult = namedtuple("LoadResult", ["missing_keys", "unexpected_keys"])



class _Hooks(threading.local):
    """Per thread: callbacks ``hook(layer, output)`` run after every Layer call in that thread
    (summary() traces with them, without seeing other threads' models)."""
    active: tuple = ()


call_hooks = _Hooks()


def shape_text(parts):
    """A shape pattern as text, like a tuple: ``("N", 784)`` -> ``(N, 784)``."""
    parts = [str(p) for p in parts]
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


class Layer:
    """Base class of layers. Subclasses write ``__init__`` (create parameters as attributes)
    and ``forward``; calling the layer calls ``forward``.

    ``training`` is this layer's train/eval flag (:meth:`train`, :meth:`eval`); a layer behaves
    in training mode (batch statistics, dropout) only while both its flag and
    ``autograd.training`` are True. Layers that can infer their output shape without computing
    override :meth:`output_shape`, which also validates the input shape.

    As in SINGA, a subclass may define ``initialize(*inputs)``: it runs once, on the first call,
    before ``forward`` (e.g. to create parameters whose shapes depend on the input).
    """

    training = True
    _initialized = False

    def __init__(self) -> None:
        self.training = True
        self._buffer_names: list[str] = []

    # ------------------------------------------------------------ calling
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not self._initialized:
            self.initialize(*args, **kwargs)
            self._initialized = True
        output = self.forward(*args, **kwargs)
        for hook in call_hooks.active:
            hook(self, output)
        return output

    def initialize(self, *args, **kwargs):
        """Runs once, on the first call, before ``forward``; nothing by default."""

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} does not define forward")

    def output_shape(self, input_shape):
        """The output shape for an input of ``input_shape`` (a tuple; the batch size may be
        None), computed without running the layer. Raises ValueError naming the layer, the
        expected and the actual shape when ``input_shape`` does not fit."""
        raise NotImplementedError(
            f"{type(self).__name__} does not implement output_shape; summary() traces a "
            "forward pass for such layers instead")

    @property
    def is_training(self):
        """True when this layer should behave as in training: its own flag and
        ``autograd.training`` are both on."""
        return bool(self.training) and recording.config.training

    # ------------------------------------------------------------ description
    def extra_repr(self):
        """What the layer's repr shows inside the parentheses (its configuration)."""
        return ""

    def describe(self):
        """``Type(configuration)``, the name error messages give, e.g. ``Linear(784->10)``."""
        return f"{type(self).__name__}({self.extra_repr()})"

    def __repr__(self):
        children = list(self._children())
        if not children:
            return self.describe()
        lines = [f"{type(self).__name__}("]
        for name, child in children:
            body = repr(child).replace("\n", "\n  ")
            lines.append(f"  ({name}): {body}")
        return "\n".join(lines) + "\n)"

    def check_input(self, condition, expected, shape):
        """Raise ``ValueError('<layer>: expected input <expected>, got <shape>')`` unless
        ``condition``; layers call it from ``output_shape`` before any computing."""
        if not condition:
            raise ValueError(f"{self.describe()}: expected input {expected}, got "
                             f"{shape_text(shape)}")

    # ------------------------------------------------------------ discovery
    def register_buffer(self, name, tensor):
        """Make ``tensor`` (a Tensor that stores no gradient) a buffer: it belongs to the
        state (``state_dict``, ``to_device``) but is not a parameter. Returns the tensor."""
        if not isinstance(tensor, Tensor):
            raise TypeError(f"{type(self).__name__}.register_buffer: {name!r} must be a Tensor, "
                            f"got {type(tensor).__name__}")
        names = self.__dict__.setdefault("_buffer_names", [])
        if name not in names:
            names.append(name)
        setattr(self, name, tensor)
        return tensor

    def register_layers(self, *layers):
        """Make layers that no attribute holds (a local list, a closure) sub-layers, as SINGA's
        ``register_layers``: ``register_layers(*layers)`` names them ``<Class>_<index>``,
        ``register_layers(OrderedDict)`` by its keys. A layer already reachable through an
        earlier attribute keeps that first name.

        >>> import autograd
        >>> class Blocks(autograd.Layer):
        ...     def __init__(self):
        ...         super().__init__()
        ...         blocks = [autograd.Linear(2, 2), autograd.Linear(2, 2)]
        ...         self.register_layers(*blocks)
        >>> sorted(Blocks().get_params())
        ['Linear_0.W', 'Linear_0.b', 'Linear_1.W', 'Linear_1.b']
        """
        if len(layers) == 1 and isinstance(layers[0], dict):
            items = list(layers[0].items())
        else:
            items = [(f"{type(layer).__name__}_{index}", layer)
                     for index, layer in enumerate(layers)]
        for name, layer in items:
            if not isinstance(layer, Layer):
                raise TypeError(f"{type(self).__name__}.register_layers: {name!r} must be a "
                                f"Layer, got {type(layer).__name__}")
            held = self.__dict__.get(name)
            if held is not None and held is not layer:
                raise ValueError(f"{type(self).__name__}.register_layers: the attribute "
                                 f"{name!r} already holds another value; register each "
                                 "name once")
        for name, layer in items:
            setattr(self, name, layer)

    def _members(self):
        """``(name, value)`` for the attributes that matter, in attribute order: sub-layers,
        parameters and buffers; lists, tuples and dicts of them give ``name.index`` /
        ``name.key``."""
        buffers = self.__dict__.get("_buffer_names", ())
        for name, value in vars(self).items():
            if isinstance(value, Layer):
                yield name, value
            elif isinstance(value, Tensor):
                if value.stores_grad or name in buffers:
                    yield name, value
            elif isinstance(value, (list, tuple, dict)):
                items = value.items() if isinstance(value, dict) else enumerate(value)
                for key, item in items:
                    if isinstance(item, Layer) or (isinstance(item, Tensor) and item.stores_grad):
                        yield f"{name}.{key}", item

    def _children(self):
        """``(name, layer)`` for the direct sub-layers, in attribute order."""
        return ((name, value) for name, value in self._members() if isinstance(value, Layer))

    def _walk(self, prefix, seen):
        """Depth first over attributes in definition order: ``(dotted name, member)`` for
        every sub-layer, parameter and buffer; a member met again (shared) is skipped."""
        buffers = self.__dict__.get("_buffer_names", ())
        for name, value in self._members():
            if id(value) in seen:
                continue
            seen.add(id(value))
            full = f"{prefix}.{name}" if prefix else name
            if isinstance(value, Layer):
                yield full, value, False
                yield from value._walk(full, seen)
            else:
                yield full, value, name in buffers

    def named_layers(self, prefix=""):
        """``(dotted name, layer)`` for every sub-layer (not self), depth first in definition
        order, each layer once."""
        return ((n, v) for n, v, _ in self._walk(prefix, {id(self)}) if isinstance(v, Layer))

    def _named_tensors(self):
        """``(dotted name, tensor, is_buffer)`` for every parameter and buffer, each once."""
        return ((n, v, b) for n, v, b in self._walk("", {id(self)}) if isinstance(v, Tensor))

    def named_parameters(self):
        """``(dotted name, Tensor)`` for every parameter, in definition order, each once."""
        return ((n, t) for n, t, is_buffer in self._named_tensors() if not is_buffer)

    def parameters(self):
        """The parameters (Tensors with ``stores_grad=True``) as a list, in definition order."""
        return [t for _, t in self.named_parameters()]

    def named_buffers(self):
        """``(dotted name, Tensor)`` for every buffer (running statistics)."""
        return ((n, t) for n, t, is_buffer in self._named_tensors() if is_buffer)

    def buffers(self):
        """The buffers as a list."""
        return [t for _, t in self.named_buffers()]

    def count_parameters(self, input_shape=None):
        """The number of parameter elements (a lazy layer may need ``input_shape``)."""
        return int(sum(t.size for t in self.parameters()))

    # ------------------------------------------------------------ modes and devices
    def train(self, mode=True):
        """Set training mode on this layer and every sub-layer; returns self."""
        self.training = bool(mode)
        for _, layer in self.named_layers():
            layer.training = bool(mode)
        return self

    def eval(self):
        """Evaluation mode (running statistics, no dropout) everywhere below; returns self."""
        return self.train(False)

    def to_device(self, device):
        """Move every parameter and buffer to ``device`` in place; returns self."""
        for _, tensor, _ in self._named_tensors():
            tensor.to_device(device)
        return self

    # ------------------------------------------------------------ state
    def state_dict(self):
        """``{dotted name: NumPy copy}`` of every parameter and buffer, in definition order."""
        return {name: np.array(tensor.to_numpy(), copy=True)
                for name, tensor, _ in self._named_tensors()}

    def load_state_dict(self, state, strict=True):
        """Copy the arrays of ``state`` (NumPy/CuPy arrays or Tensors, by dotted name) into the
        parameters and buffers, in place. Every name, shape and dtype is checked before anything
        is assigned: on error (a ValueError listing every problem) the layer is untouched.
        ``strict=False`` tolerates missing and unexpected names. Returns
        ``(missing_keys, unexpected_keys)``."""
        state = {name: _host_array(value) for name, value in state.items()}
        current = {name: tensor for name, tensor, _ in self._named_tensors()}
        pending = self._lazy_entries(state, current)
        missing = [n for n in current if n not in state]
        unexpected = [n for n in state if n not in current and n not in pending]
        problems = []
        if strict and missing:
            problems.append(f"missing keys {missing}")
        if strict and unexpected:
            problems.append(f"unexpected keys {unexpected}")
        for name, tensor in current.items():
            if name in state:
                problems += _mismatch(name, tensor.shape, tensor.dtype, state[name])
        for name, (shape, dtype) in pending.items():
            problems += _mismatch(name, shape, dtype, state[name])
        if problems:
            raise ValueError(f"{type(self).__name__}.load_state_dict: " + "; ".join(problems))
        for prefix, layer in [("", self)] + list(self.named_layers()):
            layer._materialize_from_state(prefix + "." if prefix else "", state)
        for name, tensor, _ in self._named_tensors():
            if name in state:
                tensor.data[...] = move_array(state[name], tensor.device)
        return LoadResult(missing, unexpected)

    def _lazy_entries(self, state, current):
        pending = {}
        for prefix, layer in [("", self)] + list(self.named_layers()):
            pending.update(layer._lazy_parameters(prefix + "." if prefix else "", state))
        return pending

    def _lazy_parameters(self, prefix, state):
        """For a lazy layer not yet built: ``{dotted name: (shape, dtype)}`` of the parameters
        it would create to hold ``state``; empty for ordinary layers."""
        return {}

    def _materialize_from_state(self, prefix, state):
        """Create (from ``state``) the parameters ``_lazy_parameters`` announced."""

    # SINGA's spellings: parameters and states as {name: Tensor}.
    def get_params(self):
        """``{dotted name: Tensor}`` of the parameters (SINGA)."""
        return dict(self.named_parameters())

    def get_states(self):
        """``{dotted name: Tensor}`` of the parameters and buffers (SINGA)."""
        return {name: tensor for name, tensor, _ in self._named_tensors()}

    def set_params(self, params):
        """Assign some parameters by name (SINGA); unknown names are an error."""
        self._assign_known(params, self.get_params(), "set_params", "parameters")

    def set_states(self, states):
        """Assign some parameters and buffers by name (SINGA); unknown names are an error."""
        self._assign_known(states, self.get_states(), "set_states", "states")

    def _assign_known(self, values, known, method, what):
        unknown = [n for n in values if n not in known]
        if unknown:
            raise ValueError(f"{type(self).__name__}.{method}: unknown {what} {unknown}")
        self.load_state_dict(values, strict=False)


class AxisLayer(Layer):
    """A layer whose one argument is an axis (Softmax, Flatten, Cat): kept as an int and shown
    in the repr."""

    def __init__(self, axis: int) -> None:
        super().__init__()
        self.axis = int(axis)

    def extra_repr(self):
        return f"axis={self.axis}"


def _host_array(value):
    if isinstance(value, Tensor):
        return value.data
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return value
    return np.asarray(value)


def _mismatch(name, shape, dtype, value):
    problems = []
    if tuple(value.shape) != tuple(shape):
        problems.append(f"{name}: expected shape {tuple(shape)}, got {tuple(value.shape)}")
    if value.dtype != dtype:
        problems.append(f"{name}: expected dtype {np.dtype(dtype)}, got {value.dtype}")
    return problems
