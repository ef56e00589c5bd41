"""Every example runs in a fast mode, so none of them can rot."""
import importlib.util
import pathlib

import numpy as np
import pytest

import autograd

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def load_example(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(autouse=True)
def restore_training_flag():
    yield
    autograd.training = True


def test_train_cnn_quick_run_learns_and_writes_curves(tmp_path):
    plot = tmp_path / "curves.png"
    result = load_example("train_cnn").main(
        ["--epochs", "2", "--limit-batches", "8", "--quiet", "--plot", str(plot)])
    history = result["history"]
    assert len(history["loss"]) == 2 and history["loss"][1] < history["loss"][0]
    assert result["accuracy"] > 0.3            # chance is 0.1; 16 steps already learn a lot
    assert plot.stat().st_size > 1000


def test_train_cnn_resumes_from_its_checkpoint(tmp_path):
    """1 epoch, then a resumed 2nd, ends exactly where 2 uninterrupted epochs end: the same
    history, parameters, BatchNorm statistics and optimizer state."""
    example = load_example("train_cnn")
    common = ["--limit-batches", "3", "--quiet", "--plot", ""]
    paths = {name: str(tmp_path / f"{name}.ckpt") for name in ("straight", "first", "resumed")}
    straight = example.main(["--epochs", "2", "--save", paths["straight"]] + common)
    example.main(["--epochs", "1", "--save", paths["first"]] + common)
    resumed = example.main(["--epochs", "2", "--resume", paths["first"],
                            "--save", paths["resumed"]] + common)
    assert len(resumed["history"]["loss"]) == 2
    assert resumed["history"] == straight["history"]
    expected, got = autograd.io.read(paths["straight"]), autograd.io.read(paths["resumed"])
    assert got["extras"]["epoch"] == expected["extras"]["epoch"] == 1
    assert set(got["model"]) == set(expected["model"])
    for name, value in expected["model"].items():
        np.testing.assert_array_equal(got["model"][name], value, err_msg=name)
    first_model = autograd.io.read(paths["first"])["model"]
    assert not np.array_equal(first_model["fc.W"], got["model"]["fc.W"])   # epoch 2 trained
    states = [{e["name"]: e["state"] for e in c["optimizer"]["parameters"]}
              for c in (expected, got)]
    assert got["optimizer"]["step_counter"] == expected["optimizer"]["step_counter"] == 6
    assert set(states[0]) == set(states[1]) and len(states[0]) == 8
    for name, state in states[0].items():
        np.testing.assert_array_equal(states[1][name]["momentum_buffer"],
                                      state["momentum_buffer"], err_msg=name)


def test_train_mlp_quick_run():
    accuracy = load_example("train_mlp").main(["--epochs", "2", "--limit-batches", "10"])
    assert accuracy > 0.3


def test_train_model_quick_run(tmp_path):
    path = tmp_path / "model.ckpt"
    accuracy = load_example("train_model").main(
        ["--epochs", "2", "--limit-batches", "10", "--save", str(path)])
    assert accuracy > 0.3 and path.exists()


def test_custom_operation_example_checks_and_trains():
    final_mse = load_example("custom_operation").main(steps=150)
    assert np.isfinite(final_mse) and final_mse < 0.2   # sin(3x) has variance ~0.4
