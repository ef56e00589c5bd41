"""Recurrent layers built from operations: RNN (tanh or relu), LSTM and GRU (SINGA's layer.RNN /
LSTM / GRU), with PyTorch's equations and gate order.

Input: x of shape (seq_len, batch, input_size), or (batch, seq_len, input_size) with
``batch_first=True``, or (as SINGA's RNN takes it) a list of seq_len Tensors (batch, input_size).

Calling a layer returns a pair ``(output, state)``:
  ``output``  the last hidden state h_T (batch, hidden_size), or with ``return_sequences=True``
              every hidden state h_1..h_T (seq_len, batch, hidden_size) ((batch, seq_len,
              hidden_size) with ``batch_first``);
  ``state``   the final state: h_T for RNN and GRU, the pair ``(h_T, c_T)`` for LSTM; it is
              what ``initial_state`` takes, so ``layer(x2, initial_state=state)`` continues.
``initial_state`` defaults to zeros. Gradients flow through time into the input, the initial
state and every parameter.

Parameters (G = 1 for RNN, 4 for LSTM, 3 for GRU), in SINGA's (in, out) layout like Linear's W:
``W_ih`` (input_size, G * hidden_size), ``W_hh`` (hidden_size, G * hidden_size) and, with
``bias=True``, ``b_ih`` and ``b_hh`` (G * hidden_size,), the gate blocks side by side in
PyTorch's order (LSTM: i, f, g, o; GRU: r, z, n). ``init`` (Glorot uniform by default) fills
each weight with fan_in / fan_out of one gate block: (input_size, hidden_size) for W_ih,
(hidden_size, hidden_size) for W_hh; biases start at zero.

>>> import numpy as np, autograd
>>> from autograd.layers.recurrent import LSTM
>>> lstm = LSTM(2, 3, return_sequences=True)
>>> [(name, p.shape) for name, p in lstm.named_parameters()]
[('W_ih', (2, 12)), ('W_hh', (3, 12)), ('b_ih', (12,)), ('b_hh', (12,))]
>>> y, (h, c) = lstm(autograd.Tensor(data=np.ones((5, 4, 2), np.float32)))
>>> y.shape, h.shape, c.shape
((5, 4, 3), (4, 3), (4, 3))
"""
from __future__ import annotations

from typing import Any, Sequence, Union

from ..operations import activation
from ..operations import linalg
from ..operations import recurrent as cells
from ..operations import recurrent_sequence as sequences
from ..operations import joining, shape as shape_ops
from ..tensor import Tensor
from .arguments import positive_int
from .base import Layer, shape_text
from .init import check_scheme, initialize

__all__ = ["RNN", "LSTM", "GRU"]


class _Recurrent(Layer):
    """The shared machinery: parameters, input and state checks, the loop over time.
    Subclasses set ``gate_count`` and ``state_count`` and write ``_step``."""

    gate_count = 1
    state_count = 1          # 2 for LSTM: (h, c)
    # b_hh added once to the input projection of all steps rather than per step (LSTM, where
    # the sum of the two biases is all the equations use)
    hidden_bias_in_input = False

    def __init__(self, input_size: int, hidden_size: int, *, bias: bool = True,
                 batch_first: bool = False, return_sequences: bool = False, init: str = "xavier",
                 wscale: float = 1.0) -> None:
        super().__init__()
        name = type(self).__name__
        self.input_size = positive_int(input_size, "input_size", name)
        self.hidden_size = positive_int(hidden_size, "hidden_size", name)
        self.bias = bool(bias)
        self.batch_first = bool(batch_first)
        self.return_sequences = bool(return_sequences)
        check_scheme(init, name)
        width = self.gate_count * self.hidden_size
        self.W_ih = initialize(Tensor(shape=(self.input_size, width), stores_grad=True),
                               init, self.input_size, self.hidden_size, wscale)
        self.W_hh = initialize(Tensor(shape=(self.hidden_size, width), stores_grad=True),
                               init, self.hidden_size, self.hidden_size, wscale)
        self.b_ih = Tensor(shape=(width,), stores_grad=True) if self.bias else None
        self.b_hh = Tensor(shape=(width,), stores_grad=True) if self.bias else None

    def extra_repr(self):
        options = "".join([
            "" if self.bias else ", bias=False",
            ", batch_first=True" if self.batch_first else "",
            ", return_sequences=True" if self.return_sequences else ""])
        return f"{self.input_size}->{self.hidden_size}{options}"

    # ------------------------------------------------------------ shapes
    def output_shape(self, input_shape):
        """The shape of ``output`` (the first of the pair) for x of ``input_shape``."""
        shape = tuple(input_shape)
        self._check_shape(shape, self.batch_first)
        if not self.return_sequences:
            return (shape[0] if self.batch_first else shape[1], self.hidden_size)
        return shape[:2] + (self.hidden_size,)

    def _check_shape(self, shape, batch_first):
        layout = ("batch", "seq_len") if batch_first else ("seq_len", "batch")
        self.check_input(len(shape) == 3 and shape[2] == self.input_size
                         and all(n is None or n >= 1 for n in shape[:2]),
                         shape_text(layout + (self.input_size,)), shape)

    def _sequence(self, x: Any) -> Tensor:
        """x as one (seq_len, batch, input_size) Tensor, checked."""
        if isinstance(x, (list, tuple)):
            if not x or not all(isinstance(t, Tensor) and t.ndim == 2 for t in x):
                raise ValueError(f"{self.describe()}: expected a non-empty list of (batch, "
                                 f"{self.input_size}) Tensors, got "
                                 f"{[getattr(t, 'shape', type(t).__name__) for t in x]}")
            self._check_shape((len(x),) + tuple(x[0].shape), batch_first=False)
            if any(tuple(t.shape) != tuple(x[0].shape) for t in x):
                raise ValueError(f"{self.describe()}: the steps of the list differ in shape: "
                                 f"{[tuple(t.shape) for t in x]}")
            x = joining.cat([shape_ops.reshape(t, (1,) + tuple(t.shape)) for t in x], axis=0)
        elif not isinstance(x, Tensor):
            raise TypeError(f"{self.describe()}: expected a Tensor, got {type(x).__name__}")
        else:
            self.output_shape(x.shape)
            if self.batch_first:
                x = shape_ops.transpose(x, (1, 0, 2))
        self._check_dtype(x)
        return x

    def _check_dtype(self, x):
        if x.dtype != self.W_ih.dtype:
            raise TypeError(f"{self.describe()}: input is {x.dtype} but the parameters are "
                            f"{self.W_ih.dtype}; cast one with as_type()")

    def _initial_state(self, initial_state, batch, like):
        """The state as a tuple of ``state_count`` Tensors (batch, hidden_size), checked."""
        expected = (batch, self.hidden_size)
        if initial_state is None:
            return tuple(Tensor(shape=expected, dtype=like.dtype, device=like.device,
                                requires_grad=False) for _ in range(self.state_count))
        parts = (initial_state,) if self.state_count == 1 else initial_state
        what = "h" if self.state_count == 1 else "a pair (h, c)"
        if not isinstance(parts, (tuple, list)) or len(parts) != self.state_count:
            raise ValueError(f"{self.describe()}: expected initial_state {what} of shape "
                             f"{shape_text(expected)}, got {type(initial_state).__name__}")
        state = []
        for part in parts:
            if not isinstance(part, Tensor):
                part = Tensor(data=part, dtype=like.dtype, device=like.device,
                              requires_grad=False)
            if tuple(part.shape) != expected:
                raise ValueError(f"{self.describe()}: expected initial_state {what} of shape "
                                 f"{shape_text(expected)}, got {shape_text(part.shape)}")
            if part.dtype != like.dtype:
                raise TypeError(f"{self.describe()}: initial_state is {part.dtype} but the "
                                f"input is {like.dtype}")
            state.append(part)
        return tuple(state)

    # ------------------------------------------------------------ computing
    def _project_input(self, x2d):
        if not self.bias:
            return linalg.matmul(x2d, self.W_ih)
        # the bias rides in the product (a GEMM onto a buffer that holds it, as PyTorch's
        # addmm): two passes of their own over all steps' projections cost an LSTM LM at batch
        # 8 a twentieth of its inference
        bias = self.b_ih + self.b_hh if self.hidden_bias_in_input else self.b_ih
        return linalg.gemm(x2d, self.W_ih, bias)

    def _project_hidden(self, h):
        projected = linalg.matmul(h, self.W_hh)
        return linalg.add_bias(projected, self.b_hh) if self.bias else projected

    def _step(self, projected_x, state):
        """One time step from x_t @ W_ih + b_ih (batch, G * hidden) and the state tuple."""
        raise NotImplementedError

    def cell(self, x_t, state=None):
        """One time step on x_t (batch, input_size): returns the new state (h, or (h, c) for
        LSTM) from ``state`` (zeros when None)."""
        if not isinstance(x_t, Tensor) or x_t.ndim != 2 or x_t.shape[1] != self.input_size:
            got = shape_text(x_t.shape) if isinstance(x_t, Tensor) else type(x_t).__name__
            raise ValueError(f"{self.describe()}: expected x_t of shape (batch, "
                             f"{self.input_size}), got {got}")
        self._check_dtype(x_t)
        new = self._step(self._project_input(x_t),
                         self._initial_state(state, x_t.shape[0], x_t))
        return new[0] if self.state_count == 1 else new

    def forward(self, x: Union[Tensor, Sequence[Tensor]],
                initial_state: Any = None) -> tuple[Tensor, Any]:
        x = self._sequence(x)
        steps, batch, _ = x.shape
        state = self._initial_state(initial_state, batch, x)
        # the input projections of all steps as one matrix product
        projected = self._project_input(shape_ops.reshape(x, (steps * batch, self.input_size)))
        hidden_states, state = self._unroll(projected, state, steps)
        if self.return_sequences:
            output = hidden_states
            if self.batch_first:
                output = shape_ops.transpose(output, (1, 0, 2))
        else:
            output = state[0]
        return output, (state[0] if self.state_count == 1 else state)

    def _unroll(self, projected, state, steps):
        """Every hidden state (steps, batch, hidden) and the final state, from the input
        projections of all steps (steps * batch, G * hidden): the cell step by step, the
        steps' rows cut by one split."""
        batch = state[0].shape[0]
        pieces = joining.split(projected, 0, steps) if steps > 1 else (projected,)
        hidden_states = []
        for piece in pieces:
            state = self._step(piece, state)
            hidden_states.append(state[0])
        joined = joining.cat(hidden_states, axis=0) if steps > 1 else hidden_states[0]
        return shape_ops.reshape(joined, (steps, batch, self.hidden_size)), state


class RNN(_Recurrent):
    """Elman RNN: ``h_t = act(x_t W_ih + b_ih + h_(t-1) W_hh + b_hh)``, act = tanh or relu
    (``nonlinearity``). Returns ``(output, h_T)``; see the module docstring."""

    def __init__(self, input_size: int, hidden_size: int, *, nonlinearity: str = "tanh",
                 bias: bool = True, batch_first: bool = False, return_sequences: bool = False,
                 init: str = "xavier", wscale: float = 1.0) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNN: nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")
        self.nonlinearity = nonlinearity
        super().__init__(input_size, hidden_size, bias=bias, batch_first=batch_first,
                         return_sequences=return_sequences, init=init, wscale=wscale)

    def extra_repr(self):
        return super().extra_repr() + (", nonlinearity='relu'"
                                       if self.nonlinearity == "relu" else "")

    def _step(self, projected_x, state):
        pre = projected_x + self._project_hidden(state[0])
        return (activation.tanh(pre) if self.nonlinearity == "tanh" else activation.relu(pre),)


class LSTM(_Recurrent):
    """Long short-term memory, PyTorch's equations (gates i, f, g, o)::

        i = sigmoid(x W_ii + b_ii + h W_hi + b_hi)     f = sigmoid(... f block ...)
        g = tanh(x W_ig + b_ig + h W_hg + b_hg)        o = sigmoid(... o block ...)
        c' = f * c + i * g                             h' = o * tanh(c')

    Returns ``(output, (h_T, c_T))``; ``initial_state`` is a pair ``(h_0, c_0)``."""

    gate_count = 4
    state_count = 2
    hidden_bias_in_input = True

    def _step(self, projected_x, state):
        # projected_x holds x W_ih + b_ih + b_hh; the gates and the cell update are one op
        h, c = state
        return cells.lstm_cell(projected_x, linalg.matmul(h, self.W_hh), c)

    def _unroll(self, projected, state, steps):
        # the whole loop over time as one op: backward through time with one dW_hh GEMM
        x_gates = shape_ops.reshape(projected, (steps, -1, 4 * self.hidden_size))
        hs, h, c = sequences.lstm_sequence(x_gates, state[0], state[1], self.W_hh)
        return hs, (h, c)


class GRU(_Recurrent):
    """Gated recurrent unit, PyTorch's equations (gates r, z, n)::

        r = sigmoid(x W_ir + b_ir + h W_hr + b_hr)     z = sigmoid(... z block ...)
        n = tanh(x W_in + b_in + r * (h W_hn + b_hn))  h' = (1 - z) * n + z * h

    Returns ``(output, h_T)``."""

    gate_count = 3

    def _step(self, projected_x, state):
        (h,) = state
        return (cells.gru_cell(projected_x, self._project_hidden(h), h),)

    def _unroll(self, projected, state, steps):
        x_gates = shape_ops.reshape(projected, (steps, -1, 3 * self.hidden_size))
        hs, h = sequences.gru_sequence(x_gates, state[0], self.W_hh,
                                       self.b_hh if self.bias else None)
        return hs, (h,)
