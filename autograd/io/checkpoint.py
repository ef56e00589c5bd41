"""Checkpoints: a model's and an optimizer's state and the user's extras, in one pickle-free file.

The file is a zip archive like NumPy's ``.npz``: one ``.npy`` member per array and a
``checkpoint.json`` member holding everything else (the structure of each state, numbers,
strings, and the name, shape and dtype of every array). Loading never unpickles, so a file from
an untrusted source cannot run code.

Writes go to a temporary file in the destination folder, which is flushed and fsynced, then
renamed over ``path`` (atomic): a crash or an error leaves either the previous checkpoint or the
new one, never a mixture, and no temporary file. Loading reads and verifies the whole file
(checksums, array headers against the metadata) before anything is assigned, and a model or
optimizer is either fully restored or left as it was.

>>> import os, tempfile, numpy as np
>>> weights = {"W": np.ones((2, 3), np.float32)}
>>> path = os.path.join(tempfile.mkdtemp(), "run.ckpt")
>>> save(path, model=weights, epoch=3, history=[0.9, 0.5])
>>> restored = {"W": np.zeros((2, 3), np.float32)}
>>> load(path, model=restored), float(restored["W"].sum())
({'epoch': 3, 'history': [0.9, 0.5]}, 6.0)
"""
import contextlib
import io
import json
import os
import secrets
import zipfile
import zlib

import numpy as np

from .restore import CheckpointError, states_to_save, check_targets, restore
from .state_tree import encode, decode

__all__ = ["save", "load", "read", "CheckpointError"]

FORMAT = "autograd.checkpoint"
VERSION = 1
_METADATA = "checkpoint.json"
_ROLES = ("model", "optimizer", "extras")


def save(path, model=None, optimizer=None, **extras):
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
    arrays = {}
    metadata = {
        "format": FORMAT, "version": VERSION,
        "model": encode(model_state, arrays, "model"),
        "optimizer": encode(optimizer_state, arrays, "optimizer"),
        "extras": encode(extras, arrays, "extras"),
    }
    metadata["arrays"] = {name: {"shape": list(array.shape), "dtype": array.dtype.str}
                          for name, array in arrays.items()}
    text = json.dumps(metadata, indent=1)
    _write_atomically(path, lambda stream: _write_archive(stream, text, arrays))


def load(path, model=None, optimizer=None, strict=True):
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


def read(path):
    """The checkpoint at ``path`` as ``{"model": state or None, "optimizer": state or None,
    "extras": dict}``, verified but not assigned anywhere (to inspect a file)."""
    path = os.fspath(path)
    try:
        stream = open(path, "rb")
    except FileNotFoundError:
        raise FileNotFoundError(f"load: no checkpoint at {path}") from None
    with stream:
        try:
            with zipfile.ZipFile(stream) as archive:
                metadata = _read_metadata(archive, path)
                arrays = {name: _read_array(archive, name, spec, path)
                          for name, spec in metadata["arrays"].items()}
        except CheckpointError:
            raise
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, KeyError,
                TypeError) as error:
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


def _write_atomically(path, write):
    """Run ``write(stream)`` on a new file beside ``path``, fsync it, and rename it to ``path``."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"save: cannot write {path}: folder {folder} does not exist")
    if os.path.isdir(path):
        raise IsADirectoryError(f"save: cannot write {path}: it is a directory")
    temporary, descriptor = _create_temporary(folder, os.path.basename(path))
    try:
        with os.fdopen(descriptor, "wb") as stream:
            write(stream)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(temporary)
        raise
    _fsync_folder(folder)


def _create_temporary(folder, base):
    # os.open with mode 0o666 lets the umask decide permissions, as for any new file
    # (tempfile.mkstemp would make a checkpoint readable by its owner only).
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    while True:
        temporary = os.path.join(folder, f".{base}.{secrets.token_hex(6)}.tmp")
        try:
            return temporary, os.open(temporary, flags, 0o666)
        except FileExistsError:
            continue


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
    metadata = json.loads(archive.read(_METADATA).decode("utf-8"))
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


def _read_array(archive, name, spec, path):
    member = f"{name}.npy"
    if member not in archive.NameToInfo:
        raise CheckpointError(f"load: {path} is corrupt: array member {member} is missing")
    content = archive.read(member)               # checks the member's CRC-32
    buffer = io.BytesIO(content)
    array = np.lib.format.read_array(buffer, allow_pickle=False)
    if buffer.tell() != len(content):
        raise CheckpointError(f"load: {path} is corrupt: {member} has "
                              f"{len(content) - buffer.tell()} bytes after its data")
    if list(array.shape) != spec["shape"] or array.dtype.str != spec["dtype"]:
        raise CheckpointError(f"load: {path} is corrupt: {member} holds {array.dtype.str} "
                              f"{tuple(array.shape)}, its metadata says {spec['dtype']} "
                              f"{tuple(spec['shape'])}")
    return array
