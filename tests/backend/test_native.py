"""The compiled kernels' module (autograd/backend/native.py): clear errors for bad operands, the
rule for when a kernel applies, the switch, an install without the module, and CI's promise
to build it. The kernels themselves: test_native_recurrent.py, test_native_softmax.py,
test_native_rows.py."""
import os

import numpy as np
import pytest

import autograd
from autograd.backend import native

pytestmark = pytest.mark.skipif(not native.available(),
                                reason="the compiled kernels are not built in this install")


def test_bad_operands_are_clear_errors():
    rows = np.zeros((2, 3), np.float32)
    gates = np.zeros((2, 12), np.float32)
    out = [np.zeros((2, 3), np.float32) for _ in range(3)]
    with pytest.raises(ValueError, match="lstm_forward: expected h_gates of shape \\(2, 12\\), "
                                         "got \\(2, 8\\)"):
        native._native.lstm_forward(gates, np.zeros((2, 8), np.float32), rows, *out, gates)
    with pytest.raises(ValueError, match="lstm_forward: expected x_gates as a 2-D float32"):
        native._native.lstm_forward(gates.astype(np.float64), gates, rows, *out, gates)
    with pytest.raises(ValueError, match="lstm_forward: expected c as a 2-D float32 array with "
                                         "contiguous rows"):
        native._native.lstm_forward(gates, gates, np.zeros((3, 2), np.float32).T, *out, gates)
    with pytest.raises(TypeError, match="lstm_forward: expected 7 arrays, got 2"):
        native._native.lstm_forward(gates, gates)
    read_only = np.zeros((2, 3), np.float32)
    read_only.flags.writeable = False
    with pytest.raises(ValueError, match="lstm_forward: h_out: .*read-only"):
        native._native.lstm_forward(gates, gates, rows, read_only, out[1], out[2], gates)
    with pytest.raises(TypeError, match="gru_forward: h_out: .*not .list."):
        native._native.gru_forward(gates, gates, rows, [1.0], out[0], out[1])
    with pytest.raises(ValueError, match="'sse9' is not built or not supported"):
        native._native.set_instruction_set("sse9")


def test_the_kernels_apply_only_to_float32_numpy_rows():
    x = np.zeros((2, 8), np.float32)
    c = np.zeros((2, 2), np.float32)
    assert native.lstm_forward(x, x, c) is not None
    assert native.lstm_forward(x.astype(np.float64), x, c) is None
    assert native.lstm_forward(x, x, np.zeros((4, 2), np.float32)[::2]) is not None
    assert native.lstm_forward(x, x, np.zeros((2, 4), np.float32)[:, ::2]) is None
    assert native.lstm_forward(x[None], x, c) is None
    # rows stored last to first (a negative row stride) are the portable code's, not an error
    assert native.lstm_forward(x, x, c[::-1]) is None
    assert native.takes_heads(x[None, None]) and not native.takes_heads(x[None, None, ::-1])
    assert native.lstm_forward(x, x, c, h_out=np.zeros((2, 2))) is None
    previous = native.set_enabled(False)
    try:
        assert native.lstm_forward(x, x, c) is None and native.instruction_set() == "off"
        assert autograd.runtime.describe()["native_kernels"] == "off"
    finally:
        native.set_enabled(previous)
    assert native.instruction_set() in ("generic", "avx2", "avx512")
    with pytest.raises(TypeError, match="set_enabled: expected True or False, got 1"):
        native.set_enabled(1)


def test_without_the_compiled_module(monkeypatch):
    monkeypatch.setattr(native, "_native", None)
    monkeypatch.setitem(native._state, "enabled", False)
    assert not native.available() and native.instruction_set() == "not built"
    with pytest.raises(RuntimeError, match="set_enabled: the compiled kernels are not built"):
        native.set_enabled(True)


def test_ci_builds_them():
    """CI installs from source with a C compiler: the kernels must be there, or every speed
    figure would be measured on the portable code without anyone noticing."""
    if not os.environ.get("CI"):
        pytest.skip("only CI promises a C compiler")
    assert native.available()
