"""SINGA's data-parallel entry points as its programs call them (``singa.opt.DistOpt``,
``singa.singa_wrap.NcclIdHolder`` under the hook).

SINGA's ``DistOpt(opt=SGD(), nccl_id=None, local_rank=None, world_size=None,
buffSize=4194304)`` uses MPI when no NCCL id is given (``train_mpi.py``: each rank is a process
started by ``mpiexec``) and ignores ``local_rank`` and ``world_size`` then, as here.
``train_multiprocess.py`` instead starts the ranks itself with Python's multiprocessing and
joins them through an NCCL id (``singa_wrap.NcclIdHolder()``): that needs NCCL and GPUs, and
autograd's NCCL communicator is started by ``mpiexec`` too, so both names raise an error that
says what to run instead.
"""
from ..opt import DistOpt as _DistOpt

__all__ = ["DistOpt", "NcclIdHolder", "NCCL_ONLY"]

NCCL_ONLY = ("launching the ranks by Python multiprocessing, joined by an NCCL id "
             "(SINGA's train_multiprocess.py), is not supported: it needs NCCL on GPUs. Start one "
             "process per rank instead: mpiexec -n N python -m autograd.singa train_mpi.py ... "
             "(DistOpt over MPI; on GPUs autograd.opt.NcclCommunicator). See docs/singa.md")


class DistOpt(_DistOpt):
    """``autograd.opt.DistOpt`` with SINGA's constructor: ``buffSize`` is in elements (4 bytes
    each) and becomes ``bucket_bytes``; ``nccl_id`` is refused (see the module docstring)."""

    def __init__(self, opt=None, nccl_id=None, local_rank=None, world_size=None,
                 buffSize=4194304):
        if nccl_id is not None:
            raise NotImplementedError(f"singa.opt.DistOpt(nccl_id=...): {NCCL_ONLY}")
        super().__init__(opt, bucket_bytes=int(buffSize) * 4)


def NcclIdHolder(*args, **kwargs):
    """SINGA's NCCL id for ranks started by multiprocessing: not supported here."""
    raise NotImplementedError(f"singa.singa_wrap.NcclIdHolder: {NCCL_ONLY}")
