"""SummaryWriter paths the mutation run found untested (issue 22): the options handed to every
event file (PyTorch's defaults), one event file per add_scalars run, the default logdir's
time stamp, walltimes of every kind of summary, whole-number steps given as floats or
one-element arrays, values off the host (read through to_numpy / CuPy's get), and the
messages word for word. What was written is read back with TensorBoard's EventAccumulator."""
import datetime
import importlib
import os
import re
import socket
import sys
import time

import numpy as np
import pytest

from autograd.utils import SummaryWriter

event_accumulator = pytest.importorskip(
    "tensorboard.backend.event_processing.event_accumulator")
tb_module = importlib.import_module("autograd.utils.tensorboard")


def _read(logdir):
    events = event_accumulator.EventAccumulator(str(logdir), size_guidance={
        event_accumulator.SCALARS: 0, event_accumulator.HISTOGRAMS: 0,
        event_accumulator.TENSORS: 0})
    events.Reload()
    return events


def _event_files(folder):
    return sorted(n for n in os.listdir(folder) if n.startswith("events.out.tfevents."))


def _message(error, call, *args, **kwargs):
    with pytest.raises(error) as info:
        call(*args, **kwargs)
    return str(info.value)


@pytest.fixture
def event_writers(monkeypatch):
    """Records the (folder, options) of every EventFileWriter SummaryWriter creates."""
    calls, real = [], tb_module._tensorboard

    def recording():
        parts = dict(real())
        make = parts["EventFileWriter"]
        parts["EventFileWriter"] = lambda folder, **options: (
            calls.append((folder, options)) or make(folder, **options))
        return parts

    monkeypatch.setattr(tb_module, "_tensorboard", recording)
    return calls


# ------------------------------------------------------------------ construction
def test_the_default_options_are_pytorchs(tmp_path, event_writers):
    """Kills mutated defaults (max_queue 11, flush_secs 121, a suffix "XXXX") and options
    left out of the main event file."""
    with SummaryWriter(str(tmp_path)):
        pass
    assert event_writers == [(str(tmp_path), dict(max_queue_size=10, flush_secs=120,
                                                  filename_suffix=""))]
    (name,) = _event_files(tmp_path)
    assert re.fullmatch(r"events\.out\.tfevents\.\d+\." + re.escape(socket.gethostname())
                        + rf"\.{os.getpid()}\.\d+", name)         # no suffix


def test_every_event_file_gets_the_options_and_each_run_one_file(tmp_path, event_writers):
    """Kills options dropped (each of the three, or all) for the main file or the add_scalars
    runs, and a writer created anew for every add_scalars call (`writer = None`, `get(None)`)."""
    options = dict(max_queue_size=3, flush_secs=7, filename_suffix=".v1")
    with SummaryWriter(str(tmp_path), max_queue=3, flush_secs=7, filename_suffix=".v1") as writer:
        for step in range(3):
            writer.add_scalars("loss", {"train": float(step), "valid": 2.0 * step}, step)
    folders = [str(tmp_path), os.path.join(str(tmp_path), "loss_train"),
               os.path.join(str(tmp_path), "loss_valid")]
    assert event_writers == [(folder, options) for folder in folders]
    for folder in folders:
        (name,) = _event_files(folder)
        assert name.endswith(".v1")
    assert [e.value for e in _read(folders[2]).Scalars("loss")] == [0.0, 2.0, 4.0]


def test_a_main_tag_with_slashes_gives_a_flat_run_folder(tmp_path):
    """Kills the mutated `replace("/", "_")` (either string): "train/loss" and "a" log to the
    run `train_loss_a` beside the main event file, not to a nested folder."""
    with SummaryWriter(str(tmp_path)) as writer:
        writer.add_scalars("train/loss", {"a": 0.5}, 1)
    assert sorted(os.listdir(tmp_path))[-1] == "train_loss_a" and \
        os.path.isdir(tmp_path / "train_loss_a")
    assert [(e.step, e.value) for e in _read(tmp_path / "train_loss_a").Scalars("train/loss")] \
        == [(1, 0.5)]


def test_the_default_logdir_is_runs_date_time_host(tmp_path, monkeypatch):
    """Kills a mutated time stamp (None, "XX...XX", lower- or upper-cased directives) and a
    default comment other than ""."""
    monkeypatch.chdir(tmp_path)
    with SummaryWriter() as writer:
        logdir = writer.get_logdir()
    folder, name = os.path.split(logdir)
    assert folder == "runs"
    match = re.fullmatch(r"(.+)_" + re.escape(socket.gethostname()), name)
    stamp = match.group(1)
    assert re.fullmatch(r"[^\W\d_]+\d\d_\d\d-\d\d-\d\d", stamp)
    assert datetime.datetime.strptime(stamp, "%b%d_%H-%M-%S").strftime("%b%d_%H-%M-%S") == stamp


def test_an_error_inside_the_with_block_propagates_and_closes(tmp_path):
    """Kills `__exit__` returning True (the error would be swallowed)."""
    with pytest.raises(KeyError, match="inside"):
        with SummaryWriter(str(tmp_path)) as writer:
            raise KeyError("inside")
    with pytest.raises(RuntimeError, match="the writer is closed"):
        writer.add_scalar("a", 1.0)


def test_without_tensorboard_the_message_word_for_word(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "tensorboard.summary.writer.event_file_writer", None)
    assert _message(ImportError, SummaryWriter, str(tmp_path)) == (
        "SummaryWriter: the tensorboard package is not installed; install the interop extra "
        "(pip install -e \".[interop]\") or `pip install tensorboard`")


# ------------------------------------------------------------------ what is written
def test_every_summary_keeps_its_walltime_and_defaults_to_now(tmp_path):
    """Kills the walltime dropped in add_histogram, add_scalars and add_text, and
    `time.time() if ... and False` (no walltime would be stored as 0)."""
    before = time.time()
    with SummaryWriter(str(tmp_path)) as writer:
        writer.add_histogram("h", np.arange(5.0), 1, walltime=1001.5)
        writer.add_scalars("s", {"a": 1.0}, 1, walltime=1002.5)
        writer.add_text("t", "note", 1, walltime=1003.5)
        writer.add_scalar("now", 1.0, 1)
    after = time.time()
    events = _read(tmp_path)
    assert [e.wall_time for e in events.Histograms("h")] == [1001.5]
    assert [e.wall_time for e in _read(tmp_path / "s_a").Scalars("s")] == [1002.5]
    assert [e.wall_time for e in events.Tensors("t")] == [1003.5]
    (now,) = events.Scalars("now")
    assert before <= now.wall_time <= after


def test_the_default_bins_are_numpys_auto_rule(tmp_path):
    """Kills a mutated default `bins` ("XXautoXX" / "AUTO" are not NumPy rules)."""
    values = np.random.default_rng(1).standard_normal(300)
    with SummaryWriter(str(tmp_path)) as writer:
        writer.add_histogram("w", values, 0)
    (event,) = _read(tmp_path).Histograms("w")
    counts, edges = np.histogram(values, bins="auto")
    assert list(event.histogram_value.bucket) == counts.tolist()
    np.testing.assert_allclose(event.histogram_value.bucket_limit, edges[1:])


def test_text_is_a_string_tensor(tmp_path):
    """Kills the TensorProto's dtype left out or None (it would read back as DT_INVALID)."""
    from tensorboard.compat.proto import types_pb2
    with SummaryWriter(str(tmp_path)) as writer:
        writer.add_text("t", "hello", 0)
    (event,) = _read(tmp_path).Tensors("t")
    assert event.tensor_proto.dtype == types_pb2.DT_STRING
    assert list(event.tensor_proto.string_val) == [b"hello"]


def test_whole_number_steps_may_be_floats_or_one_element_arrays(tmp_path):
    """Kills `kind != "f"` and a mutated "f" (float steps refused), and `reshape(None)` for
    `reshape(())` (a one-element 1-d array cannot become a Python number); a bool step stays
    refused."""
    steps = [3.0, np.float32(4.0), np.array([5]), np.array([6.0]), np.int64(7)]
    with SummaryWriter(str(tmp_path)) as writer:
        for step in steps:
            writer.add_scalar("a", 1.0, global_step=step)
        assert _message(TypeError, writer.add_scalar, "a", 1.0, global_step=True) == \
            "SummaryWriter: global_step of 'a' must be an integer, got True"
    assert [e.step for e in _read(tmp_path).Scalars("a")] == [3, 4, 5, 6, 7]


class _OffHostTensor:
    """Stands for a GPU Tensor: to_numpy() copies to the host, np.asarray refuses."""

    def __init__(self, array):
        self.array = np.asarray(array)

    def to_numpy(self):
        return self.array.copy()

    def __array__(self, dtype=None, copy=None):
        raise TypeError("Tensor on gpu:0: call to_numpy() to copy it to the host")


class _CupyLike:
    """Stands for a CuPy array: get() copies to the host, np.asarray refuses (as CuPy does)."""

    def __init__(self, array):
        self.array = np.asarray(array)

    def get(self):
        return self.array.copy()

    def __array__(self, dtype=None, copy=None):
        raise TypeError("Implicit conversion to a NumPy array is not allowed")


def test_values_off_the_host_are_copied_back_first(tmp_path):
    """Kills `_host` mutants: the to_numpy and get tests on None or mutated names, `get`
    taken only for NumPy arrays, and `value = None` (a CPU Tensor never needed them)."""
    values = np.arange(6.0)
    with SummaryWriter(str(tmp_path)) as writer:
        writer.add_scalar("gpu", _OffHostTensor([2.5]), global_step=_OffHostTensor(4))
        writer.add_scalar("cupy", _CupyLike(1.5), global_step=_CupyLike([3]))
        writer.add_histogram("h", _CupyLike(values), 0)
        writer.add_histogram("g", _OffHostTensor(values), 0)
    events = _read(tmp_path)
    assert [(e.step, e.value) for e in events.Scalars("gpu")] == [(4, 2.5)]
    assert [(e.step, e.value) for e in events.Scalars("cupy")] == [(3, 1.5)]
    for tag in ("h", "g"):
        (event,) = events.Histograms(tag)
        assert (event.histogram_value.num, event.histogram_value.sum) == (6.0, 15.0)


# ------------------------------------------------------------------ messages
def test_tag_errors_name_the_method_word_for_word(tmp_path):
    """Kills the method name passed to _check_tag as None or mutated, in add_histogram,
    add_scalars (main tag and each tag) and add_text."""
    with SummaryWriter(str(tmp_path)) as writer:
        assert _message(TypeError, writer.add_histogram, "", [1.0]) == \
            "add_histogram: tag must be a non-empty str, got ''"
        assert _message(TypeError, writer.add_scalars, 3, {"a": 1.0}) == \
            "add_scalars: tag must be a non-empty str, got 3"
        assert _message(TypeError, writer.add_scalars, "loss", {"": 1.0}) == \
            "add_scalars: tag must be a non-empty str, got ''"
        assert _message(TypeError, writer.add_text, None, "x") == \
            "add_text: tag must be a non-empty str, got None"


def test_value_errors_word_for_word(tmp_path):
    """Kills the mutated messages of add_scalars (its dict and its values: the method and
    "main_tag/tag" named), add_histogram's NaN check and add_text's type check."""
    with SummaryWriter(str(tmp_path)) as writer:
        assert _message(TypeError, writer.add_scalars, "loss", [("a", 1.0)]) == (
            "add_scalars: tag_scalar_dict must be a non-empty dict of tag to number, got list")
        assert _message(TypeError, writer.add_scalars, "loss", {"a": np.zeros(2)}) == (
            "add_scalars: 'loss/a' must be a real number or a one-element array, got ndarray "
            "of shape (2,) and dtype float64")
        assert _message(ValueError, writer.add_histogram, "w", [1.0, np.nan]) == (
            "add_histogram: 'w' holds NaN or inf; TensorBoard histograms take finite values")
        assert _message(TypeError, writer.add_text, "t", b"bytes") == \
            "add_text: text_string must be a str, got bytes"
