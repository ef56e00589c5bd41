"""TensorBoard logging: ``SummaryWriter`` writes scalars, histograms and text to event files
that TensorBoard reads (``tensorboard --logdir DIR``).

The records are TensorBoard's own: ``Event`` protocol buffers from ``tensorboard.compat.proto``
written by tensorboard's ``EventFileWriter`` (``pip install -e ".[interop]"``); TensorFlow is
not needed. The method names and arguments are PyTorch's ``torch.utils.tensorboard`` ones, and
values may be Python numbers, NumPy arrays or autograd Tensors (on any device).

>>> import tempfile
>>> from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
>>> logdir = tempfile.mkdtemp()
>>> with SummaryWriter(logdir) as writer:
...     for step, loss in enumerate([0.9, 0.5, 0.25]):
...         writer.add_scalar("train/loss", loss, step)
>>> events = EventAccumulator(logdir); _ = events.Reload()
>>> [(e.step, round(e.value, 4)) for e in events.Scalars("train/loss")]
[(0, 0.9), (1, 0.5), (2, 0.25)]
"""
import numbers
import os
import socket
import time
from datetime import datetime

import numpy as np

__all__ = ["SummaryWriter"]


def _tensorboard():
    try:
        from tensorboard.compat.proto import event_pb2, summary_pb2, tensor_pb2, \
            tensor_shape_pb2, types_pb2
        from tensorboard.plugins.text import metadata as text_metadata
        from tensorboard.summary.writer.event_file_writer import EventFileWriter
    except ImportError as error:
        raise ImportError("SummaryWriter: the tensorboard package is not installed; install the "
                          "interop extra (pip install -e \".[interop]\") or `pip install "
                          "tensorboard`") from error
    return dict(event_pb2=event_pb2, summary_pb2=summary_pb2, tensor_pb2=tensor_pb2,
                tensor_shape_pb2=tensor_shape_pb2, types_pb2=types_pb2,
                text_metadata=text_metadata, EventFileWriter=EventFileWriter)


def _host(value):
    """A NumPy array of ``value`` (a number, a NumPy/CuPy array or an autograd Tensor)."""
    if hasattr(value, "to_numpy"):
        value = value.to_numpy()
    elif hasattr(value, "get") and not isinstance(value, np.ndarray):   # CuPy
        value = value.get()
    return np.asarray(value)


class SummaryWriter:
    """``SummaryWriter(logdir=None, comment="", max_queue=10, flush_secs=120,
    filename_suffix="")``: an event file in ``logdir`` (created if needed; by default
    ``runs/<date>_<host><comment>``, as PyTorch's), written in the background and flushed
    every ``flush_secs`` seconds, at ``flush()`` and at ``close()``. A context manager.
    """

    def __init__(self, logdir=None, comment="", max_queue=10, flush_secs=120,
                 filename_suffix=""):
        self._tb = _tensorboard()
        if logdir is None:
            stamp = datetime.now().strftime("%b%d_%H-%M-%S")
            logdir = os.path.join("runs", f"{stamp}_{socket.gethostname()}{comment}")
        self.logdir = os.fspath(logdir)
        self._options = dict(max_queue_size=max_queue, flush_secs=flush_secs,
                             filename_suffix=filename_suffix)
        self._writer = self._tb["EventFileWriter"](self.logdir, **self._options)
        self._scalar_writers = {}        # add_scalars: one event file per (main_tag, tag)
        self._closed = False

    def get_logdir(self):
        """The folder the event files are written to."""
        return self.logdir

    # ------------------------------------------------------------------ summaries
    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None):
        """Log one number under ``tag`` at ``global_step`` (a Python number, a one-element
        array or Tensor; NaN and inf are logged as they are). TensorBoard stores it as
        float32."""
        self._check_tag("add_scalar", tag)
        value = self._scalar("add_scalar", tag, scalar_value)
        self._write(self._writer, tag, dict(simple_value=value), global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Log several numbers on one chart: ``{tag: value}`` under ``main_tag``. As in
        PyTorch, each tag goes to its own run, the folder ``logdir/<main_tag>_<tag>``, so
        TensorBoard draws them as lines of one chart named ``main_tag``."""
        self._check_tag("add_scalars", main_tag)
        if not isinstance(tag_scalar_dict, dict) or not tag_scalar_dict:
            raise TypeError("add_scalars: tag_scalar_dict must be a non-empty dict of tag to "
                            f"number, got {type(tag_scalar_dict).__name__}")
        for tag in tag_scalar_dict:
            self._check_tag("add_scalars", tag)
        values = {tag: self._scalar("add_scalars", f"{main_tag}/{tag}", value)
                  for tag, value in tag_scalar_dict.items()}
        for tag, value in values.items():
            folder = os.path.join(self.logdir, f"{main_tag}_{tag}".replace("/", "_"))
            writer = self._scalar_writers.get(folder)
            if writer is None:
                writer = self._tb["EventFileWriter"](folder, **self._options)
                self._scalar_writers[folder] = writer
            self._write(writer, main_tag, dict(simple_value=value), global_step, walltime)

    def add_histogram(self, tag, values, global_step=None, bins="auto", walltime=None):
        """Log the distribution of ``values`` (any shape; flattened): a histogram with
        ``bins`` as NumPy's ``np.histogram`` takes it (a count or a rule such as "auto",
        "fd"), plus min, max, count, sum and sum of squares. NaN or inf is an error."""
        self._check_tag("add_histogram", tag)
        array = _host(values).astype(np.float64, copy=False).ravel()
        if array.size == 0:
            raise ValueError(f"add_histogram: {tag!r} has no values")
        if not np.isfinite(array).all():
            raise ValueError(f"add_histogram: {tag!r} holds NaN or inf; TensorBoard histograms "
                             "take finite values")
        counts, edges = np.histogram(array, bins=bins)
        histogram = self._tb["summary_pb2"].HistogramProto(
            min=float(array.min()), max=float(array.max()), num=float(array.size),
            sum=float(array.sum()), sum_squares=float(np.dot(array, array)),
            bucket_limit=edges[1:].tolist(), bucket=counts.astype(np.float64).tolist())
        self._write(self._writer, tag, dict(histo=histogram), global_step, walltime)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        """Log a string (TensorBoard's Text tab renders it as Markdown)."""
        self._check_tag("add_text", tag)
        if not isinstance(text_string, str):
            raise TypeError(f"add_text: text_string must be a str, got "
                            f"{type(text_string).__name__}")
        tb = self._tb
        # a 0-d string: the Text tab renders it as a paragraph (a 1-d one, as a table)
        tensor = tb["tensor_pb2"].TensorProto(
            dtype=tb["types_pb2"].DT_STRING, string_val=[text_string.encode("utf-8")],
            tensor_shape=tb["tensor_shape_pb2"].TensorShapeProto())
        metadata = tb["text_metadata"].create_summary_metadata(display_name=None,
                                                               description=None)
        self._write(self._writer, tag, dict(tensor=tensor, metadata=metadata), global_step,
                    walltime)

    # ------------------------------------------------------------------ lifetime
    def flush(self):
        """Write everything pending to disk now."""
        for writer in self._all_writers():
            writer.flush()

    def close(self):
        """Flush and close the event files; the writer takes nothing more. Idempotent."""
        if self._closed:
            return
        for writer in self._all_writers():
            writer.close()
        self._closed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    # ------------------------------------------------------------------ helpers
    def _all_writers(self):
        return [self._writer] + list(self._scalar_writers.values())

    def _write(self, writer, tag, value_fields, global_step, walltime):
        if self._closed:
            raise RuntimeError(f"SummaryWriter: cannot log {tag!r}: the writer is closed")
        step = self._step(tag, global_step)
        tb = self._tb
        summary = tb["summary_pb2"].Summary(value=[tb["summary_pb2"].Summary.Value(
            tag=tag, **value_fields)])
        event = tb["event_pb2"].Event(summary=summary,
                                      wall_time=time.time() if walltime is None else walltime)
        if step is not None:
            event.step = step
        writer.add_event(event)

    @staticmethod
    def _step(tag, global_step):
        if global_step is None:
            return None
        step = _host(global_step)
        whole = step.size == 1 and (step.dtype.kind in "iu" or (
            step.dtype.kind == "f" and float(step.reshape(())).is_integer()))
        if not whole:
            raise TypeError(f"SummaryWriter: global_step of {tag!r} must be an integer, got "
                            f"{global_step!r}")
        return int(step.reshape(()))

    @staticmethod
    def _check_tag(method, tag):
        if not isinstance(tag, str) or not tag:
            raise TypeError(f"{method}: tag must be a non-empty str, got {tag!r}")

    @staticmethod
    def _scalar(method, tag, scalar_value):
        if isinstance(scalar_value, numbers.Real):
            return float(scalar_value)
        array = _host(scalar_value)
        if array.size != 1 or array.dtype.kind not in "biuf":
            raise TypeError(f"{method}: {tag!r} must be a real number or a one-element array, "
                            f"got {type(scalar_value).__name__} of shape {array.shape} and "
                            f"dtype {array.dtype}")
        return float(array.reshape(()))
