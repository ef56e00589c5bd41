"""autograd: a tape-based automatic-differentiation and deep-learning framework on NumPy and CuPy.

>>> import numpy as np, autograd
>>> w = autograd.Tensor(data=np.ones((2, 1), np.float32), stores_grad=True)
>>> x = autograd.Tensor(data=np.array([[1.0, 2.0]], np.float32), requires_grad=False)
>>> loss = autograd.mse_loss(autograd.matmul(x, w), autograd.Tensor(data=[[0.0]]))
>>> [(p is w, g.to_numpy().ravel().tolist()) for p, g in autograd.backward(loss)]
[(True, [6.0, 12.0])]
"""
# The train/eval switch, read live by operations and layers: `autograd.training = False` stops
# recording and puts BatchNorm and Dropout in evaluation mode (SINGA's spelling). Set before the
# submodules import: autograd.graph reads it here.
training = True

import sys as _sys

from . import device
from .device import manual_seed, get_rng_state, set_rng_state
from .tensor import Tensor
from .tensor_interop import from_dlpack
from .graph import backward, gradients
from .recording import no_grad, enable_grad, is_recording, set_debug
from .anomaly import detect_anomaly, set_detect_anomaly
from .operations.base import Operation
from . import runtime
from .runtime import set_num_threads, get_num_threads, empty_cache
from .geometry import ConvGeometry

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
from .operations.joining import *            # noqa: F401,F403
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
from .operations.recurrent import *          # noqa: F401,F403
from .operations.recurrent_sequence import * # noqa: F401,F403
from .argument_errors import wrap_public_functions as _wrap_public_functions
_wrap_public_functions(globals(), {name for name in _sys.modules
                                   if name.startswith(__name__ + ".operations.")})
from .gradcheck import gradcheck, GradcheckError
from .layers import *                        # noqa: F401,F403  Layer, Linear, Conv2d, ...
from . import opt, data, io, initializer, layer, utils, onnx
from .io import save, load
from .model import Model
from . import graph_mode
from .graph_mode import capture, CapturedStep, CaptureError, replayable

from ._version import __version__

