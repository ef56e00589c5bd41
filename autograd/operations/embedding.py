"""Embedding lookup: rows of a table W (V, D) picked by integer ids of any shape.

>>> import numpy as np
>>> from autograd import Tensor
>>> W = Tensor(data=np.arange(6, dtype=np.float32).reshape(3, 2), stores_grad=True)
>>> embedding(np.array([[2, 0]]), W).to_numpy()
array([[[4., 5.],
        [0., 1.]]], dtype=float32)
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..backend import kernels_for
from ..device import get_array_module
from .base import Operation
from .utils import out_of_range, scatter_add
from .._types import Indices

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = ["embedding"]


class Embedding(Operation):
    """y[..., :] = W[ids[...], :]; W (V, D), ids any shape (integers, no gradient), y
    ids.shape + (D,).   dW[v] = sum of dy[...] over the positions where ids == v"""

    def forward(self, W, ids):
        self.save_for_backward(ids)
        self.table_shape = W.shape
        return W[ids]

    def backward(self, dy):
        (ids,) = self.saved
        dW = kernels_for(dy).zeros(self.table_shape, dy.dtype)
        scatter_add(dW, ids.reshape(-1), dy.reshape(-1, self.table_shape[1]))
        return dW, None


def embedding(ids: Indices, W: Tensor) -> Tensor:
    """Look up the rows of W (V, D) named by ``ids`` (an int array, list or int Tensor of any
    shape, values in [0, V)); the result has shape ids.shape + (D,). The gradient of a row sums
    over every position that used it.

    >>> import numpy as np
    >>> from autograd import Tensor
    >>> embedding([0, 3], Tensor(shape=(3, 2)))
    Traceback (most recent call last):
    ...
    ValueError: embedding: ids must be in [0, 3) for W of shape (3, 2), got 3
    """
    if W.ndim != 2:
        raise ValueError(f"embedding: expected W of shape (num_embeddings, dim), got "
                         f"{tuple(W.shape)}")
    xp = W.device.xp
    ids_tensor = ids if hasattr(ids, "creator") else None
    if ids_tensor is not None:                       # an int Tensor: must share W's device
        if ids.device is not W.device:
            raise TypeError(f"embedding: ids are on {ids.device} but W is on {W.device}; move "
                            "one with to_device()")
        ids = ids.data
    elif not hasattr(ids, "dtype"):                  # a list: host ids
        ids = np.asarray(ids)
    if ids.dtype.kind not in "iu":
        raise TypeError(f"embedding: ids must be integers, got {ids.dtype}")
    vocabulary = W.shape[0]
    bad = out_of_range(ids, 0, vocabulary)           # before the upload: no device sync
    if bad is not None:
        raise ValueError(f"embedding: ids must be in [0, {vocabulary}) for W of shape "
                         f"{tuple(W.shape)}, got {bad}")
    if ids_tensor is None:
        if get_array_module(ids) is not xp:
            with W.device.activate():
                ids = xp.asarray(ids)
        ids_tensor = W.new_output(ids)
    # the ids are an input, not an attribute, so that a captured step replays new ids
    return Embedding()(W, ids_tensor)
