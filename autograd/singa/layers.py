"""SINGA's ``layer.RNN`` and ``layer.LSTM`` as a SINGA program calls them (``singa.layer.RNN``
/ ``LSTM`` under the hook): a list of time steps in, a list of hidden states out.

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
from ..layers import recurrent
from ..layers.base import shape_text
from ..tensor import Tensor

__all__ = ["RNN", "LSTM"]


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
            state = self._step(self._project_input(x), state)
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
