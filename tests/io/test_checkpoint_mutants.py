"""Checkpoints where the mutation run of io/checkpoint.py found the suite blind
(docs/testing.md): the save-side limits at exactly what load accepts, a DistOpt's non-zero
ranks not writing, and the exact messages (the op, what it expected, what it got)."""
import json
import os
import re
import zipfile

import numpy as np
import pytest

from autograd.io import save, load, read, CheckpointError
from autograd.io import checkpoint, untrusted


def exactly(message):
    return f"^{re.escape(message)}$"


def metadata_text(path):
    with zipfile.ZipFile(path) as archive:
        return archive.read("checkpoint.json")


def test_metadata_of_exactly_the_size_a_load_accepts_is_saved_and_loads(tmp_path,
                                                                       monkeypatch):
    path = str(tmp_path / "run.ckpt")
    save(path, history=[0.5] * 20)
    size = len(metadata_text(path))
    monkeypatch.setattr(untrusted, "MAX_METADATA_BYTES", size)
    save(path, history=[0.5] * 20)                       # at the limit: saved, and it loads
    assert load(path) == {"history": [0.5] * 20}
    monkeypatch.setattr(untrusted, "MAX_METADATA_BYTES", size - 1)
    message = (f"save: the checkpoint's metadata would be {size} bytes, more than the "
               f"{size - 1} a load accepts: store large data as NumPy arrays, not lists")
    with pytest.raises(ValueError, match=exactly(message)):
        save(path, history=[0.5] * 20)


def test_state_nested_exactly_as_deep_as_a_load_accepts_is_saved_and_loads(tmp_path,
                                                                          monkeypatch):
    path = str(tmp_path / "run.ckpt")
    nested = [[[[1]]]]
    save(path, nested=nested)
    depth = untrusted.json_depth(metadata_text(path))
    monkeypatch.setattr(untrusted, "MAX_DEPTH", depth)
    save(path, nested=nested)
    assert load(path) == {"nested": nested}
    monkeypatch.setattr(untrusted, "MAX_DEPTH", depth - 1)
    message = (f"save: the checkpoint's state nests more than {depth - 1} levels deep, more "
               "than a load accepts")
    with pytest.raises(ValueError, match=exactly(message)):
        save(path, nested=nested)


class DataParallelStandIn:
    """What save reads of a DistOpt: a communicator, this process's rank, its state."""
    communicator = object()

    def __init__(self, rank):
        self.rank = rank

    def state_dict(self):
        return {"step": np.array(3)}

    def load_state_dict(self, state):
        self.loaded = state


@pytest.mark.parametrize("rank", [0, 1, 2])
def test_only_rank_zero_of_a_data_parallel_run_writes(tmp_path, rank):
    path = str(tmp_path / "run.ckpt")
    save(path, optimizer=DataParallelStandIn(rank), epoch=1)
    assert os.path.exists(path) == (rank == 0)
    if rank == 0:
        assert int(read(path)["optimizer"]["step"]) == 3


@pytest.mark.parametrize("role", ["model", "optimizer"])
def test_a_value_that_cannot_be_stored_is_named_by_its_role(tmp_path, role):
    message = (f"save: cannot store {role}['W'] of type object: expected None, bool, int, "
               "float, str, a NumPy array or scalar, a Tensor, or a list, tuple or dict of "
               "those")
    with pytest.raises(TypeError, match=exactly(message)):
        save(str(tmp_path / "run.ckpt"), **{role: {"W": object()}})


def test_saving_onto_a_folder_names_it(tmp_path):
    folder = tmp_path / "taken"
    folder.mkdir()
    with pytest.raises(IsADirectoryError,
                       match=exactly(f"save: cannot write {folder}: it is a directory")):
        save(str(folder), epoch=1)


def write_checkpoint(path, metadata, arrays=()):
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("checkpoint.json", json.dumps(metadata))
        for name, array in arrays:
            with archive.open(name + ".npy", "w") as member:
                np.lib.format.write_array(member, array)


def test_metadata_lacking_roles_or_an_arrays_table_names_what_it_lacks(tmp_path):
    path = str(tmp_path / "crafted.ckpt")
    write_checkpoint(path, {"format": "autograd.checkpoint", "version": 1, "model": None})
    message = (f"load: {path} is corrupt: its checkpoint.json lacks optimizer, extras, "
               "arrays")
    with pytest.raises(CheckpointError, match=exactly(message)):
        read(path)
    write_checkpoint(path, {"format": "autograd.checkpoint", "version": 1, "model": None,
                            "optimizer": None, "extras": {}, "arrays": []})
    message = f"load: {path} is corrupt: its checkpoint.json lacks a valid arrays table"
    with pytest.raises(CheckpointError, match=exactly(message)):
        read(path)


@pytest.mark.parametrize("role", ["model", "optimizer", "extras"])
def test_a_reference_to_a_missing_array_names_its_role(tmp_path, role):
    path = str(tmp_path / "crafted.ckpt")
    metadata = {"format": "autograd.checkpoint", "version": 1, "model": None,
                "optimizer": None, "extras": {}, "arrays": {}}
    metadata[role] = {"W": {"$array": "a7"}}
    write_checkpoint(path, metadata)
    message = f"load: {path} is corrupt: {role}['W'] refers to array 'a7', which the file lacks"
    with pytest.raises(CheckpointError, match=exactly(message)):
        read(path)


def test_a_file_that_is_no_zip_archive_names_the_error_type(tmp_path):
    path = tmp_path / "garbage.ckpt"
    path.write_bytes(b"not a zip archive at all" * 10)
    with pytest.raises(CheckpointError,
                       match=exactly(f"load: {path} is corrupt or truncated (BadZipFile: File "
                                     "is not a zip file)")):
        read(str(path))


def test_a_failed_save_raises_its_own_error_even_if_the_cleanup_fails(tmp_path, monkeypatch):
    # the temporary cannot be removed (another process took it): the write's own error,
    # not the cleanup's OSError, is what the caller sees
    def failing_write(stream, text, arrays):
        raise RuntimeError("disk full")

    def failing_remove(name):
        raise FileNotFoundError(name)

    monkeypatch.setattr(checkpoint, "_write_archive", failing_write)
    monkeypatch.setattr(checkpoint.os, "remove", failing_remove)
    with pytest.raises(RuntimeError, match="^disk full$"):
        save(str(tmp_path / "run.ckpt"), epoch=1)
