"""Optimizers, schedules and gradient clipping (SINGA's ``singa.opt``).

>>> import autograd
>>> from autograd import opt
>>> w = autograd.Tensor(data=[1.0, 2.0], stores_grad=True)
>>> sgd = opt.SGD(lr=opt.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5))
>>> for param, grad in autograd.backward(autograd.sum(w * w)):
...     sgd.update(param, grad)
>>> sgd.step()
>>> w.to_numpy()
array([0.8, 1.6], dtype=float32)
"""
from .schedules import *        # noqa: F401,F403
from .base import *             # noqa: F401,F403
from .sgd import *              # noqa: F401,F403
from .adaptive import *         # noqa: F401,F403
from .clipping import *         # noqa: F401,F403
from .communicators import *    # noqa: F401,F403
from .distributed import *      # noqa: F401,F403
from . import schedules, base, sgd, adaptive, clipping, communicators, distributed

__all__ = (schedules.__all__ + base.__all__ + sgd.__all__ + adaptive.__all__
           + clipping.__all__ + communicators.__all__ + distributed.__all__)
