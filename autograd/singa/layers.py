"""SINGA's ``layer.RNN`` and ``layer.LSTM`` as a SINGA program calls them (``singa.layer.RNN``
/ ``LSTM`` under the hook): a list of time steps in, a list of hidden states out; and SINGA's
``layer.CudnnRNN`` (one Tensor in and out, stacked and bidirectional) built from our layers.

``autograd.RNN`` / ``autograd.LSTM`` return ``(output, state)`` (one Tensor, PyTorch's
convention); SINGA's return ``(list_of_h, h)`` and ``(list_of_h, h, c)``, and take the initial
state as their second argument. These subclasses keep our parameters and equations (fused
``W_ih``/``W_hh``, PyTorch's gate order) and change only the calling convention.

>>> import numpy as np, autograd
>>> lstm = LSTM(3, 5)
>>> xs = [autograd.Tensor(data=np.ones((2, 3), np.float32)) for _ in range(4)]
>>> h0 = autograd.Tensor(shape=(2, 5)); c0 = autograd.Tensor(shape=(2, 5))
>>> out, h, c = lstm(xs, (h0, c0))
>>> len(out), out[-1].shape, h is out[-1], c.shape
(4, (2, 5), True, (2, 5))
"""
import warnings

import numpy as np

from ..layers import linear, recurrent
from ..layers.base import Layer, shape_text
from ..operations import joining, shape as shape_ops
from ..operations.dropout import dropout
from ..operations.indexing import where
from ..tensor import Tensor

__all__ = ["RNN", "LSTM", "CudnnRNN", "Embedding", "SingaLayer"]


def _only_default(layer, **given):
    """SINGA's layer.RNN/LSTM accept these arguments and ignore them (one direction, one
    layer); refuse values that would silently mean nothing."""
    defaults = {"num_layers": 1, "dropout": 0, "bidirectional": False}
    for name, value in given.items():
        if value != defaults[name]:
            raise NotImplementedError(
                f"singa.layer.{layer}: {name}={value!r} is not supported (SINGA's layer.{layer} "
                f"ignores it too); stack layers instead. See docs/singa.md")


class _SingaSteps:
    """The loop SINGA's RNN_Base subclasses run: one step per list entry, every h kept."""

    def _steps(self, xs, state):
        if isinstance(xs, Tensor):                 # (seq_len, batch, input_size) also works
            xs = [xs[t] for t in range(xs.shape[0])]
        xs = list(xs)
        if not xs or not all(isinstance(x, Tensor) and x.ndim == 2
                             and x.shape[1] == self.input_size for x in xs):
            raise ValueError(f"{self.describe()}: expected a non-empty list of (batch, "
                             f"{self.input_size}) Tensors, got "
                             f"{[shape_text(getattr(x, 'shape', ())) for x in xs]}")
        self._check_dtype(xs[0])
        state = self._singa_state(state, xs[0])
        outputs = []
        for x in xs:
            projected = self._project_input(x)
            batch = max(projected.shape[0], state[0].shape[0])
            if projected.shape[0] != batch:          # SINGA's sums broadcast a batch of 1
                projected = shape_ops.broadcast_to(projected, (batch, projected.shape[1]))
            state = tuple(part if part.shape[0] == batch else
                          shape_ops.broadcast_to(part, (batch, part.shape[1])) for part in state)
            state = self._step(projected, state)
            outputs.append(state[0])
        return outputs, state

    def _singa_state(self, parts, like):
        """The state Tensors, each (batch, hidden_size). As in SINGA, a state's batch may
        differ from the input's when one of them is 1 (the step's sums broadcast)."""
        if parts is None:
            return tuple(Tensor(shape=(like.shape[0], self.hidden_size), dtype=like.dtype,
                                device=like.device, requires_grad=False)
                         for _ in range(self.state_count))
        parts = (parts,) if isinstance(parts, Tensor) else tuple(parts)
        if len(parts) != self.state_count or not all(
                isinstance(p, Tensor) and p.ndim == 2 and p.shape[1] == self.hidden_size
                and (p.shape[0] == like.shape[0] or 1 in (p.shape[0], like.shape[0]))
                for p in parts):
            what = "h0" if self.state_count == 1 else "(h0, c0)"
            raise ValueError(f"{self.describe()}: expected {what} of shape "
                             f"{shape_text((like.shape[0], self.hidden_size))}, got "
                             f"{[shape_text(getattr(p, 'shape', ())) for p in parts]}")
        return parts


class RNN(_SingaSteps, recurrent.RNN):
    """SINGA's ``layer.RNN(input_size, hidden_size, num_layers=1, nonlinearity='tanh',
    bias=True, batch_first=False, dropout=0, bidirectional=False)``: ``rnn(xs, h0)`` with
    ``xs`` a list of (batch, input_size) Tensors returns ``(list_of_h, h)``."""

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True,
                 batch_first=False, dropout=0, bidirectional=False):
        _only_default("RNN", num_layers=num_layers, dropout=dropout,
                      bidirectional=bidirectional)
        super().__init__(input_size, hidden_size, nonlinearity=nonlinearity, bias=bias)

    def forward(self, xs, h0=None):
        outputs, (h,) = self._steps(xs, h0)
        return outputs, h


class LSTM(_SingaSteps, recurrent.LSTM):
    """SINGA's ``layer.LSTM(input_size, hidden_size, nonlinearity='tanh', num_layers=1,
    bias=True, batch_first=False, dropout=0, bidirectional=False)``: ``lstm(xs, (h0, c0))``
    with ``xs`` a list of (batch, input_size) Tensors returns ``(list_of_h, h, c)``."""

    def __init__(self, input_size, hidden_size, nonlinearity="tanh", num_layers=1, bias=True,
                 batch_first=False, dropout=0, bidirectional=False):
        if nonlinearity != "tanh":
            raise ValueError(f"singa.layer.LSTM: nonlinearity must be 'tanh' (SINGA's LSTM "
                             f"always uses tanh), got {nonlinearity!r}")
        _only_default("LSTM", num_layers=num_layers, dropout=dropout,
                      bidirectional=bidirectional)
        super().__init__(input_size, hidden_size, bias=bias)

    def forward(self, xs, h0_c0=None):
        outputs, (h, c) = self._steps(xs, h0_c0)
        return outputs, h, c


class CudnnRNN(Layer):
    """SINGA's ``layer.CudnnRNN(hidden_size, activation='tanh', num_layers=1, bias=True,
    batch_first=True, dropout=0, bidirectional=False, rnn_mode='lstm', use_mask=False,
    return_sequences=True)``, which SINGA runs on cuDNN only, here from our RNN/LSTM/GRU layers
    on any device. ``rnn_mode``: "lstm", "gru", "tanh" (or "vanilla") or "relu".
    ``net(x, hx=None, cx=None)`` on x (batch, seq, input) (``batch_first``, the default) or
    (seq, batch, input) returns every step's output (batch, seq, directions * hidden_size) with
    ``return_sequences``, else the last step's (batch, directions * hidden_size), as cuDNN's;
    ``hx``/``cx`` are (num_layers * directions, batch, hidden_size), zeros when None. The input
    size is taken from the first call. ``dropout`` applies between stacked layers in training.

    ``use_mask=True`` takes a batch of sequences of several lengths, as cuDNN's padded layout
    (SINGA's ``_RNN`` with ``seq_lengths``): ``net(x, seq_lengths=lengths)``, ``lengths`` an
    integer Tensor (batch,) with 1 <= length <= seq. Sequence b runs its first ``lengths[b]``
    steps only: the steps after them output zeros (whatever the padding holds), and the
    reverse direction starts at its last real step. Without
    ``return_sequences`` the result is, as SINGA's, the last step of that padded output (zero
    for a sequence shorter than the longest); take ``y[b, lengths[b] - 1]`` of the sequences
    for each one's last output. ``seq_lengths`` without ``use_mask`` is ignored, as in SINGA
    (with a warning here).

    >>> import numpy as np
    >>> net = CudnnRNN(4, num_layers=2, bidirectional=True, return_sequences=False)
    >>> net(Tensor(data=np.ones((3, 5, 2), np.float32))).shape
    (3, 8)
    """

    _MODES = {"lstm": (recurrent.LSTM, {}), "gru": (recurrent.GRU, {}),
              "tanh": (recurrent.RNN, {"nonlinearity": "tanh"}),
              "vanilla": (recurrent.RNN, {"nonlinearity": "tanh"}),
              "relu": (recurrent.RNN, {"nonlinearity": "relu"})}

    def __init__(self, hidden_size, activation="tanh", num_layers=1, bias=True,
                 batch_first=True, dropout=0, bidirectional=False, rnn_mode="lstm",
                 use_mask=False, return_sequences=True):
        super().__init__()
        if rnn_mode not in self._MODES:
            raise ValueError(f"singa.layer.CudnnRNN: rnn_mode must be one of "
                             f"{sorted(self._MODES)}, got {rnn_mode!r}")
        if not (isinstance(num_layers, int) and num_layers > 0 and 0 <= dropout < 1):
            raise ValueError(f"singa.layer.CudnnRNN: num_layers must be a positive int and "
                             f"0 <= dropout < 1, got {num_layers!r} and {dropout!r}")
        self.hidden_size, self.num_layers, self.dropout = hidden_size, num_layers, dropout
        self.bias, self.batch_first = bool(bias), bool(batch_first)
        self.directions = 2 if bidirectional else 1
        self.rnn_mode, self.return_sequences = rnn_mode, bool(return_sequences)
        self.use_mask = bool(use_mask)

    def initialize(self, x, hx=None, cx=None, seq_lengths=None):
        kind, options = self._MODES[self.rnn_mode]
        width = x.shape[-1]
        for index in range(self.num_layers * self.directions):
            size = width if index < self.directions else self.directions * self.hidden_size
            setattr(self, f"rnn_{index}", kind(size, self.hidden_size, bias=self.bias,
                                               return_sequences=True, **options))

    def forward(self, x, hx=None, cx=None, seq_lengths=None):
        if self.batch_first:
            x = shape_ops.transpose(x, (1, 0, 2))          # (seq, batch, input)
        masks = self._masks(seq_lengths, x.shape[0], x.shape[1])
        for layer_index in range(self.num_layers):
            if layer_index and self.dropout and self.is_training:
                x = dropout(x, self.dropout)
            outputs = []
            for direction in range(self.directions):
                index = layer_index * self.directions + direction
                rnn = getattr(self, f"rnn_{index}")
                state = self._state(index, hx, cx, x)
                if masks is None:
                    steps = x if direction == 0 else x[::-1]
                    y, _ = rnn(steps, initial_state=state)
                    outputs.append(y if direction == 0 else y[::-1])
                else:
                    outputs.append(self._masked(rnn, x, state, masks, reverse=direction == 1))
            x = outputs[0] if self.directions == 1 else joining.cat(outputs, axis=2)
        if not self.return_sequences:
            return x[-1]
        return shape_ops.transpose(x, (1, 0, 2)) if self.batch_first else x

    def _masks(self, seq_lengths, steps, batch):
        """None without ``use_mask``; else (real, reversal): ``real`` (seq, batch, 1) says which
        steps of each sequence are real, ``reversal`` (seq, batch) indexes each sequence's real
        steps backwards (and leaves its padding where it is)."""
        if not self.use_mask:
            if seq_lengths is not None and not getattr(self, "_told", False):
                self._told = True
                warnings.warn("singa.layer.CudnnRNN: seq_lengths is ignored without "
                              "use_mask=True (as in SINGA)", RuntimeWarning, stacklevel=4)
            return None
        if not isinstance(seq_lengths, Tensor):
            raise TypeError(f"singa.layer.CudnnRNN: use_mask needs seq_lengths, an integer "
                            f"Tensor (batch,) as SINGA's, got {type(seq_lengths).__name__}")
        lengths = seq_lengths.to_numpy()       # a host read, as cuDNN's descriptor makes
        if lengths.shape != (batch,) or lengths.dtype.kind not in "iuf" or \
                not np.all(lengths == np.round(lengths)) or not np.all(lengths >= 1) or \
                not np.all(lengths <= steps):
            raise ValueError(f"singa.layer.CudnnRNN: seq_lengths must hold {batch} whole "
                             f"numbers from 1 to the sequence length {steps}, got "
                             f"{lengths.tolist()}")
        lengths = lengths.astype(np.int64)
        t = np.arange(steps)[:, None]
        real = t < lengths[None, :]
        reversal = np.where(real, lengths[None, :] - 1 - t, t)
        return real[:, :, None], reversal

    def _masked(self, rnn, x, state, masks, reverse):
        """Every step's output (seq, batch, hidden) of ``rnn`` over the real steps of each
        sequence; a padded step outputs zeros (cuDNN's padded layout)."""
        real, reversal = masks
        columns = np.arange(x.shape[1])[None, :]
        if reverse:
            x = x[reversal, columns]
        x = where(x, 0.0, real)        # padding is never read (cuDNN's), not even a NaN there
        # a sequence's padding comes after its real steps (in either direction), so the state
        # the layer carries through it is never read: masking the outputs is enough
        y, _ = rnn(x, initial_state=state)
        y = where(y, 0.0, real)
        return y[reversal, columns] if reverse else y

    def _state(self, index, hx, cx, x):
        """Layer-direction ``index``'s initial state from hx/cx, zeros where None."""
        if hx is None and cx is None:
            return None
        zeros = Tensor(shape=(x.shape[1], self.hidden_size), dtype=x.dtype, device=x.device,
                       requires_grad=False)
        h = zeros if hx is None else hx[index]
        if self.rnn_mode != "lstm":
            return h
        return (h, zeros if cx is None else cx[index])


class Embedding(linear.Embedding):
    """SINGA's ``layer.Embedding(input_dim, output_dim, initializer="gaussian")``: our
    Embedding, its W drawn as SINGA's (N(0, 1), or U(-1, 1) for ``initializer='uniform'``)."""

    def __init__(self, input_dim, output_dim, initializer="gaussian"):
        super().__init__(input_dim, output_dim)
        self.input_dim, self.output_dim, self.initializer = input_dim, output_dim, initializer
        if initializer == "uniform":
            self.W.uniform(-1.0, 1.0)
        else:
            self.W.gaussian(0.0, 1.0)

    def from_pretrained(self, W, freeze=True):
        """SINGA's: W's values (a Tensor or array of W's shape) copied in; ``freeze`` stops
        its training."""
        self.W.copy_data(W if isinstance(W, Tensor) else Tensor(data=np.asarray(W)))
        self.W.requires_grad = self.W.stores_grad = not freeze


class SingaLayer(Layer):
    """SINGA's ``layer.Layer`` as its programs subclass it: our Layer, with SINGA's
    ``device_check(*inputs)`` and ``dtype_check(*inputs)`` (the later Tensors moved or cast,
    in place, to the first one's device or dtype)."""

    def dtype_check(self, *inputs):
        for tensor in inputs[1:]:
            if tensor.dtype != inputs[0].dtype:
                tensor.data = tensor.data.astype(inputs[0].dtype)

    def device_check(self, *inputs):
        for tensor in inputs[1:]:
            if tensor.device is not inputs[0].device:
                tensor.to_device(inputs[0].device)
