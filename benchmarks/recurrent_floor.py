"""The hand-written NumPy floor of the recurrent language models: LSTM and GRU layers, forward
over all steps and backward through time, written directly on float32 arrays with PyTorch's
equations and gate order (LSTM i, f, g, o; GRU r, z, n) and SINGA's (in, out) weight layout.

Each layer projects the inputs of all steps with one GEMM, runs one (N, H) @ (H, G*H) GEMM and
the gate maths per step, and in backward gathers the gate gradients of all steps so that the
weight gradients are one GEMM each.
"""
import numpy as np

__all__ = ["lstm_forward", "lstm_backward", "gru_forward", "gru_backward"]


def _sigmoid(x, out=None):
    out = np.negative(x, out=out)
    np.exp(out, out=out)
    out += 1
    return np.reciprocal(out, out=out)


def lstm_forward(x, W_ih, W_hh, b_ih, b_hh):
    """x (T, N, I) -> hidden states (T, N, H) and what backward needs; zero initial state."""
    steps, batch, _ = x.shape
    hidden = W_hh.shape[0]
    projected = (x.reshape(steps * batch, -1) @ W_ih).reshape(steps, batch, 4 * hidden)
    projected += b_ih + b_hh
    gates = np.empty_like(projected)                       # activated i, f, g, o
    cells = np.zeros((steps + 1, batch, hidden), x.dtype)
    hs = np.zeros((steps + 1, batch, hidden), x.dtype)
    tanh_cells = np.empty((steps, batch, hidden), x.dtype)
    for t in range(steps):
        a = projected[t] + hs[t] @ W_hh
        act = gates[t]
        _sigmoid(a, out=act)
        np.tanh(a[:, 2 * hidden:3 * hidden], out=act[:, 2 * hidden:3 * hidden])
        i, f, g, o = (act[:, k * hidden:(k + 1) * hidden] for k in range(4))
        np.multiply(f, cells[t], out=cells[t + 1])
        cells[t + 1] += i * g
        np.tanh(cells[t + 1], out=tanh_cells[t])
        np.multiply(o, tanh_cells[t], out=hs[t + 1])
    return hs[1:], (x, gates, cells, hs, tanh_cells)


def lstm_backward(dhs, saved, W_ih, W_hh):
    """dhs (T, N, H) -> dx, dW_ih, dW_hh, db (the same for b_ih and b_hh)."""
    x, gates, cells, hs, tanh_cells = saved
    steps, batch, hidden = dhs.shape
    dgates = np.empty_like(gates)
    dh_next = np.zeros((batch, hidden), x.dtype)
    dc_next = np.zeros((batch, hidden), x.dtype)
    for t in range(steps - 1, -1, -1):
        act = gates[t]
        i, f, g, o = (act[:, k * hidden:(k + 1) * hidden] for k in range(4))
        dh = dhs[t] + dh_next
        tc = tanh_cells[t]
        dc = dc_next + dh * o * (1 - tc * tc)
        da = dgates[t]
        np.multiply(dc * g, i * (1 - i), out=da[:, :hidden])
        np.multiply(dc * cells[t], f * (1 - f), out=da[:, hidden:2 * hidden])
        np.multiply(dc * i, 1 - g * g, out=da[:, 2 * hidden:3 * hidden])
        np.multiply(dh * tc, o * (1 - o), out=da[:, 3 * hidden:])
        dc_next = dc * f
        dh_next = da @ W_hh.T
    flat = dgates.reshape(steps * batch, 4 * hidden)
    dW_hh = hs[:-1].reshape(steps * batch, hidden).T @ flat
    x2 = x.reshape(steps * batch, -1)
    dW_ih = x2.T @ flat
    dx = (flat @ W_ih.T).reshape(x.shape)
    return dx, dW_ih, dW_hh, flat.sum(axis=0)


def gru_forward(x, W_ih, W_hh, b_ih, b_hh):
    """x (T, N, I) -> hidden states (T, N, H) and what backward needs; zero initial state."""
    steps, batch, _ = x.shape
    hidden = W_hh.shape[0]
    projected = (x.reshape(steps * batch, -1) @ W_ih).reshape(steps, batch, 3 * hidden)
    projected += b_ih
    rz = np.empty((steps, batch, 2 * hidden), x.dtype)
    ns = np.empty((steps, batch, hidden), x.dtype)
    h_ns = np.empty((steps, batch, hidden), x.dtype)
    hs = np.zeros((steps + 1, batch, hidden), x.dtype)
    for t in range(steps):
        hg = hs[t] @ W_hh
        hg += b_hh
        _sigmoid(projected[t, :, :2 * hidden] + hg[:, :2 * hidden], out=rz[t])
        r, z = rz[t, :, :hidden], rz[t, :, hidden:]
        h_ns[t] = hg[:, 2 * hidden:]
        np.tanh(projected[t, :, 2 * hidden:] + r * h_ns[t], out=ns[t])
        np.subtract(hs[t], ns[t], out=hs[t + 1])
        hs[t + 1] *= z
        hs[t + 1] += ns[t]
    return hs[1:], (x, rz, ns, h_ns, hs)


def gru_backward(dhs, saved, W_ih, W_hh):
    """dhs (T, N, H) -> dx, dW_ih, dW_hh, db_ih, db_hh."""
    x, rz, ns, h_ns, hs = saved
    steps, batch, hidden = dhs.shape
    dx_gates = np.empty((steps, batch, 3 * hidden), x.dtype)
    dh_gates = np.empty_like(dx_gates)
    dh_next = np.zeros((batch, hidden), x.dtype)
    for t in range(steps - 1, -1, -1):
        r, z, n = rz[t, :, :hidden], rz[t, :, hidden:], ns[t]
        dh = dhs[t] + dh_next
        dn = dh * (1 - z) * (1 - n * n)
        dr = dn * h_ns[t] * r * (1 - r)
        dz = dh * (hs[t] - n) * z * (1 - z)
        dx_gates[t, :, :hidden] = dr
        dx_gates[t, :, hidden:2 * hidden] = dz
        dx_gates[t, :, 2 * hidden:] = dn
        dh_gates[t, :, :2 * hidden] = dx_gates[t, :, :2 * hidden]
        np.multiply(dn, r, out=dh_gates[t, :, 2 * hidden:])
        dh_next = dh * z + dh_gates[t] @ W_hh.T
    flat_x = dx_gates.reshape(steps * batch, 3 * hidden)
    flat_h = dh_gates.reshape(steps * batch, 3 * hidden)
    dW_hh = hs[:-1].reshape(steps * batch, hidden).T @ flat_h
    x2 = x.reshape(steps * batch, -1)
    dW_ih = x2.T @ flat_x
    dx = (flat_x @ W_ih.T).reshape(x.shape)
    return dx, dW_ih, dW_hh, flat_x.sum(axis=0), flat_h.sum(axis=0)
