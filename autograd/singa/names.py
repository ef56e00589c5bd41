"""What a SINGA program sees under ``python -m autograd.singa`` that plain autograd does not
give: only the spellings that would be wrong (or meaningless) as autograd's own behaviour.

- ``singa.model.Model`` runs a step that graph mode cannot replay eagerly, with a warning,
  where ``autograd.Model`` raises CaptureError (SINGA's drivers ask for the graph by default,
  and the program should still run); as SINGA's, it captures training calls only (an eval
  call runs eagerly) and its parameters carry their dotted names (``Tensor.name``).
- ``singa.tensor.to_numpy`` gives a copy, and a scalar as shape (1,): SINGA has no 0-d
  tensors, so its programs read a loss as ``tensor.to_numpy(loss)[0]``.
  ``singa.tensor.float16`` exists so that SINGA's dtype tables build (half precision is
  untested here).
- ``singa.device.create_cuda_gpu*`` give the CPU when the run asked for it (``--cpu``).
- ``singa.layer.RNN`` / ``LSTM`` return SINGA's ``(list_of_h, h[, c])``, and
  ``singa.layer.CudnnRNN`` exists (:mod:`.layers`).
- ``singa.autograd.backward`` keeps the graph's saved arrays (SINGA's operators hold them
  while their outputs live), so a program may walk the same loss again, as SINGA's GAN
  examples do (``autograd.backward(loss)`` then ``optimizer(loss)``).
- ``singa.autograd``'s loss functions return shape (1,), as SINGA's (its programs read
  ``autograd.softmax_cross_entropy(y, t)[0]``); ``singa.tensor.softmax``, ``PlaceHolder`` and
  ``to_host`` exist.
- ``singa.opt.DistOpt`` takes SINGA's constructor arguments; ``singa_wrap.NcclIdHolder`` says
  that ranks started by multiprocessing are not supported (:mod:`.distributed`).
"""
import sys

import numpy as np

from .. import device as _device
from .. import graph as _graph
from .. import model as _model
from ..recording import no_grad
from ..operations import loss as _loss
from ..operations.shape import reshape as _reshape
from ..operations.softmax import softmax as _softmax
from ..tensor import Tensor as _Tensor
from . import distributed as _distributed
from . import layers as _layers

__all__ = ["Model", "MODEL", "TENSOR", "DEVICE", "LAYER", "AUTOGRAD", "OPT",
           "SINGA_WRAP", "settings"]


class _Settings:
    gpu_as_cpu = False        # set by install(cpu=True) / ``python -m autograd.singa --cpu``
    told = False              # the --cpu notice is printed once


settings = _Settings()

class Model(_model.Model):
    """``autograd.Model`` as a SINGA program subclasses it: graph mode applies to training
    calls only, as SINGA's (its ``buffer_operation`` buffers ``train_one_batch`` when training;
    an eval call runs ``forward`` eagerly, so ``sonnx.to_onnx`` can export it); and a step
    that cannot be replayed warns and runs eagerly instead of raising."""

    _graph_refusal = "eager"
    _all_named = False

    def __call__(self, *args, **kwargs):
        if not self.training:
            result = self._run_one_call(*args, **kwargs)
        else:
            result = super().__call__(*args, **kwargs)
        if not self._all_named:
            self.name_tensors()
        return result

    def compile(self, inputs, is_train=True, use_graph=False, sequential=False):
        super().compile(inputs, is_train, use_graph, sequential)
        self.name_tensors()

    def name_tensors(self):
        """Give each parameter and buffer without a name its dotted path (``fc.W``), as SINGA's
        layers name the Tensors set on them: SINGA's programs select parameters by name
        (examples/gan: ``if "dis_net" in p.name``). Run after ``compile`` and after calls
        until every Tensor has one (lazily made parameters appear on the first call)."""
        self._all_named = True
        for name, tensor, _ in self._named_tensors():
            if tensor.name is None:
                tensor.name = name


def to_numpy(tensor):
    """A copy of ``tensor``'s data as a NumPy array, a scalar as shape (1,) (SINGA has no 0-d
    tensors). A copy, as SINGA's: its programs keep the results of ``to_numpy`` of one reused
    Tensor (train_cnn.py's ``reduce_variable``), which must not change with it.

    >>> from autograd import Tensor
    >>> to_numpy(Tensor(data=2.5))
    array([2.5], dtype=float32)
    """
    array = np.array(tensor.to_numpy())
    return array.reshape(1) if array.ndim == 0 else array


def _cuda_device(function):
    """SINGA's GPU constructor ``function``, or the CPU when the run asked for it."""
    def create(*args, **kwargs):
        if not settings.gpu_as_cpu:
            return getattr(_device, function)(*args, **kwargs)
        if not settings.told:
            print(f"autograd.singa: --cpu: {function}() gives the CPU", file=sys.stderr)
            settings.told = True
        return _device.cpu()
    create.__name__ = function
    create.__doc__ = f"autograd.device.{function}, or the CPU under ``--cpu``."
    return create


def _cuda_devices(count_or_ids):
    if not settings.gpu_as_cpu:
        raise NotImplementedError("singa.device.create_cuda_gpus: several GPUs in one process "
                                  "are not supported; see docs/singa.md")
    count = count_or_ids if isinstance(count_or_ids, int) else len(count_or_ids)
    return [_device.cpu()] * count


def _loss_of_shape_1(function):
    """``function``'s loss as shape (1,): SINGA has no 0-d tensors and its programs index a
    loss with ``[0]``. The reshape is recorded, so ``backward(loss)`` works as before."""
    def loss(*args, **kwargs):
        return _reshape(function(*args, **kwargs), (1,))
    loss.__name__ = function.__name__
    loss.__doc__ = f"autograd.{function.__name__}, its scalar as shape (1,) (SINGA's)."
    return loss


def softmax(t, out=None):
    """SINGA's ``tensor.softmax``: the softmax of each row of a 1-D or 2-D Tensor, not
    recorded (``out``, when given, receives it).

    >>> from autograd import Tensor
    >>> softmax(Tensor(data=[[0.0, 0.0]])).to_numpy()
    array([[0.5, 0.5]], dtype=float32)
    """
    with no_grad():
        result = _softmax(t, axis=-1)
    if out is None:
        return result
    out.copy_data(result)
    return out


def from_numpy(np_array, dev=None):
    """SINGA's ``tensor.from_numpy``: a Tensor holding a copy of ``np_array``, float64 stored as
    float32 and int64 as int32 (SINGA's Tensors hold those), moved to ``dev`` when given.
    (``autograd.from_numpy`` keeps the dtype.)

    >>> from_numpy(np.ones(2)).dtype, from_numpy(np.arange(2)).dtype
    (dtype('float32'), dtype('int32'))
    """
    if not isinstance(np_array, np.ndarray):
        raise TypeError(f"singa.tensor.from_numpy: expected a NumPy array, got "
                        f"{type(np_array).__name__} (SINGA asserts the same)")
    narrowed = {np.dtype(np.float64): np.float32, np.dtype(np.int64): np.int32}
    if np_array.dtype in narrowed:
        np_array = np_array.astype(narrowed[np_array.dtype])
    result = _Tensor(data=np_array)
    return result.to_device(dev) if dev is not None else result


def _comparison(name, compare):
    def function(t, x):
        data = x.data if isinstance(x, _Tensor) else x
        return _Tensor(data=compare(t.data, data).astype(t.dtype), device=t.device,
                       requires_grad=False)
    function.__name__ = name
    function.__doc__ = (f"SINGA's ``tensor.{name}(t, x)``: 1.0 where the comparison holds, "
                        f"else 0.0, in t's dtype (not recorded).")
    return function


COMPARISONS = {name: _comparison(name, compare) for name, compare in (
    ("lt", lambda a, b: a < b), ("le", lambda a, b: a <= b), ("gt", lambda a, b: a > b),
    ("ge", lambda a, b: a >= b), ("eq", lambda a, b: a == b))}


def PlaceHolder(shape, device=None, dtype=np.float32):
    """SINGA's ``tensor.PlaceHolder``: a Tensor of ``shape`` that stands for an input (zeros
    here; SINGA leaves its memory unset)."""
    return _Tensor(shape=tuple(shape), device=device, dtype=dtype, requires_grad=False)


def to_host(t):
    """SINGA's ``tensor.to_host``: a copy of ``t`` on the CPU."""
    return t.copy().to_host()


MODEL = {"Model": Model}
TENSOR = {"to_numpy": to_numpy, "float16": np.float16, "softmax": softmax,
          "PlaceHolder": PlaceHolder, "to_host": to_host, "from_numpy": from_numpy,
          **COMPARISONS}
OPT = {"DistOpt": _distributed.DistOpt}
SINGA_WRAP = {"NcclIdHolder": _distributed.NcclIdHolder}
LAYER = {"RNN": _layers.RNN, "LSTM": _layers.LSTM, "CudnnRNN": _layers.CudnnRNN,
         "Embedding": _layers.Embedding, "Layer": _layers.SingaLayer}


def backward(y, dy=None):
    """SINGA's ``autograd.backward(y, dy)``: the (param, grad) pairs of ``y``, the graph kept
    for another walk (SINGA frees nothing until the outputs die; autograd's own ``backward``
    frees as it goes unless asked with ``retain_graph=True``)."""
    return _graph.backward(y, dy, retain_graph=True)


AUTOGRAD = {name: _loss_of_shape_1(getattr(_loss, name)) for name in
            ("softmax_cross_entropy", "cross_entropy", "mse_loss", "binary_cross_entropy")}
AUTOGRAD["backward"] = backward
def create_cpu_device():
    """SINGA's ``device.create_cpu_device()``: the CPU device (SINGA makes a new CppCPU each
    call; ours is the one CPU device)."""
    return _device.cpu()


DEVICE = {"create_cpu_device": create_cpu_device,
          "create_cuda_gpu": _cuda_device("create_cuda_gpu"),
          "create_cuda_gpu_on": _cuda_device("create_cuda_gpu_on"),
          "create_cuda_gpus": _cuda_devices, "create_cuda_gpus_on": _cuda_devices}
