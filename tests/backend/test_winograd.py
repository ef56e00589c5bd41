"""Winograd F(4x4, 3x3) convolution against NumPy references written here (direct sums over the
nine kernel offsets), float64 gradcheck through conv2d, the float32 error bound, and the rule
that picks the path."""
import collections

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import autograd
from autograd import Tensor
from autograd.backend import winograd
from autograd.backend.layout import is_batch_last
from tests.layouts import stored_batch_last
from tests.operations.test_conv import reference_conv2d


@pytest.fixture
def always_winograd(monkeypatch):
    """Take the Winograd path for every 3x3, stride-1 convolution, however small."""
    monkeypatch.setattr(winograd, "MIN_CHANNELS", 1)
    monkeypatch.setattr(winograd, "MIN_TILES", 1)


def reference_gradients(x, W, dy, pads_h, pads_w):
    """dx and dW of y = conv(x, W) for a 3x3 kernel, stride 1: dW[o, c, i, j] = sum of
    dy[n, o] * xpad[n, c] shifted by (i, j); dx = the same shifts of W^T dy added back."""
    n, c, h, w = x.shape
    out_h, out_w = dy.shape[2:]
    padded = np.zeros((n, c, h + sum(pads_h), w + sum(pads_w)))
    padded[:, :, pads_h[0]:pads_h[0] + h, pads_w[0]:pads_w[0] + w] = x
    dW = np.empty(W.shape)
    dpadded = np.zeros(padded.shape)
    for i in range(3):
        for j in range(3):
            window = padded[:, :, i:i + out_h, j:j + out_w]
            dW[:, :, i, j] = np.einsum("nohw,nchw->oc", dy, window)
            dpadded[:, :, i:i + out_h, j:j + out_w] += np.einsum("nohw,oc->nchw", dy, W[:, :, i, j])
    return dpadded[:, :, pads_h[0]:pads_h[0] + h, pads_w[0]:pads_w[0] + w], dW


@st.composite
def winograd_settings(draw):
    pads_h = (draw(st.integers(0, 5)), draw(st.integers(0, 3)))
    pads_w = (draw(st.integers(0, 3)), draw(st.integers(0, 5)))
    # at least the kernel's 3 rows once padded; up to 13, i.e. ragged edges of every kind
    h = draw(st.integers(max(1, 3 - sum(pads_h)), 13))
    w = draw(st.integers(max(1, 3 - sum(pads_w)), 13))
    return dict(x_shape=(draw(st.integers(1, 2)), draw(st.integers(1, 3)), h, w),
                out_channels=draw(st.integers(1, 3)), pads_h=pads_h, pads_w=pads_w,
                seed=draw(st.integers(0, 2 ** 32 - 1)),
                x_batch_last=draw(st.booleans()), dy_batch_last=draw(st.booleans()))


def stored_as(array, batch_last_layout):
    """``array`` (N, C, H, W) as it is, or the same values stored batch-last (layout.py)."""
    return stored_batch_last(array) if batch_last_layout else array


@settings(max_examples=max(40, settings.default.max_examples))
@given(winograd_settings())
def test_forward_and_gradients_match_direct_sums_with_any_padding(s):
    """In either layout of x (which y and dx keep) and of dy."""
    rng = np.random.default_rng(s["seed"])
    x = stored_as(rng.uniform(-1, 1, s["x_shape"]), s["x_batch_last"])
    W = rng.uniform(-1, 1, (s["out_channels"], s["x_shape"][1], 3, 3))
    expected = reference_conv2d(x, W, None, (1, 1), s["pads_h"], s["pads_w"], (1, 1), 1)
    y, V, U, batch_last_tiles = winograd.forward(x, W, s["pads_h"], s["pads_w"], (True, True))
    assert batch_last_tiles == (s["x_batch_last"] and not x.flags.c_contiguous)
    np.testing.assert_allclose(y, expected, rtol=1e-10, atol=1e-12)

    dy = stored_as(rng.uniform(-1, 1, y.shape), s["dy_batch_last"])
    dx, dW = winograd.backward(V, U, dy, x.shape, s["pads_h"], s["pads_w"], (True, True),
                               batch_last_tiles)
    if not x.flags.c_contiguous:        # else x is both layouts (N or C * H * W of 1)
        assert is_batch_last(y) and is_batch_last(dx)
    expected_dx, expected_dW = reference_gradients(x, W, dy, s["pads_h"], s["pads_w"])
    np.testing.assert_allclose(dx, expected_dx, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(dW, expected_dW, rtol=1e-10, atol=1e-12)


@given(winograd_settings())
def test_float32_tiles_from_the_compiled_im2col_give_the_direct_sums(s):
    """float32 input tiles are written by the compiled columns kernel (any layout of x, the
    padding's tiles as zeros) and stored batch-last: y, dx and dW within float32's Winograd
    error of the direct sums, with any padding and ragged edges."""
    rng = np.random.default_rng(s["seed"])
    x64 = rng.uniform(-1, 1, s["x_shape"])
    W64 = rng.uniform(-1, 1, (s["out_channels"], s["x_shape"][1], 3, 3))
    x = stored_as(x64.astype(np.float32), s["x_batch_last"])
    y, V, U, batch_last_tiles = winograd.forward(x, W64.astype(np.float32), s["pads_h"],
                                                 s["pads_w"], (True, True))
    assert batch_last_tiles and y.dtype == np.float32
    expected = reference_conv2d(x64, W64, None, (1, 1), s["pads_h"], s["pads_w"], (1, 1), 1)
    dy64 = rng.uniform(-1, 1, expected.shape)
    dx, dW = winograd.backward(V, U, stored_as(dy64.astype(np.float32), s["dy_batch_last"]),
                               x.shape, s["pads_h"], s["pads_w"], (True, True),
                               batch_last_tiles)
    expected_dx, expected_dW = reference_gradients(x64, W64, dy64, s["pads_h"], s["pads_w"])
    for result, reference in ((y, expected), (dx, expected_dx), (dW, expected_dW)):
        assert np.abs(result - reference).max() <= 1e-4 * max(np.abs(reference).max(), 1.0)


@settings(max_examples=max(20, settings.default.max_examples))
@given(winograd_settings(), st.booleans())
def test_conv2d_through_winograd_passes_gradcheck(s, bias):
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(winograd, "MIN_CHANNELS", 1)
        patch.setattr(winograd, "MIN_TILES", 1)
        rng = np.random.default_rng(s["seed"])
        x = stored_as(rng.uniform(-1, 1, s["x_shape"]), s["x_batch_last"])
        W = rng.uniform(-1, 1, (s["out_channels"], s["x_shape"][1], 3, 3))
        inputs = [x, W] + ([rng.uniform(-1, 1, s["out_channels"])] if bias else [])
        # conv2d pads symmetrically: the larger pad of each axis keeps the kernel inside
        padding = (max(s["pads_h"]), max(s["pads_w"]))
        tensors = [Tensor(data=array, stores_grad=True) for array in inputs]
        assert autograd.conv2d(*tensors, padding=padding).creator.saved[0].winograd
        autograd.gradcheck(lambda *t: autograd.conv2d(*t, padding=padding), inputs)


def test_float32_error_stays_within_a_few_ulps_of_the_output_scale():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 64, 17, 20))
    W = rng.standard_normal((64, 64, 3, 3)) * 0.05
    dy = rng.standard_normal((4, 64, 17, 20))
    y, V, U, batch_last_tiles = winograd.forward(x.astype(np.float32), W.astype(np.float32),
                                                 (1, 1), (1, 1), (True, True))
    dx, dW = winograd.backward(V, U, dy.astype(np.float32), x.shape, (1, 1), (1, 1),
                               (True, True), batch_last_tiles)
    assert y.dtype == dx.dtype == dW.dtype == np.float32
    expected = reference_conv2d(x[:1, :, :, :], W, None, (1, 1), (1, 1), (1, 1), (1, 1), 1)
    expected_dx, expected_dW = reference_gradients(x, W, dy, (1, 1), (1, 1))
    for result, reference in ((y[:1], expected), (dx, expected_dx), (dW, expected_dW)):
        assert np.abs(result - reference).max() <= 5e-5 * np.abs(reference).max()


def test_wide_float32_layers_take_the_path_and_others_do_not():
    def parameter(*shape, dtype=np.float32):
        return Tensor(data=np.zeros(shape, dtype), stores_grad=True)

    x, W = parameter(8, 64, 16, 16), parameter(64, 64, 3, 3)
    assert autograd.conv2d(x, W, padding=1).creator.saved[0].winograd
    for y in (autograd.conv2d(x, W, padding=1, stride=2),
              autograd.conv2d(x, W, padding=2, dilation=2),
              autograd.conv2d(x, parameter(64, 32, 3, 3), padding=1, groups=2),
              autograd.conv2d(x, parameter(64, 64, 1, 1)),
              autograd.conv2d(x, parameter(8, 64, 3, 3), padding=1),        # too narrow
              autograd.conv2d(parameter(1, 64, 8, 8), W, padding=1),        # 4 tiles: too few
              autograd.conv2d(parameter(8, 64, 16, 16, dtype=np.float16),
                              parameter(64, 64, 3, 3, dtype=np.float16), padding=1)):
        assert not y.creator.saved[0].winograd


def test_only_the_wanted_gradient_is_computed_and_only_what_it_needs_is_kept(always_winograd):
    x = Tensor(data=np.ones((1, 2, 4, 4)), requires_grad=False)
    W = Tensor(data=np.ones((3, 2, 3, 3)), stores_grad=True)
    y = autograd.conv2d(x, W, padding=1)
    V, U = y.creator.saved[0].saved
    assert V is not None and U is None
    grads = autograd.gradients(autograd.sum(y))
    # dW[o, c, i, j] = number of output positions whose window offset (i, j) is inside x
    expected = np.outer([3, 4, 3], [3, 4, 3])
    np.testing.assert_array_equal(grads[W].to_numpy(), np.broadcast_to(expected, (3, 2, 3, 3)))

    frozen = Tensor(data=np.ones((3, 2, 3, 3)), requires_grad=False)
    x = Tensor(data=np.ones((1, 2, 4, 4)), stores_grad=True)
    V, U = autograd.conv2d(x, frozen, padding=1).creator.saved[0].saved
    assert V is None and U is not None


def test_a_retained_graph_gives_the_same_gradients_twice(always_winograd):
    rng = np.random.default_rng(1)
    x = Tensor(data=rng.standard_normal((2, 3, 9, 7)), stores_grad=True)
    W = Tensor(data=rng.standard_normal((4, 3, 3, 3)), stores_grad=True)
    loss = autograd.sum(autograd.conv2d(x, W, padding=1) ** 2)
    first = autograd.gradients(loss, retain_graph=True)
    second = autograd.gradients(loss)
    for tensor in (x, W):
        np.testing.assert_array_equal(first[tensor].to_numpy(), second[tensor].to_numpy())


@pytest.fixture
def no_kept_transforms(monkeypatch):
    monkeypatch.setattr(winograd, "_transformed_kernels", collections.OrderedDict())


def test_a_forward_alone_reuses_the_kernel_transform_while_the_weights_are_unchanged(
        no_kept_transforms):
    """Inference keeps U per weight array; a weight changed in place (fine-tuning) or in
    training is transformed again: every output equals the direct sums of the weights it had."""
    rng = np.random.default_rng(5)
    x, W = rng.uniform(-1, 1, (2, 3, 7, 6)), rng.uniform(-1, 1, (4, 3, 3, 3))

    def check():
        y = winograd.forward(x, W, (1, 1), (0, 1), (False, False))[0]
        expected = reference_conv2d(x, W, None, (1, 1), (1, 1), (0, 1), (1, 1), 1)
        np.testing.assert_allclose(y, expected, rtol=1e-10, atol=1e-12)

    check()
    kept = winograd._transformed_kernels[id(W)][1]
    check()
    assert winograd._transformed_kernels[id(W)][1] is kept          # reused
    W[1, 2, 0, 1] += 0.5                                              # changed in place
    check()
    assert winograd._transformed_kernels[id(W)][1] is not kept
    W_training = rng.uniform(-1, 1, (4, 3, 3, 3))
    winograd.forward(x, W_training, (1, 1), (1, 1), (True, True))
    assert id(W_training) not in winograd._transformed_kernels       # training keeps none


def test_kept_transforms_stay_under_their_limit_and_empty_cache_drops_them(no_kept_transforms,
                                                                          monkeypatch):
    rng = np.random.default_rng(6)
    x = rng.uniform(-1, 1, (1, 3, 6, 6))
    weights = [rng.uniform(-1, 1, (4, 3, 3, 3)) for _ in range(3)]
    one = weights[0].nbytes * 5          # a copy of W and its U (4 times W's size)
    monkeypatch.setattr(winograd, "_TRANSFORMED_KERNELS_LIMIT_BYTES", 2 * one)
    for k in (0, 1, 0, 2):               # 0 used again after 1: 1 is the least recently used
        winograd.forward(x, weights[k], (1, 1), (1, 1), (False, False))
    assert list(winograd._transformed_kernels) == [id(weights[0]), id(weights[2])]
    assert autograd.empty_cache() >= 2 * one
    assert not winograd._transformed_kernels
