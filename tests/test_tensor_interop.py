"""DLPack both ways, Tensor.numpy(), tolist() and iteration (issue 21, item 1).

The references are the other library's own view of the memory: a write through one side must
show on the other, and NumPy/torch must report the dtype, shape and strides the source had.
"""
import re

import numpy as np
import pytest
from hypothesis import given, strategies as st

import autograd
from autograd import Tensor
from autograd.device import Device

DTYPES = [np.float32, np.float64, np.float16, np.int8, np.int32, np.int64, np.uint8, np.bool_,
          np.complex64]
# how a (4, 6) array is viewed: contiguous, transposed, stepped, a negative step
VIEWS = {
    "contiguous": lambda a: a,
    "transposed": lambda a: a.T,
    "stepped": lambda a: a[::2, 1::3],
    "reversed": lambda a: a[:, ::-1],
}


def _source(dtype, view):
    base = (np.arange(24) % 7).reshape(4, 6).astype(dtype)
    return base, VIEWS[view](base)


# ---------------------------------------------------------------- NumPy, both ways
def test_numpy_sees_writes_to_the_tensor_and_the_tensor_sees_writes_to_numpy():
    t = Tensor(data=np.arange(6, dtype=np.float32).reshape(2, 3))
    view = np.from_dlpack(t)
    assert np.shares_memory(view, t.data)
    view[1, 2] = -1.0
    assert t.to_numpy()[1, 2] == -1.0
    t.set_value(4.0)
    np.testing.assert_array_equal(view, np.full((2, 3), 4.0, np.float32))


def test_from_dlpack_shares_a_numpy_array():
    a = np.zeros((3, 2), np.float64)
    t = autograd.from_dlpack(a)
    a[2, 1] = 5.0
    assert t.to_numpy()[2, 1] == 5.0
    t.data[0, 0] = 7.0
    assert a[0, 0] == 7.0
    assert (t.dtype, t.shape, t.device) == (np.float64, (3, 2), autograd.device.cpu())


@given(dtype=st.sampled_from(DTYPES), view=st.sampled_from(sorted(VIEWS)))
def test_from_dlpack_keeps_dtype_shape_strides_and_values(dtype, view):
    base, a = _source(dtype, view)
    t = autograd.from_dlpack(a)
    assert t.dtype == a.dtype and t.shape == a.shape and t.data.strides == a.strides
    assert np.shares_memory(t.data, base)
    np.testing.assert_array_equal(t.to_numpy(), a)


@given(dtype=st.sampled_from(DTYPES), view=st.sampled_from(sorted(VIEWS)))
def test_tensor_exports_dtype_shape_strides_and_values(dtype, view):
    _, a = _source(dtype, view)
    t = Tensor.from_operation(a, autograd.device.cpu(), None, 0)     # a non-contiguous tensor
    out = np.from_dlpack(t)
    assert out.dtype == a.dtype and out.shape == a.shape and out.strides == a.strides
    assert np.shares_memory(out, a)
    np.testing.assert_array_equal(out, a)


def test_copy_true_gives_an_independent_tensor():
    a = np.ones(4, np.float32)
    t = autograd.from_dlpack(a, copy=True)
    a[:] = 3.0
    np.testing.assert_array_equal(t.to_numpy(), np.ones(4, np.float32))


def test_read_only_producer_is_shared_read_only_and_still_computes():
    a = np.arange(4, dtype=np.float32)
    a.flags.writeable = False
    t = autograd.from_dlpack(a)
    assert np.shares_memory(t.data, a) and not t.data.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        t.set_value(0.0)
    np.testing.assert_array_equal((t * 2.0).to_numpy(), a * 2)
    own = autograd.from_dlpack(a, copy=True)
    own.set_value(1.0)                       # the copy is writable and the source unchanged
    np.testing.assert_array_equal(a, np.arange(4, dtype=np.float32))


def test_gradients_and_creators_do_not_cross():
    w = Tensor(data=[1.0, 2.0], stores_grad=True)
    y = w * 3.0
    assert y.creator is not None
    leaf = autograd.from_dlpack(y)
    assert leaf.creator is None and not leaf.requires_grad and not leaf.stores_grad
    np.testing.assert_array_equal(leaf.to_numpy(), [3.0, 6.0])
    assert autograd.from_dlpack(y, requires_grad=True).requires_grad
    assert not autograd.from_dlpack(np.arange(3), requires_grad=True).requires_grad   # ints


# ---------------------------------------------------------------- errors
def test_an_object_without_the_protocol_is_a_type_error():
    with pytest.raises(TypeError, match=r"from_dlpack: expected an object implementing DLPack.*"
                                        r"got list"):
        autograd.from_dlpack([1.0, 2.0])


class _ProducerOn:
    """A producer on a device autograd cannot hold: only its device is ever asked for."""

    def __init__(self, device_type):
        self.device_type = device_type

    def __dlpack__(self, **_):
        raise AssertionError("from_dlpack must decide on the device before importing")

    def __dlpack_device__(self):
        return (self.device_type, 0)


@pytest.mark.parametrize("device_type, name", [(8, "Metal"), (4, "OpenCL"), (99, "unknown")])
def test_an_unsupported_device_is_a_clear_error(device_type, name):
    with pytest.raises(ValueError, match=rf"from_dlpack: .*device type {device_type} \({name}\)"):
        autograd.from_dlpack(_ProducerOn(device_type))


def test_a_cuda_producer_without_cupy_names_the_extra():
    pytest.importorskip("numpy")
    try:
        import cupy  # noqa: F401
        pytest.skip("CuPy is installed: tests/gpu covers CUDA producers")
    except ImportError:
        pass
    with pytest.raises(RuntimeError, match="CuPy is not installed"):
        autograd.from_dlpack(_ProducerOn(2))


def test_a_tensor_of_an_unsupported_dtype_is_a_buffer_error():
    t = Tensor(data=np.array(["a", "b"]))
    with pytest.raises(BufferError, match=r"^Tensor.__dlpack__: cannot export a <U1 tensor; "
                                          r"DLPack carries bool, integer, float and complex "
                                          r"dtypes$"):
        np.from_dlpack(t)


def test_numpy_of_a_gpu_tensor_is_an_error_naming_to_numpy():
    fake_gpu = Device("gpu", 0, np)          # only the device label matters to the check
    t = Tensor.from_operation(np.zeros(2, np.float32), fake_gpu, None, 0)
    with pytest.raises(TypeError, match=r"^Tensor.numpy: the tensor is on gpu:0; call to_numpy\(\) "
                                        r"to copy it to the host$"):
        t.numpy()


# ---------------------------------------------------------------- conveniences
def test_numpy_is_the_array_itself_on_the_cpu():
    t = Tensor(data=[[1.0, 2.0]])
    assert t.numpy() is t.data and t.numpy() is t.to_numpy()


@given(shape=st.lists(st.integers(0, 3), min_size=0, max_size=3))
def test_tolist_matches_numpy(shape):
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    assert Tensor(data=a).tolist() == a.tolist()


def test_iteration_yields_the_rows_and_records_them():
    a = np.arange(6, dtype=np.float32).reshape(3, 2)
    w = Tensor(data=a, stores_grad=True)
    rows = list(w)
    assert len(rows) == 3
    for row, expected in zip(rows, a):
        np.testing.assert_array_equal(row.to_numpy(), expected)
    loss = rows[0].sum() + rows[2].sum() * 2.0
    (param, grad), = autograd.backward(loss)
    np.testing.assert_array_equal(grad.to_numpy(), [[1, 1], [0, 0], [2, 2]])
    assert [r.tolist() for r in Tensor(data=np.zeros((0, 2)))] == []


def test_iterating_a_scalar_is_a_type_error():
    with pytest.raises(TypeError, match=r"^Tensor: iteration over a 0-d tensor \(use item\(\)\)$"):
        iter(Tensor(data=1.0))


# ---------------------------------------------------------------- torch, where installed
def test_torch_zero_copy_both_ways():
    torch = pytest.importorskip("torch")
    t = Tensor(data=np.arange(6, dtype=np.float32).reshape(2, 3))
    theirs = torch.from_dlpack(t)
    theirs[0, 1] = 42.0
    assert t.to_numpy()[0, 1] == 42.0
    t.data[1, 0] = -3.0
    assert theirs[1, 0].item() == -3.0

    source = torch.arange(12, dtype=torch.float64).reshape(3, 4)
    ours = autograd.from_dlpack(source)
    source[2, 3] = 100.0
    assert ours.to_numpy()[2, 3] == 100.0 and ours.dtype == np.float64


@pytest.mark.parametrize("make", [lambda x: x.T, lambda x: x[:, ::2], lambda x: x[1:, 1:]],
                         ids=["transposed", "stepped", "offset"])
def test_torch_non_contiguous_views_keep_strides(make):
    torch = pytest.importorskip("torch")
    view = make(torch.arange(20, dtype=torch.int32).reshape(4, 5))
    ours = autograd.from_dlpack(view)
    itemsize = view.element_size()
    assert ours.data.strides == tuple(s * itemsize for s in view.stride())
    np.testing.assert_array_equal(ours.to_numpy(), view.numpy())
    back = torch.from_dlpack(ours)
    assert back.stride() == view.stride() and back.data_ptr() == view.data_ptr()


def test_torch_dtype_numpy_cannot_hold_is_a_clear_error():
    torch = pytest.importorskip("torch")
    with pytest.raises(Exception, match=r"from_dlpack: cannot take this torch.Tensor.*dtype"):
        autograd.from_dlpack(torch.ones(2, dtype=torch.bfloat16))


def test_torch_gradients_do_not_cross():
    torch = pytest.importorskip("torch")
    x = torch.ones(3, requires_grad=True)
    with pytest.raises(BufferError, match=r"from_dlpack: .*detach"):   # torch refuses to export
        autograd.from_dlpack(x)                                      # a tensor needing a grad
    ours = autograd.from_dlpack(x.detach())
    assert ours.creator is None and not ours.requires_grad


def test_dlpack_keywords_reach_numpy_under_their_own_names():
    t = Tensor(data=[1.0, 2.0])
    for keywords in ({"dl_device": (1, 0)}, {"copy": True}, {"max_version": (1, 0)}):
        assert type(t.__dlpack__(**keywords)).__name__ == "PyCapsule"
    with pytest.raises(RuntimeError, match="NumPy only supports stream=None"):
        t.__dlpack__(stream=1)                    # NumPy's own answer: the keyword reached it


class _OnlyDlpack:
    def __dlpack__(self, **_):
        raise AssertionError("from_dlpack must check both methods first")


def test_from_dlpack_needs_both_methods_and_hints_at_a_capsule():
    head = ("from_dlpack: expected an object implementing DLPack (__dlpack__ and "
            "__dlpack_device__), got ")
    with pytest.raises(TypeError, match=f"^{re.escape(head)}_OnlyDlpack$"):
        autograd.from_dlpack(_OnlyDlpack())
    with pytest.raises(TypeError, match=f"^{re.escape(head)}list$"):
        autograd.from_dlpack([1.0])
    capsule = np.arange(3.0).__dlpack__()
    with pytest.raises(TypeError, match=f"^{re.escape(head)}PyCapsule \\(a PyCapsule: pass the "
                                        "array itself, which DLPack consumers now take\\)$"):
        autograd.from_dlpack(capsule)


def test_an_unsupported_device_is_named_with_the_producer_type_exactly():
    message = ("from_dlpack: the tests.test_tensor_interop._ProducerOn lives on DLPack device "
               "type 8 (Metal); autograd holds arrays on the CPU (1) and on CUDA GPUs (2): "
               "copy it to one of them first")
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        autograd.from_dlpack(_ProducerOn(8))
