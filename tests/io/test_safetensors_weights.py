"""safetensors weights (issue 21, item 2): round trips, files in PyTorch's names and orientation
written by ``safetensors.numpy`` from arrays built here (the reference is a NumPy forward pass
written in the test), PyTorch itself where installed, and hostile files that must raise a
CheckpointError naming the path and leave the model as it was."""
import json
import os
import struct

import numpy as np
import pytest

import autograd
from autograd import Tensor
from autograd.io import save_safetensors, load_safetensors, CheckpointError

st_numpy = pytest.importorskip("safetensors.numpy")


def _cnn(seed=0):
    """conv -> batchnorm -> relu -> flatten -> linear, with every parameter and buffer random
    (so a transposed or swapped array cannot go unnoticed)."""
    model = autograd.Sequential(autograd.Conv2d(2, 3, 3, padding=1), autograd.BatchNorm2d(3),
                                autograd.ReLU(), autograd.Flatten(), autograd.Linear(3 * 4 * 4, 5))
    rng = np.random.default_rng(seed)
    for _, tensor in model.get_states().items():
        tensor.data[...] = rng.standard_normal(tensor.shape).astype(tensor.dtype)
    model[1].running_var.data[...] = np.abs(model[1].running_var.data) + 0.5
    return model.eval()


def _same_state(a, b):
    sa, sb = a.state_dict(), b.state_dict()
    assert list(sa) == list(sb)
    for key in sa:
        np.testing.assert_array_equal(sa[key], sb[key], err_msg=key)


def _forward(model, x):
    with autograd.no_grad():
        return model(Tensor(data=x, requires_grad=False)).to_numpy()


@pytest.fixture
def path(tmp_path):
    return str(tmp_path / "weights.safetensors")


# ---------------------------------------------------------------- round trips
@pytest.mark.parametrize("layout", ["autograd", "torch"])
def test_round_trip_restores_every_parameter_and_buffer(path, layout):
    model, copy = _cnn(0), _cnn(1)
    save_safetensors(model, path, metadata={"epoch": "3"}, layout=layout)
    metadata = load_safetensors(copy, path)
    _same_state(model, copy)
    assert metadata["epoch"] == "3"
    assert ("format" in metadata) == (layout == "torch")
    x = np.random.default_rng(2).standard_normal((2, 2, 4, 4)).astype(np.float32)
    np.testing.assert_array_equal(_forward(model, x), _forward(copy, x))


def test_autograd_layout_keeps_names_and_orientation(path):
    model = _cnn()
    save_safetensors(model, path)
    stored = st_numpy.load_file(path)
    assert set(stored) == set(model.state_dict())
    np.testing.assert_array_equal(stored["4.W"], model[4].W.to_numpy())


def test_torch_layout_transposes_linear_and_renames(path):
    model = _cnn()
    save_safetensors(model, path, layout="torch")
    stored = st_numpy.load_file(path)
    assert sorted(stored) == sorted(["0.weight", "0.bias", "1.weight", "1.bias",
                                     "1.running_mean", "1.running_var",
                                     "1.num_batches_tracked", "4.weight", "4.bias"])
    np.testing.assert_array_equal(stored["4.weight"], model[4].W.to_numpy().T)
    np.testing.assert_array_equal(stored["1.weight"], model[1].scale.to_numpy())
    np.testing.assert_array_equal(stored["0.weight"], model[0].W.to_numpy())


# ---------------------------------------------------------------- foreign files
def test_loads_a_pytorch_named_mlp_and_computes_what_numpy_does(path):
    rng = np.random.default_rng(3)
    w0, b0 = rng.standard_normal((8, 4)).astype(np.float32), rng.standard_normal(8).astype(np.float32)
    w2, b2 = rng.standard_normal((3, 8)).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    # exactly what torch.nn.Sequential(Linear(4, 8), ReLU(), Linear(8, 3)).state_dict() names
    st_numpy.save_file({"0.weight": w0, "0.bias": b0, "2.weight": w2, "2.bias": b2}, path)
    model = autograd.Sequential(autograd.Linear(4, 8), autograd.ReLU(), autograd.Linear(8, 3))
    load_safetensors(model, path)
    x = rng.standard_normal((5, 4)).astype(np.float32)
    expected = np.maximum(x @ w0.T + b0, 0) @ w2.T + b2
    np.testing.assert_allclose(_forward(model, x), expected, rtol=1e-5, atol=1e-5)


def test_a_lazy_linear_takes_its_shape_from_a_pytorch_weight(path):
    w = np.arange(6, dtype=np.float32).reshape(2, 3)            # (out, in)
    st_numpy.save_file({"weight": w, "bias": np.zeros(2, np.float32)}, path)
    layer = autograd.Linear(2)                                   # SINGA's lazy form
    load_safetensors(layer, path)
    np.testing.assert_array_equal(layer.W.to_numpy(), w.T)


def test_rename_dict_maps_foreign_module_paths(path):
    rng = np.random.default_rng(4)
    arrays = {"features.conv.weight": rng.standard_normal((3, 2, 3, 3)).astype(np.float32),
              "features.conv.bias": rng.standard_normal(3).astype(np.float32),
              "features.norm.weight": rng.standard_normal(3).astype(np.float32),
              "features.norm.bias": rng.standard_normal(3).astype(np.float32),
              "features.norm.running_mean": rng.standard_normal(3).astype(np.float32),
              "features.norm.running_var": rng.random(3).astype(np.float32) + 0.5,
              "features.norm.num_batches_tracked": np.array(7, np.int64),
              "head.weight": rng.standard_normal((5, 48)).astype(np.float32),
              "head.bias": rng.standard_normal(5).astype(np.float32)}
    st_numpy.save_file(arrays, path)
    model = _cnn()
    load_safetensors(model, path, rename={r"^features\.conv\.": "0.",
                                          r"^features\.norm\.": "1.", r"^head\.": "4."})
    np.testing.assert_array_equal(model[0].W.to_numpy(), arrays["features.conv.weight"])
    np.testing.assert_array_equal(model[1].scale.to_numpy(), arrays["features.norm.weight"])
    np.testing.assert_array_equal(model[1].running_var.to_numpy(),
                                  arrays["features.norm.running_var"])
    np.testing.assert_array_equal(model[4].W.to_numpy(), arrays["head.weight"].T)


def test_rename_callable_can_drop_names(path):
    st_numpy.save_file({"0.weight": np.ones((2, 3), np.float32),
                        "0.bias": np.ones(2, np.float32),
                        "classifier.weight": np.ones((9, 9), np.float32)}, path)
    model = autograd.Sequential(autograd.Linear(3, 2))
    load_safetensors(model, path, rename=lambda n: None if n.startswith("classifier") else n)
    np.testing.assert_array_equal(model[0].b.to_numpy(), [1.0, 1.0])


# ---------------------------------------------------------------- mismatches and hostile files
def _snapshot(model):
    return {k: v.copy() for k, v in model.state_dict().items()}


def _untouched(model, before):
    for key, value in model.state_dict().items():
        np.testing.assert_array_equal(value, before[key], err_msg=key)


def test_a_wrong_shape_is_an_error_and_nothing_is_loaded(path):
    # the first layer fits; the second does not: the first must not be assigned either
    st_numpy.save_file({"0.weight": np.full((2, 3), 9.0, np.float32),
                        "0.bias": np.full(2, 9.0, np.float32),
                        "2.weight": np.ones((4, 5), np.float32),
                        "2.bias": np.ones(4, np.float32)}, path)
    model = autograd.Sequential(autograd.Linear(3, 2), autograd.ReLU(), autograd.Linear(2, 4))
    before = _snapshot(model)
    with pytest.raises(CheckpointError, match=rf"{path} does not fit the model: '2.weight' "
                                              r"\(for '2.W'\): the model has float32 \(2, 4\), "
                                              r"the file float32 \(5, 4\)"):
        load_safetensors(model, path)
    _untouched(model, before)


def test_a_misfit_is_decided_from_the_header_before_any_array_is_read(path, monkeypatch):
    import safetensors
    st_numpy.save_file({"W": np.ones((300, 200), np.float32), "b": np.ones(7, np.float32)}, path)
    reads = []
    real_open = safetensors.safe_open

    class CountingOpen:                   # the real reader, counting the arrays it reads
        def __init__(self, *args, **kwargs):
            self.inner = real_open(*args, **kwargs)

        def __enter__(self):
            self.archive = self.inner.__enter__()
            return self

        def __exit__(self, *exc):
            return self.inner.__exit__(*exc)

        def get_tensor(self, name):
            reads.append(name)
            return self.archive.get_tensor(name)

        def __getattr__(self, name):
            return getattr(self.archive, name)

    monkeypatch.setattr(safetensors, "safe_open", CountingOpen)
    with pytest.raises(CheckpointError, match=r"'b' \(for 'b'\): the model has float32 \(200,\)"):
        load_safetensors(autograd.Linear(300, 200), path)
    assert reads == []
    st_numpy.save_file({"W": np.ones((300, 200), np.float32), "b": np.ones(200, np.float32)},
                       path)
    load_safetensors(autograd.Linear(300, 200), path)
    assert sorted(reads) == ["W", "b"]                 # the instrument does see reads


def test_missing_and_unexpected_names_are_errors_when_strict(path):
    st_numpy.save_file({"0.weight": np.ones((2, 3), np.float32),
                        "extra": np.ones(1, np.float32)}, path)
    model = autograd.Sequential(autograd.Linear(3, 2))
    before = _snapshot(model)
    with pytest.raises(CheckpointError, match=r"missing keys \['0.b'\].*unexpected keys "
                                              r"\['extra'\]"):
        load_safetensors(model, path)
    _untouched(model, before)
    load_safetensors(model, path, strict=False)
    np.testing.assert_array_equal(model[0].W.to_numpy(), np.ones((3, 2)))
    np.testing.assert_array_equal(model[0].b.to_numpy(), before["0.b"])


def test_a_wrong_dtype_is_an_error(path):
    st_numpy.save_file({"W": np.ones((3, 2)), "b": np.ones(2)}, path)          # float64
    layer = autograd.Linear(3, 2)
    with pytest.raises(CheckpointError, match=r"'W' \(for 'W'\): the model has float32 "
                                              r"\(3, 2\), the file float64 \(3, 2\)"):
        load_safetensors(layer, path)


def _raw_file(path, header, data=b""):
    text = json.dumps(header).encode()
    with open(path, "wb") as stream:
        stream.write(struct.pack("<Q", len(text)) + text + data)


def test_bfloat16_is_refused_with_a_hint(path):
    _raw_file(path, {"W": {"dtype": "BF16", "shape": [3, 2], "data_offsets": [0, 12]},
                     "b": {"dtype": "F32", "shape": [2], "data_offsets": [12, 20]}},
              bytes(20))
    with pytest.raises(CheckpointError, match=r"holds 'W' as BF16.*float32"):
        load_safetensors(autograd.Linear(3, 2), path)


@pytest.mark.parametrize("content", [
    b"",                                                        # empty
    struct.pack("<Q", 2 ** 62) + b"{}",                         # a header larger than the file
    struct.pack("<Q", 5) + b"nojso",                            # not JSON
    b"PK\x03\x04 a zip archive, not safetensors",
], ids=["empty", "huge-header", "not-json", "zip"])
def test_corrupt_files_are_checkpoint_errors_naming_the_path(path, content):
    with open(path, "wb") as stream:
        stream.write(content)
    layer = autograd.Linear(3, 2)
    before = _snapshot(layer)
    with pytest.raises(CheckpointError, match=rf"{path} is not a valid safetensors file"):
        load_safetensors(layer, path)
    _untouched(layer, before)


def test_offsets_past_the_end_are_an_error(path):
    _raw_file(path, {"W": {"dtype": "F32", "shape": [1000, 1000],
                           "data_offsets": [0, 4_000_000]}}, bytes(16))
    with pytest.raises(CheckpointError, match="not a valid safetensors file"):
        load_safetensors(autograd.Linear(3, 2), path)


def test_nested_metadata_is_an_error(path):
    deep = {}
    for _ in range(200):
        deep = {"x": deep}
    _raw_file(path, {"__metadata__": deep,
                     "b": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, bytes(8))
    with pytest.raises(CheckpointError, match="not a valid safetensors file"):
        load_safetensors({"b": np.zeros(2, np.float32)}, path)


def test_a_plain_dict_is_loaded_in_place_after_the_checks(path):
    st_numpy.save_file({"b": np.arange(2, dtype=np.float32)}, path)
    target = {"b": np.zeros(2, np.float32)}
    kept = target["b"]
    assert load_safetensors(target, path) == {}
    assert target["b"] is kept and kept.tolist() == [0.0, 1.0]
    with pytest.raises(CheckpointError, match=r"'b' \(for 'b'\): the model has float64 \(2,\)"):
        load_safetensors({"b": np.zeros(2)}, path)


def test_a_truncated_file_is_an_error(path):
    save_safetensors(autograd.Linear(30, 20), path)
    with open(path, "r+b") as stream:
        stream.truncate(os.path.getsize(path) - 100)
    with pytest.raises(CheckpointError, match="not a valid safetensors file"):
        load_safetensors(autograd.Linear(30, 20), path)


class _Trap:
    """Unpickling this writes a file: the proof that code ran."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_a_pickle_is_never_run(path, tmp_path):
    import pickle
    marker = tmp_path / "code-ran"
    with open(path, "wb") as stream:
        pickle.dump({"W": _Trap(str(marker))}, stream)
    with pytest.raises(CheckpointError):
        load_safetensors(autograd.Linear(3, 2), path)
    assert not marker.exists()


def test_a_missing_file_is_a_file_not_found_error(path):
    with pytest.raises(FileNotFoundError, match="load_safetensors: no file at"):
        load_safetensors(autograd.Linear(3, 2), path)


def test_save_refuses_bad_arguments_before_writing(path):
    model = autograd.Sequential(autograd.Linear(3, 2))
    with pytest.raises(TypeError, match="metadata must be a dict of str to str"):
        save_safetensors(model, path, metadata={"epoch": 3})
    with pytest.raises(ValueError, match="layout must be one of"):
        save_safetensors(model, path, layout="jax")
    with pytest.raises(ValueError, match="two arrays would be saved as 'w'"):
        save_safetensors(model, path, rename=lambda name: "w")
    with pytest.raises(TypeError, match="rename must be None, a callable or a dict"):
        save_safetensors(model, path, rename=["0.W"])
    assert not os.path.exists(path)


# ---------------------------------------------------------------- PyTorch, where installed
def _torch_cnn(torch):
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(2, 3, 3, padding=1), torch.nn.BatchNorm2d(3),
                              torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(48, 5))
    with torch.no_grad():                       # running statistics away from 0 and 1
        net[1].running_mean.uniform_(-1, 1)
        net[1].running_var.uniform_(0.5, 2)
        net[1].weight.uniform_(0.5, 2)
    return net.eval()


def test_pytorch_model_into_ours_gives_the_same_outputs(path):
    torch = pytest.importorskip("torch")
    st_torch = pytest.importorskip("safetensors.torch")
    net = _torch_cnn(torch)
    st_torch.save_file(net.state_dict(), path)
    model = _cnn(5)
    load_safetensors(model, path)
    x = np.random.default_rng(6).standard_normal((4, 2, 4, 4)).astype(np.float32)
    with torch.no_grad():
        expected = net(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(_forward(model, x), expected, rtol=1e-4, atol=1e-5)


def test_our_model_into_pytorch_gives_the_same_outputs(path):
    torch = pytest.importorskip("torch")
    st_torch = pytest.importorskip("safetensors.torch")
    model = _cnn(7)
    save_safetensors(model, path, layout="torch")
    net = _torch_cnn(torch)
    net.load_state_dict(st_torch.load_file(path))            # strict: every name must fit
    x = np.random.default_rng(8).standard_normal((4, 2, 4, 4)).astype(np.float32)
    with torch.no_grad():
        theirs = net(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(_forward(model, x), theirs, rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------- the optional dependency
def test_without_safetensors_the_error_names_the_extra(path, monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "safetensors", None)        # as if not installed
    monkeypatch.setitem(sys.modules, "safetensors.numpy", None)
    with pytest.raises(ImportError, match=r"save_safetensors: .*pip install -e \"\.\[interop\]\""):
        save_safetensors(autograd.Linear(2, 2), path)
    with pytest.raises(ImportError, match=r"load_safetensors: .*interop"):
        load_safetensors(autograd.Linear(2, 2), path)


@pytest.mark.cpu_only         # import behaviour, in a subprocess
def test_importing_autograd_imports_no_optional_package():
    import subprocess
    import sys
    code = ("import sys, autograd; loaded = [m for m in ('safetensors', 'tensorboard', 'torch') "
            "if m in sys.modules]; print(loaded)")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=root, env=dict(os.environ, PYTHONPATH=root), check=True)
    assert out.stdout.strip() == "[]"
