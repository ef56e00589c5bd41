"""Temporaries of crashed saves are removed by the next save or load; a live writer's never."""
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import autograd
from autograd.io import save, load, temporaries

pytestmark = pytest.mark.skipif(temporaries.fcntl is None, reason="needs fcntl (POSIX)")

_ROOT = str(pathlib.Path(autograd.__file__).resolve().parents[1])

# a save that stops inside its write: the first array is written, then the process waits for
# a line on stdin (a live writer) or dies at once (a crash), as a kill -9 would leave it
_WRITER = """
import os, sys, numpy as np
from autograd.io import save
real_write_array = np.lib.format.write_array

def write_array(*args, **kwargs):
    real_write_array(*args, **kwargs)
    if sys.argv[2] == "crash":
        os._exit(9)
    print("writing", flush=True)
    sys.stdin.readline()

np.lib.format.write_array = write_array
save(sys.argv[1], model={"W": np.full(1000, 7.0)}, epoch=int(sys.argv[3]))
"""


def _writer(path, mode, epoch=0):
    return subprocess.Popen([sys.executable, "-c", _WRITER, str(path), mode, str(epoch)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": _ROOT})


def _temporaries(folder):
    return sorted(name for name in os.listdir(folder) if name.endswith(".tmp"))


def test_the_next_save_and_load_remove_temporaries_of_crashed_saves(tmp_path):
    path = tmp_path / "run.ckpt"
    left = []
    for _ in range(3):
        assert _writer(path, "crash").wait(timeout=60) == 9
        left.append(_temporaries(tmp_path))
    # each crashed save left one temporary, and its successor removed its predecessor's
    assert [len(names) for names in left] == [1, 1, 1] and len({n[0] for n in left}) == 3
    # temporaries of another checkpoint and other files are none of its business
    (tmp_path / ".other.ckpt.0123456789ab.tmp").write_bytes(b"x")
    (tmp_path / "notes.tmp").write_bytes(b"x")
    save(path, model={"W": np.ones(2)})
    assert _temporaries(tmp_path) == [".other.ckpt.0123456789ab.tmp", "notes.tmp"]

    assert _writer(path, "crash").wait(timeout=60) == 9
    assert len(_temporaries(tmp_path)) == 3
    load(path)
    assert _temporaries(tmp_path) == [".other.ckpt.0123456789ab.tmp", "notes.tmp"]


def test_a_live_writers_temporary_is_left_alone(tmp_path):
    path = tmp_path / "run.ckpt"
    writer = _writer(path, "wait", epoch=5)
    try:
        assert writer.stdout.readline() == "writing\n"
        (live,) = _temporaries(tmp_path)
        save(path, model={"W": np.ones(2)}, epoch=1)       # another writer of the same path
        assert load(path) == {"epoch": 1}
        assert _temporaries(tmp_path) == [live]
        writer.stdin.write("go on\n")
        writer.stdin.flush()
        assert writer.wait(timeout=60) == 0
    finally:
        writer.kill()
        writer.wait()
    assert load(path) == {"epoch": 5}                     # the live writer finished its save
    assert _temporaries(tmp_path) == []


def test_a_writer_whose_new_file_a_cleaner_removed_starts_over(tmp_path, monkeypatch):
    """The one race: a cleaner locks and removes a temporary between its creation and the
    writer's lock. The writer notices (the file lost its name) and makes another."""
    real_flock, calls = temporaries.fcntl.flock, []

    class CleanerFirst:
        LOCK_EX, LOCK_NB = temporaries.fcntl.LOCK_EX, temporaries.fcntl.LOCK_NB

        @staticmethod
        def flock(descriptor, operation):
            calls.append(operation)
            if len(calls) == 1:                  # the writer's first lock: a cleaner runs first
                removed = temporaries.remove_stale(str(tmp_path), "run.ckpt")
                assert len(removed) == 1
            return real_flock(descriptor, operation)

    monkeypatch.setattr(temporaries, "fcntl", CleanerFirst)
    temporary, descriptor = temporaries.create(str(tmp_path), "run.ckpt")
    try:
        assert os.fstat(descriptor).st_nlink == 1 and os.path.exists(temporary)
        assert _temporaries(tmp_path) == [os.path.basename(temporary)]
        # and now that it is locked, a cleaner leaves it alone
        assert temporaries.remove_stale(str(tmp_path), "run.ckpt") == []
    finally:
        os.close(descriptor)
    assert temporaries.remove_stale(str(tmp_path), "run.ckpt") == [os.path.basename(temporary)]
