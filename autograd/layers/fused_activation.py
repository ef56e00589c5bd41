"""SINGA's ``activation=`` layer argument: an activation applied to the layer's output.

SINGA's ``Conv2d(..., activation="RELU")`` runs a ReLU after the convolution ("NOTSET", the
default, runs none). :func:`fused_activation` adds that argument to a layer class without
touching the layer's own code: the constructor takes ``activation=`` and each call applies it
to what ``forward`` returned.

>>> import numpy as np, autograd
>>> conv = autograd.Conv2d(1, 2, 1, activation="RELU")
>>> _ = conv.W.set_value(-1.0)
>>> y = conv(autograd.Tensor(data=np.ones((1, 1, 2, 2), np.float32)))
>>> float(y.to_numpy().max()), conv.activation       # every output -1 before the ReLU
(0.0, 'RELU')
"""
import functools

from ..operations import activation as activation_ops

__all__ = ["ACTIVATIONS", "fused_activation"]

# The names SINGA's layers accept ("NOTSET" and "RELU"); None is our spelling of "NOTSET".
ACTIVATIONS = {"NOTSET": None, "RELU": activation_ops.relu}


def activation_argument(value, layer):
    """``value`` checked against :data:`ACTIVATIONS`: the canonical name, or a ValueError
    naming ``layer`` (SINGA silently ignores names it does not know)."""
    name = "NOTSET" if value is None else value
    if name not in ACTIVATIONS:
        raise ValueError(f"{layer}: activation must be one of {sorted(ACTIVATIONS)} or None, "
                         f"got {value!r}")
    return name


def fused_activation(cls):
    """Class decorator: ``cls(..., activation="NOTSET")`` applies the named activation to
    every output of ``cls.forward`` and shows it in the repr. Returns ``cls``."""
    init, forward, extra_repr = cls.__init__, cls.forward, cls.extra_repr

    @functools.wraps(init)
    def __init__(self, *args, activation="NOTSET", **kwargs):
        init(self, *args, **kwargs)
        self.activation = activation_argument(activation, cls.__name__)

    @functools.wraps(forward)
    def forward_then_activation(self, *args, **kwargs):
        y = forward(self, *args, **kwargs)
        function = ACTIVATIONS[self.activation]
        return y if function is None else function(y)

    @functools.wraps(extra_repr)
    def extra_repr_with_activation(self):
        text = extra_repr(self)
        if self.activation == "NOTSET":
            return text
        return f"{text}, activation={self.activation!r}"

    cls.__init__ = __init__
    cls.forward = forward_then_activation
    cls.extra_repr = extra_repr_with_activation
    return cls
