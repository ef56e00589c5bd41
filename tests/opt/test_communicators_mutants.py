"""The communicators' code that runs without a second process (the mutation run of
opt/communicators.py; tests/opt/test_distributed.py covers MPI itself under mpiexec, in
processes mutmut does not follow): the launcher's environment, the base class, the local
world, the choice of a default, the abort hook and the root check. References: the values
and messages worked out by hand."""
import re
import sys
import threading
import time
import warnings

import numpy as np
import pytest

from autograd.opt import communicators


def exactly(message):
    return f"^{re.escape(message)}$"


@pytest.fixture
def no_launcher(monkeypatch):
    for name in communicators._LAUNCHER_SIZE_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.mark.parametrize("variable", communicators._LAUNCHER_SIZE_VARIABLES)
def test_each_launchers_variable_gives_the_world_size(no_launcher, variable):
    assert communicators.launched_by_mpi() is None
    no_launcher.setenv(variable, "3")
    assert communicators.launched_by_mpi() == 3


def test_a_variable_that_is_no_number_is_skipped(no_launcher):
    no_launcher.setenv("PMI_SIZE", "")
    no_launcher.setenv("OMPI_COMM_WORLD_SIZE", "two")
    no_launcher.setenv("PMIX_SIZE", "4")
    assert communicators.launched_by_mpi() == 4


def test_the_base_class_is_a_world_of_one_that_must_be_implemented():
    base = communicators.Communicator()
    assert (base.rank, base.world_size, base.local_rank) == (0, 1, 0)
    assert repr(base) == "Communicator(rank=0, world_size=1, local_rank=0)"
    for call in (lambda: base.start_all_reduce(np.ones(1)), lambda: base.broadcast(np.ones(1)),
                 lambda: base.all_gather_object(1)):
        with pytest.raises(NotImplementedError):
            call()
    assert base.progress([None]) is None and base.wait([None]) is None
    assert base.barrier() is None
    with pytest.raises(SystemExit, match=exactly("rank 3 failed")):
        base.abort("rank 3 failed", code=2)


def test_all_reduce_starts_a_reduction_and_waits_for_it():
    calls = []

    class Doubling(communicators.Communicator):
        def start_all_reduce(self, array):
            array *= 2
            calls.append("start")
            return "handle"

        def wait(self, handles):
            calls.append(("wait", handles))

    array = np.array([1.0, 2.0])
    assert Doubling().all_reduce(array) is array
    np.testing.assert_array_equal(array, [2.0, 4.0])
    assert calls == ["start", ("wait", ["handle"])]


def test_the_local_world_leaves_arrays_as_they_are():
    local = communicators.LocalCommunicator()
    array = np.array([1.0, 2.0])
    assert local.start_all_reduce(array) is None
    assert local.broadcast(array, root=np.int64(0)) is array
    assert local.all_gather_object({"a": 1}) == [{"a": 1}]
    np.testing.assert_array_equal(array, [1.0, 2.0])


@pytest.mark.parametrize("root", [1, -1, True, 0.0, "0"])
def test_a_root_that_is_no_rank_is_refused_by_name(root):
    with pytest.raises(ValueError, match=exactly(f"broadcast: root must be a rank in [0, 1), "
                                                 f"got {root!r}")):
        communicators.LocalCommunicator().broadcast(np.ones(2), root=root)


def test_outside_a_launcher_the_default_is_local_with_one_warning(no_launcher):
    no_launcher.setattr(communicators, "_warned_local", False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = communicators.default_communicator()
        communicators.default_communicator()
    assert type(first) is communicators.LocalCommunicator
    assert [(w.category, str(w.message)) for w in caught] == [
        (RuntimeWarning, "DistOpt: the process was not started by mpiexec; training with "
                         "world size 1")]


def _without_mpi4py(monkeypatch):
    def missing():
        raise ImportError("no mpi4py here")
    monkeypatch.setattr(communicators, "import_mpi", missing)


def test_a_launch_of_one_without_mpi4py_trains_alone_and_says_why(no_launcher):
    _without_mpi4py(no_launcher)
    no_launcher.setenv("PMI_SIZE", "1")
    no_launcher.setattr(communicators, "_warned_local", False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert type(communicators.default_communicator()) is communicators.LocalCommunicator
    assert [str(w.message) for w in caught] == [
        "DistOpt: mpi4py is not installed (pip install -e \".[dist]\"); training with world "
        "size 1"]


def test_a_launch_of_several_without_mpi4py_is_an_error(no_launcher):
    _without_mpi4py(no_launcher)
    no_launcher.setenv("OMPI_COMM_WORLD_SIZE", "2")
    with pytest.raises(ImportError, match="no mpi4py here"):
        communicators.default_communicator()


def test_import_mpi_names_the_extra_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "mpi4py", None)        # import mpi4py fails
    with pytest.raises(ImportError, match=exactly(
            "distributed training over MPI needs mpi4py and an MPI library: pip install -e "
            "\".[dist]\" (mpi4py and the MPICH wheel)")):
        communicators.import_mpi()


def test_an_uncaught_error_prints_then_aborts_every_rank_once(monkeypatch):
    printed, aborted = [], []

    def previous(kind, value, traceback):
        printed.append((kind, str(value)))

    class Rank(communicators.Communicator):
        rank, world_size = 1, 2

        def abort(self, message, code=1):
            aborted.append(message)

    monkeypatch.setattr(sys, "excepthook", previous)
    communicators.install_abort_on_error(Rank())
    hook = sys.excepthook
    communicators.install_abort_on_error(Rank())        # a second install keeps the first
    assert sys.excepthook is hook and hook.aborts_communicator is not None
    hook(ValueError, ValueError("bad batch"), None)
    assert printed == [(ValueError, "bad batch")]
    assert aborted == ["autograd: rank 1 of 2 raised ValueError: bad batch; aborting every rank"]


# ------------------------------------------------------------------ MpiCommunicator's glue
class FakeMPI:
    """The parts of mpi4py.MPI that MpiCommunicator calls, recording each call."""
    IN_PLACE, SUM, COMM_TYPE_SHARED = "IN_PLACE", "SUM", "SHARED"
    THREAD_MULTIPLE, THREAD_SERIALIZED = 3, 2

    def __init__(self, size=2, rank=1, local_rank=0, thread_level=3, complete=True):
        self.calls, self.thread_level, self.complete = [], thread_level, complete
        mpi = self

        class Node:
            def Get_rank(self):
                return local_rank

            def Free(self):
                mpi.calls.append("Free")

        class Comm:
            def Get_rank(self):
                return rank

            def Get_size(self):
                return size

            def Split_type(self, kind):
                mpi.calls.append(("Split_type", kind))
                return Node()

            def Iallreduce(self, send, array, op):
                mpi.calls.append(("Iallreduce", send, op))
                array *= size
                return f"request{len(mpi.calls)}"

            def Allreduce(self, send, array, op):
                mpi.calls.append(("Allreduce", send, op))
                array *= size

            def Bcast(self, array, root):
                mpi.calls.append(("Bcast", root, array is not None))

            def allgather(self, value):
                return [value] * size

            def Barrier(self):
                mpi.calls.append("Barrier")

            def Abort(self, code):
                mpi.calls.append(("Abort", code))

        class Request:
            @staticmethod
            def Testall(requests):
                mpi.calls.append(("Testall", list(requests)))
                return mpi.complete

            @staticmethod
            def Waitall(requests):
                mpi.calls.append(("Waitall", list(requests)))

        self.COMM_WORLD, self.Request = Comm(), Request

    def Query_thread(self):
        return self.thread_level


@pytest.fixture
def fake_mpi(monkeypatch):
    made = []

    def install(**options):
        mpi = FakeMPI(**options)
        monkeypatch.setattr(communicators, "import_mpi", lambda: mpi)
        made.append(mpi)
        return mpi
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)      # put back afterwards
    return install


def test_mpi_reads_its_world_and_installs_the_abort_hook(fake_mpi):
    mpi = fake_mpi(size=2, rank=1, local_rank=1)
    comm = communicators.MpiCommunicator()
    assert (comm.rank, comm.world_size, comm.local_rank) == (1, 2, 1)
    assert mpi.calls == [("Split_type", "SHARED"), "Free"]
    assert comm.progress_thread is False and comm.poll_seconds == 1e-3
    assert sys.excepthook.aborts_communicator is comm


def test_mpi_in_a_world_of_one_leaves_the_excepthook_alone(fake_mpi):
    fake_mpi(size=1, rank=0)
    hook = sys.excepthook
    assert communicators.MpiCommunicator(progress_thread=True).progress_thread is False
    assert sys.excepthook is hook


def test_mpi_reduces_numpy_arrays_in_place_and_tests_pending_requests(fake_mpi):
    mpi = fake_mpi(size=2)
    comm = communicators.MpiCommunicator()
    array = np.array([1.0, 2.0])
    request = comm.start_all_reduce(array)
    np.testing.assert_array_equal(array, [2.0, 4.0])
    assert mpi.calls[-1] == ("Iallreduce", "IN_PLACE", "SUM")
    mpi.calls.clear()
    comm.progress([None])
    comm.progress([request, None])
    comm.wait([None])
    comm.wait([None, request])
    assert mpi.calls == [("Testall", [request]), ("Waitall", [request])]
    assert comm.all_reduce(array) is array
    np.testing.assert_array_equal(array, [4.0, 8.0])
    assert mpi.calls[-1] == ("Allreduce", "IN_PLACE", "SUM")
    assert comm.broadcast(array, root=1) is array and mpi.calls[-1] == ("Bcast", 1, True)
    comm.broadcast(array)
    assert mpi.calls[-1] == ("Bcast", 0, True)
    assert comm.all_gather_object("x") == ["x", "x"]
    comm.barrier()
    assert mpi.calls[-1] == "Barrier"


@pytest.mark.parametrize("call", ["start_all_reduce", "all_reduce"])
def test_mpi_refuses_what_is_no_numpy_array_naming_nccl(fake_mpi, call):
    fake_mpi()
    with pytest.raises(TypeError, match=exactly("MpiCommunicator: reduces NumPy arrays, got "
                                                "list; for GPU (CuPy) arrays use "
                                                "NcclCommunicator")):
        getattr(communicators.MpiCommunicator(), call)([1.0])


def test_mpi_broadcast_checks_the_root_against_its_world(fake_mpi):
    fake_mpi(size=2)
    with pytest.raises(ValueError, match=exactly("broadcast: root must be a rank in [0, 2), "
                                                 "got 2")):
        communicators.MpiCommunicator().broadcast(np.ones(1), root=2)


def test_mpi_abort_prints_the_message_then_aborts_with_the_code(fake_mpi, capsys):
    mpi = fake_mpi()
    communicators.MpiCommunicator().abort("rank 1 failed\n", code=3)
    assert capsys.readouterr().err == "rank 1 failed\n"
    assert mpi.calls[-1] == ("Abort", 3)
    communicators.MpiCommunicator().abort("rank 1: bad X  \n\n")     # one newline, by default 1
    assert capsys.readouterr().err == "rank 1: bad X  \n"
    assert mpi.calls[-1] == ("Abort", 1)


def test_with_a_progress_thread_the_poller_tests_and_wait_takes_the_requests_back(fake_mpi):
    mpi = fake_mpi(size=2, complete=False)
    comm = communicators.MpiCommunicator(progress_thread=True, poll_seconds=1e-4)
    assert comm.progress_thread is True
    request = comm.start_all_reduce(np.ones(2))
    for _ in range(10000):       # up to ~10 s: the thread tests the pending request, again and again
        if mpi.calls.count(("Testall", [request])) >= 2:
            break
        time.sleep(1e-3)
    assert mpi.calls.count(("Testall", [request])) >= 2
    threads = [t for t in threading.enumerate() if t.name == "autograd-mpi-progress"]
    assert threads and all(t.daemon for t in threads)     # never keeps the process alive
    comm.progress([request])                     # the thread's job: no Testall from here
    comm.wait([request])
    with comm._poller.lock:
        assert comm._poller.requests == [] and not comm._poller.pending.is_set()
    assert mpi.calls[-1] == ("Waitall", [request])


def test_without_thread_multiple_there_is_no_progress_thread(fake_mpi):
    fake_mpi(size=2, thread_level=FakeMPI.THREAD_SERIALIZED)
    comm = communicators.MpiCommunicator(progress_thread=True)
    assert comm.progress_thread is False
    comm.start_all_reduce(np.ones(1))
    assert comm._poller is None


def test_mpi_uses_the_communicator_it_is_given(fake_mpi):
    mpi = fake_mpi(size=2, rank=1)

    class Other(type(mpi.COMM_WORLD)):
        def Get_rank(self):
            return 0
    comm = communicators.MpiCommunicator(comm=Other())
    assert comm.rank == 0 and isinstance(comm.comm, Other)


def test_the_poller_keeps_serving_after_its_requests_complete(fake_mpi):
    mpi = fake_mpi(size=2, complete=True)
    comm = communicators.MpiCommunicator(progress_thread=True, poll_seconds=1e-4)
    first = comm.start_all_reduce(np.ones(1))
    for _ in range(10000):               # up to ~10 s for the progress thread, on a loaded machine
        with comm._poller.lock:
            if ("Testall", [first]) in mpi.calls and comm._poller.requests == []:
                break
        time.sleep(1e-3)
    second = comm.start_all_reduce(np.ones(1))       # the list is emptied, not dropped
    comm.wait([second])
    assert mpi.calls[-1] == ("Waitall", [second])


def test_the_local_world_broadcasts_from_rank_zero_by_default():
    array = np.ones(2)
    assert communicators.LocalCommunicator().broadcast(array) is array


def test_the_abort_hook_passes_the_traceback_on(monkeypatch):
    seen = []
    monkeypatch.setattr(sys, "excepthook", lambda *info: seen.append(info))

    class Rank(communicators.Communicator):
        rank, world_size = 0, 2

        def abort(self, message, code=1):
            pass
    communicators.install_abort_on_error(Rank())
    traceback = object()
    sys.excepthook(KeyError, KeyError("k"), traceback)
    assert seen[0][2] is traceback


@pytest.mark.skipif("mutants" in __import__("pathlib").Path(communicators.__file__).parts,
                    reason="under mutmut its trampoline adds frames before the user's line")
def test_the_world_of_one_warning_points_at_the_line_making_distopt(no_launcher):
    from autograd import opt
    no_launcher.setattr(communicators, "_warned_local", False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        opt.DistOpt(opt.SGD())
    assert [w.filename for w in caught] == [__file__]
