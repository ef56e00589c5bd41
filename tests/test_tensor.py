"""Tensor: construction, attributes, initialisers, copies, and the recorded Python operators."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import autograd
from autograd import Tensor
from autograd.device import cpu


# ---------------------------------------------------------------- construction

@pytest.mark.parametrize("shape", [(2, 3), (4,), 5, ()])
def test_shape_alone_gives_float32_zeros(shape):
    t = Tensor(shape=shape)
    expected_shape = (shape,) if isinstance(shape, int) else shape
    assert t.shape == expected_shape
    assert t.dtype == np.float32
    np.testing.assert_array_equal(t.data, np.zeros(expected_shape))


def test_shape_with_dtype_gives_that_dtype():
    assert Tensor(shape=(2,), dtype=np.float64).dtype == np.float64


@pytest.mark.cpu_only
@pytest.mark.parametrize("make", [
    lambda: Tensor(shape=(256, 1024)),
    lambda: Tensor(data=np.ones((300, 7), np.float64), stores_grad=True),
    lambda: Tensor(data=np.arange(2000), dtype=np.float32, stores_grad=True),
    lambda: autograd.LSTM(64, 64).W_hh])
def test_large_parameters_start_on_a_cache_line(make):
    # the products read a weight's rows as 64-byte vectors: NumPy's own large arrays start
    # 16 to 48 bytes into a line, and a vector then straddles two
    t = make()
    assert t.data.nbytes >= 4096 and t.data.ctypes.data % 64 == 0
    assert t.data.flags.c_contiguous and t.data.flags.owndata is False


@pytest.mark.cpu_only
def test_data_is_copied_with_its_values_dtype_and_layout():
    source = np.asfortranarray(np.arange(6000, dtype=np.float64).reshape(60, 100))
    t = Tensor(data=source, dtype=np.float32)
    source[0, 0] = -1
    assert t.dtype == np.float32 and t.data.flags.f_contiguous
    np.testing.assert_array_equal(t.data, np.arange(6000).reshape(60, 100))
    for stores_grad in (False, True):
        big = np.arange(5000, dtype=np.float32)
        copy = Tensor(data=big, stores_grad=stores_grad)
        big[:] = 0
        np.testing.assert_array_equal(copy.data, np.arange(5000))
        assert copy.data.dtype == np.float32 and copy.data.flags.writeable


@pytest.mark.parametrize("data, shape", [([1, 2, 3], (3,)), ([[1.5], [2.5]], (2, 1)),
                                         (2.5, ()), (3, ())])
def test_list_and_scalar_data_become_float32(data, shape):
    t = Tensor(data=data)
    assert t.dtype == np.float32
    assert t.shape == shape
    np.testing.assert_array_equal(t.data, np.asarray(data, np.float32))


def test_dtype_argument_overrides_float32_for_lists():
    assert Tensor(data=[1.0, 2.0], dtype=np.float64).dtype == np.float64


def test_float64_array_keeps_its_dtype_and_is_copied():
    source = np.arange(6, dtype=np.float64).reshape(2, 3)
    t = Tensor(data=source)
    assert t.dtype == np.float64 and t.shape == (2, 3)
    source[0, 0] = 100.0
    assert t.data[0, 0] == 0.0, "Tensor(data=array) must copy the array"


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.bool_])
def test_non_floating_array_keeps_dtype_and_requires_no_grad(dtype):
    t = Tensor(data=np.array([1, 0, 1], dtype=dtype))
    assert t.dtype == dtype
    assert t.requires_grad is False and t.stores_grad is False


def test_integer_tensor_cannot_store_grad():
    with pytest.raises(ValueError, match="int64"):
        Tensor(data=np.array([1, 2], np.int64), stores_grad=True)


def test_stores_grad_without_requires_grad_is_value_error():
    with pytest.raises(ValueError, match="stores_grad"):
        Tensor(shape=(2,), requires_grad=False, stores_grad=True)


def test_shape_and_data_mismatch_is_value_error():
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(3, 2\)"):
        Tensor(shape=(3, 2), data=np.zeros((2, 3)))
    assert Tensor(shape=(2, 3), data=np.zeros((2, 3))).shape == (2, 3)
    assert Tensor(shape=3, data=[1.0, 2.0, 3.0]).shape == (3,)
    assert Tensor(shape=[3], data=[1.0, 2.0, 3.0]).shape == (3,)
    with pytest.raises(ValueError, match=r"\(3,\).*\(2,\)"):
        Tensor(shape=2, data=[1.0, 2.0, 3.0])


@pytest.mark.parametrize("data", [[[1.0, 2.0], [3.0]], "abc", [object()]])
def test_data_that_is_not_numeric_is_an_error_naming_tensor(data):
    with pytest.raises((ValueError, TypeError), match="Tensor: cannot make a float32 array"):
        Tensor(data=data)


def test_neither_shape_nor_data_is_value_error():
    with pytest.raises(ValueError):
        Tensor()


def test_tensor_from_tensor_copies_data():
    a = Tensor(data=[1.0, 2.0])
    b = Tensor(data=a)
    b.data[0] = 5.0
    assert a.data[0] == 1.0


def test_attributes():
    t = Tensor(data=np.ones((2, 3, 4), np.float32), stores_grad=True)
    assert isinstance(t.data, np.ndarray)
    assert t.shape == (2, 3, 4) and t.ndim == 3 and t.size == 24 and t.dtype == np.float32
    assert t.device is cpu() and t.device == autograd.device.get_default_device()
    assert t.creator is None and t.name is None
    assert t.requires_grad is True and t.stores_grad is True
    t.name = "weight"
    assert t.name == "weight"
    assert len(t) == 2


def test_flag_defaults():
    t = Tensor(shape=(2,))
    assert t.requires_grad is True and t.stores_grad is False


# ---------------------------------------------------------------- initialisers

def test_gaussian_in_place_returns_self_with_right_statistics():
    autograd.manual_seed(1)
    t = Tensor(shape=(200, 500))
    array = t.data
    assert t.gaussian(2.0, 0.5) is t
    assert t.data is array, "gaussian must fill the existing array in place"
    assert t.dtype == np.float32
    values = t.data.astype(np.float64)
    # 100,000 samples: the standard error of the mean is 0.5 / 316 ~ 0.0016
    assert abs(values.mean() - 2.0) < 0.01
    assert abs(values.std() - 0.5) < 0.01


def test_uniform_in_place_returns_self_with_right_statistics():
    autograd.manual_seed(2)
    t = Tensor(shape=(100000,), dtype=np.float64)
    array = t.data
    assert t.uniform(-1.0, 3.0) is t
    assert t.data is array and t.dtype == np.float64
    assert t.data.min() >= -1.0 and t.data.max() < 3.0
    assert abs(t.data.mean() - 1.0) < 0.02                   # (low + high) / 2
    assert abs(t.data.var() - 16.0 / 12) < 0.02              # (high - low)^2 / 12
    assert t.data.min() < -0.99 and t.data.max() > 2.99      # the whole range is used


def test_set_value_in_place_returns_self():
    t = Tensor(shape=(3, 2))
    array = t.data
    assert t.set_value(1.25) is t
    assert t.data is array and t.dtype == np.float32
    np.testing.assert_array_equal(t.data, np.full((3, 2), 1.25, np.float32))


def test_random_initialiser_on_integer_tensor_is_type_error():
    with pytest.raises(TypeError, match="int64"):
        Tensor(data=np.zeros(3, np.int64)).gaussian()


def test_manual_seed_repeats_initialisers():
    autograd.manual_seed(123)
    a = Tensor(shape=(4, 5)).gaussian().to_numpy().copy()
    b = Tensor(shape=(4, 5)).uniform().to_numpy().copy()
    autograd.manual_seed(123)
    np.testing.assert_array_equal(Tensor(shape=(4, 5)).gaussian().to_numpy(), a)
    np.testing.assert_array_equal(Tensor(shape=(4, 5)).uniform().to_numpy(), b)
    autograd.manual_seed(124)
    assert not np.array_equal(Tensor(shape=(4, 5)).gaussian().to_numpy(), a)


# ---------------------------------------------------------------- conversion and copies

def test_to_numpy_and_item():
    t = Tensor(data=[[1.5, 2.0]])
    assert isinstance(t.to_numpy(), np.ndarray)
    np.testing.assert_array_equal(t.to_numpy(), np.array([[1.5, 2.0]], np.float32))
    value = Tensor(data=[[3.5]]).item()
    assert value == 3.5 and type(value) is float
    with pytest.raises(ValueError, match="2 elements"):
        t.item()


def test_copy_has_independent_data_and_same_flags():
    t = Tensor(data=[1.0, 2.0], stores_grad=True)
    t.name = "w"
    c = t.copy()
    assert c is not t and c.data is not t.data
    c.data[0] = 9.0
    assert t.data[0] == 1.0
    assert c.stores_grad and c.requires_grad and c.name == "w" and c.creator is None


def test_copy_of_a_recorded_result_is_outside_the_graph():
    w = Tensor(data=[1.0, 2.0], stores_grad=True)
    y = w * 2
    assert y.creator is not None and y.copy().creator is None


def test_as_type_converts_a_copy():
    t = Tensor(data=[1.5, -2.5])
    d = t.as_type(np.float64)
    assert d.dtype == np.float64 and t.dtype == np.float32
    np.testing.assert_array_equal(d.data, [1.5, -2.5])
    d.data[0] = 0.0
    assert t.data[0] == 1.5
    i = t.as_type(np.int32)
    assert i.dtype == np.int32 and i.requires_grad is False


def test_detach_shares_data_outside_the_graph():
    w = Tensor(data=[1.0, 2.0], stores_grad=True)
    y = w * 2.0
    d = y.detach()
    assert d.creator is None and d.requires_grad is False and d.data is y.data
    assert (d * 3.0).creator is None


def test_new_output_is_a_tensor_of_the_same_class_and_device_holding_the_array():
    class Named(Tensor):
        __slots__ = ()

    w = Named(data=[1.0, 2.0], stores_grad=True)
    out = np.array([3.0, 4.0], np.float32)
    creator = object()
    t = w.new_output(out, creator, 1)
    assert type(t) is Named and t.device is w.device and t.data is out      # no copy
    assert (t.creator, t.output_index, t.requires_grad, t.stores_grad, t.name) == \
        (creator, 1, True, False, None)
    leaf = w.new_output(out)
    assert leaf.creator is None and leaf.requires_grad is False and leaf.output_index == 0
    # NumPy reductions return scalars: kept as 0-d arrays, as every Tensor holds an array
    s = w.new_output(np.float32(2.5))
    assert type(s.data) is np.ndarray and s.data.shape == () and s.data.dtype == np.float32


def test_from_operation_and_from_gradient_build_like_new_output():
    out = np.array([1.0], np.float64)
    t = Tensor.from_operation(out, cpu(), None, 0)
    g = Tensor.from_gradient(out, cpu())
    for made in (t, g):
        assert type(made) is Tensor and made.data is out and made.device is cpu()
        assert made.creator is None and made.requires_grad is False and not made.stores_grad


def test_numpy_conversion_of_a_cpu_tensor():
    t = Tensor(data=[1.0, 2.0])
    assert np.asarray(t) is t.data
    np.testing.assert_array_equal(np.asarray(t, dtype=np.float64), [1.0, 2.0])


def test_to_device_cpu_is_in_place():
    t = Tensor(data=[1.0])
    assert t.to_device(cpu()) is t and t.device is cpu()


def test_from_numpy_and_to_numpy_functions():
    from autograd.tensor import from_numpy, to_numpy
    a = np.arange(3, dtype=np.float64)
    t = from_numpy(a)
    assert t.dtype == np.float64
    np.testing.assert_array_equal(to_numpy(t), a)


# ---------------------------------------------------------------- recorded operators

def _param(array):
    return Tensor(data=np.asarray(array, np.float64), stores_grad=True)


def _grads(y, *params, dy=None):
    grads = autograd.gradients(y, dy)
    return [grads[p].to_numpy() for p in params]


@given(st.integers(0, 2 ** 32 - 1))
def test_binary_operators_are_recorded_with_right_gradients(seed):
    rng = np.random.default_rng(seed)
    a_np, b_np = rng.uniform(0.5, 2.0, (2, 3)), rng.uniform(0.5, 2.0, (3,))
    dy = rng.standard_normal((2, 3))
    cases = {
        "+": (lambda a, b: a + b, np.ones_like(a_np), np.ones((2, 3))),
        "-": (lambda a, b: a - b, np.ones_like(a_np), -np.ones((2, 3))),
        "*": (lambda a, b: a * b, np.broadcast_to(b_np, (2, 3)), a_np),
        "/": (lambda a, b: a / b, 1 / np.broadcast_to(b_np, (2, 3)), -a_np / b_np ** 2),
        "**": (lambda a, b: a ** b, b_np * a_np ** (b_np - 1), a_np ** b_np * np.log(a_np)),
    }
    for symbol, (fn, da, db) in cases.items():
        a, b = _param(a_np), _param(b_np)
        y = fn(a, b)
        assert y.creator is not None, f"{symbol} was not recorded"
        np.testing.assert_allclose(y.to_numpy(), fn(a_np, b_np), rtol=1e-12)
        ga, gb = _grads(y, a, b, dy=dy)
        np.testing.assert_allclose(ga, dy * da, rtol=1e-10, err_msg=symbol)
        np.testing.assert_allclose(gb, (dy * db).sum(axis=0), rtol=1e-10, err_msg=symbol)


def test_reflected_operators_with_scalars_and_arrays():
    x_np = np.array([0.5, 1.0, 2.0])
    for fn, derivative in [(lambda x: 3.0 + x, lambda x: np.ones(3)),
                           (lambda x: 3.0 - x, lambda x: -np.ones(3)),
                           (lambda x: 3.0 * x, lambda x: np.full(3, 3.0)),
                           (lambda x: 3.0 / x, lambda x: -3.0 / x ** 2),
                           (lambda x: 3.0 ** x, lambda x: np.log(3.0) * 3.0 ** x),
                           (lambda x: -x, lambda x: -np.ones(3)),
                           (lambda x: np.ones(3) + x, lambda x: np.ones(3))]:
        x = _param(x_np)
        y = fn(x)
        assert isinstance(y, Tensor) and y.creator is not None
        np.testing.assert_allclose(y.to_numpy(), fn(x_np))
        (g,) = _grads(y, x, dy=np.ones(3))
        np.testing.assert_allclose(g, derivative(x_np), rtol=1e-12)


def test_scalar_operands_keep_float32():
    x = Tensor(data=[1.0, 2.0])
    for y in [x + 1.5, 2 * x, x / np.float64(3.0), x ** 2, 1.0 - x, -x]:
        assert y.dtype == np.float32


def test_matmul_operator_gradients():
    rng = np.random.default_rng(0)
    a_np, b_np, dy = rng.standard_normal((3, 4)), rng.standard_normal((4, 2)), \
        rng.standard_normal((3, 2))
    a, b = _param(a_np), _param(b_np)
    y = a @ b
    assert y.creator is not None
    np.testing.assert_allclose(y.to_numpy(), a_np @ b_np)
    ga, gb = _grads(y, a, b, dy=dy)
    np.testing.assert_allclose(ga, dy @ b_np.T)
    np.testing.assert_allclose(gb, a_np.T @ dy)
    assert autograd.gradcheck(lambda p, q: p @ q, [a_np, b_np])


def test_matmul_of_mixed_float_dtypes_is_type_error_naming_both():
    a = Tensor(data=np.ones((2, 2), np.float32))
    b = Tensor(data=np.ones((2, 2), np.float64))
    with pytest.raises(TypeError, match="float32.*float64|float64.*float32"):
        a @ b
    with pytest.raises(TypeError, match="float32.*float64|float64.*float32"):
        autograd.matmul(b, a)


def test_adding_float64_array_to_float32_tensor_is_type_error():
    with pytest.raises(TypeError, match="float32.*float64|float64.*float32"):
        Tensor(data=[1.0, 2.0]) + np.ones(2, np.float64)


def test_getitem_records_and_scatters_gradient():
    x_np = np.arange(12, dtype=np.float64).reshape(3, 4)
    x = _param(x_np)
    y = x[1:, ::2]
    assert y.creator is not None
    np.testing.assert_array_equal(y.to_numpy(), x_np[1:, ::2])
    dy = np.arange(4, dtype=np.float64).reshape(2, 2) + 1
    (g,) = _grads(y, x, dy=dy)
    expected = np.zeros_like(x_np)
    expected[1:, ::2] = dy
    np.testing.assert_array_equal(g, expected)


def test_transpose_property_and_reshape_are_recorded():
    x_np = np.arange(6, dtype=np.float64).reshape(2, 3)
    x = _param(x_np)
    t = x.T
    assert t.creator is not None and t.shape == (3, 2)
    np.testing.assert_array_equal(t.to_numpy(), x_np.T)
    dy = np.arange(6, dtype=np.float64).reshape(3, 2)
    (g,) = _grads(t, x, dy=dy)
    np.testing.assert_array_equal(g, dy.T)

    for r in [x.reshape(3, 2), x.reshape((3, 2)), x.reshape(-1, 2)]:
        assert r.creator is not None and r.shape == (3, 2)
        (g,) = _grads(r, x, dy=dy)
        np.testing.assert_array_equal(g, dy.reshape(2, 3))


def test_sum_and_mean_methods_are_recorded():
    x_np = np.arange(6, dtype=np.float64).reshape(2, 3)
    x = _param(x_np)
    s = x.sum()
    assert s.creator is not None and s.shape == () and s.item() == 15.0
    np.testing.assert_array_equal(_grads(s, x)[0], np.ones((2, 3)))
    m = x.mean(axis=1, keepdims=True)
    assert m.creator is not None and m.shape == (2, 1)
    np.testing.assert_allclose(m.to_numpy(), x_np.mean(axis=1, keepdims=True))
    dy = np.array([[3.0], [6.0]])
    np.testing.assert_allclose(_grads(m, x, dy=dy)[0], np.repeat(dy / 3, 3, axis=1))


def test_operators_on_data_that_needs_no_gradient_are_not_recorded():
    x = Tensor(data=[1.0, 2.0], requires_grad=False)
    assert (x * 2 + x).creator is None
    assert x.sum().creator is None


@pytest.mark.parametrize("expression, error, message", [
    (lambda a, b: a @ b, ValueError, r"matmul: cannot multiply \(2, 3\) by \(4, 5\)"),
    (lambda a, b: a + b.T, ValueError, r"add: .*\(2, 3\).*\(5, 4\)"),
    (lambda a, b: a * b[0], ValueError, r"mul: .*\(2, 3\).*\(5,\)"),
    (lambda a, b: a.reshape(4, 2), ValueError, r"reshape: .*\(2, 3\).*\(4, 2\)"),
    (lambda a, b: a.sum(axis=2), ValueError, r"sum: axis 2"),
])
def test_operator_errors_name_the_operation_and_shapes(expression, error, message):
    a = Tensor(shape=(2, 3), stores_grad=True)
    b = Tensor(shape=(4, 5), stores_grad=True)
    with pytest.raises(error, match=message):
        expression(a, b)


def test_host_data_goes_to_the_default_device():
    """DESIGN: the default device is where new Tensors go when none is given, data included."""
    from autograd import device as devices
    sentinel = devices.Device.__new__(devices.Device)       # a stand-in second "device"
    sentinel.kind, sentinel.index, sentinel.xp, sentinel.random = "cpu", 1, np, None
    original = devices.get_default_device()
    seen = []
    real_move = devices.move_array

    def recording_move(array, target):
        seen.append(target)
        return array
    try:
        devices.set_default_device(sentinel)
        import autograd.tensor as tensor_module
        tensor_module.move_array, tensor_module.get_default_device = (
            recording_move, devices.get_default_device)
        Tensor(data=np.ones(2, np.float32))
        assert seen == [sentinel]          # host data was sent to the default device
    finally:
        devices.set_default_device(original)
        tensor_module.move_array = real_move


def test_name_is_a_constructor_argument_and_survives_copy():
    t = Tensor(data=[1.0], stores_grad=True, name="conv1.W")
    assert t.name == "conv1.W" and t.copy().name == "conv1.W"


@pytest.mark.parametrize("shape, error, message", [
    (3.5, TypeError, "Tensor: shape must be an int or a sequence of ints, got float"),
    ((2, "a"), TypeError, "Tensor: shape must hold ints, got (2, 'a') (a str)"),
    ((2, True), TypeError, "Tensor: shape must hold ints, got (2, True) (a bool)"),
    ((2, -1), ValueError, "Tensor: shape must not be negative, got (2, -1)"),
])
def test_a_bad_shape_is_named_exactly(shape, error, message):
    import re
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        Tensor(shape=shape)


def test_a_zero_size_shape_and_numpy_ints_are_shapes():
    assert Tensor(shape=(0, 2)).shape == (0, 2) and Tensor(shape=0).shape == (0,)
    assert Tensor(shape=(np.int64(2), np.int32(3))).shape == (2, 3)


def test_constructor_messages_are_exact():
    import re
    for kwargs, error, message in [
            ({"shape": (2,), "requires_grad": False, "stores_grad": True}, ValueError,
             "Tensor: stores_grad=True needs requires_grad=True"),
            ({}, ValueError, "Tensor: give a shape, data or both"),
            ({"data": np.array([1, 2], np.int32), "stores_grad": True}, ValueError,
             "Tensor: a int32 tensor cannot store a gradient; only floating tensors can")]:
        with pytest.raises(error, match=f"^{re.escape(message)}$"):
            Tensor(**kwargs)
    with pytest.raises(ValueError, match=r"^Tensor: cannot make a float32 array from this list "
                                         r"\("):
        Tensor(data=[[1.0, 2.0], [3.0]])


def test_singa_positional_device_with_a_dtype_keyword_and_a_given_creator():
    t = Tensor((2,), cpu(), dtype=np.int32)           # SINGA's order, dtype by name
    assert t.dtype == np.int32 and t.device is cpu()
    creator = object()
    assert Tensor(data=[1.0], creator=creator).creator is creator


def test_a_buffer_without_dtype_becomes_float32_data():
    t = Tensor(data=memoryview(np.arange(3.0)))       # a shape but no dtype: read as a list
    assert t.dtype == np.float32 and t.to_numpy().tolist() == [0.0, 1.0, 2.0]


def test_from_operation_keeps_the_creator_the_index_and_an_array_subclass():
    from tests.foreign_device import ForeignArray
    creator = object()
    out = np.zeros(2).view(ForeignArray)
    t = Tensor.from_operation(out, cpu(), creator, 1)
    assert t.creator is creator and t.output_index == 1 and t.requires_grad
    assert t.data is out                              # not converted to a plain ndarray
