"""batch_norm and layer_norm against NumPy formulas, running statistics, gradcheck, errors."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import autograd
from autograd import Tensor
from autograd.backend.layout import is_batch_last
from tests.layouts import stored_batch_last
from tests.opcase import OpCase, check_case, floats

# the compiled kernels and the portable code they stand in for: both tested
pytestmark = pytest.mark.usefixtures("compiled_and_portable")


def reference_batch_norm(x, scale, bias, mean, var, eps):
    shape = (1, -1) + (1,) * (x.ndim - 2)
    return (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps) * scale.reshape(shape) \
        + bias.reshape(shape)


shapes = st.one_of(
    st.tuples(st.integers(2, 4), st.integers(1, 3)),
    st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), st.integers(1, 3))
    .filter(lambda s: s[0] * s[2] * s[3] > 1))


@given(shape=shapes, seed=st.integers(0, 2 ** 32 - 1), momentum=st.sampled_from([0.0, 0.9, 0.5]))
def test_batch_norm_training_output_and_running_statistics(shape, seed, momentum):
    rng = np.random.default_rng(seed)
    x = rng.normal(3.0, 2.0, shape)
    channels = shape[1]
    scale, bias = rng.uniform(0.5, 2, channels), rng.uniform(-1, 1, channels)
    running_mean, running_var = rng.uniform(-1, 1, channels), rng.uniform(0.5, 2, channels)
    axes = (0,) if x.ndim == 2 else (0, 2, 3)
    count = x.size // channels
    expected = reference_batch_norm(x, scale, bias, x.mean(axis=axes), x.var(axis=axes), 1e-5)
    expected_mean = momentum * running_mean + (1 - momentum) * x.mean(axis=axes)
    expected_var = momentum * running_var + (1 - momentum) * x.var(axis=axes) * count / (count - 1)

    mean_buffer = Tensor(data=running_mean, requires_grad=False, dtype=np.float64)  # a Tensor
    var_buffer = running_var.copy()                                               # a raw array
    y = autograd.batch_norm(Tensor(data=x, dtype=np.float64), Tensor(data=scale, dtype=np.float64),
                            Tensor(data=bias, dtype=np.float64), mean_buffer, var_buffer,
                            momentum=momentum, training=True)
    np.testing.assert_allclose(y.to_numpy(), expected, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(mean_buffer.to_numpy(), expected_mean, rtol=1e-12)
    np.testing.assert_allclose(var_buffer, expected_var, rtol=1e-12)

    args = lambda xt, st_, bt: autograd.batch_norm(xt, st_, bt, None, None, training=True)
    autograd.gradcheck(args, [x, scale, bias], atol=1e-5, rtol=1e-3)

    x32, s32, b32 = (Tensor(data=a.astype(np.float32), stores_grad=True) for a in (x, scale, bias))
    y32 = autograd.batch_norm(x32, s32, b32, running_mean.astype(np.float32),
                              running_var.astype(np.float32), training=True)
    assert y32.dtype == np.float32
    np.testing.assert_allclose(y32.to_numpy(), expected, rtol=1e-4, atol=1e-4)
    grads = autograd.gradients(y32, np.ones(y32.shape, np.float32))
    assert all(grads[t].dtype == np.float32 for t in (x32, s32, b32))


@given(shape=shapes, seed=st.integers(0, 2 ** 32 - 1))
def test_batch_norm_eval_uses_running_statistics_and_leaves_them(shape, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(0.0, 1.0, shape)
    channels = shape[1]
    scale, bias = rng.uniform(0.5, 2, channels), rng.uniform(-1, 1, channels)
    running_mean, running_var = rng.uniform(-1, 1, channels), rng.uniform(0.5, 2, channels)
    mean_before, var_before = running_mean.copy(), running_var.copy()
    y = autograd.batch_norm(Tensor(data=x, dtype=np.float64), Tensor(data=scale, dtype=np.float64),
                            Tensor(data=bias, dtype=np.float64), running_mean, running_var,
                            training=False)
    np.testing.assert_allclose(
        y.to_numpy(), reference_batch_norm(x, scale, bias, running_mean, running_var, 1e-5),
        rtol=1e-10, atol=1e-10)
    np.testing.assert_array_equal(running_mean, mean_before)
    np.testing.assert_array_equal(running_var, var_before)
    fn = lambda xt, st_, bt: autograd.batch_norm(xt, st_, bt, running_mean, running_var,
                                                 training=False)
    autograd.gradcheck(fn, [x, scale, bias])


@given(shape=shapes.filter(lambda s: len(s) == 4), seed=st.integers(0, 2 ** 32 - 1),
       training=st.booleans())
def test_batch_norm_of_batch_last_images_keeps_the_layout(shape, seed, training):
    """conv2d returns batch-last images (operations/layout.py): batch_norm runs on them as
    they are and returns that layout, with dy in either layout (gradcheck's is C order)."""
    rng = np.random.default_rng(seed)
    x = stored_batch_last(rng.normal(1.0, 2.0, shape))
    channels = shape[1]
    scale, bias = rng.uniform(0.5, 2, channels), rng.uniform(-1, 1, channels)
    running_mean, running_var = rng.uniform(-1, 1, channels), rng.uniform(0.5, 2, channels)
    if training:
        expected = reference_batch_norm(x, scale, bias, x.mean(axis=(0, 2, 3)),
                                        x.var(axis=(0, 2, 3)), 1e-5)
    else:
        expected = reference_batch_norm(x, scale, bias, running_mean, running_var, 1e-5)
    fn = lambda xt, st_, bt: autograd.batch_norm(xt, st_, bt, running_mean.copy(),
                                                 running_var.copy(), training=training)
    xt = Tensor(data=x, stores_grad=True)
    y = fn(xt, Tensor(data=scale), Tensor(data=bias))
    np.testing.assert_allclose(y.to_numpy(), expected, rtol=1e-9, atol=1e-9)
    assert is_batch_last(y.data)
    autograd.gradcheck(fn, [xt, scale, bias])


def test_batch_norm_follows_the_global_training_flag():
    x = Tensor(data=np.arange(8, dtype=np.float32).reshape(4, 2))
    scale, bias = Tensor(data=[1.0, 1.0]), Tensor(data=[0.0, 0.0])
    mean, var = np.zeros(2, np.float32), np.ones(2, np.float32)
    autograd.training = False
    try:
        y = autograd.batch_norm(x, scale, bias, mean, var)
    finally:
        autograd.training = True
    np.testing.assert_allclose(y.to_numpy(), x.to_numpy() / np.sqrt(1 + 1e-5), rtol=1e-6)
    np.testing.assert_array_equal(mean, [0, 0])
    autograd.batch_norm(x, scale, bias, mean, var)
    np.testing.assert_allclose(mean, [0.3, 0.4], rtol=1e-6)   # 0.1 * batch means [3, 4]


@pytest.mark.parametrize("bad,message", [
    (dict(x=np.ones((2, 3, 4))), r"batch_norm: expected x of shape \(N, C\) or \(N, C, H, W\), "
                                  r"got \(2, 3, 4\)"),
    (dict(scale=np.ones(2)), r"batch_norm: expected scale of shape \(3,\) for x of shape "
                             r"\(2, 3, 2, 2\), got \(2,\)"),
    (dict(running_var=np.ones(4)), r"batch_norm: expected running_var of shape \(3,\)"),
    (dict(momentum=1.5), r"batch_norm: momentum must be in \[0, 1\], got 1.5"),
    (dict(x=np.ones((1, 3, 1, 1))), r"batch_norm: training needs more than one value per "
                                    r"channel"),
])
def test_batch_norm_rejects_bad_input_before_touching_running_statistics(bad, message):
    arrays = dict(x=np.ones((2, 3, 2, 2)), scale=np.ones(3), bias=np.zeros(3), momentum=0.9,
                  running_var=np.ones(3))
    arrays.update(bad)
    running_mean = np.full(3, 7.0)
    running_var = arrays["running_var"].copy()
    before = running_var.copy()
    with pytest.raises(ValueError, match=message):
        autograd.batch_norm(Tensor(data=arrays["x"]), Tensor(data=arrays["scale"]),
                            Tensor(data=arrays["bias"]), running_mean, running_var,
                            momentum=arrays["momentum"], training=True)
    np.testing.assert_array_equal(running_mean, np.full(3, 7.0))
    np.testing.assert_array_equal(running_var, before)


def reference_layer_norm(x, dims, scale, bias, eps=1e-5):
    axes = tuple(range(x.ndim - dims, x.ndim))
    y = (x - x.mean(axis=axes, keepdims=True)) / np.sqrt(x.var(axis=axes, keepdims=True) + eps)
    if scale is not None:
        y = y * scale
    return y + bias if bias is not None else y


@given(shape=st.lists(st.integers(1, 3), min_size=1, max_size=3).map(tuple),
       dims=st.integers(1, 3), affine=st.sampled_from(["both", "scale", "bias", "none"]),
       seed=st.integers(0, 2 ** 32 - 1))
def test_layer_norm_forward_and_gradcheck(shape, dims, affine, seed):
    dims = min(dims, len(shape))
    normalized = shape[len(shape) - dims:]
    rng = np.random.default_rng(seed)
    x = rng.normal(1.0, 2.0, shape)
    scale = rng.uniform(0.5, 2, normalized) if affine in ("both", "scale") else None
    bias = rng.uniform(-1, 1, normalized) if affine in ("both", "bias") else None
    present = [a for a in (scale, bias) if a is not None]

    def fn(xt, *rest):
        named = dict(zip([n for n, a in (("scale", scale), ("bias", bias)) if a is not None],
                         rest))
        return autograd.layer_norm(xt, normalized, **named)

    y = fn(*[Tensor(data=a, dtype=np.float64) for a in [x] + present])
    np.testing.assert_allclose(y.to_numpy(), reference_layer_norm(x, dims, scale, bias),
                               rtol=1e-9, atol=1e-9)
    autograd.gradcheck(fn, [x] + present)
    inputs32 = [Tensor(data=a.astype(np.float32), stores_grad=True) for a in [x] + present]
    y32 = fn(*inputs32)
    assert y32.dtype == np.float32
    grads = autograd.gradients(y32, np.ones(y32.shape, np.float32))
    assert all(grads[t].dtype == np.float32 for t in inputs32)


# The op table's sweep (every input layout, gradcheck with a random dy, float32 kept) for the
# kernel path: rows of one or two trailing axes, with and without scale and bias.
LAYER_NORM_CASES = [
    OpCase(lambda x, s, b: autograd.layer_norm(x, (4,), s, b),
           lambda x, s, b: reference_layer_norm(x, 1, s, b), [floats(), floats(0.5, 2, shape=(4,)),
                                                              floats(shape=(4,))],
           shape=(3, 2, 4), name="layer_norm_last_axis"),
    OpCase(lambda x, s: autograd.layer_norm(x, (3, 4), s),
           lambda x, s: reference_layer_norm(x, 2, s, None), [floats(), floats(0.5, 2,
                                                                          shape=(3, 4))],
           shape=(2, 2, 3, 4), name="layer_norm_two_axes_scale_only"),
    OpCase(lambda x: autograd.layer_norm(x, (5,)), lambda x: reference_layer_norm(x, 1, None, None),
           [floats()], shape=(6, 5), name="layer_norm_plain"),
]


@pytest.mark.parametrize("case", LAYER_NORM_CASES, ids=str)
@given(data=st.data())
def test_layer_norm_op_table(case, data):
    check_case(case, data)


def test_layer_norm_int_is_the_last_dimension_and_mismatch_is_named():
    x = Tensor(data=np.random.default_rng(0).standard_normal((2, 5)))
    np.testing.assert_allclose(autograd.layer_norm(x, 5).to_numpy(),
                               reference_layer_norm(x.to_numpy(), 1, None, None), rtol=1e-5)
    with pytest.raises(ValueError, match=r"layer_norm: expected x of shape \(\.\.\., 4\) for "
                                         r"normalized_shape \(4,\), got \(2, 5\)"):
        autograd.layer_norm(x, 4)
    with pytest.raises(ValueError, match=r"layer_norm: expected scale of shape \(5,\), got \(4,\)"):
        autograd.layer_norm(x, 5, scale=Tensor(shape=(4,)))
