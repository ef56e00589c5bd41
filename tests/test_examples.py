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
    checkpoint = tmp_path / "run.ckpt"
    example = load_example("train_cnn")
    common = ["--limit-batches", "3", "--quiet", "--plot", ""]
    example.main(["--epochs", "1", "--save", str(checkpoint)] + common)
    resumed = example.main(["--epochs", "2", "--resume", str(checkpoint)] + common)
    assert len(resumed["history"]["loss"]) == 2     # epoch 1 from the file, epoch 2 trained


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


def test_train_gpt_fast_run_learns_samples_and_writes_its_files(tmp_path):
    plot, checkpoint = tmp_path / "gpt.png", tmp_path / "gpt.ckpt"
    result = load_example("train_gpt").main(
        ["--fast", "--quiet", "--plot", str(plot), "--save", str(checkpoint), "--top-k", "5"])
    history = result["history"]
    assert history["val"][-1] < history["val"][0] - 0.5       # from log(65) = 4.17 down
    assert np.log(65) - 0.1 < history["val"][0] < np.log(65) + 0.1
    assert len(result["sample"]) == 60 and set(result["sample"]) <= set(
        autograd.data.load_shakespeare_text())
    assert plot.stat().st_size > 1000
    extras = autograd.io.load(checkpoint)
    assert extras["iteration"] == 60 and abs(extras["val_loss"] - result["val_loss"]) < 1e-9


def test_train_lstm_lm_fast_run_learns():
    result = load_example("train_lstm_lm").main(["--fast", "--quiet"])
    assert result["history"]["val"][-1] < result["history"]["val"][0] - 0.5
    assert len(result["sample"]) == 40


def test_attention_doc_code_runs():
    """docs/attention.md's code blocks, in order, with the training loop cut to 2 steps."""
    import re
    text = (EXAMPLES.parent / "docs" / "attention.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    namespace = {}
    exec(blocks[0].replace("range(100)", "range(2)"), namespace)
    assert np.isfinite(namespace["loss"].item())
    exec(blocks[1], namespace)
    assert namespace["y"].shape == (2, 4, 10, 16)
