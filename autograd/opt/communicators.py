"""Communicators: how the processes of a data-parallel run sum and share arrays.

One small interface, three implementations:

- :class:`MpiCommunicator`: MPI through ``mpi4py`` on NumPy arrays (``Iallreduce``), for
  processes started by ``mpiexec`` on one machine or many (``pip install -e ".[dist]"``
  brings mpi4py and the MPICH wheel, whose ``mpiexec`` sits beside the interpreter);
- :class:`NcclCommunicator`: NCCL through CuPy on GPU arrays, on the current stream; its
  unique id travels over MPI, so it is started by ``mpiexec`` too;
- :class:`LocalCommunicator`: a world of one process, with no dependency at all.

:func:`default_communicator` picks MPI inside ``mpiexec`` and the local one elsewhere (saying
so once). A reduction is started by :meth:`Communicator.start_all_reduce`, which returns a
handle, and finished by :meth:`Communicator.wait`: the data-parallel optimizer starts one per
bucket of gradients while backward is still running.

>>> comm = LocalCommunicator()
>>> import numpy as np
>>> buffer = np.arange(3.0)
>>> comm.wait([comm.start_all_reduce(buffer)]); buffer.tolist(), comm.world_size
([0.0, 1.0, 2.0], 1)
"""
import os
import sys
import threading
import time
import warnings

import numpy as np

__all__ = ["Communicator", "LocalCommunicator", "MpiCommunicator", "NcclCommunicator",
           "default_communicator", "launched_by_mpi"]

# Set by the launchers: MPICH/Intel MPI (Hydra), Open MPI, PMIx-based launchers such as srun.
_LAUNCHER_SIZE_VARIABLES = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS")
_warned_local = False


def launched_by_mpi():
    """The world size an MPI launcher announced in the environment, or None outside one."""
    for name in _LAUNCHER_SIZE_VARIABLES:
        value = os.environ.get(name)
        if value and value.isdigit():
            return int(value)
    return None


class Communicator:
    """The interface. ``rank`` (0 .. ``world_size``-1), ``world_size`` and ``local_rank``
    (the rank among the processes of this machine, which picks a GPU) are attributes."""

    rank, world_size, local_rank = 0, 1, 0

    def start_all_reduce(self, array):
        """Start summing ``array`` (contiguous, writable, same shape and dtype on every rank)
        in place across all ranks; return a handle for :meth:`wait`. ``array`` must not be
        read or written until then."""
        raise NotImplementedError

    def progress(self, handles):
        """Let started reductions advance (MPI moves data only inside MPI calls)."""

    def wait(self, handles):
        """Block until every reduction in ``handles`` is complete."""

    def all_reduce(self, array):
        """Sum ``array`` in place across all ranks and return it."""
        self.wait([self.start_all_reduce(array)])
        return array

    def broadcast(self, array, root=0):
        """Overwrite ``array`` on every rank with root's (in place)."""
        raise NotImplementedError

    def all_gather_object(self, value):
        """The list of every rank's ``value`` (small picklable Python objects), by rank."""
        raise NotImplementedError

    def barrier(self):
        """Return once every rank has called it."""

    def abort(self, message, code=1):
        """Stop every rank: print ``message`` here, then end the whole run."""
        raise SystemExit(message)

    def __repr__(self):
        return (f"{type(self).__name__}(rank={self.rank}, world_size={self.world_size}, "
                f"local_rank={self.local_rank})")


class LocalCommunicator(Communicator):
    """A world of one process: reductions and broadcasts leave arrays as they are."""

    def start_all_reduce(self, array):
        return None

    def broadcast(self, array, root=0):
        _check_root(root, 1)
        return array

    def all_gather_object(self, value):
        return [value]


class MpiCommunicator(Communicator):
    """MPI through mpi4py on NumPy arrays. ``MpiCommunicator(comm=None, progress_thread=False,
    poll_seconds=1e-3)`` uses ``comm`` (an ``mpi4py.MPI.Comm``) or ``COMM_WORLD``.

    MPICH moves a non-blocking reduction only while some MPI call runs: started during backward
    and left alone, it would all happen in the final wait, so DistOpt tests the pending ones
    each time backward yields a gradient (:meth:`progress`). With ``progress_thread`` (and MPI's
    ``THREAD_MULTIPLE``, mpi4py's default), a helper thread tests the pending reductions every
    ``poll_seconds`` while any are pending (NumPy's kernels release the GIL, so it runs beside
    backward's GEMMs) and sleeps otherwise; :meth:`wait` takes the requests back from it first
    and completes them alone. Off by default: on the 2 shared cores where it was measured
    (benchmarks/NOTES.md) its wake-ups cost more than they hid; try it where every process has
    a spare core.

    With more than one rank it also installs ``sys.excepthook`` so that an exception no one
    catches, on any rank, prints its traceback and then calls ``MPI_Abort``: the launcher
    stops every other rank instead of leaving them waiting forever in a reduction. (A
    ``sys.exit()`` raises SystemExit, which never reaches the hook: raise an error instead.)
    """

    def __init__(self, comm=None, progress_thread=False, poll_seconds=1e-3):
        MPI = import_mpi()
        self.MPI = MPI
        self.comm = MPI.COMM_WORLD if comm is None else comm
        self.rank = self.comm.Get_rank()
        self.world_size = self.comm.Get_size()
        node = self.comm.Split_type(MPI.COMM_TYPE_SHARED)
        self.local_rank = node.Get_rank()
        node.Free()
        self.progress_thread = (bool(progress_thread) and self.world_size > 1
                                and MPI.Query_thread() == MPI.THREAD_MULTIPLE)
        self.poll_seconds = poll_seconds
        self._poller = None
        if self.world_size > 1:
            install_abort_on_error(self)

    def start_all_reduce(self, array):
        if not isinstance(array, np.ndarray):
            raise TypeError(f"MpiCommunicator: reduces NumPy arrays, got {type(array).__name__}; "
                            "for GPU (CuPy) arrays use NcclCommunicator")
        request = self.comm.Iallreduce(self.MPI.IN_PLACE, array, op=self.MPI.SUM)
        if self.progress_thread:
            if self._poller is None:
                self._poller = _Poller(self.MPI, self.poll_seconds)
            self._poller.add(request)
        return request

    def progress(self, handles):
        if self.progress_thread:            # the thread tests them; never two at once
            return
        handles = [h for h in handles if h is not None]
        if handles:
            self.MPI.Request.Testall(handles)

    def wait(self, handles):
        if self._poller is not None:
            self._poller.take_all()
        handles = [h for h in handles if h is not None]
        if handles:
            self.MPI.Request.Waitall(handles)

    def all_reduce(self, array):
        if not isinstance(array, np.ndarray):
            self.start_all_reduce(array)            # the TypeError
        self.comm.Allreduce(self.MPI.IN_PLACE, array, op=self.MPI.SUM)
        return array

    def broadcast(self, array, root=0):
        _check_root(root, self.world_size)
        self.comm.Bcast(array, root=root)
        return array

    def all_gather_object(self, value):
        return self.comm.allgather(value)

    def barrier(self):
        self.comm.Barrier()

    def abort(self, message, code=1):
        sys.stderr.write(message.rstrip("\n") + "\n")
        sys.stderr.flush()
        # Abort kills every rank's process at once; mpiexec's output forwarder reads this
        # rank's pipe asynchronously, and once in a while lost the message without a pause.
        time.sleep(0.2)
        self.comm.Abort(code)


class _Poller:
    """One thread per communicator that calls ``Testall`` on the pending requests every
    ``poll_seconds`` and sleeps while there are none. Tests run under ``lock``, so once
    :meth:`take_all` has returned the caller alone may complete the requests."""

    def __init__(self, MPI, poll_seconds):
        self.MPI, self.poll_seconds = MPI, poll_seconds
        self.requests, self.lock = [], threading.Lock()
        self.pending = threading.Event()
        threading.Thread(target=self._run, name="autograd-mpi-progress", daemon=True).start()

    def add(self, request):
        with self.lock:
            self.requests.append(request)
            self.pending.set()

    def take_all(self):
        with self.lock:
            self.requests = []
            self.pending.clear()

    def _run(self):
        while True:
            self.pending.wait()
            with self.lock:
                if self.requests and self.MPI.Request.Testall(self.requests):
                    self.requests = []
                if not self.requests:
                    self.pending.clear()
            time.sleep(self.poll_seconds)


class NcclCommunicator(Communicator):
    """NCCL through CuPy (``cupy.cuda.nccl``) on CuPy arrays, on the current CUDA stream.

    Started by ``mpiexec`` like the MPI one: rank 0 creates NCCL's unique id and broadcasts it
    over MPI (``mpi_comm``, default a new :class:`MpiCommunicator`), which also answers
    :meth:`all_gather_object` and :meth:`barrier`. Each process uses GPU ``local_rank`` (made
    current here). Reductions are queued on the current stream, so kernels queued after them
    see the sums without the host waiting; :meth:`wait` synchronizes that stream.
    """

    def __init__(self, mpi_comm=None):
        import cupy
        from cupy.cuda import nccl
        self.cupy, self.nccl = cupy, nccl
        self.mpi = MpiCommunicator() if mpi_comm is None else mpi_comm
        self.rank, self.world_size = self.mpi.rank, self.mpi.world_size
        self.local_rank = self.mpi.local_rank
        cupy.cuda.Device(self.local_rank).use()
        unique_id = nccl.get_unique_id() if self.rank == 0 else None
        unique_id = self.mpi.comm.bcast(unique_id, root=0)
        self.comm = nccl.NcclCommunicator(self.world_size, unique_id, self.rank)

    def _nccl_dtype(self, array):
        codes = {np.dtype(np.float16): self.nccl.NCCL_FLOAT16,
                 np.dtype(np.float32): self.nccl.NCCL_FLOAT32,
                 np.dtype(np.float64): self.nccl.NCCL_FLOAT64}
        if not isinstance(array, self.cupy.ndarray) or array.dtype not in codes:
            raise TypeError(f"NcclCommunicator: reduces float16/32/64 CuPy arrays, got "
                            f"{type(array).__name__} of {getattr(array, 'dtype', '?')}")
        return codes[array.dtype]

    def start_all_reduce(self, array):
        stream = self.cupy.cuda.get_current_stream()
        self.comm.allReduce(array.data.ptr, array.data.ptr, array.size,
                            self._nccl_dtype(array), self.nccl.NCCL_SUM, stream.ptr)
        return stream

    def wait(self, handles):
        for stream in {id(h): h for h in handles if h is not None}.values():
            stream.synchronize()

    def broadcast(self, array, root=0):
        _check_root(root, self.world_size)
        stream = self.cupy.cuda.get_current_stream()
        self.comm.bcast(array.data.ptr, array.size, self._nccl_dtype(array), root, stream.ptr)
        return array

    def all_gather_object(self, value):
        return self.mpi.all_gather_object(value)

    def barrier(self):
        self.cupy.cuda.get_current_stream().synchronize()
        self.mpi.barrier()

    def abort(self, message, code=1):
        self.mpi.abort(message, code)


def import_mpi():
    """``mpi4py.MPI``, or an ImportError naming the extra to install."""
    try:
        from mpi4py import MPI
    except ImportError as error:
        raise ImportError("distributed training over MPI needs mpi4py and an MPI library: "
                          "pip install -e \".[dist]\" (mpi4py and the MPICH wheel)") from error
    return MPI


def default_communicator():
    """:class:`MpiCommunicator` inside an MPI launcher (``mpiexec``); otherwise, or without
    mpi4py, :class:`LocalCommunicator` with a warning (once per process). A launch of several
    processes without mpi4py is an ImportError: each would train alone on its shard."""
    global _warned_local
    size = launched_by_mpi()
    if size is not None:
        try:
            return MpiCommunicator()
        except ImportError:
            if size > 1:
                raise
            reason = "mpi4py is not installed (pip install -e \".[dist]\")"
    else:
        reason = "the process was not started by mpiexec"
    if not _warned_local:
        _warned_local = True
        warnings.warn(f"DistOpt: {reason}; training with world size 1", RuntimeWarning,
                      stacklevel=3)
    return LocalCommunicator()


def install_abort_on_error(communicator):
    """Make an uncaught exception on this rank abort every rank (after printing it)."""
    previous = sys.excepthook
    if getattr(previous, "aborts_communicator", None) is not None:
        return

    def abort_every_rank(kind, value, traceback):
        previous(kind, value, traceback)
        communicator.abort(f"autograd: rank {communicator.rank} of {communicator.world_size} "
                           f"raised {kind.__name__}: {value}; aborting every rank")

    abort_every_rank.aborts_communicator = communicator
    sys.excepthook = abort_every_rank


def _check_root(root, world_size):
    if isinstance(root, bool) or not isinstance(root, (int, np.integer)) \
            or not 0 <= root < world_size:
        raise ValueError(f"broadcast: root must be a rank in [0, {world_size}), got {root!r}")
