"""Checkpoints: round trips, atomic writes, corrupt files, strict keys, nothing half-loaded."""
import json
import os
import struct
import zipfile

import numpy as np
import pytest

import autograd
from autograd.io import save, load, read, CheckpointError


class TinyModel:
    """A stand-in for a Layer: state_dict/load_state_dict over a dict of NumPy arrays, checking
    everything before assigning (as a Layer does)."""

    def __init__(self, seed=0, hidden=3, dtype=np.float32):
        rng = np.random.default_rng(seed)
        self.params = {"fc1.W": rng.normal(size=(4, hidden)).astype(dtype),
                       "fc1.b": rng.normal(size=(hidden,)).astype(dtype),
                       "bn.running_mean": rng.normal(size=(hidden,)).astype(dtype)}

    def state_dict(self):
        return dict(self.params)

    def load_state_dict(self, state):
        if set(state) != set(self.params):
            raise ValueError(f"TinyModel: keys differ: {sorted(state)}")
        for key, value in state.items():
            if value.shape != self.params[key].shape:
                raise ValueError(f"TinyModel: {key} has shape {value.shape}")
        for key, value in state.items():
            self.params[key] = np.array(value)


class TinyOptimizer:
    """A stand-in for an Optimizer: nested state keyed by parameter index, a step and tuples."""

    def __init__(self, seed=0):
        rng = np.random.default_rng(seed)
        self.step_counter = 7
        self.lr = 0.01
        self.states = {0: {"m": rng.normal(size=(4, 3)).astype(np.float32),
                           "v": rng.random((4, 3)).astype(np.float32)},
                       1: {"m": rng.normal(size=3).astype(np.float32)}}
        self.betas = (0.9, 0.999)

    def state_dict(self):
        return {"step": self.step_counter, "lr": self.lr, "betas": self.betas,
                "states": self.states}

    def load_state_dict(self, state):
        if set(state) != {"step", "lr", "betas", "states"}:
            raise ValueError("TinyOptimizer: bad state")
        self.step_counter, self.lr, self.betas = state["step"], state["lr"], state["betas"]
        self.states = state["states"]


def _assert_states_equal(a, b):
    assert set(a) == set(b)
    for key in a:
        if isinstance(a[key], dict):
            _assert_states_equal(a[key], b[key])
        else:
            np.testing.assert_array_equal(a[key], b[key])
            assert np.asarray(a[key]).dtype == np.asarray(b[key]).dtype


def test_model_optimizer_and_extras_round_trip(tmp_path):
    path = tmp_path / "run.ckpt"
    model, optimizer = TinyModel(seed=1), TinyOptimizer(seed=1)
    extras = {"epoch": 4, "history": [0.5, 0.25], "name": "cnn", "best": None,
              "rng": np.arange(4, dtype=np.uint32), "scale": np.float32(0.5)}
    save(path, model=model, optimizer=optimizer, **extras)
    assert os.listdir(tmp_path) == ["run.ckpt"]           # exactly the path, no suffix added
    restored_model, restored_optimizer = TinyModel(seed=2), TinyOptimizer(seed=2)
    got = load(path, model=restored_model, optimizer=restored_optimizer)
    _assert_states_equal(model.params, restored_model.params)
    _assert_states_equal(optimizer.states, restored_optimizer.states)
    assert restored_optimizer.step_counter == 7 and restored_optimizer.betas == (0.9, 0.999)
    assert sorted(got) == sorted(extras)
    assert got["history"] == [0.5, 0.25] and got["name"] == "cnn" and got["best"] is None
    np.testing.assert_array_equal(got["rng"], extras["rng"])
    assert got["rng"].dtype == np.uint32 and type(got["scale"]) is np.float32


def test_plain_dicts_are_updated_in_place(tmp_path):
    weights = {"W": np.arange(6.0).reshape(2, 3), "count": 3}
    save(tmp_path / "d.ckpt", model=weights)
    target_array = np.zeros((2, 3))
    target = {"W": target_array, "count": 0}
    assert load(tmp_path / "d.ckpt", model=target) == {}
    assert target["W"] is target_array and target["count"] == 3
    np.testing.assert_array_equal(target_array, weights["W"])


def test_tensor_states_and_load_without_targets(tmp_path):
    tensor = autograd.Tensor(data=np.ones((2, 2), np.float32), stores_grad=True)
    save(tmp_path / "t.ckpt", model={"w": tensor}, step=3)
    assert load(tmp_path / "t.ckpt") == {"step": 3}
    content = read(tmp_path / "t.ckpt")
    assert content["optimizer"] is None and content["model"]["w"].dtype == np.float32


def test_unsupported_extra_is_refused_before_touching_the_file(tmp_path):
    path = tmp_path / "keep.ckpt"
    save(path, model={"a": np.ones(2)}, epoch=1)
    with pytest.raises(TypeError, match=r"extras\['callback'\] of type function"):
        save(path, model={"a": np.zeros(2)}, callback=lambda: None)
    assert load(path) == {"epoch": 1} and os.listdir(tmp_path) == ["keep.ckpt"]


def _fail_midway(monkeypatch, error=RuntimeError("disk full")):
    real_write = np.lib.format.write_array
    calls = []

    def write_then_fail(stream, array, **kwargs):
        calls.append(1)
        if len(calls) == 2:                      # the first array is written, then a crash
            stream.write(b"partial bytes")
            raise error
        return real_write(stream, array, **kwargs)

    monkeypatch.setattr(np.lib.format, "write_array", write_then_fail)


def test_a_failing_write_leaves_the_old_checkpoint_and_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "model.ckpt"
    old_model = TinyModel(seed=1)
    save(path, model=old_model, epoch=1)
    before = path.read_bytes()
    _fail_midway(monkeypatch)
    with pytest.raises(RuntimeError, match="disk full"):
        save(path, model=TinyModel(seed=5), epoch=2)
    assert os.listdir(tmp_path) == ["model.ckpt"] and path.read_bytes() == before
    restored = TinyModel(seed=9)
    assert load(path, model=restored) == {"epoch": 1}
    _assert_states_equal(old_model.params, restored.params)


def test_an_interrupt_while_writing_leaves_no_file(tmp_path, monkeypatch):
    _fail_midway(monkeypatch, KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        save(tmp_path / "new.ckpt", model=TinyModel())
    assert os.listdir(tmp_path) == []


def test_a_failing_rename_leaves_the_old_checkpoint(tmp_path, monkeypatch):
    path = tmp_path / "model.ckpt"
    save(path, epoch=1)

    def refuse(source, destination):
        raise OSError("rename refused")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="rename refused"):
        save(path, epoch=2)
    monkeypatch.undo()
    assert os.listdir(tmp_path) == ["model.ckpt"] and load(path) == {"epoch": 1}


def test_data_is_fsynced_before_the_rename(tmp_path, monkeypatch):
    events = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(os, "fsync", lambda fd: (events.append("fsync"), real_fsync(fd))[1])
    monkeypatch.setattr(os, "replace",
                        lambda a, b: (events.append("replace"), real_replace(a, b))[1])
    save(tmp_path / "x.ckpt", epoch=1)
    assert events[:2] == ["fsync", "replace"]


def test_missing_folder_and_missing_file_name_the_path(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        save(tmp_path / "absent" / "x.ckpt", epoch=1)
    with pytest.raises(FileNotFoundError, match=r"no checkpoint at .*nothing\.ckpt"):
        load(tmp_path / "nothing.ckpt")


@pytest.fixture
def saved(tmp_path):
    path = tmp_path / "model.ckpt"
    save(path, model=TinyModel(seed=1), optimizer=TinyOptimizer(seed=1), epoch=3)
    return path


@pytest.mark.parametrize("fraction", [0.0, 0.1, 0.5, 0.9, 0.999])
def test_truncated_file_is_an_error_naming_the_path(saved, fraction):
    content = saved.read_bytes()
    saved.write_bytes(content[: int(len(content) * fraction)])
    model = TinyModel(seed=2)
    before = dict(model.params)
    with pytest.raises(CheckpointError, match="corrupt or truncated") as info:
        load(saved, model=model)
    assert str(saved) in str(info.value)
    assert all(model.params[k] is before[k] for k in before)


def test_flipped_byte_in_array_data_is_caught_by_the_checksum(saved):
    content = bytearray(saved.read_bytes())
    with zipfile.ZipFile(saved) as archive:
        info = archive.getinfo("a0.npy")
    # the local header is 30 bytes, then the name and the extra field, whose lengths it gives
    name_length, extra_length = struct.unpack_from("<HH", content, info.header_offset + 26)
    data_start = info.header_offset + 30 + name_length + extra_length
    content[data_start + info.compress_size - 1] ^= 0xFF        # the last byte of the array
    saved.write_bytes(bytes(content))
    with pytest.raises(CheckpointError, match="CRC") as error:
        load(saved, model=TinyModel())
    assert str(saved) in str(error.value)


def _rewrite(path, change):
    """Rewrite the archive at ``path`` with ``change(members)`` applied to its {name: bytes}."""
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    change(members)
    with zipfile.ZipFile(path, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)


def _edit_metadata(edit):
    def change(members):
        metadata = json.loads(members["checkpoint.json"])
        edit(metadata)
        members["checkpoint.json"] = json.dumps(metadata).encode()
    return change


@pytest.mark.parametrize("change, message", [
    (lambda m: m.pop("a1.npy"), "array member a1.npy is missing"),
    (lambda m: m.pop("checkpoint.json"), "not an autograd checkpoint"),
    (lambda m: m.update({"checkpoint.json": b"{not json"}), "corrupt or truncated"),
    (_edit_metadata(lambda d: d.update(format="other")), "does not say format"),
    (_edit_metadata(lambda d: d.update(version=99)), "version 99"),
    (_edit_metadata(lambda d: d.pop("extras")), "lacks extras"),
    (_edit_metadata(lambda d: d["arrays"]["a0"].update(shape=[1])), r"metadata says .* \(1,\)"),
    (_edit_metadata(lambda d: d["model"].update({"fc1.W": {"$array": "a77"}})), "lacks"),
])
def test_inconsistent_archives_are_errors_naming_the_path(saved, change, message):
    _rewrite(saved, change)
    with pytest.raises(CheckpointError, match=message) as info:
        load(saved, model=TinyModel())
    assert str(saved) in str(info.value)


def test_a_plain_npz_or_another_file_is_not_a_checkpoint(tmp_path):
    np.savez(tmp_path / "weights.npz", W=np.ones(3))
    with pytest.raises(CheckpointError, match="not an autograd checkpoint"):
        load(tmp_path / "weights.npz")
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(CheckpointError, match="notes.txt is corrupt or truncated"):
        load(tmp_path / "notes.txt")


class _Trap:
    triggered = False

    def __reduce__(self):
        return (_Trap._spring, ())

    @staticmethod
    def _spring():
        _Trap.triggered = True
        return "sprung"


def test_a_pickled_array_in_the_file_is_refused_not_run(saved):
    def plant(members):
        import io
        buffer = io.BytesIO()
        np.lib.format.write_array(buffer, np.array([_Trap()], dtype=object), allow_pickle=True)
        members["a0.npy"] = buffer.getvalue()
        _edit_metadata(lambda d: d["arrays"]["a0"].update(shape=[1], dtype="|O"))(members)

    _rewrite(saved, plant)
    with pytest.raises(CheckpointError, match="need pickle"):
        load(saved)
    assert not _Trap.triggered


def test_strict_names_missing_and_unexpected_keys_and_changes_nothing(saved):
    model, optimizer = TinyModel(seed=2), TinyOptimizer(seed=2)
    del model.params["bn.running_mean"]
    model.params["fc2.W"] = np.zeros((3, 2), np.float32)
    before_model, before_states = dict(model.params), optimizer.states
    with pytest.raises(CheckpointError, match=r"missing keys \['fc2.W'\], "
                                              r"unexpected keys \['bn.running_mean'\]"):
        load(saved, model=model, optimizer=optimizer)
    assert model.params == before_model and optimizer.states is before_states


def test_non_strict_loads_the_common_keys_and_keeps_the_others(saved):
    """The model's own loader wants every key: the keys the file lacks keep their values."""
    reference = TinyModel(seed=1)
    model = TinyModel(seed=2)
    del model.params["bn.running_mean"]
    extra = np.full(2, 5.0, np.float32)
    model.params["extra"] = extra
    load(saved, model=model, strict=False)
    assert sorted(model.params) == ["extra", "fc1.W", "fc1.b"]
    np.testing.assert_array_equal(model.params["fc1.W"], reference.params["fc1.W"])
    np.testing.assert_array_equal(model.params["fc1.b"], reference.params["fc1.b"])
    np.testing.assert_array_equal(model.params["extra"], extra)


@pytest.mark.parametrize("hidden, dtype, message", [
    (5, np.float32, r"'fc1.W': the model has float32 \(4, 5\), the file float32 \(4, 3\)"),
    (3, np.float64, r"'fc1.W': the model has float64 \(4, 3\), the file float32 \(4, 3\)"),
])
def test_wrong_shape_or_dtype_is_an_error_and_changes_nothing(saved, hidden, dtype, message):
    model, optimizer = TinyModel(seed=2, hidden=hidden, dtype=dtype), TinyOptimizer(seed=2)
    before, before_states = dict(model.params), optimizer.states
    with pytest.raises(CheckpointError, match=message):
        load(saved, model=model, optimizer=optimizer, strict=False)
    assert all(model.params[k] is before[k] for k in before)
    assert optimizer.states is before_states


def test_model_is_put_back_when_the_optimizer_rejects_its_state(saved):
    model, optimizer = TinyModel(seed=2), TinyOptimizer(seed=2)
    original = {key: value.copy() for key, value in model.params.items()}

    def reject(state):
        raise ValueError("TinyOptimizer: refuses")

    optimizer.load_state_dict = reject
    with pytest.raises(CheckpointError, match=r"does not fit the optimizer: .*refuses") as info:
        load(saved, model=model, optimizer=optimizer)
    assert str(saved) in str(info.value)
    _assert_states_equal(original, model.params)


def test_model_rejecting_its_state_leaves_the_optimizer_alone(saved):
    model, optimizer = TinyModel(seed=2), TinyOptimizer(seed=2)
    before_states = optimizer.states

    def reject(state):
        raise ValueError("TinyModel: refuses")

    model.load_state_dict = reject
    with pytest.raises(CheckpointError, match="does not fit the model: TinyModel: refuses"):
        load(saved, model=model, optimizer=optimizer)
    assert optimizer.states is before_states


def test_asking_for_a_state_the_file_lacks_is_an_error(tmp_path):
    save(tmp_path / "m.ckpt", model=TinyModel())
    with pytest.raises(CheckpointError, match="holds no optimizer state"):
        load(tmp_path / "m.ckpt", model=TinyModel(), optimizer=TinyOptimizer())
    with pytest.raises(TypeError, match="model must have a load_state_dict"):
        load(tmp_path / "m.ckpt", model=[1, 2])
    with pytest.raises(TypeError, match="optimizer must have a state_dict"):
        save(tmp_path / "m.ckpt", optimizer=3)
