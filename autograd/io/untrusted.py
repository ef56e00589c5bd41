"""Reading a checkpoint that may come from a stranger: every cost is bounded by the file's size.

A crafted file must fail as a CheckpointError naming it, decided from small headers before any
large allocation. The writer stores every member uncompressed, so:

- a compressed or encrypted member is refused before it is inflated (a 2 MB member can deflate
  to gigabytes);
- each member's size must fit inside the file, and all members together too (a zip may point
  several entries at the same bytes);
- the metadata is at most ``MAX_METADATA_BYTES`` and nested at most ``MAX_DEPTH`` deep, checked
  on its bytes before the JSON parser (which recurses) sees it;
- every array's shape and dtype in the metadata is checked, and the sum of their sizes must fit
  in the file; each ``.npy`` member's header must say the same shape and dtype, and its size
  must be exactly header plus data, before the member's data is read.

>>> json_depth(b'{"a": [1, {"b": "[[["}]}')
3
"""
import math
import re
import zipfile

import numpy as np

from .restore import CheckpointError

__all__ = ["MAX_METADATA_BYTES", "MAX_DEPTH", "json_depth", "check_members",
           "read_metadata_text", "check_array_table", "read_array"]

MAX_METADATA_BYTES = 64 * 2**20
MAX_DEPTH = 100
# what encode() stores: booleans, numbers, strings, dates; never objects or structured records
_KINDS = "biufcSUMm"
_CHUNK = 2**14
_DTYPE_STR = re.compile(r"[<>|][biufcSUMm][0-9]{1,9}(\[[0-9a-zA-Z]{1,3}\])?\Z")
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)


def json_depth(text):
    """How deeply the JSON ``text`` (bytes) nests lists and objects, without parsing it."""
    codes = np.frombuffer(_STRING.sub(b"", text), np.uint8)
    depth = deepest = 0
    for start in range(0, codes.size, _CHUNK):        # chunks keep the counting memory small
        chunk = codes[start:start + _CHUNK]
        steps = (chunk == ord("[")).view(np.int8) + (chunk == ord("{")).view(np.int8) \
            - (chunk == ord("]")).view(np.int8) - (chunk == ord("}")).view(np.int8)
        running = np.cumsum(steps, dtype=np.int64) + depth
        if running.size:
            deepest, depth = max(deepest, int(running.max())), int(running[-1])
    return deepest


def check_members(archive, path, file_size):
    """Refuse compressed, encrypted or oversized members before any is read."""
    total = 0
    for info in archive.infolist():
        if info.flag_bits & 0x1:
            raise CheckpointError(f"load: {path} is not a valid checkpoint: member "
                                  f"{info.filename} is encrypted")
        if info.compress_type != zipfile.ZIP_STORED:
            raise CheckpointError(
                f"load: {path} is not a valid checkpoint: member {info.filename} is compressed "
                f"(zip method {info.compress_type}); autograd writes members uncompressed and "
                "refuses compressed ones rather than inflate them")
        if info.compress_size != info.file_size or \
                info.header_offset + info.file_size > file_size:
            raise CheckpointError(f"load: {path} is corrupt or truncated: member "
                                  f"{info.filename} declares {info.file_size} bytes, which the "
                                  f"{file_size}-byte file cannot hold")
        total += info.file_size
    if total > file_size:
        raise CheckpointError(f"load: {path} is corrupt: its members declare {total} bytes in "
                              f"all, more than the file's {file_size}")


def read_metadata_text(archive, name, path):
    """The metadata member's bytes, refused if larger than ``MAX_METADATA_BYTES`` or nested
    deeper than ``MAX_DEPTH``."""
    info = archive.getinfo(name)
    if info.file_size > MAX_METADATA_BYTES:
        raise CheckpointError(f"load: {path} is not a valid checkpoint: its {name} is "
                              f"{info.file_size} bytes, more than the {MAX_METADATA_BYTES} "
                              "allowed")
    text = archive.read(name)
    depth = json_depth(text)
    if depth > MAX_DEPTH:
        raise CheckpointError(f"load: {path} is not a valid checkpoint: its {name} nests "
                              f"{depth} levels deep, more than the {MAX_DEPTH} allowed")
    return text


def check_array_table(table, path, file_size):
    """``{name: (shape, dtype, nbytes)}`` for the metadata's arrays table, every entry checked;
    their sizes together must fit in the file."""
    checked, total = {}, 0
    for name, spec in table.items():
        if not isinstance(spec, dict) or set(spec) != {"shape", "dtype"}:
            raise CheckpointError(f"load: {path} is corrupt: array {name!r} has no valid "
                                  "shape and dtype in the metadata")
        shape, dtype = spec["shape"], _dtype(spec["dtype"], name, path)
        if not isinstance(shape, list) or not all(
                type(size) is int and size >= 0 for size in shape) or len(shape) > 64:
            raise CheckpointError(f"load: {path} is corrupt: array {name!r} has shape "
                                  f"{shape!r} in the metadata")
        nbytes = math.prod(shape) * dtype.itemsize
        total += nbytes
        if total > file_size:
            raise CheckpointError(f"load: {path} is corrupt: its metadata declares arrays of "
                                  f"more bytes than the {file_size}-byte file holds (array "
                                  f"{name!r} is {dtype.str} {tuple(shape)})")
        checked[name] = (tuple(shape), dtype, nbytes)
    return checked


def _dtype(text, name, path):
    # only what dtype.str writes (byte order, kind, size) reaches np.dtype: no aliases, no
    # structured or subarray descriptions
    dtype = None
    if isinstance(text, str) and _DTYPE_STR.match(text):
        try:
            dtype = np.dtype(text)
        except (TypeError, ValueError):
            pass
    if dtype is None or dtype.str != text or dtype.kind not in _KINDS or dtype.hasobject:
        raise CheckpointError(f"load: {path} is not a valid checkpoint: array {name!r} has "
                              f"dtype {text!r}; checkpoints hold numeric, boolean or string "
                              "arrays (never objects, which would need pickle)")
    return dtype


def read_array(archive, member, expected, path):
    """The array in ``member``, after its ``.npy`` header and size were checked against
    ``expected`` = ``(shape, dtype, nbytes)`` from the metadata."""
    shape, dtype, nbytes = expected
    info = archive.getinfo(member)
    with archive.open(info) as stream:
        version = np.lib.format.read_magic(stream)
        if version not in ((1, 0), (2, 0)):
            raise CheckpointError(f"load: {path} is corrupt: {member} has .npy version "
                                  f"{version}")
        reader = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                  else np.lib.format.read_array_header_2_0)
        found_shape, fortran_order, found_dtype = reader(stream)
        header_size = stream.tell()
    if found_dtype.hasobject:
        raise CheckpointError(f"load: {path} is not a valid checkpoint: {member} holds "
                              "objects, which need allow_pickle (refused)")
    if tuple(found_shape) != shape or found_dtype != dtype:
        raise CheckpointError(f"load: {path} is corrupt: {member} holds {found_dtype.str} "
                              f"{tuple(found_shape)}, its metadata says {dtype.str} {shape}")
    if info.file_size != header_size + nbytes:
        raise CheckpointError(f"load: {path} is corrupt: {member} is {info.file_size} bytes, "
                              f"its header and data make {header_size + nbytes}")
    content = archive.read(info)                 # checks the member's CRC-32
    order = "F" if fortran_order else "C"
    if nbytes == 0:
        return np.empty(shape, dtype, order=order)
    data = np.frombuffer(content, dtype, count=math.prod(shape), offset=header_size)
    return data.reshape(shape, order=order).copy(order="K")    # writable, owns its memory
