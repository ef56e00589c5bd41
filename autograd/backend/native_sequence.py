"""An LSTM layer's loop over time in one compiled call (csrc/sequence_bindings.h) for
operations/recurrent_sequence.py: each step's h W_hh by the small products (native.py's
``product``) and its cell, forward and backward through time, with no return to Python between
steps. As in native.py, each function returns its result, or None where the kernels do not
apply, and the caller runs its portable NumPy loop.
"""
import numpy as np

from . import buffer_cache
from .native import (FEW_ROWS, _FLOAT32, _most_rows_of, _native, _new, _split_threads, _takes,
                     takes_rows)

__all__ = []     # through numpy_kernels.lstm_sequence_forward / _backward


def lstm_sequence_forward(x_gates, h0, c0, W_hh):
    """An LSTM layer's steps in one call (operations/recurrent_sequence.py's loop): each step's
    h W_hh by the small products, then its cell. ``(hs, cs, gates, tanh_cs)`` with hs and cs
    (T + 1, N, H) from h0 and c0, gates (T, N, 4H), tanh_cs (T, N, H); None where the kernels
    do not apply (the batch over the small products' 32 rows, W_hh not row-major float32)."""
    if not (takes_rows(h0, c0, W_hh) and _takes((x_gates,), 3)):
        return None
    steps, batch, width = x_gates.shape
    hidden = h0.shape[1]
    if (batch > FEW_ROWS or W_hh.strides[1] != 4 or W_hh.shape != (hidden, width)
            or width != 4 * hidden or h0.shape != (batch, hidden) or c0.shape != h0.shape):
        return None
    # from the buffer cache: a language model's gates are MBs a layer, fresh pages every step
    hs = buffer_cache.empty(np, (steps + 1, batch, hidden), _FLOAT32)
    cs = buffer_cache.empty(np, (steps + 1, batch, hidden), _FLOAT32)
    gates = buffer_cache.empty(np, (steps, batch, width), _FLOAT32)
    tanh_cs = buffer_cache.empty(np, (steps, batch, hidden), _FLOAT32)
    hs[0], cs[0] = h0, c0
    _native.lstm_sequence_forward(x_gates[:, None], hs[:, None], cs[:, None], gates[:, None],
                                  tanh_cs[:, None], _new(batch, width)[None, None], W_hh,
                                  _split_threads())
    return hs, cs, gates, tanh_cs


def lstm_sequence_backward(saved, dhs, dh_last, dc_last, W_hh_T):
    """Their backward through time: ``(da, dh0, dc0)`` from what lstm_sequence_forward saved
    (gates, cs, tanh_cs), dhs (T, N, H) and the last step's dh and dc (N, H); W_hh_T (4H, H)
    row-major or a transposed view. None where the kernels do not apply."""
    gates, cs, tanh_cs = saved
    if not (_takes((gates, cs, tanh_cs, dhs), 3) and takes_rows(dh_last, dc_last)
            and _takes((W_hh_T,), 2, any_layout=True)):
        return None
    steps, batch, width = gates.shape
    most = _most_rows_of(*W_hh_T.strides, *W_hh_T.shape)
    if most is None or batch > most or dhs.shape != tanh_cs.shape:
        return None
    hidden = width // 4
    da = buffer_cache.empty(np, gates.shape, _FLOAT32)
    dh0, dc0 = _new(batch, hidden), _new(batch, hidden)
    _native.lstm_sequence_backward(gates[:, None], cs[:, None], tanh_cs[:, None], dhs[:, None],
                                   dh_last[None, None], dc_last[None, None], da[:, None],
                                   dh0[None, None], dc0[None, None], W_hh_T, _split_threads())
    return da, dh0, dc0
