"""Every example runs in a fast mode, so none of them can rot."""
import importlib.util
import pathlib
import sys

import numpy as np
import pytest

import autograd

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def load_example(name):
    if str(EXAMPLES) not in sys.path:       # as when run as a script: its folder comes first
        sys.path.insert(0, str(EXAMPLES))
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


def test_train_cnn_logs_every_step_for_tensorboard(tmp_path):
    accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    result = load_example("train_cnn").main(
        ["--epochs", "1", "--limit-batches", "4", "--batch-size", "16", "--lr", "0.03",
         "--quiet", "--plot", "", "--logdir", str(tmp_path)])
    events = accumulator.EventAccumulator(str(tmp_path))
    events.Reload()
    scalars = {tag: events.Scalars(tag) for tag in events.Tags()["scalars"]}
    for tag in ("train/loss", "train/accuracy", "train/learning_rate", "train/gradient_norm"):
        assert [e.step for e in scalars[tag]] == [0, 1, 2, 3], tag
    losses = [e.value for e in scalars["train/loss"]]
    # the epoch's loss is the mean over its (equal-sized) batches: the same numbers, summed
    np.testing.assert_allclose(np.mean(losses), result["history"]["loss"][0], rtol=1e-5)
    assert [e.value for e in scalars["train/learning_rate"]] == [np.float32(0.03)] * 4
    assert all(0.0 <= e.value <= 1.0 for e in scalars["train/accuracy"])
    assert all(np.isfinite(e.value) and e.value > 0 for e in scalars["train/gradient_norm"])
    assert scalars["epoch/test_accuracy"][0].value == np.float32(result["accuracy"])
    assert "weights/fc.W" in events.Tags()["histograms"]


def test_train_mlp_logs_for_tensorboard(tmp_path):
    accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    accuracy = load_example("train_mlp").main(["--epochs", "2", "--limit-batches", "3",
                                               "--logdir", str(tmp_path)])
    events = accumulator.EventAccumulator(str(tmp_path))
    events.Reload()
    assert sorted(events.Tags()["scalars"]) == ["epoch/test_accuracy", "train/accuracy",
                                                "train/gradient_norm", "train/learning_rate",
                                                "train/loss"]
    steps = [e.step for e in events.Scalars("train/loss")]
    batches = steps[3]                      # epoch 2 starts at len(loader)
    assert steps == [0, 1, 2, batches, batches + 1, batches + 2] and batches >= 3
    assert [e.value for e in events.Scalars("epoch/test_accuracy")][-1] == np.float32(accuracy)


def test_train_cnn_resume_gives_the_uninterrupted_parameters_bit_for_bit(tmp_path):
    example = load_example("train_cnn")
    common = ["--limit-batches", "3", "--quiet", "--plot", ""]
    example.main(["--epochs", "3", "--save", str(tmp_path / "straight.ckpt")] + common)
    example.main(["--epochs", "1", "--save", str(tmp_path / "first.ckpt")] + common)
    example.main(["--epochs", "3", "--resume", str(tmp_path / "first.ckpt"),
                  "--save", str(tmp_path / "resumed.ckpt")] + common)
    straight = autograd.io.read(tmp_path / "straight.ckpt")
    resumed = autograd.io.read(tmp_path / "resumed.ckpt")
    assert list(straight["model"]) == list(resumed["model"])
    for name, value in straight["model"].items():
        assert value.tobytes() == resumed["model"][name].tobytes(), name
    assert straight["extras"]["loss"] == resumed["extras"]["loss"]
    assert straight["extras"]["loader"] == resumed["extras"]["loader"]


def test_train_cnn_graph_mode_gives_the_eager_parameters_bit_for_bit(tmp_path):
    """--graph records the first two steps of each batch size, replays the rest (BatchNorm,
    Dropout, momentum, the last partial batch) and ends where the eager run ends."""
    example = load_example("train_cnn")
    common = ["--epochs", "2", "--limit-batches", "6", "--quiet", "--plot", ""]
    example.main(common + ["--save", str(tmp_path / "eager.ckpt")])
    example.main(common + ["--graph", "--save", str(tmp_path / "graph.ckpt")])
    eager = autograd.io.read(tmp_path / "eager.ckpt")
    graph = autograd.io.read(tmp_path / "graph.ckpt")
    for name, value in eager["model"].items():
        assert value.tobytes() == graph["model"][name].tobytes(), name
    assert eager["extras"]["loss"] == graph["extras"]["loss"]


def test_train_mlp_quick_run():
    accuracy = load_example("train_mlp").main(["--epochs", "2", "--limit-batches", "10"])
    assert accuracy > 0.3


def test_train_model_quick_run(tmp_path):
    path = tmp_path / "model.ckpt"
    accuracy = load_example("train_model").main(
        ["--epochs", "2", "--limit-batches", "10", "--save", str(path)])
    assert accuracy > 0.3 and path.exists()


def test_custom_operation_example_checks_and_trains():
    final_mse = load_example("custom_operation").main(["--steps", "150"])
    assert np.isfinite(final_mse) and final_mse < 0.2   # sin(3x) has variance ~0.4


@pytest.mark.parametrize("name", ["train_cnn", "train_mlp", "train_model", "custom_operation"])
def test_every_example_help_shows_defaults_and_exits(name, capsys):
    example = load_example(name)
    entry = example.parse_arguments if hasattr(example, "parse_arguments") else example.main
    with pytest.raises(SystemExit) as done:
        entry(["--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    assert "usage:" in text and "(default:" in text


def test_train_cnn_without_matplotlib_prints_the_curves(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)       # import matplotlib fails
    example = load_example("train_cnn")
    example.plot_curves({"loss": [0.9, 0.4], "accuracy": [0.5, 0.75]}, str(tmp_path / "c.png"))
    text = capsys.readouterr().out
    assert "pip install \"tapegrad[examples]\"" in text
    assert "    2      0.4000    75.00%  " + "#" * 30 in text
    assert not (tmp_path / "c.png").exists()


def test_train_cnn_epoch_line_shows_the_epochs_own_time(capsys):
    load_example("train_cnn").main(["--epochs", "2", "--limit-batches", "2", "--quiet",
                                    "--plot", ""])
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("epoch")]
    assert len(lines) == 2
    times = [line.split("(")[1].split(" s in all")[0].split(" s, ") for line in lines]
    (first, first_total), (second, second_total) = [map(float, t) for t in times]
    # epoch 2's own time, not the running total (printed to 0.1 s, so equal when both round
    # to the same tenth on a fast machine)
    assert first <= first_total and second <= second_total and second_total >= first_total


def test_export_onnx_example_agrees_with_onnxruntime(tmp_path):
    pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")
    result = load_example("export_onnx").main(["--epochs", "1", "--limit-batches", "30",
                                               "--output", str(tmp_path / "digits.onnx")])
    assert result["agreement"] == 1.0
    assert result["max_difference"] < 1e-4 and result["imported_difference"] < 1e-5
    assert result["accuracy"] > 0.3            # 30 steps already learn (chance is 0.1)


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


def test_train_gpt_graph_mode_gives_the_eager_run_bit_for_bit(tmp_path):
    """--graph replays its captured training step and loss estimate (AdamW's two parameter
    groups, the schedule, clipping, eval mode) and ends with the eager run's parameters,
    losses and sample, bit for bit."""
    example = load_example("train_gpt")
    common = ["--fast", "--quiet", "--plot", ""]                     # 60 iterations
    eager = example.main(common + ["--save", str(tmp_path / "eager.ckpt")])
    graph = example.main(common + ["--graph", "--save", str(tmp_path / "graph.ckpt")])
    assert graph["replays"] == (58, 38)      # all but the two recorded calls of each
    eager_state = autograd.io.read(tmp_path / "eager.ckpt")
    graph_state = autograd.io.read(tmp_path / "graph.ckpt")
    for name, value in eager_state["model"].items():
        assert value.tobytes() == graph_state["model"][name].tobytes(), name
    assert eager["history"] == graph["history"] and eager["sample"] == graph["sample"]


def test_train_lstm_lm_fast_run_learns():
    result = load_example("train_lstm_lm").main(["--fast", "--quiet"])
    assert result["history"]["val"][-1] < result["history"]["val"][0] - 0.5
    assert len(result["sample"]) == 40


def test_attention_doc_code_runs():
    """docs/attention.md's examples are doctests (the GPT trains 20 steps): all of them run and
    pass, and the page keeps both the model and the attention-by-hand example."""
    import doctest
    path = EXAMPLES.parent / "docs" / "attention.md"
    result = doctest.testfile(str(path), module_relative=False, verbose=False)
    assert result.failed == 0 and result.attempted >= 15
    text = path.read_text()
    assert "class GPT(autograd.Layer)" in text and "scaled_dot_product_attention(q, k, v" in text
