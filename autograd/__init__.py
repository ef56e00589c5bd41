"""autograd: a tape-based automatic-differentiation and deep-learning framework on NumPy and CuPy.

>>> import numpy as np, autograd
>>> w = autograd.Tensor(data=np.ones((2, 1), np.float32), stores_grad=True)
>>> x = autograd.Tensor(data=np.array([[1.0, 2.0]], np.float32), requires_grad=False)
>>> loss = autograd.mse_loss(autograd.matmul(x, w), autograd.Tensor(data=[[0.0]]))
>>> [(p is w, g.to_numpy().ravel().tolist()) for p, g in autograd.backward(loss)]
[(True, [6.0, 12.0])]
"""
import os as _os
import sys as _sys
import types as _types

if "numpy" not in _sys.modules:
    # After each GEMM, OpenBLAS's idle workers spin for about 0.1 s (2^28 cycles) and take the
    # cores that autograd's own threads need for the copies around it (see threads.py): a CNN
    # step at 2 threads measured 42 ms with the spin, 29 ms without. OpenBLAS reads this once,
    # when NumPy loads it, so it only helps when autograd is imported first; a value the user
    # set wins.
    _os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

from . import device
from .device import manual_seed
from .tensor import Tensor
from .graph import backward, gradients, no_grad, enable_grad, is_recording, set_debug
from .operations.base import Operation
from .threads import set_num_threads, get_num_threads
from .memory import empty_cache

Operator = Operation      # SINGA 3+ names the base class Operator
from .operations.elementwise import *        # noqa: F401,F403  (each module's __all__)
from .operations.unary import *              # noqa: F401,F403
from .operations.trigonometry import *       # noqa: F401,F403
from .operations.comparison import *         # noqa: F401,F403
from .operations.conversion import *         # noqa: F401,F403
from .operations.resample import *           # noqa: F401,F403
from .operations.activation import *         # noqa: F401,F403
from .operations.softmax import *            # noqa: F401,F403
from .operations.linalg import *             # noqa: F401,F403
from .operations.reduction import *          # noqa: F401,F403
from .operations.shape import *              # noqa: F401,F403
from .operations.padding import *            # noqa: F401,F403
from .operations.indexing import *           # noqa: F401,F403
from .operations.loss import *               # noqa: F401,F403
from .operations.similarity import *         # noqa: F401,F403
from .operations.conv import *               # noqa: F401,F403
from .operations.pooling import *            # noqa: F401,F403
from .operations.conv1d import *             # noqa: F401,F403
from .operations.normalization import *      # noqa: F401,F403
from .operations.dropout import *            # noqa: F401,F403
from .operations.embedding import *          # noqa: F401,F403
from .operations.attention import *          # noqa: F401,F403
from .operations.token_loss import *         # noqa: F401,F403
from .gradcheck import gradcheck, GradcheckError
from .layers import *                        # noqa: F401,F403  Layer, Linear, Conv2d, ...
from . import opt, data, io, initializer, layer
from .io import save, load
from .model import Model
from . import graph as _graph

__version__ = "0.1.0"


class _Module(_types.ModuleType):
    """Makes ``autograd.training`` a live switch: reading and assigning it reaches the flag
    that operations and layers consult (a plain module attribute would be a stale copy)."""

    @property
    def training(self):
        return _graph.config.training

    @training.setter
    def training(self, value):
        _graph.config.training = bool(value)


_sys.modules[__name__].__class__ = _Module
