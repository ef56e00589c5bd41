"""Graph mode: capture a whole training step once, replay it without the tape.

``step = autograd.capture(train_step)`` (or SINGA's ``model.compile([x], is_train=True,
use_graph=True)``) runs the first call eagerly while recording every Operation's forward and
backward, the gradient sums and the optimizer's updates; later calls copy the new inputs into
the captured buffers and run that record as one compiled Python function over raw arrays. See
docs/graph_mode.md for when it pays, its guards and what it refuses.
"""
from ..recording import replayable
from .recorder import CaptureError
from .step import CapturedStep, capture

__all__ = ["capture", "CapturedStep", "CaptureError", "replayable"]
