"""Checkpoints: a model's and an optimizer's state and the user's extras, in one pickle-free file.

The file is a zip archive like NumPy's ``.npz``: one ``.npy`` member per array and a
``checkpoint.json`` member holding everything else (the structure of each state, numbers,
strings, and the name, shape and dtype of every array). Loading never unpickles, so a file from
an untrusted source cannot run code.

Writes go to a temporary file in the destination folder, which is flushed and fsynced, then
renamed over ``path`` (atomic): a crash or an error leaves either the previous checkpoint or the
new one, never a mixture, and no temporary file. Loading reads and verifies the whole file
(checksums, array headers against the metadata) and checks every key, shape and dtype against the
model before anything is assigned.

>>> import os, tempfile, numpy as np
>>> weights = {"W": np.ones((2, 3), np.float32)}
>>> path = os.path.join(tempfile.mkdtemp(), "run.ckpt")
>>> save(path, model=weights, epoch=3, history=[0.9, 0.5])
>>> restored = {"W": np.zeros((2, 3), np.float32)}
>>> load(path, model=restored), float(restored["W"].sum())
({'epoch': 3, 'history': [0.9, 0.5]}, 6.0)
"""
import contextlib
import copy
import io
import json
import os
import secrets
import zipfile
import zlib
from collections.abc import Mapping, MutableMapping

import numpy as np

from .state_tree import encode, decode, is_array

__all__ = ["save", "load", "read", "CheckpointError"]

FORMAT = "autograd.checkpoint"
VERSION = 1
_METADATA = "checkpoint.json"
_ROLES = ("model", "optimizer", "extras")


class CheckpointError(ValueError):
    """A checkpoint that is corrupt, truncated or not a checkpoint, or that does not fit the model
    it is loaded into. The message names the file."""


def save(path, model=None, optimizer=None, **extras):
    """Write ``model.state_dict()``, ``optimizer.state_dict()`` and ``extras`` to exactly ``path``.

    ``model`` and ``optimizer`` are objects with ``state_dict()`` (a Layer, a Model, an
    Optimizer) or plain dicts of arrays, or None. ``extras`` are keyword values: None, bools,
    numbers, strings, NumPy arrays and scalars, Tensors, and lists, tuples and dicts of them
    (the epoch, the step, the loss history, a random state). Arrays are saved as NumPy arrays
    (a GPU array is copied to the host). Anything else is a TypeError before the file is touched.
    The folder must exist; an existing file at ``path`` is replaced atomically.
    """
    path = os.fspath(path)
    arrays = {}
    metadata = {
        "format": FORMAT, "version": VERSION,
        "model": None if model is None else encode(_state_of(model, "model"), arrays, "model"),
        "optimizer": (None if optimizer is None
                      else encode(_state_of(optimizer, "optimizer"), arrays, "optimizer")),
        "extras": encode(extras, arrays, "extras"),
    }
    metadata["arrays"] = {name: {"shape": list(array.shape), "dtype": array.dtype.str}
                          for name, array in arrays.items()}
    text = json.dumps(metadata, indent=1)
    _write_atomically(path, lambda stream: _write_archive(stream, text, arrays))


def load(path, model=None, optimizer=None, strict=True):
    """Restore ``model`` and ``optimizer`` from the checkpoint at ``path``; return its extras.

    Everything is checked before anything is assigned: the file's integrity (a corrupt,
    truncated or foreign file is a CheckpointError, a ValueError naming the path; a missing one
    a FileNotFoundError), then the model's keys, shapes and dtypes against ``model.state_dict()``.
    With ``strict`` (the default) a key missing from the file or unexpected in it is an error
    naming them; ``strict=False`` loads the keys both have and keeps the model's value for the
    others (shapes and dtypes are still checked). The optimizer checks its own state in its
    ``load_state_dict``; if the model then rejects its state, the optimizer is restored.

    ``model`` and ``optimizer`` are objects with ``state_dict()``/``load_state_dict()``, or plain
    dicts (updated: arrays already there are overwritten in place, other values replaced).
    Arrays come back as NumPy arrays; ``load_state_dict`` moves them to its device.
    """
    path = os.fspath(path)
    for role, target in (("model", model), ("optimizer", optimizer)):
        if target is not None and not (hasattr(target, "load_state_dict")
                                       or isinstance(target, MutableMapping)):
            raise TypeError(f"load: {role} must have a load_state_dict() method or be a dict, "
                            f"got {type(target).__name__}")
    content = read(path)
    for role, target in (("model", model), ("optimizer", optimizer)):
        if target is not None and content[role] is None:
            raise CheckpointError(f"load: {path} holds no {role} state (it was saved without "
                                  f"{role}=)")
    if (optimizer is not None and not hasattr(optimizer, "load_state_dict")
            and not isinstance(content["optimizer"], Mapping)):
        raise CheckpointError(f"load: {path} holds an optimizer state of type "
                              f"{type(content['optimizer']).__name__}, which a dict cannot take")
    model_state = None if model is None else _checked_model_state(model, content["model"],
                                                                   strict, path)
    previous = None
    if optimizer is not None:
        previous = _snapshot(optimizer)
        _assign(optimizer, content["optimizer"])
    if model is not None:
        try:
            _assign(model, model_state)
        except BaseException:
            if previous is not None:
                _assign(optimizer, previous)
            raise
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
def _state_of(target, role):
    if hasattr(target, "state_dict"):
        return target.state_dict()
    if isinstance(target, Mapping):
        return target
    raise TypeError(f"save: {role} must have a state_dict() method or be a dict, got "
                    f"{type(target).__name__}")


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


# ------------------------------------------------------------------ assigning
def _checked_model_state(model, state, strict, path):
    """The state to hand to the model, after checking keys, shapes and dtypes against it."""
    if not isinstance(state, Mapping):
        raise CheckpointError(f"load: {path} holds a model state of type "
                              f"{type(state).__name__}, expected a dict")
    current = model.state_dict() if hasattr(model, "load_state_dict") else model
    missing = [key for key in current if key not in state]
    unexpected = [key for key in state if key not in current]
    if strict and (missing or unexpected):
        parts = ([f"missing keys {missing}"] if missing else []) + \
                ([f"unexpected keys {unexpected}"] if unexpected else [])
        raise CheckpointError(f"load: {path} does not match the model: {', '.join(parts)} "
                              "(strict=False loads the keys both have)")
    mismatches = []
    for key, expected in current.items():
        if key not in state or not is_array(expected):
            continue
        found = state[key]
        if not is_array(found):
            mismatches.append(f"{key!r}: the model has an array of shape {tuple(expected.shape)}, "
                              f"the file a {type(found).__name__}")
        elif (tuple(found.shape) != tuple(expected.shape)
              or np.dtype(found.dtype) != np.dtype(expected.dtype)):
            mismatches.append(f"{key!r}: the model has {np.dtype(expected.dtype)} "
                              f"{tuple(expected.shape)}, the file {found.dtype} {found.shape}")
    if mismatches:
        raise CheckpointError(f"load: {path} does not fit the model: {'; '.join(mismatches)}")
    if strict:
        return dict(state)
    return {key: state.get(key, value) for key, value in current.items()}


def _snapshot(optimizer):
    """A copy of the optimizer's state to restore if the model fails, or None if uncopyable."""
    try:
        return copy.deepcopy(optimizer.state_dict() if hasattr(optimizer, "state_dict")
                             else dict(optimizer))
    except Exception:       # an exotic state that cannot be copied: no rollback, still loads
        return None


def _assign(target, state):
    if hasattr(target, "load_state_dict"):
        target.load_state_dict(state)
        return
    for key, value in state.items():
        existing = target.get(key)
        if (isinstance(existing, np.ndarray) and is_array(value) and existing.flags.writeable
                and existing.shape == value.shape and existing.dtype == value.dtype):
            existing[...] = value
        else:
            target[key] = value
