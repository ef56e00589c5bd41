"""What a SINGA program sees under ``python -m autograd.singa`` that plain autograd does not
give: only the spellings that would be wrong (or meaningless) as autograd's own behaviour.

- ``singa.model.Model`` runs a step that graph mode cannot replay eagerly, with a warning,
  where ``autograd.Model`` raises CaptureError (SINGA's drivers ask for the graph by default,
  and the program should still run).
- ``singa.tensor.to_numpy`` gives a scalar as shape (1,): SINGA has no 0-d tensors, so its
  programs read a loss as ``tensor.to_numpy(loss)[0]``. ``singa.tensor.float16`` exists so
  that SINGA's dtype tables build (half precision is untested here).
- ``singa.device.create_cuda_gpu*`` give the CPU when the run asked for it (``--cpu``).
"""
import sys

import numpy as np

from .. import device as _device
from .. import model as _model

__all__ = ["Model", "MODEL", "TENSOR", "DEVICE", "settings"]


class _Settings:
    gpu_as_cpu = False        # set by install(cpu=True) / ``python -m autograd.singa --cpu``
    told = False              # the --cpu notice is printed once


settings = _Settings()

class Model(_model.Model):
    """``autograd.Model`` as a SINGA program subclasses it: in graph mode, a step that cannot
    be replayed warns and runs eagerly instead of raising."""

    _graph_refusal = "eager"


def to_numpy(tensor):
    """``tensor``'s data as a NumPy array, a scalar as shape (1,) (SINGA has no 0-d tensors).

    >>> from autograd import Tensor
    >>> to_numpy(Tensor(data=2.5))
    array([2.5], dtype=float32)
    """
    array = tensor.to_numpy()
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


MODEL = {"Model": Model}
TENSOR = {"to_numpy": to_numpy, "float16": np.float16}
DEVICE = {"create_cuda_gpu": _cuda_device("create_cuda_gpu"),
          "create_cuda_gpu_on": _cuda_device("create_cuda_gpu_on"),
          "create_cuda_gpus": _cuda_devices, "create_cuda_gpus_on": _cuda_devices}
