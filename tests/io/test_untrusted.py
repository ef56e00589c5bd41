"""Checkpoints from strangers: crafted files are CheckpointErrors decided before large
allocations; mutated and truncated files load equal data or fail, never half-load a model."""
import json
import struct
import tracemalloc
import zipfile

import numpy as np
import pytest
from hypothesis import given, strategies as st, HealthCheck, settings

import autograd
from autograd import opt
from autograd.io import save, load, read, CheckpointError
from autograd.io import untrusted


def _weights_file(tmp_path):
    path = tmp_path / "model.ckpt"
    save(path, model={"W": np.arange(12, dtype=np.float32).reshape(3, 4)}, epoch=2)
    return path


def _members(path):
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def _write(path, members, compression=zipfile.ZIP_STORED):
    with zipfile.ZipFile(path, "w", compression=compression) as archive:
        for name, content in members.items():
            archive.writestr(name, content)


def _npy_header(shape, dtype="<f4"):
    """A version 1.0 .npy header declaring ``shape`` (no data after it)."""
    header = repr({"descr": dtype, "fortran_order": False, "shape": shape}).encode()
    header += b" " * (63 - (len(header) + 10) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header


def _refused_cheaply(path, match):
    """Loading ``path`` is a CheckpointError naming it, allocating at most a few times the
    file's size (never what its headers claim)."""
    tracemalloc.start()
    try:
        with pytest.raises(CheckpointError, match=match) as info:
            load(path, model={"W": np.zeros((3, 4), np.float32)})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(path) in str(info.value)
    assert peak < 4 * path.stat().st_size + 2**22, (peak, path.stat().st_size)


def test_a_deflate_bomb_member_is_refused_before_inflating(tmp_path):
    path = _weights_file(tmp_path)
    members = _members(path)
    members["a0.npy"] = _npy_header((2**24, 4)) + bytes(2**26)    # 64 MiB of zeros
    metadata = json.loads(members["checkpoint.json"])
    metadata["arrays"]["a0"]["shape"] = [2**24, 4]
    members["checkpoint.json"] = json.dumps(metadata).encode()
    _write(path, members, compression=zipfile.ZIP_DEFLATED)
    assert path.stat().st_size < 2**20
    _refused_cheaply(path, "compressed")


def test_a_header_declaring_a_huge_shape_is_refused_before_allocating(tmp_path):
    path = _weights_file(tmp_path)
    members = _members(path)
    members["a0.npy"] = _npy_header((10**12,))
    _write(path, members)
    _refused_cheaply(path, r"holds <f4 \(1000000000000,\), its metadata says <f4 \(3, 4\)")
    # the metadata agreeing with the header does not help: the file cannot hold the data
    metadata = json.loads(members["checkpoint.json"])
    metadata["arrays"]["a0"]["shape"] = [10**12]
    members["checkpoint.json"] = json.dumps(metadata).encode()
    _write(path, members)
    _refused_cheaply(path, "declares arrays of more bytes than the")


def test_deeply_nested_metadata_is_refused_before_parsing(tmp_path):
    path = _weights_file(tmp_path)
    members = _members(path)
    metadata = members["checkpoint.json"].decode()
    nested = "[" * 100_000 + "]" * 100_000
    members["checkpoint.json"] = metadata.replace('"epoch": 2', f'"epoch": {nested}').encode()
    _write(path, members)
    _refused_cheaply(path, "nests 100002 levels deep")


def test_oversized_metadata_is_refused_before_reading(tmp_path, monkeypatch):
    path = _weights_file(tmp_path)
    monkeypatch.setattr(untrusted, "MAX_METADATA_BYTES", 100)
    with pytest.raises(CheckpointError, match=r"checkpoint.json is \d+ bytes, more than the 100"):
        load(path)


def test_an_encrypted_member_is_refused(tmp_path):
    path = _weights_file(tmp_path)
    content = bytearray(path.read_bytes())
    # set bit 0 (encrypted) of the flags (offset 8) in a0.npy's central directory entry
    start = content.find(b"PK\x01\x02")
    while content[start + 46:start + 52] != b"a0.npy":
        start = content.find(b"PK\x01\x02", start + 1)
        assert start >= 0
    content[start + 8] |= 0x1
    path.write_bytes(bytes(content))
    with pytest.raises(CheckpointError, match="a0.npy is encrypted"):
        load(path)


@pytest.mark.parametrize("dtype, shape, message", [
    ("|O", [3, 4], "never objects"),
    ("[('a', '<f4')]", [3, 4], "dtype"),
    ("|V8", [3, 4], "dtype"),
    ("<f4", [3, -4], "has shape"),
    ("<f4", [3, True], "has shape"),
    ("<f4", [3.0, 4], "has shape"),
    ("<f4", "3, 4", "has shape"),
])
def test_bad_dtypes_and_shapes_in_the_metadata_are_refused(tmp_path, dtype, shape, message):
    path = _weights_file(tmp_path)
    members = _members(path)
    metadata = json.loads(members["checkpoint.json"])
    metadata["arrays"]["a0"] = {"shape": shape, "dtype": dtype}
    members["checkpoint.json"] = json.dumps(metadata).encode()
    _write(path, members)
    with pytest.raises(CheckpointError, match=message) as info:
        load(path)
    assert str(path) in str(info.value)


def test_an_object_array_behind_a_numeric_metadata_entry_is_refused(tmp_path):
    path = _weights_file(tmp_path)
    members = _members(path)
    members["a0.npy"] = _npy_header((3, 4), "|O") + bytes(96)
    _write(path, members)
    with pytest.raises(CheckpointError, match="holds objects"):
        load(path)


def test_a_member_with_bytes_after_its_data_is_refused(tmp_path):
    path = _weights_file(tmp_path)
    members = _members(path)
    members["a0.npy"] += b"\0" * 8
    _write(path, members)
    with pytest.raises(CheckpointError, match=r"a0.npy is \d+ bytes, its header and data make"):
        load(path)


def test_save_refuses_what_load_would_refuse(tmp_path):
    nested = []
    for _ in range(untrusted.MAX_DEPTH + 5):
        nested = [nested]
    with pytest.raises(ValueError, match="nests more than 100 levels"):
        save(tmp_path / "deep.ckpt", history=nested)
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("text, depth", [
    (b"1", 0), (b"[]", 1), (b'{"a": [[]], "b": {}}', 3), (b'["[[[\\"[[", []]', 2),
])
def test_json_depth_ignores_brackets_inside_strings(text, depth):
    assert untrusted.json_depth(text) == depth
    assert depth == _parsed_depth(json.loads(text))


def _parsed_depth(value):
    if isinstance(value, list):
        return 1 + max(map(_parsed_depth, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(_parsed_depth, value.values()), default=0)
    return 0


# ------------------------------------------------------------------ property tests
def _network(seed):
    autograd.manual_seed(seed)
    return autograd.Sequential(autograd.Linear(3, 4), autograd.ReLU(), autograd.Linear(4, 2))


def _trained(seed):
    model, optimizer = _network(seed), opt.SGD(lr=0.1, momentum=0.9)
    rng = np.random.default_rng(seed)
    x = autograd.Tensor(data=rng.normal(size=(5, 3)).astype(np.float32), requires_grad=False)
    y = autograd.Tensor(data=rng.normal(size=(5, 2)).astype(np.float32), requires_grad=False)
    optimizer(autograd.mse_loss(model(x), y))
    return model, optimizer


def _state(model, optimizer):
    return {"model": {k: np.array(v) for k, v in model.state_dict().items()},
            "optimizer": optimizer.state_dict(model.get_params())}


def _assert_same(a, b):
    if isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b)
        for key in a:
            _assert_same(a[key], b[key])
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            _assert_same(x, y)
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()
    else:
        assert a == b or (a != a and b != b)


@pytest.fixture(scope="module")
def checkpoint_bytes(tmp_path_factory):
    path = tmp_path_factory.mktemp("original") / "run.ckpt"
    model, optimizer = _trained(seed=1)
    save(path, model, optimizer, epoch=3, history=[0.5, 0.25], rng=np.arange(3, dtype=np.uint64))
    return path.read_bytes(), _state(model, optimizer)


def _load_into_fresh(path):
    """Load ``path`` into a model and optimizer trained from another seed: returns the error
    (after checking both are untouched) or None (after checking the data equals the file)."""
    model, optimizer = _trained(seed=2)
    before = _state(model, optimizer)
    try:
        extras = load(path, model, optimizer)
    except CheckpointError as error:
        assert str(path) in str(error)
        _assert_same(before, _state(model, optimizer))           # never half-loaded
        return error
    return _state(model, optimizer), extras


_MUTATIONS = st.lists(st.one_of(
    st.tuples(st.just("flip"), st.floats(0, 1, exclude_max=True), st.integers(1, 255)),
    st.tuples(st.just("insert"), st.floats(0, 1), st.binary(min_size=1, max_size=8)),
    st.tuples(st.just("delete"), st.floats(0, 1, exclude_max=True), st.integers(1, 16)),
    st.tuples(st.just("truncate"), st.floats(0, 1, exclude_max=True), st.just(0)),
), min_size=1, max_size=4)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mutations=_MUTATIONS)
def test_a_mutated_file_loads_equal_data_or_is_a_checkpoint_error(tmp_path, checkpoint_bytes,
                                                                  mutations):
    content, original = checkpoint_bytes
    content = bytearray(content)
    for kind, where, argument in mutations:
        at = int(where * len(content))
        if kind == "flip" and at < len(content):
            content[at] ^= argument
        elif kind == "insert":
            content[at:at] = argument
        elif kind == "delete":
            del content[at:at + argument]
        elif kind == "truncate":
            del content[at:]
    path = tmp_path / "mutated.ckpt"
    path.write_bytes(bytes(content))
    outcome = _load_into_fresh(path)
    if not isinstance(outcome, CheckpointError):
        state, extras = outcome
        _assert_same(original, state)
        _assert_same({"epoch": 3, "history": [0.5, 0.25], "rng": np.arange(3, dtype=np.uint64)},
                     extras)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 10**6) | st.floats(allow_nan=True)
    | st.text(max_size=6) | st.sampled_from(["$array", "a0", "<f4", "|O", "SGD"]),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.sampled_from(["$array", "$scalar", "$tuple", "$dict", "shape",
                                       "dtype", "state", "name", "a1", "0.W"]), inner,
                      max_size=3),
    max_leaves=8)


def _paths(tree, prefix=()):
    yield prefix
    if isinstance(tree, dict):
        for key, value in tree.items():
            yield from _paths(value, prefix + (key,))
    elif isinstance(tree, list):
        for i, value in enumerate(tree):
            yield from _paths(value, prefix + (i,))


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_crafted_metadata_is_a_checkpoint_error_or_a_consistent_load(tmp_path, checkpoint_bytes,
                                                                     data):
    """A stranger may write any JSON with valid checksums: whatever it says, loading raises a
    CheckpointError leaving the targets untouched, or loads what ``read`` says the file holds."""
    path = tmp_path / "crafted.ckpt"
    path.write_bytes(checkpoint_bytes[0])
    members = _members(path)
    metadata = json.loads(members["checkpoint.json"])
    where = data.draw(st.sampled_from(list(_paths(metadata))[1:]))
    replacement = data.draw(_JSON)
    parent = metadata
    for key in where[:-1]:
        parent = parent[key]
    parent[where[-1]] = replacement
    members["checkpoint.json"] = json.dumps(metadata).encode()
    _write(path, members)
    outcome = _load_into_fresh(path)
    if not isinstance(outcome, CheckpointError):
        state, _ = outcome
        content = read(path)
        for name, value in state["model"].items():
            np.testing.assert_array_equal(value, content["model"][name])
