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
