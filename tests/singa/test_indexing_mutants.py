"""SINGA's indexing under the hook (autograd/singa/indexing.py; ``singa_getitem`` itself is
not mutated, see its pragma): survivors of the full mutation run killed here: booleans are not
integers, keys longer than the shape and other forms are left to NumPy, the bounds and the
IndexError message word for word, which modules count as autograd's, install/uninstall."""
import numpy as np
import pytest

import autograd
import autograd.singa
from autograd import Tensor
from autograd.singa import indexing
from autograd.singa.indexing import singa_key


def test_integers_are_ints_and_numpy_integers_but_not_booleans():
    for key in (0, -1, np.int64(2), np.int8(1), np.uint16(0)):
        assert indexing._is_integer(key)
    for key in (True, False, np.bool_(True), 1.0, "1", None, slice(1)):
        assert not indexing._is_integer(key)


def test_booleans_and_other_forms_keep_numpys_meaning():
    for key in (True, (0, True), np.bool_(False), (0, Ellipsis), (None, 0), 1.5, [0, 1]):
        assert singa_key(key, (3, 4)) is key
    too_long = (0, 0, 0)
    assert singa_key(too_long, (3, 4)) is too_long
    assert singa_key((0, 1), (3, 4)) == (slice(0, 1), slice(1, 2))     # exactly ndim keys


def test_each_integer_becomes_a_one_long_slice_of_its_axis():
    assert singa_key(-3, (3, 4)) == (slice(0, 1),)
    assert singa_key(2, (3, 4)) == (slice(2, 3),)
    assert singa_key((slice(None), -1), (3, 4)) == (slice(None), slice(3, 4))
    assert singa_key((np.int32(-4), 0), (4, 1)) == (slice(0, 1), slice(0, 1))


def test_out_of_range_integers_are_numpys_index_error_word_for_word():
    for key, axis, size in ((3, 0, 3), (-4, 0, 3), ((0, 4), 1, 4), ((0, -5), 1, 4)):
        with pytest.raises(IndexError) as info:
            singa_key(key, (3, 4))
        k = key if isinstance(key, int) else key[1]
        assert str(info.value) == f"index {k} is out of bounds for axis {axis} with size {size}"


def test_which_callers_count_as_autograds_own_code():
    assert indexing._from_autograd("autograd")
    assert indexing._from_autograd("autograd.layers.recurrent")
    for name in ("autogradx", "autograd_extra.mod", "my.autograd", "", "__main__"):
        assert not indexing._from_autograd(name)


def test_install_and_uninstall_swap_the_methods():
    t = Tensor(data=np.arange(6, dtype=np.float32).reshape(2, 3))
    indexing.install_indexing()
    try:
        assert Tensor.__getitem__ is indexing.singa_getitem
        assert t[1].shape == (1, 3)
    finally:
        indexing.uninstall_indexing()
    assert Tensor.__getitem__ is indexing._numpy_getitem
    assert t[1].shape == (3,)
    indexing.uninstall_indexing()                          # harmless twice
    assert Tensor.__getitem__ is indexing._numpy_getitem


def test_a_tensor_index_with_a_key_tuple_under_the_hook_matches_numpy(singa):
    array = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    t = Tensor(data=array)
    np.testing.assert_array_equal(t[1, -1].to_numpy(), array[1:2, 2:3])
    np.testing.assert_array_equal(t[True].to_numpy(), array[True])
    with pytest.raises(IndexError):
        t[0, 0, 0, 0]
    assert autograd.singa.installed() is not None
