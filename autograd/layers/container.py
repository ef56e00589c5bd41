"""Sequential: layers applied one after another.

>>> import numpy as np, autograd
>>> model = autograd.Sequential(autograd.Linear(4, 8), autograd.ReLU(), autograd.Linear(8, 2))
>>> [name for name, _ in model.named_parameters()]
['0.W', '0.b', '2.W', '2.b']
>>> model.output_shape((5, 4)), len(model), type(model[1]).__name__
((5, 2), 3, 'ReLU')
"""
from __future__ import annotations

from typing import Any

from .base import Layer

__all__ = ["Sequential"]


class Sequential(Layer):
    """``Sequential(*layers)`` or ``Sequential({name: layer, ...})``: ``forward`` feeds each
    layer's output to the next. Parameters are named by position (``0.W``, ``1.b``) or by the
    given names (``conv1.W``). Indexing gives a layer (a slice gives a Sequential), iterating
    gives the layers in order, ``append`` adds one.

    Before computing anything, ``forward`` checks the input shape against the whole chain
    (through every layer that can infer its output shape), so a misfit deep inside is reported
    before any layer has run or updated its running statistics.
    """

    def __init__(self, *layers: Any) -> None:
        super().__init__()
        if len(layers) == 1 and isinstance(layers[0], dict):
            items = list(layers[0].items())
        else:
            items = [(str(i), layer) for i, layer in enumerate(layers)]
        for name, layer in items:
            self.append(layer, name)

    def append(self, layer, name=None):
        """Add ``layer`` at the end (named by its position unless ``name`` is given)."""
        if not isinstance(layer, Layer):
            raise TypeError(f"Sequential: expected a Layer, got {type(layer).__name__}")
        name = str(len(self)) if name is None else str(name)
        if not name or "." in name:
            raise ValueError(f"Sequential: a layer name must be non-empty without '.', "
                             f"got {name!r}")
        if name in vars(self):
            raise ValueError(f"Sequential: the name {name!r} is already taken")
        setattr(self, name, layer)
        return self

    add = append

    def _layer_items(self):
        return [(name, value) for name, value in vars(self).items() if isinstance(value, Layer)]

    def __len__(self):
        return len(self._layer_items())

    def __iter__(self):
        return iter([layer for _, layer in self._layer_items()])

    def __getitem__(self, index):
        items = self._layer_items()
        if isinstance(index, slice):
            return Sequential(dict(items[index]))
        if isinstance(index, str):
            return dict(items)[index]
        return items[index][1]

    def forward(self, x: Any) -> Any:
        self._check_chain(x.shape)
        for layer in self:
            x = layer(x)
        return x

    def _check_chain(self, shape):
        for layer in self:
            try:
                shape = layer.output_shape(shape)
            except NotImplementedError:
                return           # a layer that cannot infer: the rest is checked as it runs

    def output_shape(self, input_shape):
        shape = tuple(input_shape)
        for layer in self:
            shape = layer.output_shape(shape)
        return shape

    def count_parameters(self, input_shape=None):
        if input_shape is None:
            return super().count_parameters()
        total, shape = 0, tuple(input_shape)
        for layer in self:
            total += layer.count_parameters(shape)
            shape = layer.output_shape(shape)
        return total
