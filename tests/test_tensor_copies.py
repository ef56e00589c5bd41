"""Tensor's copying and moving methods (SINGA's clone, copy, deepcopy, to_host, copy_data,
as_type): each gives new arrays, or the same ones, exactly as documented."""
import copy

import numpy as np
import pytest

import autograd
from autograd import Tensor


def _source():
    t = Tensor(data=np.arange(6.0, dtype=np.float32).reshape(2, 3), stores_grad=True)
    t.name = "w"
    return t


@pytest.mark.parametrize("how", ["clone", "copy", "deepcopy", "copy.copy", "copy.deepcopy"])
def test_copies_hold_their_own_array_with_the_same_values_and_flags(how):
    source = _source()
    made = {"clone": lambda t: t.clone(), "copy": lambda t: t.copy(),
            "deepcopy": lambda t: t.deepcopy(), "copy.copy": copy.copy,
            "copy.deepcopy": copy.deepcopy}[how](source)
    assert made is not source and made.data is not source.data
    assert not np.shares_memory(made.data, source.data)
    np.testing.assert_array_equal(made.to_numpy(), np.arange(6.0).reshape(2, 3))
    assert made.dtype == np.float32 and made.device is source.device
    assert (made.name, made.stores_grad, made.requires_grad) == ("w", True, True)
    assert made.creator is None
    made.data[0, 0] = 100.0                             # independent in both directions
    assert source.data[0, 0] == 0.0
    source.data[1, 1] = -5.0
    assert made.data[1, 1] == 4.0


def test_a_copy_of_a_recorded_result_is_outside_the_graph():
    x = _source()
    y = x * 2
    assert y.creator is not None
    copied = y.clone()
    assert copied.creator is None
    np.testing.assert_array_equal(copied.to_numpy(), 2 * np.arange(6.0).reshape(2, 3))


def test_to_host_on_the_cpu_keeps_the_tensor_and_its_array():
    t = _source()
    array = t.data
    assert t.to_host() is t and t.data is array
    assert t.device is autograd.device.cpu()


def test_copy_data_writes_values_into_the_existing_array():
    t = _source()
    array = t.data
    assert t.copy_data(Tensor(data=np.full((2, 3), 7.0, np.float32))) is t
    assert t.data is array
    np.testing.assert_array_equal(array, np.full((2, 3), 7.0))
    t.copy_data(np.arange(6.0).reshape(2, 3))          # a float64 array: cast on the way in
    assert t.dtype == np.float32
    np.testing.assert_array_equal(array, np.arange(6.0).reshape(2, 3))
    with pytest.raises(ValueError, match=r"copy_data: expected shape \(2, 3\), got \(3, 2\)"):
        t.copy_data(np.zeros((3, 2)))


def test_as_type_converts_a_copy():
    t = Tensor(data=[1.25, -2.5])
    converted = t.as_type(np.float64)
    assert converted.dtype == np.float64 and t.dtype == np.float32
    assert not np.shares_memory(converted.data, t.data)
    np.testing.assert_array_equal(converted.to_numpy(), [1.25, -2.5])
    np.testing.assert_array_equal(t.as_type(np.int32).to_numpy(), np.array([1, -2], np.int32))


def test_as_type_keeps_requires_grad():
    constant = Tensor(data=[1.0, 2.0], requires_grad=False)
    assert constant.as_type(np.float64).requires_grad is False
    variable = Tensor(data=[1.0, 2.0], requires_grad=True)
    assert variable.as_type(np.float64).requires_grad is True


def test_repr_shows_values_dtype_device_and_flags():
    assert repr(Tensor(data=[1.0, 2.0])) == "Tensor([1. 2.], dtype=float32, device=cpu)"
    w = Tensor(data=[[1.0, 2.0]], stores_grad=True)
    assert repr(w) == "Tensor([[1. 2.]], dtype=float32, device=cpu, stores_grad=True)"
    assert repr(w * 2) == "Tensor([[2. 4.]], dtype=float32, device=cpu, creator=MulScalar)"
    # the rows of a matrix line up under the first one, past "Tensor("
    assert repr(Tensor(data=np.arange(6.0).reshape(2, 3))) == (
        "Tensor([[0. 1. 2.]\n        [3. 4. 5.]], dtype=float64, device=cpu)")


def test_numpy_asarray_of_a_tensor_shares_or_converts():
    t = Tensor(data=[1.5, 2.5])
    assert np.asarray(t) is t.data
    converted = np.asarray(t, dtype=np.float64)
    assert converted.dtype == np.float64 and converted.tolist() == [1.5, 2.5]
    from tests.foreign_device import tensor_on_a_foreign_device
    with pytest.raises(TypeError, match=r"^Tensor on gpu:7: call to_numpy\(\) to copy it to "
                                        r"the host$"):
        np.asarray(tensor_on_a_foreign_device([1.0]))


def test_copies_keep_requires_grad_and_initialisers_default_to_the_unit_ranges():
    from autograd import manual_seed
    from autograd.device import cpu
    constant = Tensor(data=[1.0, 2.0], requires_grad=False)
    assert constant.copy().requires_grad is False and constant.deepcopy().requires_grad is False
    assert Tensor(data=[1.0]).copy().requires_grad is True
    manual_seed(9)
    normal = Tensor(shape=(20000,), dtype=np.float64).gaussian().to_numpy()
    assert abs(normal.mean()) < 0.03 and abs(normal.std() - 1.0) < 0.03       # N(0, 1)
    for dtype in (np.float32, np.float64):
        manual_seed(9)
        uniform = Tensor(shape=(1000,), dtype=dtype).uniform().to_numpy()      # U[0, 1)
        manual_seed(9)
        np.testing.assert_array_equal(uniform, cpu().random.random((1000,), dtype=dtype))


def test_copy_data_to_from_defaults_bounds_layouts_and_messages():
    import re
    from autograd.tensor import copy_data_to_from
    src = Tensor(data=np.arange(1.0, 7.0, dtype=np.float32).reshape(2, 3))   # flat: 1..6
    dst = Tensor(data=np.zeros((2, 2), np.float32))
    copy_data_to_from(dst, src, 3)                                     # offsets default to 0
    np.testing.assert_array_equal(dst.to_numpy(), [[1.0, 2.0], [3.0, 0.0]])
    full = Tensor(data=np.zeros(6, np.float32))
    copy_data_to_from(full, src, 2, dst_offset=4, src_offset=4)       # both ends exactly fit
    np.testing.assert_array_equal(full.to_numpy(), [0, 0, 0, 0, 5, 6])
    fortran = Tensor(data=np.asfortranarray(np.zeros((2, 3), np.float32)))
    copy_data_to_from(fortran, src, 4, dst_offset=1, src_offset=2)   # C order, also when dst
    np.testing.assert_array_equal(fortran.to_numpy(), [[0, 3, 4], [5, 6, 0]])  # is not
    assert src.to_numpy().tolist() == [[1, 2, 3], [4, 5, 6]]
    head = "copy_data_to_from: "
    for args, kwargs, error, message in [
            ((np.zeros(2), src, 1), {}, TypeError, "expected two Tensors, got ndarray and "
                                                   "Tensor"),
            ((full, [1.0], 1), {}, TypeError, "expected two Tensors, got Tensor and list"),
            ((full, Tensor(data=np.zeros(2)), 1), {}, TypeError,
             "dst is float32 but src is float64; cast one explicitly with as_type()"),
            ((full, src, 1), {"dst_offset": -1}, ValueError,
             "dst_offset must be a non-negative int, got -1"),
            ((full, src, 1), {"src_offset": True}, ValueError,
             "src_offset must be a non-negative int, got True"),
            ((full, src, 3), {"src_offset": 4}, ValueError,
             "cannot copy 3 elements from offset 4 of 6 into offset 0 of 6"),
            ((full, src, 3), {"dst_offset": 4}, ValueError,
             "cannot copy 3 elements from offset 0 of 6 into offset 4 of 6")]:
        with pytest.raises(error, match=f"^{re.escape(head + message)}$"):
            copy_data_to_from(*args, **kwargs)


def test_repr_of_a_recorded_result_that_stores_its_gradient_shows_both_flags():
    y = Tensor(data=[1.0], stores_grad=True) * 2.0
    y.stores_grad = True
    assert repr(y) == "Tensor([2.], dtype=float32, device=cpu, stores_grad=True, creator=MulScalar)"


def test_deepcopy_method_gives_an_independent_equal_tensor():
    t = Tensor(data=[1.0, 2.0], stores_grad=True, name="w")
    d = t.deepcopy()
    assert type(d) is Tensor and d is not t and not np.shares_memory(d.data, t.data)
    assert d.to_numpy().tolist() == [1.0, 2.0] and d.stores_grad and d.name == "w"
