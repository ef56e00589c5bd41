"""Checkpoints: a model's and an optimizer's state and the user's extras, in one pickle-free file.

The file is a zip archive like NumPy's ``.npz``: one ``.npy`` member per array and a
``checkpoint.json`` member holding everything else (the structure of each state, numbers,
strings, and the name, shape and dtype of every array). Loading never unpickles, so a file from
an untrusted source cannot run code.

Writes go to a temporary file in the destination folder, which is flushed and fsynced, then
renamed over ``path`` (atomic): a crash or an error leaves either the previous checkpoint or the
new one, never a mixture. An error removes its temporary file; a killed process cannot, so the
next save or load of the same path removes temporaries no live writer holds (``temporaries``).
Loading reads and verifies the whole file (checksums, array headers against the metadata)
before anything is assigned, and a model or optimizer is either fully restored or left as it
was. Files from strangers are safe to load: a crafted file is a CheckpointError decided from
small headers before any large allocation (``untrusted``), and nothing is ever unpickled.

>>> import os, tempfile, numpy as np
>>> weights = {"W": np.ones((2, 3), np.float32)}
>>> path = os.path.join(tempfile.mkdtemp(), "run.ckpt")
>>> save(path, model=weights, epoch=3, history=[0.9, 0.5])
>>> restored = {"W": np.zeros((2, 3), np.float32)}
>>> load(path, model=restored), float(restored["W"].sum())
({'epoch': 3, 'history': [0.9, 0.5]}, 6.0)
"""
from __future__ import annotations

import contextlib
import json
import os
import struct
import zipfile
import zlib
from typing import Any

import numpy as np

from .restore import CheckpointError, states_to_save, check_targets, restore
from .state_tree import encode, decode
from . import temporaries, untrusted

__all__ = ["save", "load", "read", "CheckpointError"]

FORMAT = "autograd.checkpoint"
VERSION = 1
_METADATA = "checkpoint.json"
_ROLES = ("model", "optimizer", "extras")


def save(path: str | os.PathLike, model: Any = None, optimizer: Any = None,
         **extras: Any) -> None:
    """Write ``model.state_dict()``, ``optimizer.state_dict()`` and ``extras`` to exactly ``path``.

    ``model`` and ``optimizer`` are objects with ``state_dict()`` (a Layer, a Model, an
    Optimizer) or plain dicts of arrays, or None. With a model that has ``get_params()`` (a
    Layer), an autograd optimizer saves its per-parameter state under the model's parameter
    names (``optimizer.state_dict(model.get_params())``), which ``load`` matches them by.
    ``extras`` are keyword values: None, bools, numbers, strings, NumPy arrays and scalars,
    Tensors, and lists, tuples and dicts of them (the epoch, the loss history, a random state).
    Arrays are saved as NumPy arrays (a GPU array is copied to the host). Anything else is a
    TypeError before the file is touched. The folder must exist; an existing file at ``path``
    is replaced atomically.

    Data-parallel runs: with a ``DistOpt`` as ``optimizer``, only its rank 0 writes (the
    ranks hold equal models); the other ranks return at once, and every rank can ``load``.
    """
    path = os.fspath(path)
    if getattr(optimizer, "communicator", None) is not None and optimizer.rank != 0:
        return
    model_state, optimizer_state = states_to_save(model, optimizer)
    arrays: dict[str, Any] = {}
    metadata = {
        "format": FORMAT, "version": VERSION,
        "model": encode(model_state, arrays, "model"),
        "optimizer": encode(optimizer_state, arrays, "optimizer"),
        "extras": encode(extras, arrays, "extras"),
    }
    metadata["arrays"] = {name: {"shape": list(array.shape), "dtype": array.dtype.str}
                          for name, array in arrays.items()}
    text = json.dumps(metadata, indent=1)
    _check_metadata_size(text)
    _write_atomically(path, lambda stream: _write_archive(stream, text, arrays))


def load(path: str | os.PathLike, model: Any = None, optimizer: Any = None,
         strict: bool = True) -> dict[str, Any]:
    """Restore ``model`` and ``optimizer`` from the checkpoint at ``path``; return its extras.

    The whole file is read and verified first: a missing file is a FileNotFoundError, a corrupt,
    truncated or foreign one a CheckpointError (a ValueError) naming the path, and nothing is
    assigned. Then the model's state is checked, names, shapes and dtypes, before any of it is
    assigned: by the model's own ``load_state_dict(state, strict=strict)`` when it takes
    ``strict`` (a Layer), else here against ``model.state_dict()``. With ``strict`` (the
    default) a key missing from the file or unexpected in it is an error naming them;
    ``strict=False`` loads the keys both have and leaves the others (shapes and dtypes are still
    checked). The optimizer checks its own state; if it rejects it, the model is put back as it
    was. Mismatches are CheckpointErrors naming the path and the keys.

    ``model`` and ``optimizer`` are objects with ``load_state_dict()``, or plain dicts (updated:
    arrays already there are overwritten in place, other values replaced). Arrays come back as
    NumPy arrays; ``load_state_dict`` moves them to its device. An autograd optimizer is matched
    to ``model.get_params()`` when a model is given (see :func:`save`).
    """
    path = os.fspath(path)
    check_targets(model, optimizer)
    content = read(path)
    restore(path, content, model, optimizer, strict)
    return content["extras"]


def read(path: str | os.PathLike) -> dict[str, Any]:
    """The checkpoint at ``path`` as ``{"model": state or None, "optimizer": state or None,
    "extras": dict}``, verified but not assigned anywhere (to inspect a file)."""
    path = os.fspath(path)
    try:
        stream = open(path, "rb")
    except FileNotFoundError:
        raise FileNotFoundError(f"load: no checkpoint at {path}") from None
    with stream:
        temporaries.remove_stale(*os.path.split(os.path.abspath(path)))
        try:
            file_size = os.fstat(stream.fileno()).st_size
            with zipfile.ZipFile(stream) as archive:
                untrusted.check_members(archive, path, file_size)
                metadata = _read_metadata(archive, path)
                table = untrusted.check_array_table(metadata["arrays"], path, file_size)
                arrays = {name: _read_array(archive, name, expected, path)
                          for name, expected in table.items()}
        except CheckpointError:
            raise
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, KeyError,
                TypeError, IndexError, OverflowError, struct.error, NotImplementedError,
                RuntimeError) as error:
            # RuntimeError and NotImplementedError: zipfile's words for a header that asks
            # for a password or a feature it lacks
            raise CheckpointError(f"load: {path} is corrupt or truncated "
                                  f"({type(error).__name__}: {error})") from error
    try:
        return {role: decode(metadata[role], arrays, role) for role in _ROLES}
    except ValueError as error:
        raise CheckpointError(f"load: {path} is corrupt: {error}") from error


# ------------------------------------------------------------------ writing
def _write_archive(stream, metadata_text, arrays):
    with zipfile.ZipFile(stream, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
        archive.writestr(_METADATA, metadata_text)
        for name, array in arrays.items():
            with archive.open(name + ".npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, array, allow_pickle=False)


def _check_metadata_size(text):
    """What load would refuse is refused at save, so every saved file can be loaded."""
    encoded = text.encode("utf-8")
    if len(encoded) > untrusted.MAX_METADATA_BYTES:
        raise ValueError(f"save: the checkpoint's metadata would be {len(encoded)} bytes, more "
                         f"than the {untrusted.MAX_METADATA_BYTES} a load accepts: store large "
                         "data as NumPy arrays, not lists")
    if untrusted.json_depth(encoded) > untrusted.MAX_DEPTH:
        raise ValueError(f"save: the checkpoint's state nests more than {untrusted.MAX_DEPTH} "
                         "levels deep, more than a load accepts")


def _write_atomically(path, write):
    """Run ``write(stream)`` on a new file beside ``path``, fsync it, and rename it to ``path``.

    Stale temporaries of earlier crashed saves of ``path`` are removed first. The temporary
    stays locked until it has been renamed (see ``temporaries``), except on Windows, where an
    open file cannot be renamed and an open one cannot be removed either.
    """
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"save: cannot write {path}: folder {folder} does not exist")
    if os.path.isdir(path):
        raise IsADirectoryError(f"save: cannot write {path}: it is a directory")
    base = os.path.basename(path)
    temporaries.remove_stale(folder, base)
    temporary, descriptor = temporaries.create(folder, base)
    try:
        with os.fdopen(descriptor, "wb") as stream:
            write(stream)
            stream.flush()
            os.fsync(stream.fileno())
            if temporaries.fcntl is not None:
                os.replace(temporary, path)
        if temporaries.fcntl is None:
            os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(temporary)
        raise
    _fsync_folder(folder)


def _fsync_folder(folder):
    """Make the rename itself durable (POSIX); folders cannot be opened on Windows."""
    with contextlib.suppress(OSError):
        descriptor = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


# ------------------------------------------------------------------ reading
def _read_metadata(archive, path):
    if _METADATA not in archive.namelist():
        raise CheckpointError(f"load: {path} is not an autograd checkpoint (a zip archive "
                              f"without {_METADATA}; a plain .npz cannot be loaded here)")
    metadata = json.loads(untrusted.read_metadata_text(archive, _METADATA, path))
    if not isinstance(metadata, dict) or metadata.get("format") != FORMAT:
        raise CheckpointError(f"load: {path} is not an autograd checkpoint (its {_METADATA} "
                              f"does not say format {FORMAT!r})")
    version = metadata.get("version")
    if not isinstance(version, int) or version > VERSION:
        raise CheckpointError(f"load: {path} has checkpoint version {version!r}; this autograd "
                              f"reads versions up to {VERSION}: upgrade autograd")
    missing = [key for key in _ROLES + ("arrays",) if key not in metadata]
    if missing or not isinstance(metadata["arrays"], dict):
        lacking = ", ".join(missing) if missing else "a valid arrays table"
        raise CheckpointError(f"load: {path} is corrupt: its {_METADATA} lacks {lacking}")
    return metadata


def _read_array(archive, name, expected, path):
    member = f"{name}.npy"
    if member not in archive.NameToInfo:
        raise CheckpointError(f"load: {path} is corrupt: array member {member} is missing")
    return untrusted.read_array(archive, member, expected, path)
