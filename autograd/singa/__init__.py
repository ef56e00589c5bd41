"""Run SINGA programs as written: ``python -m autograd.singa PROGRAM.py [args]``.

An import hook makes ``import singa``, ``from singa import layer, model, tensor, opt, device,
autograd`` and the other ``singa.*`` modules resolve to autograd's, for the run it is installed
in: nothing named ``singa`` is placed on ``sys.path``, so other programs are not affected.
``install()`` does the same from code; ``uninstall()`` undoes it. A SINGA name autograd lacks
is an error naming that SINGA name and pointing at docs/singa.md. While the hook is installed a
Tensor of several elements is true (SINGA's programs write ``if labels:`` for "is not None");
plain autograd calls that ambiguous; and the program's own ``t[i]`` keeps the indexed axis, as
SINGA's does (:mod:`.indexing`; autograd's code keeps NumPy's indexing).

>>> import autograd.singa
>>> autograd.singa.install()
>>> from singa import layer, tensor
>>> layer.Conv2d is autograd.Conv2d, tensor.Tensor is autograd.Tensor
(True, True)
>>> tensor.from_raw_tensor          # doctest: +ELLIPSIS
Traceback (most recent call last):
...
AttributeError: singa.tensor.from_raw_tensor: this SINGA name has no counterpart in ...
>>> autograd.singa.uninstall()
>>> import singa
Traceback (most recent call last):
...
ModuleNotFoundError: No module named 'singa'
"""
import sys

from ..tensor import Tensor
from .hook import DOCS, SINGA_MODULES, SingaFinder
from .indexing import install_indexing, uninstall_indexing
from .provenance import install_provenance, uninstall_provenance
from .names import settings

_ambiguous_truth = Tensor.__bool__


def _singa_truth(tensor):
    """SINGA's Tensor has no ``__bool__``, so ``if labels:`` means "is not None" in its
    programs; a Tensor of one element keeps its value's truth."""
    return True if tensor.data.size != 1 else _ambiguous_truth(tensor)

__all__ = ["install", "uninstall", "installed", "DOCS", "SINGA_MODULES"]


def installed():
    """The installed :class:`SingaFinder`, or None."""
    return next((f for f in sys.meta_path if isinstance(f, SingaFinder)), None)


def install(cpu=False):
    """Answer ``import singa`` (and ``singa.*``) with autograd's modules from now on in this
    process, ahead of any real SINGA. ``cpu=True`` makes SINGA's ``create_cuda_gpu()`` and
    ``create_cuda_gpu_on(i)`` give the CPU device (for GPU drivers on a CPU-only machine).
    Installing twice is harmless."""
    settings.gpu_as_cpu = bool(cpu)
    if installed() is None:
        sys.meta_path.insert(0, SingaFinder())
        Tensor.__bool__ = _singa_truth
        install_indexing()
        install_provenance()          # for sonnx.to_onnx after a forward


def uninstall():
    """Remove the hook and forget the ``singa`` modules it made."""
    finder = installed()
    if finder is not None:
        sys.meta_path.remove(finder)
        finder.forget_modules()
        Tensor.__bool__ = _ambiguous_truth
        uninstall_indexing()
        uninstall_provenance()
    settings.gpu_as_cpu = False
