"""The temporary files of checkpoint writes: created locked, and removed only when stale.

A save writes ``.<name>.<12 hex digits>.tmp`` beside the checkpoint and renames it over the
checkpoint. A process killed in between leaves that file behind. The writer holds an exclusive
``flock`` on its temporary from creation until after the rename; the kernel drops the lock when
the writer dies. So a temporary of the same checkpoint whose lock can be taken belongs to no
live writer, and the next save or load of that checkpoint removes it.

One race remains by construction: a cleaner may take the lock of a file a writer has just
created and not yet locked. The writer therefore checks, once it holds the lock, that its file
still has a name (``st_nlink``), and starts over with a new one if a cleaner removed it.

Where ``fcntl`` is missing (Windows), an open file cannot be removed, so a live writer's
temporary survives the attempt and only closed ones go.
"""
import contextlib
import os
import re
import secrets
from types import ModuleType
from typing import Optional

fcntl: Optional[ModuleType]
try:
    import fcntl
except ImportError:                   # Windows
    fcntl = None

__all__ = ["create", "remove_stale", "temporary_pattern"]

_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)


def temporary_pattern(base):
    """The names that writes of checkpoint file ``base`` give their temporaries."""
    return re.compile(r"\." + re.escape(base) + r"\.[0-9a-f]{12}\.tmp\Z")


def create(folder, base):
    """``(path, descriptor)`` of a new temporary for checkpoint ``base`` in ``folder``, locked
    against cleaners until the descriptor is closed."""
    while True:
        temporary = os.path.join(folder, f".{base}.{secrets.token_hex(6)}.tmp")
        try:
            # mode 0o666 lets the umask decide, as for any new file (mkstemp would make the
            # checkpoint readable by its owner only)
            descriptor = os.open(temporary, _FLAGS, 0o666)
        except FileExistsError:
            continue
        if fcntl is None:
            return temporary, descriptor
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        if os.fstat(descriptor).st_nlink > 0:
            return temporary, descriptor
        os.close(descriptor)          # a cleaner removed it before we held the lock


def remove_stale(folder, base):
    """Remove the temporaries that crashed writes of checkpoint ``base`` left in ``folder``;
    never a live writer's. Returns the names removed. Errors (a read-only folder) are ignored:
    cleaning up is a courtesy, not part of the save or load."""
    pattern = temporary_pattern(base)
    try:
        names = [name for name in os.listdir(folder) if pattern.match(name)]
    except OSError:
        return []
    removed = []
    for name in names:
        temporary = os.path.join(folder, name)
        if _remove_if_unlocked(temporary):
            removed.append(name)
    return removed


def _remove_if_unlocked(temporary):
    if fcntl is None:
        with contextlib.suppress(OSError):
            os.remove(temporary)
            return True
        return False
    try:
        descriptor = os.open(temporary, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    except OSError:
        return False
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False              # a live writer holds it
        # the name may have been renamed to the checkpoint meanwhile: remove only this file
        with contextlib.suppress(OSError):
            if os.stat(temporary).st_ino == os.fstat(descriptor).st_ino:
                os.remove(temporary)
                return True
        return False
    finally:
        os.close(descriptor)
