"""Compiled CPU kernels for float32 NumPy arrays, under the portable NumPy code.

NumPy runs one pass over memory per ufunc, on one core: a recurrent cell's gate nonlinearities
and state update are about fifteen passes and as many temporaries. ``autograd/backend/csrc``
holds C loops that do such a chain in one pass (for AVX-512, AVX2 or the baseline, chosen at
load), the small products of batches up to 32 that OpenBLAS runs slowly (and more rows by a
weight on cache lines), split over a C thread pool (``product``); an LSTM layer's loop over
time is in native_sequence.py, pooling's and the columns' wrappers in native_pooling.py, the
updates' in native_update.py, ReLU's in native_elementwise.py. ``pip install`` builds them
where a C compiler is found (``setup.py``: an optional extension).

Each function here returns the kernel's result, or ``None`` when the kernel does not apply
(not built, switched off, not float32 NumPy rows): the caller then runs its portable NumPy
code, which stays the reference every kernel is tested against (tests/backend/test_native_*).

>>> import autograd
>>> autograd.runtime.describe()["native_kernels"] in ("avx512", "avx2", "generic", "off",
...                                                   "not built")
True
"""
import numpy as np

from . import threads

try:
    from . import _native                      # type: ignore[attr-defined]
except ImportError:                            # built without a C compiler
    _native = None

__all__ = ["available", "enabled", "set_enabled", "instruction_set", "takes_rows",
           "takes_heads"]

_FLOAT32 = np.dtype(np.float32)
_state = {"enabled": _native is not None}


def available():
    """Whether the compiled kernels were built and load on this machine."""
    return _native is not None


def enabled():
    """Whether operations use the compiled kernels now."""
    return _state["enabled"]


def set_enabled(flag):
    """Use the compiled kernels (True, the default where they are built) or the portable NumPy
    code (False); returns the previous setting. True where they are not built is an error.

    >>> from autograd.backend import native
    >>> previous = native.set_enabled(False); native.enabled()
    False
    >>> _ = native.set_enabled(previous)
    """
    if not isinstance(flag, bool):
        raise TypeError(f"set_enabled: expected True or False, got {flag!r}")
    if flag and _native is None:
        raise RuntimeError("set_enabled: the compiled kernels are not built in this install "
                           "(reinstall with a C compiler: pip install --force-reinstall "
                           "tapegrad)")
    previous = _state["enabled"]
    _state["enabled"] = flag
    return previous


def instruction_set():
    """The build in use: ``"avx512"``, ``"avx2"`` or ``"generic"``; ``"off"`` when switched
    off, ``"not built"`` without the compiled module."""
    if _native is None:
        return "not built"
    return _native.get_instruction_set() if _state["enabled"] else "off"


def takes_rows(*arrays):
    """Whether the kernels apply: switched on, and float32 NumPy arrays of 2-D rows, contiguous
    within a row."""
    return _takes(arrays, 2)


def takes_heads(*arrays):
    """Whether the attention kernels apply: switched on, and float32 NumPy arrays of 4-D
    (batch, heads, rows, columns) with contiguous rows."""
    return _takes(arrays, 4)


def _takes(arrays, ndim, any_layout=False):
    """Switched on, and float32 NumPy arrays of ``ndim`` dimensions whose strides are not
    negative and (unless ``any_layout``) whose last axis is contiguous, as the C operand
    readers require."""
    if not _state["enabled"]:
        return False
    for array in arrays:
        if (type(array) is not np.ndarray or array.dtype != _FLOAT32 or array.ndim != ndim
                or (not any_layout and array.strides[-1] != 4 and array.shape[-1] > 1)
                or min(array.strides) < 0):
            return False
    return True


def _new(rows, width):
    return np.empty((rows, width), _FLOAT32)


def lstm_forward(x_gates, h_gates, c, h_out=None):
    """One LSTM step (operations/recurrent.py's ``_lstm_forward``): ``(h', c', (gates, c,
    tanh(c')))``, h' written into ``h_out`` when given; None where the kernel does not apply."""
    if not takes_rows(x_gates, h_gates, c) or (h_out is not None and not takes_rows(h_out)):
        return None
    rows, hidden = c.shape
    h_new = _new(rows, hidden) if h_out is None else h_out
    c_new, gates, tanh_c = _new(rows, hidden), _new(rows, 4 * hidden), _new(rows, hidden)
    _native.lstm_forward(x_gates, h_gates, c, h_new, c_new, gates, tanh_c)
    return h_new, c_new, (gates, c, tanh_c)


def lstm_backward(saved, dh, dc_next, out=None):
    """Its backward (``_lstm_backward``): ``(da, dc)``, da written into ``out`` when given;
    None where the kernel does not apply."""
    gates, c, tanh_c = saved
    if not takes_rows(gates, c, tanh_c, dh, dc_next) or (out is not None and
                                                         not takes_rows(out)):
        return None
    rows, hidden = c.shape
    da = _new(rows, 4 * hidden) if out is None else out
    dc = _new(rows, hidden)
    _native.lstm_backward(gates, c, tanh_c, dh, dc_next, da, dc)
    return da, dc


def gru_forward(x_gates, h_gates, h, h_out=None):
    """One GRU step (``_gru_forward``): ``(h', (rz, n, h_n, h))``, h' written into ``h_out``
    when given; None where the kernel does not apply."""
    if not takes_rows(x_gates, h_gates, h) or (h_out is not None and not takes_rows(h_out)):
        return None
    rows, hidden = h.shape
    h_new = _new(rows, hidden) if h_out is None else h_out
    rz, n = _new(rows, 2 * hidden), _new(rows, hidden)
    _native.gru_forward(x_gates, h_gates, h, h_new, rz, n)
    return h_new, (rz, n, h_gates[:, 2 * hidden:], h)


def gru_backward(saved, dh, dx_gates, dh_gates=None):
    """Its backward (``_gru_backward``, and ``_gru_hidden_share`` into ``dh_gates`` when
    given): writes d(x_gates) into ``dx_gates`` and returns dh' z; None where the kernel does
    not apply."""
    rz, n, h_n, h = saved
    arrays = (rz, n, h_n, h, dh, dx_gates) + (() if dh_gates is None else (dh_gates,))
    if not takes_rows(*arrays):
        return None
    direct = _new(*h.shape)
    _native.gru_backward(rz, n, h_n, h, dh, dx_gates, dh_gates, direct)
    return direct


_INT64 = np.dtype(np.int64)


def softmax_cross_entropy(rows, targets, probabilities, losses):
    """Each row's softmax into ``probabilities`` (R, V) and -log of its target's probability
    into ``losses`` (R,) (cross_entropy.py's ``softmax_rows``, a chunk of rows at a time);
    returns True, or None where the kernel does not apply. A target outside [0, V) is a
    ValueError."""
    if (not takes_rows(rows, probabilities) or not _vector(losses, optional=False)
            or type(targets) is not np.ndarray):
        return None
    _native.softmax_cross_entropy(rows, probabilities, _int64(targets), losses)
    return True


def _int64(indices):
    """Integer indices as the contiguous int64 vector the kernels read (no copy when so)."""
    return np.ascontiguousarray(indices, dtype=_INT64)


def gelu_forward(flat_x, flat_y, flat_slope):
    """The exact GELU of a 1-D float32 array into ``flat_y`` and its slope into
    ``flat_slope`` (elementwise.py's ``_gelu_float32_into``); True, or None where the kernel
    does not apply."""
    if not (_state["enabled"] and flat_x.size
            and all(_vector(a, optional=False) for a in (flat_x, flat_y, flat_slope))):
        return None
    _native.gelu_forward(flat_x[None], flat_y[None], flat_slope[None])
    return True


def _vector(array, optional=True):
    if array is None:
        return optional
    return (type(array) is np.ndarray and array.dtype == _FLOAT32 and array.ndim == 1
            and (array.strides[0] == 4 or array.shape[0] <= 1))


def layer_norm_forward(x, scale, bias, eps, y, xhat, invstd):
    """Layer normalization of the rows of ``x`` (M, D) into ``y`` and ``xhat`` (M, D) and
    ``invstd`` (M,) (normalization.py's ``layer_norm_forward``), the rows split over the
    compiled kernels' threads; scale and bias (D,) or None. True, or None where the kernel does
    not apply."""
    if not (takes_rows(x, y, xhat) and _vector(scale) and _vector(bias)
            and _vector(invstd, optional=False)):
        return None
    _native.layer_norm_forward(x, scale, bias, float(eps), y, xhat, invstd, _split_threads())
    return True


def layer_norm_backward(dy, xhat, invstd, scale, dx, dscale, dbias):
    """Its backward, the rows split over the threads: dx (M, D) written (None: not wanted),
    dscale and dbias (D,) added to (None: not wanted). True, or None where the kernel does not
    apply."""
    if not (takes_rows(dy, xhat) and (dx is None or takes_rows(dx))
            and _vector(invstd, optional=False) and _vector(scale) and _vector(dscale)
            and _vector(dbias)):
        return None
    _native.layer_norm_backward(dy, xhat, invstd, scale, dx, dscale, dbias, _split_threads())
    return True


def scatter_rows_add(target, index, values):
    """``target[index[r]] += values[r]`` for the rows of float32 ``values`` (R, D) into
    ``target`` (V, D), indices repeating allowed (operations/utils.py's ``scatter_add`` for an
    embedding's gradient), a negative index counting from the end as in NumPy; True, or None
    where the kernel does not apply. An index outside [-V, V) is an IndexError, and then
    nothing was added."""
    if (not takes_rows(target, values) or type(index) is not np.ndarray or index.ndim != 1
            or not (index.dtype.kind == "i" or index.dtype.kind == "u" and
                    index.dtype.itemsize < 8) or target.shape[1] != values.shape[1]):
        return None
    _native.scatter_rows_add(target, _int64(index), values)
    return True


def epilogue(rows, bias, residual, relu):
    """``rows`` (O, L) += bias (O,) + residual (O, L), then max(rows, 0) where ``relu``, in
    place and in one pass, the rows split over autograd's threads (convolution.py's
    ``_epilogue``; bias and residual None for none); True, or None where the kernel does not
    apply."""
    if not (takes_rows(rows) and (residual is None or takes_rows(residual)) and _vector(bias)):
        return None
    _native.epilogue(rows, bias, residual, relu, _split_threads())
    return True


def attention_softmax(rows, queries, causal):
    """The softmax of each row of attention scores ``rows`` (B * Tq, Tk) in place; with
    ``causal``, row r (query r mod ``queries``) keeps the keys up to its own and gets 0 after
    (attention.py's ``masked_softmax``). True, or None where the kernel does not apply."""
    if not takes_rows(rows):
        return None
    _native.attention_softmax(rows, queries, causal)
    return True


def attention_forward(q, k, v, p, y, scale, causal, start, stop):
    """Heads [start, stop) (of batch * heads) of p = softmax(q k^T scale) over the keys (with
    ``causal`` the later keys 0) and y = p v, into p (N, H, Tq, Tk, rows contiguous) and y (N,
    H, Tq, Dv); q (N, H, Tq, D), k (N, H, Tk, D), v (N, H, Tk, Dv). True, or None where the
    kernel does not apply (attention.py's ``fused_forward``)."""
    if not takes_heads(q, k, v, p, y):
        return None
    _native.attention_forward(q, k, v, p, y, scale, causal, start, stop)
    return True


def attention_backward(q, k, v, p, y, dy, dq, dk, dv, scale, causal, start, stop):
    """Their gradients for heads [start, stop): dv = p^T dy, dS = p * (dy v^T - rowsum(dy *
    y)), dq = dS k scale, dk = dS^T q scale, into dq, dk, dv (``causal`` as the forward had
    it). True, or None where the kernel does not apply (attention.py's ``fused_backward``)."""
    if not takes_heads(q, k, v, p, y, dy, dq, dk, dv):
        return None
    _native.attention_backward(q, k, v, p, y, dy, dq, dk, dv, scale, causal, start, stop)
    return True


def product(a, b, out, bias=None):
    """``out = a @ b`` (``+ bias``, a float32 vector of out's width added to every row, where
    given) for 2-D float32 NumPy arrays by the compiled small products, split over autograd's
    threads, where they beat NumPy's BLAS (matmul.py's ``matmul``); True, or None where they do
    not apply (then nothing was written). Measured against OpenBLAS at 2 threads
    (benchmarks/NOTES.md, fifteenth session):

    - one row times a matrix (a GEMV) or 2-32 rows of a, b 32 wide or more and 32 tall or
      more: 0.3-0.8x OpenBLAS's time (which packs all of b first); up to 16 rows where b is a
      transposed matrix read in place (a layer's input gradient dy W^T);
    - an inner dimension of 8 or less (a weight gradient x^T dy of a batch of 1 to 8) with 4096
      outputs or more: 0.2-0.7x;
    - more rows (:func:`many_rows_fit`) by a b whose rows start on cache lines, as a
      parameter's do: 0.55-0.97x alone (twenty-fifth session); in whole steps a batch-8 LSTM
      language model's no_grad forward 0.92x its time, an MLP's (batch 128) 0.95x, a small
      transformer's 0.96-1.0x (c split by rows where b is under 1,024 columns wide).

    Elsewhere (b under 64 columns or 32 rows, b off its lines, 2^30 multiply-adds or more)
    OpenBLAS is as fast or faster.
    """
    # the checks of _takes written out for the three operands: a small product is a few
    # microseconds, and these run before each one
    if not (_state["enabled"] and type(a) is np.ndarray and type(b) is np.ndarray
            and type(out) is np.ndarray and a.dtype == _FLOAT32 and b.dtype == _FLOAT32
            and out.dtype == _FLOAT32 and a.ndim == 2 and b.ndim == 2 and out.ndim == 2
            and out.flags.c_contiguous):
        return None
    a_row, a_column = a.strides
    b_row, b_column = b.strides
    if a_row < 0 or a_column < 0 or b_row < 0 or b_column < 0:
        return None
    rows, inner = a.shape
    columns = b.shape[1]
    most = _most_rows_of(b_row, b_column, inner, columns)
    if most is None or most == _FEW_ROWS_TRANSPOSED and a_column != 4 and inner > 1:
        return None          # b neither row- nor column-contiguous, or a's rows are strided
    if not (product_shape_fits(rows, inner, columns, most) or most == FEW_ROWS
            and many_rows_fit(rows, inner, columns) and _on_cache_lines(b)):
        return None
    if bias is None:
        _native.product(a, b, out, _split_threads())
        return True
    if not (type(bias) is np.ndarray and bias.dtype == _FLOAT32 and bias.ndim == 1
            and bias.shape[0] == columns and (bias.strides[0] == 4 or columns == 1)):
        return None
    _native.product(a, b, out, _split_threads(), PRODUCT_MIN_WORK_PER_THREAD, bias)
    return True


def product_shape_fits(rows, inner, columns, most=None):
    """Whether the compiled products take a (rows, inner) @ (inner, columns) product by its
    shape (where a and b's layouts allow, :func:`product` checks them): a short inner
    dimension with many outputs, or one row, or up to ``most`` rows (FEW_ROWS by default: b
    row-major) of a wide and long enough b."""
    if inner <= _SHORT_INNER:
        return rows * columns >= _SHORT_INNER_MIN_OUTPUTS
    return rows == 1 or (rows <= (FEW_ROWS if most is None else most)
                         and columns >= _FEW_ROWS_MIN_COLUMNS and inner >= _FEW_ROWS_MIN_INNER)


def many_rows_fit(rows, inner, columns):
    """Whether the compiled products take more than FEW_ROWS rows by the shape (b's rows must
    also start on cache lines: :func:`takes_many_rows`): b at least _MANY_ROWS_MIN_COLUMNS wide,
    32 to _MANY_ROWS_MOST_INNER tall, and fewer than _MANY_ROWS_MOST_WORK multiply-adds (the
    largest, a 10,000-word head at 1,120 rows, tie with OpenBLAS)."""
    return (rows > FEW_ROWS and columns >= _MANY_ROWS_MIN_COLUMNS
            and _FEW_ROWS_MIN_INNER <= inner <= _MANY_ROWS_MOST_INNER
            and rows * inner * columns < _MANY_ROWS_MOST_WORK)


def takes_many_rows(a, b):
    """Whether :func:`product` takes ``a @ b`` as a product of many rows, for 2-D NumPy a and b
    of one dtype (its callers' checks; product makes the rest): float32, the shape as
    :func:`many_rows_fit` says, b's rows starting on 64-byte lines. A caller asks before it
    allocates c, which the fused GEMM would otherwise allocate again."""
    return (_state["enabled"] and a.dtype == _FLOAT32
            and many_rows_fit(a.shape[0], a.shape[1], b.shape[1]) and _on_cache_lines(b))


def _on_cache_lines(b):
    """Whether b's rows are contiguous and each starts on a 64-byte line: the products' vector
    loads of a row then read one line each (16-48 bytes off, 1.15-1.6x the time)."""
    row, column = b.strides
    return column == 4 and row % 64 == 0 and b.ctypes.data % 64 == 0


def _most_rows_of(row_stride, column_stride, height, width):
    """The most rows of a that the few-rows products take by a 2-D b of these strides (bytes)
    and shape: FEW_ROWS where b's rows are contiguous, _FEW_ROWS_TRANSPOSED where its columns
    are (a transposed matrix, read as dot products), None where neither (product_bindings.h)."""
    if column_stride == 4 or width <= 1:
        return FEW_ROWS
    if row_stride == 4 or height <= 1:
        return _FEW_ROWS_TRANSPOSED
    return None


PRODUCT_MIN_WORK_PER_THREAD = 1 << 15     # the C kernel's default
_SHORT_INNER = 8              # the C kernel's PRODUCT_SHORT_INNER: summed row by row of out
_SHORT_INNER_MIN_OUTPUTS = 4096
FEW_ROWS = 32                 # b with contiguous rows: the most rows of a the products take
_FEW_ROWS_TRANSPOSED = 16     # b a transposed matrix (dot products): 1.1-2x OpenBLAS at 32 rows
_FEW_ROWS_MIN_COLUMNS = 32
_FEW_ROWS_MIN_INNER = 32      # a short b packs quickly: (32, 16) @ (16, 512) 1.5x OpenBLAS's
_MANY_ROWS_MIN_COLUMNS = 64     # 32 columns lost to OpenBLAS from 512 rows (split by columns)
_MANY_ROWS_MOST_INNER = 1024  # a 32-column panel of b up to 128 KB, in L2
_MANY_ROWS_MOST_WORK = 1 << 30


def _split_threads():
    """autograd's thread count, with the runtime's first-split settings applied before the
    compiled kernels' pool first splits."""
    count = threads.get_num_threads()
    if count > 1 and threads.first_split_hooks:
        threads.run_first_split_hooks()
    return count
