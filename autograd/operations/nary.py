"""SINGA's n-ary Mean: one Operation with n inputs (``mean(a, b, c)``), like its Sum, Max and
Min (``ElementwiseSum``/``ElementwiseExtremum`` in ``reduction``).

>>> from autograd import Tensor
>>> a = Tensor(data=[1.0, 2.0], stores_grad=True)
>>> y = ElementwiseMean()(a, Tensor(data=[3.0, 6.0]), Tensor(data=[2.0]))
>>> y.to_numpy().round(4), type(y.creator).__name__
(array([2.    , 3.3333], dtype=float32), 'ElementwiseMean')
"""
from .base import Operation
from .utils import unbroadcast

__all__ = ["ElementwiseMean"]


class ElementwiseMean(Operation):
    """y = (x1 + x2 + ... + xn) / n, broadcast.   dxi = dy / n summed to xi's shape"""

    def forward(self, *xs):
        self.shapes = [x.shape for x in xs]
        y = xs[0] + xs[1]
        for x in xs[2:]:
            y = y + x             # not +=: a later operand may broadcast y to a larger shape
        y *= 1.0 / len(xs)        # y is ours (a new array), and a Python float keeps its dtype
        return y

    def backward(self, dy):
        share = dy * (1.0 / len(self.shapes))
        return tuple(unbroadcast(share, s) if need else None
                     for s, need in zip(self.shapes, self.needs_input_grad))
