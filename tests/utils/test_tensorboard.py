"""TensorBoard logging (issue 21, item 3): what SummaryWriter writes is read back with
TensorBoard's own EventAccumulator and compared with the values logged, computed here with
NumPy (histogram statistics) where TensorBoard stores a summary of them."""
import os

import numpy as np
import pytest

import autograd
from autograd import Tensor
from autograd.utils import SummaryWriter

event_accumulator = pytest.importorskip(
    "tensorboard.backend.event_processing.event_accumulator")


def _read(logdir):
    events = event_accumulator.EventAccumulator(logdir, size_guidance={
        event_accumulator.SCALARS: 0, event_accumulator.HISTOGRAMS: 0,
        event_accumulator.TENSORS: 0})
    events.Reload()
    return events


def test_scalars_come_back_with_their_steps_and_walltimes(tmp_path):
    losses = [2.5, 1.25, np.float32(0.75), Tensor(data=0.5), np.array([0.125])]
    with SummaryWriter(str(tmp_path)) as writer:
        for step, loss in enumerate(losses):
            writer.add_scalar("train/loss", loss, global_step=step * 10, walltime=1000.0 + step)
        writer.add_scalar("lr", 0.1, 3)
    events = _read(str(tmp_path))
    scalars = events.Scalars("train/loss")
    assert [e.step for e in scalars] == [0, 10, 20, 30, 40]
    assert [e.wall_time for e in scalars] == [1000.0, 1001.0, 1002.0, 1003.0, 1004.0]
    expected = [float(np.float32(np.asarray(Tensor(data=v).to_numpy() if isinstance(v, Tensor)
                                            else v).reshape(()))) for v in losses]
    assert [e.value for e in scalars] == expected            # stored as float32
    assert [(e.step, e.value) for e in events.Scalars("lr")] == [(3, float(np.float32(0.1)))]


def test_nan_loss_is_logged_not_refused(tmp_path):
    with SummaryWriter(str(tmp_path)) as writer:
        writer.add_scalar("loss", float("nan"), 0)
    assert np.isnan(_read(str(tmp_path)).Scalars("loss")[0].value)


def test_add_scalars_writes_one_run_per_tag_under_the_main_tag(tmp_path):
    with SummaryWriter(str(tmp_path)) as writer:
        for step in range(3):
            writer.add_scalars("loss", {"train": 1.0 / (step + 1), "valid": 2.0 + step}, step)
    for tag, values in (("train", [1.0, 0.5, 1 / 3]), ("valid", [2.0, 3.0, 4.0])):
        run = os.path.join(str(tmp_path), f"loss_{tag}")
        scalars = _read(run).Scalars("loss")
        assert [e.step for e in scalars] == [0, 1, 2]
        np.testing.assert_allclose([e.value for e in scalars], values, rtol=1e-7)


@pytest.mark.parametrize("bins", ["auto", 7])
def test_histogram_statistics_and_buckets(tmp_path, bins):
    values = np.random.default_rng(0).standard_normal((40, 25)).astype(np.float32)
    with SummaryWriter(str(tmp_path)) as writer:
        writer.add_histogram("weights", Tensor(data=values), global_step=5, bins=bins)
    (event,) = _read(str(tmp_path)).Histograms("weights")
    h = event.histogram_value
    flat = values.astype(np.float64).ravel()
    assert event.step == 5
    assert (h.min, h.max, h.num) == (flat.min(), flat.max(), flat.size)
    np.testing.assert_allclose([h.sum, h.sum_squares], [flat.sum(), (flat ** 2).sum()],
                               rtol=1e-12)
    counts, edges = np.histogram(flat, bins=bins)
    assert list(h.bucket) == counts.tolist() and sum(h.bucket) == flat.size
    np.testing.assert_allclose(h.bucket_limit, edges[1:])
    # every value lies at or below its bucket's right edge, above the previous one
    index = np.searchsorted(np.asarray(h.bucket_limit), flat, side="left")
    np.testing.assert_array_equal(np.bincount(index, minlength=len(h.bucket)), h.bucket)


def test_text_comes_back(tmp_path):
    with SummaryWriter(str(tmp_path)) as writer:
        writer.add_text("notes", "lr **0.1**, batch 64 — ünïcode", global_step=2)
    events = _read(str(tmp_path))
    (event,) = events.Tensors("notes")
    assert event.step == 2
    assert event.tensor_proto.string_val[0].decode("utf-8") == "lr **0.1**, batch 64 — ünïcode"
    assert events.SummaryMetadata("notes").plugin_data.plugin_name == "text"


def test_flush_makes_values_readable_before_close(tmp_path):
    writer = SummaryWriter(str(tmp_path), flush_secs=3600)
    writer.add_scalar("a", 1.0, 0)
    writer.flush()
    assert [e.value for e in _read(str(tmp_path)).Scalars("a")] == [1.0]
    writer.close()
    writer.close()                                   # idempotent


def test_a_closed_writer_refuses_more(tmp_path):
    writer = SummaryWriter(str(tmp_path))
    writer.close()
    with pytest.raises(RuntimeError, match="SummaryWriter: cannot log 'a': the writer is closed"):
        writer.add_scalar("a", 1.0)


def test_bad_values_are_errors_naming_the_method(tmp_path):
    with SummaryWriter(str(tmp_path)) as writer:
        with pytest.raises(TypeError, match=r"add_scalar: 'loss' must be a real number or a "
                                            r"one-element array, got Tensor of shape \(3,\)"):
            writer.add_scalar("loss", Tensor(data=[1.0, 2.0, 3.0]))
        with pytest.raises(TypeError, match="add_scalar: tag must be a non-empty str"):
            writer.add_scalar("", 1.0)
        with pytest.raises(TypeError, match="global_step of 'loss' must be an integer"):
            writer.add_scalar("loss", 1.0, global_step=1.5)
        with pytest.raises(ValueError, match="add_histogram: 'w' holds NaN or inf"):
            writer.add_histogram("w", np.array([1.0, np.inf]))
        with pytest.raises(ValueError, match="add_histogram: 'w' has no values"):
            writer.add_histogram("w", np.zeros(0))
        with pytest.raises(TypeError, match="add_text: text_string must be a str"):
            writer.add_text("t", 3)
        with pytest.raises(TypeError, match="add_scalars: tag_scalar_dict must be a non-empty"):
            writer.add_scalars("loss", {})


def test_default_logdir_is_under_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with SummaryWriter(comment="-trial") as writer:
        logdir = writer.get_logdir()
    assert logdir.startswith("runs" + os.sep) and logdir.endswith("-trial")
    assert any(name.startswith("events.out.tfevents") for name in os.listdir(logdir))


def test_exported_from_autograd():
    assert autograd.utils.SummaryWriter is SummaryWriter


def test_without_tensorboard_the_error_names_the_extra(tmp_path, monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "tensorboard.summary.writer.event_file_writer", None)
    with pytest.raises(ImportError, match=r"SummaryWriter: .*pip install -e \"\.\[interop\]\""):
        SummaryWriter(str(tmp_path))
