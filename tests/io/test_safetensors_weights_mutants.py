"""safetensors weights: tests written from the mutants of autograd/io/safetensors_weights.py
that the suite let through (issue 22). Each test says which mutant it catches. References:
arrays built here and read back with ``safetensors.numpy`` itself, NumPy transposes written
in the test, and messages checked word for word."""
import os
import re

import numpy as np
import pytest

import autograd
from autograd.io import save_safetensors, load_safetensors, CheckpointError

st_numpy = pytest.importorskip("safetensors.numpy")


@pytest.fixture
def path(tmp_path):
    return str(tmp_path / "weights.safetensors")


def _random(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


# ---------------------------------------------------------------- layer conventions
def _built_gemm(trans_b, seed):
    """A Gemm(3) built by a first call on 4 features, W and b random."""
    layer = autograd.Gemm(3, transB=trans_b)
    layer(autograd.Tensor(data=np.ones((2, 4), np.float32), requires_grad=False))
    layer.W.data[...] = _random(layer.W.shape, seed)
    layer.b.data[...] = _random(layer.b.shape, seed + 1)
    return layer


@pytest.mark.parametrize("trans_b", [True, False])
def test_gemm_is_saved_in_pytorch_names_and_orientation(path, trans_b):
    """torch_names' Gemm row: names W -> weight, b -> bias; W transposed unless transB; b
    (1, 3), never transposed (mutants renaming a key, dropping `not`, transposing b)."""
    layer = _built_gemm(trans_b, seed=0)
    save_safetensors(layer, path, layout="torch")
    stored = st_numpy.load_file(path)
    assert sorted(stored) == ["bias", "weight"]
    weight = layer.W.to_numpy()
    np.testing.assert_array_equal(stored["weight"], weight if trans_b else weight.T)
    assert stored["weight"].shape == (3, 4)                 # PyTorch's (out, in) either way
    np.testing.assert_array_equal(stored["bias"], layer.b.to_numpy())
    assert stored["bias"].shape == (1, 3)


@pytest.mark.parametrize("trans_b", [True, False])
def test_gemm_loads_a_pytorch_named_file(path, trans_b):
    weight, bias = _random((3, 4), 2), _random((1, 3), 3)      # (out, in), (1, out)
    st_numpy.save_file({"weight": weight, "bias": bias}, path)
    layer = _built_gemm(trans_b, seed=4)
    load_safetensors(layer, path)
    np.testing.assert_array_equal(layer.W.to_numpy(), weight if trans_b else weight.T)
    np.testing.assert_array_equal(layer.b.to_numpy(), bias)


def test_layer_norm_over_two_axes_keeps_its_orientation(path):
    """LayerNorm((2, 3)): scale -> weight and bias -> bias, both (2, 3), never transposed
    (mutants renaming a key or setting `transposed` for either)."""
    layer = autograd.LayerNorm((2, 3))
    layer.scale.data[...] = _random((2, 3), 5)
    layer.bias.data[...] = _random((2, 3), 6)
    save_safetensors(layer, path, layout="torch")
    stored = st_numpy.load_file(path)
    assert sorted(stored) == ["bias", "weight"]
    np.testing.assert_array_equal(stored["weight"], layer.scale.to_numpy())
    np.testing.assert_array_equal(stored["bias"], layer.bias.to_numpy())
    weight, bias = _random((2, 3), 7), _random((2, 3), 8)
    st_numpy.save_file({"weight": weight, "bias": bias}, path)
    load_safetensors(layer, path)
    np.testing.assert_array_equal(layer.scale.to_numpy(), weight)
    np.testing.assert_array_equal(layer.bias.to_numpy(), bias)


def test_batchnorm_counter_is_an_int64_zero(path):
    """PyTorch's num_batches_tracked is an int64 scalar (mutants `np.zeros((), None)` and
    `np.zeros(())`, float64)."""
    save_safetensors(autograd.Sequential(autograd.BatchNorm2d(3)), path, layout="torch")
    counter = st_numpy.load_file(path)["0.num_batches_tracked"]
    assert counter.dtype == np.int64 and counter.size == 1 and counter.sum() == 0


def test_torch_layout_marks_the_format_as_pt(path):
    """Hugging Face's loaders read metadata["format"] == "pt" (mutants "XXptXX", "PT")."""
    save_safetensors(autograd.Linear(2, 2), path, layout="torch")
    assert load_safetensors(autograd.Linear(2, 2), path) == {"format": "pt"}
    save_safetensors(autograd.Linear(2, 2), path, layout="torch", metadata={"format": "np"})
    assert load_safetensors(autograd.Linear(2, 2), path) == {"format": "np"}


# ---------------------------------------------------------------- targets without layers
def test_a_plain_dict_is_saved_as_it_is(path):
    """A dict of arrays is a valid model (mutants `state = None`, `dict(None)`)."""
    arrays = {"w": _random((2, 3), 9), "n": np.arange(4, dtype=np.int32)}
    save_safetensors(arrays, path)
    stored = st_numpy.load_file(path)
    assert sorted(stored) == ["n", "w"]
    np.testing.assert_array_equal(stored["w"], arrays["w"])
    np.testing.assert_array_equal(stored["n"], arrays["n"])


class _Holder:
    """A model with only state_dict / load_state_dict: no get_states, no layers."""

    def __init__(self):
        self.state = {"w": np.zeros((2, 3), np.float32)}

    def state_dict(self):
        return dict(self.state)

    def load_state_dict(self, state, strict=True):
        self.state = {key: np.array(value) for key, value in state.items()}


def test_a_model_without_get_states_or_layers_loads_names_as_they_are(path):
    """No layer at a name's prefix: the array is taken untransposed (mutant `return name,
    True` in _target); no get_states: nothing is expected from it (mutant `... or True` in
    _expected, which calls .items() on the model)."""
    w = _random((2, 3), 10)
    st_numpy.save_file({"w": w}, path)
    holder = _Holder()
    load_safetensors(holder, path)
    np.testing.assert_array_equal(holder.state["w"], w)
    target = {"w": np.zeros((2, 3), np.float32)}
    load_safetensors(target, path)
    np.testing.assert_array_equal(target["w"], w)


# ---------------------------------------------------------------- messages, word for word
def test_save_refuses_a_model_that_is_no_dict_with_an_exact_message(path):
    with pytest.raises(TypeError) as info:
        save_safetensors(object(), path)
    assert str(info.value) == ("save_safetensors: model must have a state_dict() method or be "
                               "a dict, got object")


def test_save_names_the_array_and_the_dtypes_it_can_store(path):
    with pytest.raises(TypeError) as info:
        save_safetensors({"z": np.zeros(2, np.complex64)}, path)
    assert str(info.value) == (
        "save_safetensors: cannot store 'z' of dtype complex64; safetensors (through NumPy) "
        "holds ['bool', 'float16', 'float32', 'float64', 'int16', 'int32', 'int64', 'int8', "
        "'uint16', 'uint32', 'uint64', 'uint8']")
    assert not os.path.exists(path)


def test_save_metadata_message_is_exact(path):
    with pytest.raises(TypeError) as info:
        save_safetensors({"b": np.zeros(2)}, path, metadata={"epoch": 3})
    assert str(info.value) == ("save_safetensors: metadata must be a dict of str to str "
                               "(safetensors stores nothing else), got {'epoch': 3}")


def _pattern_error(pattern):
    try:
        re.compile(pattern)
    except re.error as error:
        return str(error)
    raise AssertionError(f"{pattern!r} compiles")


@pytest.mark.parametrize("function", ["save_safetensors", "load_safetensors"])
def test_an_invalid_rename_pattern_names_the_function_and_the_error(path, function):
    st_numpy.save_file({"b": np.zeros(2, np.float32)}, path)
    call = {"save_safetensors": lambda: save_safetensors({"b": np.zeros(2)}, path,
                                                         rename={"(": "x"}),
            "load_safetensors": lambda: load_safetensors({"b": np.zeros(2, np.float32)}, path,
                                                         rename={"(": "x"})}[function]
    with pytest.raises(ValueError) as info:
        call()
    assert str(info.value) == (f"{function}: rename holds an invalid pattern "
                               f"({_pattern_error('(')})")


def test_a_rename_of_the_wrong_type_is_named(path):
    with pytest.raises(TypeError) as info:
        save_safetensors({"b": np.zeros(2)}, path, rename=3)
    assert str(info.value) == ("save_safetensors: rename must be None, a callable or a dict of "
                               "regex patterns, got int")


def test_a_rename_collision_names_the_array_that_came_second(path):
    """The message names the original name of the second array, also for PyTorch's BatchNorm
    counter (mutants passing None as `original`)."""
    model = autograd.Sequential(autograd.BatchNorm2d(2))
    with pytest.raises(ValueError) as info:
        save_safetensors(model, path, layout="torch",
                         rename=lambda n: "0.weight" if n == "0.num_batches_tracked" else n)
    assert str(info.value) == ("save_safetensors: two arrays would be saved as '0.weight' (the "
                               "second from '0.num_batches_tracked'): fix rename")
    with pytest.raises(ValueError) as info:
        save_safetensors(model, path, rename=lambda n: "same")
    assert str(info.value) == ("save_safetensors: two arrays would be saved as 'same' (the "
                               "second from '0.bias'): fix rename")
    assert not os.path.exists(path)


def test_load_refuses_a_target_that_cannot_take_a_state_before_reading(path):
    """check_targets(model) first (mutant `check_targets(None, None)`): the TypeError names
    what the target lacks, even for a file that does not exist."""
    with pytest.raises(TypeError, match=r"^load_safetensors: model must have a "
                                        r"load_state_dict\(\) method or be a dict, got object\Z"):
        load_safetensors(object(), path)


def test_a_missing_parameter_error_names_the_file(path):
    """_restore_model gets the path (mutant `_restore_model(None, ...)`)."""
    st_numpy.save_file({"0.weight": np.ones((2, 3), np.float32)}, path)
    with pytest.raises(CheckpointError) as info:
        load_safetensors(autograd.Sequential(autograd.Linear(3, 2)), path)
    assert str(info.value).startswith(f"load: {path} ")
    assert "missing keys ['0.b']" in str(info.value)


def test_two_file_names_for_one_parameter_are_named(path):
    st_numpy.save_file({"weight": np.ones((2, 3), np.float32),
                        "W": np.ones((3, 2), np.float32)}, path)
    with pytest.raises(CheckpointError) as info:
        load_safetensors(autograd.Linear(3, 2), path)
    assert str(info.value) == (f"load_safetensors: {path}: 'W' and 'weight' both map to 'W': "
                               "fix rename")


def test_every_misfit_is_listed_separated_by_semicolons(path):
    st_numpy.save_file({"W": np.ones((4, 2), np.float32), "b": np.ones(5, np.float64)}, path)
    with pytest.raises(CheckpointError) as info:
        load_safetensors(autograd.Linear(3, 2), path)
    assert str(info.value) == (
        f"load_safetensors: {path} does not fit the model: 'W' (for 'W'): the model has "
        "float32 (3, 2), the file float32 (4, 2); 'b' (for 'b'): the model has float32 (2,), "
        "the file float64 (5,)")


def test_a_corrupt_file_message_names_the_library_error(path):
    with open(path, "wb"):
        pass
    with pytest.raises(CheckpointError) as info:
        load_safetensors({"b": np.zeros(2, np.float32)}, path)
    cause = info.value.__cause__
    assert cause is not None
    assert str(info.value) == (f"load_safetensors: {path} is not a valid safetensors file "
                               f"({type(cause).__name__}: {cause})")
    assert type(cause).__name__ == "SafetensorError"


def test_without_safetensors_the_message_is_exact(path, monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "safetensors", None)        # as if not installed
    monkeypatch.setitem(sys.modules, "safetensors.numpy", None)
    with pytest.raises(ImportError) as info:
        save_safetensors(autograd.Linear(2, 2), path)
    assert str(info.value) == ("save_safetensors: the safetensors package is not installed; "
                               "install the interop extra (pip install -e \".[interop]\") or "
                               "`pip install safetensors`")


# ---------------------------------------------------------------- a bug these tests found
def test_a_zero_dimensional_array_keeps_its_shape(path):
    """np.ascontiguousarray returns at least one dimension: a scalar parameter or buffer was
    stored as (1,), so its own file no longer fit it, and PyTorch's num_batches_tracked (a
    0-d tensor) was written as (1,). Both keep shape () now."""
    scale = np.array(2.5, np.float32)
    save_safetensors({"scale": scale, "w": _random((2, 3), 11).T}, path)
    stored = st_numpy.load_file(path)
    assert stored["scale"].shape == () and stored["scale"] == 2.5
    target = {"scale": np.zeros((), np.float32), "w": np.zeros((3, 2), np.float32)}
    load_safetensors(target, path)
    assert target["scale"].shape == () and target["scale"] == 2.5
    np.testing.assert_array_equal(target["w"], _random((2, 3), 11).T)
    save_safetensors(autograd.Sequential(autograd.BatchNorm2d(3)), path, layout="torch")
    assert st_numpy.load_file(path)["0.num_batches_tracked"].shape == ()
