"""SINGA's Tensor indexing under the hook (autograd/singa/indexing.py): the program's ``t[i]``
keeps the indexed axis, autograd's own code keeps NumPy's indexing, and uninstall restores it."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import autograd
import autograd.singa
from autograd import Tensor


def numpy_reference(array, key):
    """SINGA's result: NumPy's, with every axis an integer removed put back (length 1)."""
    keys = key if isinstance(key, tuple) else (key,)
    integer_axes = tuple(axis for axis, k in enumerate(keys) if isinstance(k, int))
    return np.expand_dims(array[key], integer_axes)


@st.composite
def array_and_key(draw):
    shape = draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    keys = []
    for size in shape[:draw(st.integers(1, len(shape)))]:
        if draw(st.booleans()):
            keys.append(draw(st.integers(-size, size - 1)))
        else:
            start = draw(st.integers(0, size - 1))
            keys.append(slice(start, draw(st.integers(start + 1, size))))
    key = keys[0] if len(keys) == 1 and draw(st.booleans()) else tuple(keys)
    return np.arange(np.prod(shape), dtype=np.float32).reshape(shape), key


@given(array_and_key())
def test_program_indexing_keeps_integer_axes(case):
    array, key = case
    autograd.singa.install()
    try:
        got = Tensor(data=array)[key].to_numpy()
    finally:
        autograd.singa.uninstall()
    want = numpy_reference(array, key)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_last_row_and_its_gradient(singa):
    x = Tensor(data=np.arange(6, dtype=np.float32).reshape(3, 2), stores_grad=True)
    row = x[-1]
    assert row.shape == (1, 2)
    np.testing.assert_array_equal(row.to_numpy(), [[4.0, 5.0]])
    np.testing.assert_array_equal(x[np.int64(0), 1].to_numpy(), [[1.0]])
    (param, grad), = autograd.backward((row * Tensor(data=[[2.0, 3.0]])).sum())
    assert param is x
    np.testing.assert_array_equal(grad.to_numpy(), [[0, 0], [0, 0], [2, 3]])


def test_forms_singa_refuses_keep_numpys_meaning(singa):
    array = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = Tensor(data=array)
    for key in ([2, 0], (Ellipsis, 1), (None, 1), array[:, 0] > 3):
        np.testing.assert_array_equal(t[key].to_numpy(), array[key])
    with pytest.raises(IndexError):
        t[3]


def test_autograds_own_indexing_stays_numpys(singa):
    from singa import layer
    x = Tensor(data=np.ones((2, 5, 3), np.float32))
    # CudnnRNN's last step is x[-1] inside autograd: (batch, hidden), not (1, batch, hidden)
    assert layer.CudnnRNN(4, return_sequences=False)(x).shape == (2, 4)


def test_uninstall_restores_numpys_indexing():
    t = Tensor(data=np.zeros((3, 2), np.float32))
    autograd.singa.install()
    assert t[0].shape == (1, 2)
    autograd.singa.uninstall()
    assert t[0].shape == (2,)
    assert "__getitem__" not in Tensor.__dict__ or Tensor.__getitem__ is not \
        autograd.singa.indexing.singa_getitem
