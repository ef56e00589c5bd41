"""Checkpoints from strangers: tests written from the mutants of autograd/io/untrusted.py that the
suite let through (issue 22). References: the arrays saved here compared element by element,
members written by NumPy's own ``np.lib.format.write_array``, and messages word for word."""
import io
import json
import zipfile

import numpy as np
import pytest

from autograd.io import save, load, read, CheckpointError
from autograd.io import untrusted
from tests.io.test_untrusted import _parsed_depth


def _members(path):
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def _write(path, members):
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as archive:
        for name, content in members.items():
            archive.writestr(name, content)


def _npy(array, version=None):
    stream = io.BytesIO()
    np.lib.format.write_array(stream, array, version=version, allow_pickle=False)
    return stream.getvalue()


def _same(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)


_W = np.arange(12, dtype=np.float32).reshape(3, 4) - 5.5


def _weights_file(tmp_path):
    path = tmp_path / "model.ckpt"
    save(path, model={"W": _W}, epoch=2)
    return path


# ---------------------------------------------------------------- arrays that must load
def test_a_fortran_ordered_array_loads_in_its_order(tmp_path):
    """write_array stores a Fortran-ordered array as such (fortran_order True); reading it
    in C order would scramble it (mutants order None / "XXFXX" / `fortran_order and False`,
    reshape without `order`); its layout is kept (mutant copy(order=None), a C copy)."""
    path = tmp_path / "run.ckpt"
    fortran = np.asfortranarray(_W)
    save(path, model={"W": fortran, "V": np.asfortranarray(_W.T[:, :2].astype(np.int64))})
    assert json.loads(_members(path)["checkpoint.json"])["arrays"]["a0"]["shape"] == [3, 4]
    assert b"'fortran_order': True" in _members(path)["a0.npy"]
    model = read(path)["model"]
    _same(model["W"], _W)
    _same(model["V"], _W.T[:, :2].astype(np.int64))
    assert model["W"].flags.writeable and model["W"].flags.owndata
    assert model["W"].flags.f_contiguous               # kept, as np.load keeps it (copy "K")


def test_empty_and_one_byte_arrays_load_with_their_shape_dtype_and_value(tmp_path):
    """Zero bytes: np.empty of the shape and dtype (mutants dropping or Noning either);
    one byte: its value, not np.empty's (mutant `nbytes == 1`)."""
    path = tmp_path / "run.ckpt"
    arrays = {"flag": np.array([7], np.int8), "none": np.zeros((0, 3), np.int64),
              "wide": np.zeros((2, 0), np.float16), "mask": np.array([True])}
    save(path, model=arrays)
    model = read(path)["model"]
    for name, array in arrays.items():
        _same(model[name], array)
    target = {name: np.ones_like(array) for name, array in arrays.items()}
    load(path, model=target)
    for name, array in arrays.items():
        _same(target[name], array)


def test_a_version_2_npy_member_loads(tmp_path):
    """.npy 2.0 (a 4-byte header length) is NumPy's own format for large headers: accepted
    and read with its own header reader (mutants dropping (2, 0), reading it as 1.0)."""
    path = _weights_file(tmp_path)
    members = _members(path)
    members["a0.npy"] = _npy(_W, version=(2, 0))
    assert members["a0.npy"][6:8] == b"\x02\x00"
    _write(path, members)
    _same(read(path)["model"]["W"], _W)


# ---------------------------------------------------------------- messages, word for word
def test_an_unknown_npy_version_is_named(tmp_path):
    path = _weights_file(tmp_path)
    members = _members(path)
    members["a0.npy"] = _npy(_W, version=(3, 0))
    _write(path, members)
    with pytest.raises(CheckpointError) as info:
        load(path)
    assert str(info.value) == f"load: {path} is corrupt: a0.npy has .npy version (3, 0)"


def test_a_member_longer_than_header_and_data_names_both_sizes(tmp_path):
    path = _weights_file(tmp_path)
    members = _members(path)
    size = len(members["a0.npy"])                   # header + 48 bytes of data
    members["a0.npy"] += b"\0" * 8
    _write(path, members)
    with pytest.raises(CheckpointError) as info:
        load(path)
    assert str(info.value) == (f"load: {path} is corrupt: a0.npy is {size + 8} bytes, its "
                               f"header and data make {size}")


def _crafted(tmp_path, arrays):
    """The weights file with its metadata's arrays table entries replaced by ``arrays``."""
    path = _weights_file(tmp_path)
    members = _members(path)
    metadata = json.loads(members["checkpoint.json"])
    metadata["arrays"].update(arrays)
    members["checkpoint.json"] = json.dumps(metadata).encode()
    _write(path, members)
    return path


def _load_error(path):
    with pytest.raises(CheckpointError) as info:
        load(path)
    return str(info.value)


def test_an_entry_with_more_than_shape_and_dtype_is_refused(tmp_path):
    """Both conditions hold alone (mutant `and`: a dict with an extra key passed)."""
    path = _crafted(tmp_path, {"a0": {"shape": [3, 4], "dtype": "<f4", "offset": 0}})
    assert _load_error(path) == (f"load: {path} is corrupt: array 'a0' has no valid shape and "
                                 "dtype in the metadata")


@pytest.mark.parametrize("dtype", [4, "|f4", "<i1", "float32"])
def test_a_dtype_that_is_not_what_dtype_str_writes_is_refused_by_name(tmp_path, dtype):
    """Not a str (mutant `or`: the regex then raises on it), or a str NumPy accepts that
    dtype.str would not write ("|f4" is written "<f4"; mutant `!= text and ...`)."""
    path = _crafted(tmp_path, {"a0": {"shape": [3, 4], "dtype": dtype}})
    assert _load_error(path) == (
        f"load: {path} is not a valid checkpoint: array 'a0' has dtype {dtype!r}; checkpoints "
        "hold numeric, boolean or string arrays (never objects, which would need pickle)")


def test_an_array_of_64_dimensions_loads_and_65_are_refused(tmp_path):
    """NumPy's limit is 64 dimensions (mutants `>= 64`, `> 65`)."""
    path = tmp_path / "run.ckpt"
    deep = np.full((1,) * 63 + (2,), 3.5, np.float32)
    save(path, model={"deep": deep})
    _same(read(path)["model"]["deep"], deep)
    path = _crafted(tmp_path, {"a0": {"shape": [1] * 65, "dtype": "<f4"}})
    assert _load_error(path) == (f"load: {path} is corrupt: array 'a0' has shape {[1] * 65!r} "
                                 "in the metadata")


def test_the_sizes_of_all_arrays_together_must_fit_in_the_file(tmp_path):
    """Each alone fits, both together do not (mutant `total = nbytes`)."""
    path = _weights_file(tmp_path)
    size = path.stat().st_size
    half = size // 2 + 1
    path = _crafted(tmp_path, {"a0": {"shape": [half], "dtype": "|u1"},
                               "a1": {"shape": [half], "dtype": "|u1"}})
    size = path.stat().st_size
    assert 2 * half > size >= half
    assert _load_error(path) == (f"load: {path} is corrupt: its metadata declares arrays of more "
                                 f"bytes than the {size}-byte file holds (array 'a1' is |u1 "
                                 f"({half},))")


def test_arrays_declaring_exactly_the_files_size_pass_the_table_check(tmp_path):
    """The bound is inclusive: arrays of exactly the file's size fit (mutants starting the
    total at 1, `total >= file_size`); the member's own header then tells the truth."""
    n = 100
    for _ in range(5):                            # the size depends on n's digits: converge
        path = _crafted(tmp_path, {"a0": {"shape": [n], "dtype": "|u1"}})
        if path.stat().st_size == n:
            break
        n = path.stat().st_size
    assert path.stat().st_size == n
    assert _load_error(path) == (f"load: {path} is corrupt: a0.npy holds <f4 (3, 4), its "
                                 f"metadata says |u1 ({n},)")
    path = _crafted(tmp_path, {"a0": {"shape": [n + 1], "dtype": "|u1"}})
    assert path.stat().st_size == n
    assert "declares arrays of more bytes than the" in _load_error(path)


def test_oversized_metadata_message_is_exact(tmp_path, monkeypatch):
    path = _weights_file(tmp_path)
    size = len(_members(path)["checkpoint.json"])
    monkeypatch.setattr(untrusted, "MAX_METADATA_BYTES", 100)
    assert _load_error(path) == (f"load: {path} is not a valid checkpoint: its checkpoint.json "
                                 f"is {size} bytes, more than the 100 allowed")


# ---------------------------------------------------------------- json_depth against json.loads


def _random_json(rng, depth):
    """Nested lists and dicts whose strings hold brackets, braces and escaped quotes."""
    kind = rng.integers(4) if depth > 0 else 3
    if kind == 0:
        return [_random_json(rng, depth - 1) for _ in range(rng.integers(1, 4))]
    if kind == 1:
        return {f'k{i}"[': _random_json(rng, depth - 1) for i in range(rng.integers(1, 4))}
    if kind == 2:
        return [[[_random_json(rng, depth - 1)]]]
    return "".join(rng.choice(list('ab[]{}"\\ '), size=rng.integers(0, 8)))


@pytest.mark.parametrize("seed", range(8))
def test_json_depth_is_the_parsers_depth(seed):
    rng = np.random.default_rng(seed)
    value = _random_json(rng, int(rng.integers(1, 12)))
    text = json.dumps(value).encode()
    assert untrusted.json_depth(text) == _parsed_depth(value)


@pytest.mark.parametrize("before, depth", [(0, 20_000), (2**14 - 3, 5), (2**14 + 7, 300),
                                           (3 * 2**14, 1)])
def test_json_depth_counts_across_chunks(before, depth):
    """The count runs on in 16 KiB chunks: the depth reached in one carries into the next,
    and the deepest point may lie in any chunk."""
    text = b'{"pad": "' + b"x" * before + b'", "deep": ' + b"[" * depth + b"]" * depth + b"}"
    assert untrusted.json_depth(text) == depth + 1
    flat = json.dumps(["[" * before] + [[]] * 3).encode()      # brackets only inside a string
    assert untrusted.json_depth(flat) == 2


def test_json_depth_of_a_text_without_brackets_is_zero():
    assert untrusted.json_depth(b"") == 0
    assert untrusted.json_depth(b'"[{"') == 0
    assert untrusted.json_depth(b"123") == 0


# ---------------------------------------------------------------- check_members, by hand
class _Info:
    def __init__(self, name, size, offset=0, compressed=None, flags=0, method=0):
        self.filename, self.file_size, self.header_offset = name, size, offset
        self.compress_size = size if compressed is None else compressed
        self.flag_bits, self.compress_type = flags, method


class _Archive:
    def __init__(self, *infos):
        self.infos = infos

    def infolist(self):
        return list(self.infos)


def _members_error(file_size, *infos):
    with pytest.raises(CheckpointError) as info:
        untrusted.check_members(_Archive(*infos), "f.ckpt", file_size)
    return str(info.value)


def test_members_that_just_fit_the_file_pass():
    """Bounds are inclusive: a member ending at the file's end, members filling it."""
    untrusted.check_members(_Archive(_Info("a", 60, offset=40), _Info("b", 40)), "f.ckpt", 100)
    untrusted.check_members(_Archive(_Info("a", 10, flags=0x8)), "f.ckpt", 100)   # descriptor
    untrusted.check_members(_Archive(), "f.ckpt", 0)


def test_a_member_past_the_files_end_is_refused_by_name():
    assert _members_error(100, _Info("a0.npy", 61, offset=40)) == (
        "load: f.ckpt is corrupt or truncated: member a0.npy declares 61 bytes, which the "
        "100-byte file cannot hold")
    assert _members_error(100, _Info("a0.npy", 10, compressed=9)) == (
        "load: f.ckpt is corrupt or truncated: member a0.npy declares 10 bytes, which the "
        "100-byte file cannot hold")


def test_members_declaring_more_than_the_file_together_are_refused():
    """Several entries may point at the same bytes: each fits, their sum does not."""
    assert _members_error(100, _Info("a", 60), _Info("b", 41)) == (
        "load: f.ckpt is corrupt: its members declare 101 bytes in all, more than the file's 100")


def test_encrypted_and_compressed_members_messages_are_exact():
    assert _members_error(100, _Info("a0.npy", 10, flags=0x1)) == (
        "load: f.ckpt is not a valid checkpoint: member a0.npy is encrypted")
    assert _members_error(100, _Info("a0.npy", 10, method=8)) == (
        "load: f.ckpt is not a valid checkpoint: member a0.npy is compressed (zip method 8); "
        "autograd writes members uncompressed and refuses compressed ones rather than inflate "
        "them")
