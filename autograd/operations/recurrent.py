"""Recurrent cells as single operations: the gate nonlinearities and the state update of one
LSTM or GRU time step, forward and backward each in one op, so that a step records two or three
ops (the hidden projection h @ W_hh, [its bias,] the cell) instead of about fifteen.

The cells take the gate pre-activations in two parts, from the input (x W_ih + b) and from the
hidden state (h W_hh + b), as PyTorch's equations split them (the GRU needs the parts apart;
for the LSTM it saves the add). Gate blocks lie side by side along the last axis in PyTorch's
order: LSTM i, f, g, o; GRU r, z, n.

>>> import numpy as np
>>> from autograd import Tensor
>>> h, c = lstm_cell(Tensor(data=np.zeros((1, 8))), Tensor(data=np.zeros((1, 8))),
...                  Tensor(data=np.ones((1, 2))))
>>> c.to_numpy()          # f * c + i * g with f = sigmoid(0), g = tanh(0)
array([[0.5, 0.5]])
"""
from ..backend import native
from ..device import get_array_module
from .base import Operation
from .special import expit
from .utils import check_tensor

__all__ = ["lstm_cell", "gru_cell"]


def _lstm_forward(xp, x_gates, h_gates, c, h_out=None):
    """h', c' and what the backward needs, from the two parts of the pre-activations (h'
    written into ``h_out`` when given). Float32 NumPy rows take the compiled kernel."""
    fused = native.lstm_forward(x_gates, h_gates, c, h_out)
    if fused is not None:
        return fused
    hidden = c.shape[-1]
    a = x_gates + h_gates
    gates = expit(a)                                        # i, f, o right; g replaced below
    xp.tanh(a[:, 2 * hidden:3 * hidden], out=gates[:, 2 * hidden:3 * hidden])
    i, f, g, o = _blocks(gates, 4)
    c_new = f * c
    c_new += i * g
    tanh_c = xp.tanh(c_new)
    return xp.multiply(o, tanh_c, out=h_out), c_new, (gates, c, tanh_c)


def _lstm_backward(xp, saved, dh, dc_new, out=None):
    """da (N, 4H) (into ``out`` when given) and dc of the previous cell."""
    fused = native.lstm_backward(saved, dh, dc_new, out)
    if fused is not None:
        return fused
    gates, c, tanh_c = saved
    i, f, g, o = _blocks(gates, 4)
    # sigmoid' = s (1 - s) and tanh' = 1 - t^2 on all four blocks at once, then g fixed
    slopes = xp.multiply(gates, gates, out=out)
    xp.subtract(gates, slopes, out=slopes)
    g_slope = slopes[:, 2 * g.shape[1]:3 * g.shape[1]]
    xp.multiply(g, g, out=g_slope)
    xp.subtract(1, g_slope, out=g_slope)
    d_i, d_f, d_g, d_o = _blocks(slopes, 4)
    dc = dh * o
    dc -= dc * (tanh_c * tanh_c)
    dc += dc_new
    d_i *= dc * g
    d_f *= dc * c
    d_g *= dc * i
    d_o *= dh * tanh_c
    dc *= f
    return slopes, dc


class LSTMCell(Operation):
    """One LSTM step. x_gates, h_gates (N, 4H): the gate pre-activations a = x_gates + h_gates
    in blocks i, f, g, o; c (N, H) the previous cell. Outputs h' (N, H) and c' (N, H):
    i, f, o = sigmoid(a_i, a_f, a_o), g = tanh(a_g), c' = f c + i g, h' = o tanh(c').
    da = [dc~ g i(1-i), dc~ c f(1-f), dc~ i (1-g^2), dh' tanh(c') o(1-o)],
    dc~ = dc' + dh' o (1 - tanh(c')^2), dx_gates = dh_gates = da, dc = dc~ f"""

    def forward(self, x_gates, h_gates, c):
        h_new, c_new, saved = _lstm_forward(get_array_module(x_gates), x_gates, h_gates, c)
        self.save_for_backward(*saved)
        return h_new, c_new

    def backward(self, dh, dc_new):
        da, dc = _lstm_backward(get_array_module(dh), self.saved, dh, dc_new)
        need_x, need_h, need_c = self.needs_input_grad
        return (da if need_x else None), (da if need_h else None), (dc if need_c else None)


def lstm_cell(x_gates, h_gates, c):
    """One LSTM step from the gate pre-activations x_gates + h_gates (N, 4H, blocks i, f, g,
    o) and the cell c (N, H); returns ``(h, c)`` of the next step (see LSTMCell).

    >>> import numpy as np
    >>> from autograd import Tensor
    >>> lstm_cell(Tensor(data=np.zeros((1, 6))), Tensor(data=np.zeros((1, 6))),
    ...           Tensor(data=np.zeros((1, 2))))                   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: lstm_cell: expected x_gates and h_gates of shape (1, 8) (4 gate blocks ...
    """
    _check_cell("lstm_cell", x_gates, h_gates, c, 4)
    return LSTMCell()(x_gates, h_gates, c)


def _gru_forward(xp, x_gates, h_gates, h, h_out=None):
    """h' (into ``h_out`` when given) and what the backward needs."""
    fused = native.gru_forward(x_gates, h_gates, h, h_out)
    if fused is not None:
        return fused
    hidden = h.shape[-1]
    x_n, h_n = x_gates[:, 2 * hidden:], h_gates[:, 2 * hidden:]
    rz = expit(x_gates[:, :2 * hidden] + h_gates[:, :2 * hidden])
    r, z = rz[:, :hidden], rz[:, hidden:]
    n = r * h_n
    n += x_n
    xp.tanh(n, out=n)
    h_new = xp.subtract(h, n, out=h_out)
    h_new *= z
    h_new += n
    return h_new, (rz, n, h_n, h)


def _gru_backward(xp, saved, dh_new, dx_gates, dh_gates=None):
    """Writes d(x_gates) into ``dx_gates`` (N, 3H), and d(h_gates) into ``dh_gates`` when
    given (see _gru_hidden_share); returns dh' z (h's direct share)."""
    fused = native.gru_backward(saved, dh_new, dx_gates, dh_gates)
    if fused is not None:
        return fused
    rz, n, h_n, h = saved
    hidden = n.shape[-1]
    r, z = rz[:, :hidden], rz[:, hidden:]
    d_r, d_z, d_n = _blocks(dx_gates, 3)
    xp.subtract(1, z, out=d_n)                              # dn~ = dh' (1 - z)(1 - n^2)
    d_n *= dh_new
    d_n -= d_n * (n * n)
    xp.subtract(r, r * r, out=d_r)                          # r (1 - r) dn~ h_n
    d_r *= d_n
    d_r *= h_n
    xp.subtract(z, z * z, out=d_z)                          # z (1 - z) dh' (h - n)
    d_z *= dh_new
    d_z *= h - n
    if dh_gates is not None:
        _gru_hidden_share(xp, dx_gates, r, out=dh_gates)
    return dh_new * z


def _gru_hidden_share(xp, dx_gates, r, out=None):
    """d(h_gates): the r and z blocks of d(x_gates), the n block times r."""
    hidden = r.shape[-1]
    if out is None:
        out = dx_gates.copy()
    else:
        out[...] = dx_gates
    out[:, 2 * hidden:] *= r
    return out


class GRUCell(Operation):
    """One GRU step. x_gates = x W_ih + b_ih and h_gates = h W_hh + b_hh (N, 3H) in blocks
    r, z, n; h (N, H) the previous state. Output h' (N, H):
    r = sigmoid(x_r + h_r), z = sigmoid(x_z + h_z), n = tanh(x_n + r h_n), h' = n + z (h - n).
    dn~ = dh' (1-z)(1-n^2), dx_gates = [dn~ h_n r(1-r), dh' (h-n) z(1-z), dn~],
    dh_gates = [the same r and z blocks, dn~ r], dh = dh' z"""

    def forward(self, x_gates, h_gates, h):
        h_new, saved = _gru_forward(get_array_module(x_gates), x_gates, h_gates, h)
        self.save_for_backward(*saved)
        return h_new

    def backward(self, dh_new):
        xp = get_array_module(dh_new)
        rz = self.saved[0]
        dx_gates = xp.empty(dh_new.shape[:-1] + (3 * dh_new.shape[-1],), dh_new.dtype)
        dh = _gru_backward(xp, self.saved, dh_new, dx_gates)
        need_x, need_h, need_state = self.needs_input_grad
        dh_gates = (_gru_hidden_share(xp, dx_gates, rz[:, :dh_new.shape[-1]]) if need_h
                    else None)
        return (dx_gates if need_x else None), dh_gates, (dh if need_state else None)


def gru_cell(x_gates, h_gates, h):
    """One GRU step from the input part x W_ih + b_ih and the hidden part h W_hh + b_hh of the
    gate pre-activations (N, 3H, blocks r, z, n) and the state h (N, H); returns the next h
    (see GRUCell).

    >>> import numpy as np
    >>> from autograd import Tensor
    >>> gru_cell(Tensor(data=np.zeros((1, 6))), Tensor(data=np.zeros((1, 6))),
    ...          Tensor(data=np.ones((1, 2)))).to_numpy()           # z = 1/2, n = 0
    array([[0.5, 0.5]])
    """
    _check_cell("gru_cell", x_gates, h_gates, h, 3)
    return GRUCell()(x_gates, h_gates, h)


def _blocks(array, count):
    """The ``count`` gate blocks of ``array`` (N, count * H) as views."""
    width = array.shape[-1] // count
    return tuple(array[:, k * width:(k + 1) * width] for k in range(count))


def _check_cell(name, x_gates, h_gates, state, count):
    for tensor in (x_gates, h_gates, state):
        check_tensor(tensor, name)
    if state.ndim != 2:
        raise ValueError(f"{name}: expected a 2-D state (batch, hidden), got shape "
                         f"{tuple(state.shape)}")
    batch, hidden = state.shape
    expected = (batch, count * hidden)
    if tuple(x_gates.shape) != expected or tuple(h_gates.shape) != expected:
        raise ValueError(f"{name}: expected x_gates and h_gates of shape {expected} ({count} "
                         f"gate blocks of the cell's width {hidden}), got "
                         f"{tuple(x_gates.shape)} and {tuple(h_gates.shape)}")
    dtypes = {x_gates.dtype, h_gates.dtype, state.dtype}
    if len(dtypes) != 1 or x_gates.dtype.kind != "f":
        raise TypeError(f"{name}: expected floating inputs of one dtype, got "
                        f"{x_gates.dtype}, {h_gates.dtype} and {state.dtype}")
