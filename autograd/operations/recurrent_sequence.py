"""Recurrent layers over a whole sequence as one operation each: the loop over time of the LSTM
or GRU cell (recurrent.py's maths, shared) with the hidden projection h @ W_hh inside, and
backward through time in one backward.

Why one op for the sequence, beside the one-step cells: backward through time then gathers the
gate gradients of all steps and computes the weight gradient dW_hh = H_prev^T dA as ONE GEMM of
inner dimension T * N, instead of T GEMMs of inner dimension N (the batch, often small) summed
by the tape, and a step records nothing: the tape holds one op per layer. The input projection
x W_ih of all steps is one GEMM before this op (the layers do it), so x_gates arrives for all
steps at once.

>>> import numpy as np
>>> from autograd import Tensor
>>> hs, h, c = lstm_sequence(Tensor(data=np.zeros((3, 1, 8), np.float32)),
...                          Tensor(data=np.zeros((1, 2), np.float32)),
...                          Tensor(data=np.ones((1, 2), np.float32)),
...                          Tensor(data=np.zeros((2, 8), np.float32)))
>>> hs.shape, c.to_numpy()          # c halves each step: f = sigmoid(0), g = tanh(0)
((3, 1, 2), array([[0.125, 0.125]], dtype=float32))
"""
from ..backend import kernels_for
from ..device import get_array_module
from .base import Operation
from .recurrent import _lstm_forward, _lstm_backward, _gru_forward, _gru_backward
from .utils import check_tensor

__all__ = ["lstm_sequence", "gru_sequence"]


class LSTMSequence(Operation):
    """x_gates (T, N, 4H) = x_t W_ih + b_ih + b_hh of every step, h0, c0 (N, H), W_hh (H, 4H).
    For t = 1..T: (h_t, c_t) = LSTMCell(x_gates[t], h_(t-1) W_hh, c_(t-1)). Outputs hs (T, N, H)
    = h_1..h_T, h_T and c_T (N, H).
    Backward through time: dh_t = dhs[t] + da_(t+1) W_hh^T (+ dh_T at T), da_t and dc_(t-1) by
    LSTMCell's backward; dx_gates = da, dh0 = da_1 W_hh^T, dc0, dW_hh = sum_t h_(t-1)^T da_t"""

    def forward(self, x_gates, h0, c0, W_hh):
        xp = get_array_module(x_gates)
        steps = x_gates.shape[0]
        kernels = kernels_for(x_gates)
        whole = kernels.lstm_sequence_forward(x_gates, h0, c0, W_hh)   # the loop in one call
        if whole is not None:
            hs, cs, gates, tanh_cs = whole
            self.save_for_backward(hs, W_hh, None, (gates, cs, tanh_cs))
            return hs[1:], hs[steps].copy(), cs[steps].copy()
        matmul = kernels.matmul
        hs = xp.empty((steps + 1,) + h0.shape, h0.dtype)
        hs[0] = h0
        c, per_step = c0, []
        for t in range(steps):
            _, c, saved = _lstm_forward(xp, x_gates[t], matmul(hs[t], W_hh), c, hs[t + 1])
            per_step.append(saved)
        self.save_for_backward(hs, W_hh, per_step, None)
        return hs[1:], hs[steps].copy(), c

    def backward(self, dhs, dh_last, dc):
        hs, W_hh, per_step, sequence = self.saved
        xp = get_array_module(dhs)
        kernels = kernels_for(dhs)
        matmul = kernels.matmul
        steps, batch, hidden = dhs.shape
        W_hh_T = kernels.repeated_operand(W_hh.T, batch, steps)
        whole = (None if sequence is None else
                 kernels.lstm_sequence_backward(sequence, dhs, dh_last, dc, W_hh_T))
        if whole is not None:                   # _lstm_through_time's loop in one call
            da, dh_next, dc = whole
        else:
            if per_step is None:              # each step's (gates, c, tanh_c): views
                per_step = list(zip(*sequence))
            da, dh_next, dc = _lstm_through_time(xp, matmul, per_step, dhs, dh_last, dc,
                                                 W_hh_T)
        need_x, need_h, need_c, need_w = self.needs_input_grad
        dW_hh = (matmul(hs[:-1].reshape(steps * batch, hidden).T,
                        da.reshape(steps * batch, 4 * hidden)) if need_w else None)
        return ((da if need_x else None), (dh_next if need_h else None),
                (dc if need_c else None), dW_hh)


def _lstm_through_time(xp, matmul, per_step, dhs, dh_last, dc, W_hh_T):
    """LSTMSequence's backward loop: da (T, N, 4H), dh0 and dc0."""
    steps, batch, hidden = dhs.shape
    da = xp.empty((steps, batch, 4 * hidden), dhs.dtype)
    dh_next = dh_last
    for t in range(steps - 1, -1, -1):
        _, dc = _lstm_backward(xp, per_step[t], dhs[t] + dh_next, dc, out=da[t])
        dh_next = matmul(da[t], W_hh_T)
    return da, dh_next, dc


def lstm_sequence(x_gates, h0, c0, W_hh):
    """An LSTM layer's loop over time: x_gates (T, N, 4H) (x W_ih + b_ih + b_hh of every step,
    blocks i, f, g, o), the initial h0, c0 (N, H) and W_hh (H, 4H); returns ``(hs, h_T, c_T)``
    with hs (T, N, H) every hidden state (see LSTMSequence)."""
    _check_sequence("lstm_sequence", x_gates, (h0, c0), W_hh, 4)
    return LSTMSequence()(x_gates, h0, c0, W_hh)


class GRUSequence(Operation):
    """x_gates (T, N, 3H) = x_t W_ih + b_ih of every step, h0 (N, H), W_hh (H, 3H), b_hh
    (3H,) (optional). For t = 1..T: h_t = GRUCell(x_gates[t], h_(t-1) W_hh + b_hh, h_(t-1)).
    Outputs hs (T, N, H) = h_1..h_T and h_T.
    Backward through time: dh_t = dhs[t] + dh_(t+1) z + dg_(t+1) W_hh^T (+ dh_T at T), with
    GRUCell's dx_gates and dh_gates = dg; dh0, dW_hh = sum_t h_(t-1)^T dg_t, db_hh = sum dg_t"""

    def forward(self, x_gates, h0, W_hh, b_hh=None):
        xp = get_array_module(x_gates)
        steps = x_gates.shape[0]
        matmul = kernels_for(x_gates).matmul
        hs = xp.empty((steps + 1,) + h0.shape, h0.dtype)
        hs[0] = h0
        per_step = []
        for t in range(steps):
            h_gates = matmul(hs[t], W_hh)
            if b_hh is not None:
                h_gates = h_gates + b_hh
            _, saved = _gru_forward(xp, x_gates[t], h_gates, hs[t], hs[t + 1])
            per_step.append(saved)
        self.save_for_backward(hs, W_hh, per_step)
        return hs[1:], hs[steps].copy()

    def backward(self, dhs, dh_last):
        hs, W_hh, per_step = self.saved
        xp = get_array_module(dhs)
        kernels = kernels_for(dhs)
        matmul = kernels.matmul
        steps, batch, hidden = dhs.shape
        W_hh_T = kernels.repeated_operand(W_hh.T, batch, steps)
        dx_gates = xp.empty((steps, batch, 3 * hidden), dhs.dtype)
        dh_gates = xp.empty_like(dx_gates)
        dh_next = dh_last
        for t in range(steps - 1, -1, -1):
            direct = _gru_backward(xp, per_step[t], dhs[t] + dh_next, dx_gates[t], dh_gates[t])
            dh_next = direct + matmul(dh_gates[t], W_hh_T)
        needs = self.needs_input_grad
        flat = dh_gates.reshape(steps * batch, 3 * hidden)
        grads = [dx_gates if needs[0] else None, dh_next if needs[1] else None,
                 matmul(hs[:-1].reshape(steps * batch, hidden).T, flat) if needs[2] else None]
        if len(needs) == 4:
            grads.append(kernels.sum_rows(flat) if needs[3] else None)
        return tuple(grads)


def gru_sequence(x_gates, h0, W_hh, b_hh=None):
    """A GRU layer's loop over time: x_gates (T, N, 3H) (x W_ih + b_ih of every step, blocks
    r, z, n), the initial h0 (N, H), W_hh (H, 3H) and b_hh (3H,) or None; returns ``(hs, h_T)``
    with hs (T, N, H) every hidden state (see GRUSequence)."""
    _check_sequence("gru_sequence", x_gates, (h0,), W_hh, 3, b_hh)
    inputs = (x_gates, h0, W_hh) if b_hh is None else (x_gates, h0, W_hh, b_hh)
    return GRUSequence()(*inputs)


def _check_sequence(name, x_gates, states, W_hh, count, b_hh=None):
    tensors = (x_gates, *states, W_hh) + (() if b_hh is None else (b_hh,))
    for tensor in tensors:
        check_tensor(tensor, name)
    batch, hidden = states[0].shape if states[0].ndim == 2 else (None, None)
    width = None if hidden is None else count * hidden
    if (hidden is None or any(tuple(s.shape) != (batch, hidden) for s in states)
            or x_gates.ndim != 3 or tuple(x_gates.shape[1:]) != (batch, width)
            or tuple(W_hh.shape) != (hidden, width)
            or (b_hh is not None and tuple(b_hh.shape) != (width,))):
        raise ValueError(f"{name}: expected x_gates (steps, batch, {count} * hidden), states "
                         f"(batch, hidden), W_hh (hidden, {count} * hidden)"
                         f"{', b_hh (' + str(count) + ' * hidden,)' if b_hh is not None else ''}"
                         f", got " + ", ".join(str(tuple(t.shape)) for t in tensors))
    if len({t.dtype for t in tensors}) != 1 or x_gates.dtype.kind != "f":
        raise TypeError(f"{name}: expected floating inputs of one dtype, got "
                        + ", ".join(str(t.dtype) for t in tensors))
