"""SINGA's Model API: a Layer that knows how to train on one batch.

A SINGA user subclasses ``Model``, writes ``forward`` and ``train_one_batch`` (forward, loss,
``self.optimizer(loss)``), then drives it with ``compile`` and calls::

    model.set_optimizer(opt.SGD(lr=0.1))
    model.compile([x], is_train=True)          # one forward pass builds lazy parameters
    out, loss = model(x, y)                    # training mode: train_one_batch(x, y)
    model.eval(); out = model(x)               # eval mode: forward(x)
    model.save_states("model.ckpt", aux_states={"epoch": 3})

As in SINGA, ``Model.train()`` and ``Model.eval()`` also set ``autograd.training`` (which turns
recording on and off for every graph); plain Layers only switch their own behaviour.
"""
import functools

from . import io
from .recording import config, no_grad
from .graph_mode import capture
from .layers.base import Layer

__all__ = ["Model"]


class Model(Layer):
    """A Layer with SINGA's training entry points (see the module docstring)."""

    graph_step = None       # a CapturedStep after compile(use_graph=True)
    sequential = False

    def __init__(self):
        super().__init__()
        self.optimizer = None
        self.compiled = False

    def __init_subclass__(cls, **kwargs):
        # As SINGA's LayerMeta does: ``initialize`` runs before the first ``forward``, also when
        # forward is called directly (compile and train_one_batch call self.forward).
        super().__init_subclass__(**kwargs)
        forward = cls.__dict__.get("forward")
        if forward is not None:
            cls.forward = _initialize_first(forward)

    def set_optimizer(self, optimizer):
        """The optimizer ``train_one_batch`` calls as ``self.optimizer(loss)``."""
        self.optimizer = optimizer

    def compile(self, inputs, is_train=True, use_graph=False, sequential=False):
        """Run ``forward`` once on example ``inputs`` (a list of Tensors) without recording,
        so that lazily sized layers create their parameters, then enter train or eval mode.

        ``use_graph=True`` is SINGA's graph mode: the first call of the model in each mode
        (``train_one_batch`` in training, ``forward`` in eval) with inputs of given shapes runs
        eagerly and is captured; later calls replay it without the tape (see
        :func:`autograd.capture` and docs/graph_mode.md). ``sequential`` is accepted: a replay
        always runs the operations in the order they were captured."""
        self.graph(use_graph, sequential)
        was_training = self.training
        self.train(False)
        try:
            with no_grad():
                self.forward(*inputs)
        finally:
            self.train(was_training)
        self.compiled = True
        self.train(is_train)

    def graph(self, mode=True, sequential=False):
        """SINGA's switch for graph mode: on, later calls are captured and replayed (see
        :meth:`compile`); off, they run eagerly. ``sequential`` is accepted (replays always
        run in the captured order)."""
        self.sequential = bool(sequential)
        self.graph_step = capture(self._run_one_call, on_refusal=self._graph_refusal) \
            if mode else None

    _graph_refusal = "raise"     # what a step graph mode cannot replay does (see capture())

    def train_one_batch(self, *args, **kwargs):
        """Forward, loss and ``self.optimizer(loss)`` for one batch: override it."""
        raise NotImplementedError(
            f"{type(self).__name__} must define train_one_batch(x, y) to be called in "
            "training mode (or call model.eval() to run forward)")

    def __call__(self, *args, **kwargs):
        if self.graph_step is not None:
            return self.graph_step(*args, **kwargs)
        return self._run_one_call(*args, **kwargs)

    def _run_one_call(self, *args, **kwargs):
        if self.training:
            return self.train_one_batch(*args, **kwargs)
        return self.forward(*args, **kwargs)

    def train(self, mode=True):
        """Training mode for this model and its layers; also sets ``autograd.training``."""
        super().train(mode)
        config.training = bool(mode)
        return self

    def eval(self):
        """Evaluation mode for this model and its layers; also clears ``autograd.training``."""
        return self.train(False)

    def save_states(self, fpath, aux_states=None):
        """Write parameters, buffers, the optimizer's state (if one is set) and ``aux_states``
        (a dict of arrays or JSON values) to ``fpath`` atomically."""
        io.save(fpath, model=self, optimizer=self.optimizer, **(aux_states or {}))

    def load_states(self, fpath):
        """Load what ``save_states`` wrote into this model (and its optimizer, if one is set
        and the file has optimizer state); returns the aux_states dict."""
        return io.load(fpath, model=self, optimizer=self.optimizer)


def _initialize_first(forward):
    @functools.wraps(forward)
    def forward_after_initialize(self, *args, **kwargs):
        if not self._initialized:
            self._initialized = True
            self.initialize(*args, **kwargs)
        return forward(self, *args, **kwargs)
    return forward_after_initialize
