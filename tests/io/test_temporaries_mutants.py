"""Temporaries of checkpoint writes: tests written from the mutants of autograd/io/temporaries.py
that the suite let through (issue 22): the races a cleaner can lose (the file vanished, was
renamed, or replaced by another under its name), how it opens a file, and the branch for
systems without fcntl (run here by setting ``temporaries.fcntl`` to None)."""
import os

import pytest

from autograd.io import temporaries

posix = pytest.mark.skipif(temporaries.fcntl is None, reason="needs fcntl (POSIX)")

_NAME = ".run.ckpt.0123456789ab.tmp"        # what a write of run.ckpt names its temporary


def _stale(folder, name=_NAME, content=b"partial"):
    path = folder / name
    path.write_bytes(content)
    return str(path)


class _FlockThen:
    """fcntl whose flock runs ``action`` once the lock is held: what another process may do
    between the cleaner's lock and its stat."""

    def __init__(self, action):
        self.real, self.action = temporaries.fcntl, action
        self.LOCK_EX, self.LOCK_NB = self.real.LOCK_EX, self.real.LOCK_NB

    def flock(self, descriptor, operation):
        self.real.flock(descriptor, operation)
        self.action()


@posix
def test_a_temporary_that_vanished_before_the_cleaner_opened_it_is_not_reported(tmp_path):
    """open fails: nothing removed, False (mutant `return True` there)."""
    assert temporaries._remove_if_unlocked(str(tmp_path / _NAME)) is False


@posix
def test_a_temporary_renamed_while_the_cleaner_locked_it_is_left_alone(tmp_path, monkeypatch):
    """The writer renamed its temporary to the checkpoint: os.stat of the old name fails,
    which is not an error and removes nothing (mutants suppress(None), final `return True`)."""
    temporary = _stale(tmp_path)
    checkpoint = tmp_path / "run.ckpt"
    monkeypatch.setattr(temporaries, "fcntl",
                        _FlockThen(lambda: os.rename(temporary, checkpoint)))
    assert temporaries._remove_if_unlocked(temporary) is False
    assert checkpoint.read_bytes() == b"partial"


@posix
def test_another_file_under_the_temporarys_name_is_not_removed(tmp_path, monkeypatch):
    """The name now belongs to another file (another inode): it stays (mutant final
    `return True`, and any removal by name alone)."""
    temporary = _stale(tmp_path)

    def replace():
        os.rename(temporary, tmp_path / "moved")
        _stale(tmp_path, content=b"another writer's")

    racing = _FlockThen(replace)
    monkeypatch.setattr(temporaries, "fcntl", racing)
    assert temporaries._remove_if_unlocked(temporary) is False
    assert (tmp_path / _NAME).read_bytes() == b"another writer's"
    monkeypatch.setattr(temporaries, "fcntl", racing.real)      # no more races: it is stale
    assert temporaries.remove_stale(str(tmp_path), "run.ckpt") == [_NAME]


@posix
def test_the_cleaner_opens_a_temporary_read_only(tmp_path, monkeypatch):
    """It needs no write permission on a stale file (mutant O_BINARY's default 1, which
    opens it write-only: a read-only temporary could then never be cleaned)."""
    temporary, flags = _stale(tmp_path), []
    real_open = os.open

    def recording_open(path, mode, *args):
        if path == temporary:
            flags.append(mode)
        return real_open(path, mode, *args)

    monkeypatch.setattr(temporaries.os, "open", recording_open)
    assert temporaries.remove_stale(str(tmp_path), "run.ckpt") == [_NAME]
    assert flags == [os.O_RDONLY | getattr(os, "O_BINARY", 0)]
    assert flags[0] & (os.O_WRONLY | os.O_RDWR) == 0


# ---------------------------------------------------------------- without fcntl (Windows)
def test_without_fcntl_a_closed_temporary_is_removed(tmp_path, monkeypatch):
    monkeypatch.setattr(temporaries, "fcntl", None)
    _stale(tmp_path)
    assert temporaries.remove_stale(str(tmp_path), "run.ckpt") == [_NAME]
    assert os.listdir(tmp_path) == []


def test_without_fcntl_a_temporary_that_cannot_be_removed_is_not_reported(tmp_path,
                                                                          monkeypatch):
    """Windows refuses to remove an open file (an OSError): it is skipped, not an error and
    not reported (mutants suppress(None), `return True`)."""
    monkeypatch.setattr(temporaries, "fcntl", None)
    assert temporaries._remove_if_unlocked(str(tmp_path / _NAME)) is False
    _stale(tmp_path)

    def refuse(path):
        raise PermissionError(13, "in use by another process", path)

    monkeypatch.setattr(temporaries.os, "remove", refuse)
    assert temporaries.remove_stale(str(tmp_path), "run.ckpt") == []
    assert os.listdir(tmp_path) == [_NAME]


def test_without_fcntl_create_returns_an_open_unlocked_temporary(tmp_path, monkeypatch):
    monkeypatch.setattr(temporaries, "fcntl", None)
    temporary, descriptor = temporaries.create(str(tmp_path), "run.ckpt")
    try:
        assert os.path.dirname(temporary) == str(tmp_path)
        assert temporaries.temporary_pattern("run.ckpt").match(os.path.basename(temporary))
        os.write(descriptor, b"data")
    finally:
        os.close(descriptor)
    with open(temporary, "rb") as stream:
        assert stream.read() == b"data"


def test_a_name_already_taken_is_skipped_for_a_new_one(tmp_path, monkeypatch):
    """O_EXCL refuses an existing name: create draws another (mutant `break`, which returned
    None). The names drawn are set here, so the collision is certain."""
    draws = iter(["0123456789ab", "0123456789ab", "ba9876543210"])
    monkeypatch.setattr(temporaries.secrets, "token_hex", lambda size: next(draws))
    _stale(tmp_path, content=b"someone else's")
    temporary, descriptor = temporaries.create(str(tmp_path), "run.ckpt")
    os.close(descriptor)
    assert temporary == str(tmp_path / ".run.ckpt.ba9876543210.tmp")
    assert (tmp_path / _NAME).read_bytes() == b"someone else's"


def test_a_folder_that_cannot_be_listed_is_no_error(tmp_path):
    """Cleaning up is a courtesy: a missing folder gives [] (not an OSError)."""
    assert temporaries.remove_stale(str(tmp_path / "gone"), "run.ckpt") == []


@pytest.mark.parametrize("umask", [0o022, 0o007])
def test_a_temporary_gets_the_mode_of_any_new_file(tmp_path, umask):
    """0o666 less the umask, as open() gives (the checkpoint is this file renamed): never
    executable (mutants dropping the mode: 0o777, or 0o667)."""
    previous = os.umask(umask)
    try:
        temporary, descriptor = temporaries.create(str(tmp_path), "run.ckpt")
        os.close(descriptor)
    finally:
        os.umask(previous)
    assert os.stat(temporary).st_mode & 0o777 == 0o666 & ~umask
