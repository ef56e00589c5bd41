"""col2im, the columns' adjoint, by the compiled kernel (csrc/columns_bindings.h,
native_pooling.col2im), against the adjoint of the columns' direct loop, bit for bit:
any kernel, stride, dilation and padding, dx in C order, batch-last or another dense layout;
the same bits on any number of threads; a convolution's input gradient taken through it equals
the NumPy adds it replaced; the binding's errors name the kernel and the operand."""
import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

import autograd
from autograd import Tensor
from autograd.backend import native, native_pooling
from tests.backend.test_native_columns import draw_windows, reference_columns

pytestmark = pytest.mark.skipif(not native.available(),
                                reason="the compiled kernels are not built in this install")


def reference_col2im(dcols, shape, kernel, stride, dilation, pads_h, pads_w):
    """dx[n, c, row, column] = the sum of dcols's entries that the columns read from there, as
    the columns' adjoint: the columns of the positions 1..size (test_native_columns's direct
    loop; 0 where they read padding) say where each entry of dcols goes, and np.add.at adds
    them in float32 in dcols's order, which is the (i, j) order the kernel promises."""
    size = int(np.prod(shape))
    positions = np.arange(1, size + 1, dtype=np.float64).reshape(shape)
    sources, _ = reference_columns(positions, kernel, stride, dilation, 1, pads_h, pads_w, False)
    dx = np.zeros(size + 1, np.float32)
    np.add.at(dx, sources.reshape(-1).astype(np.int64), dcols.reshape(-1))
    return dx[1:].reshape(shape)


def _empty(shape, layout):
    """An uninitialised-looking (NaN) float32 array of ``shape`` laid out as named."""
    order = {"plain": (0, 1, 2, 3), "batch last": (1, 2, 3, 0), "channels last": (0, 2, 3, 1)}
    axes = order[layout]
    stored = np.full([shape[a] for a in axes], np.nan, np.float32)
    return stored.transpose(np.argsort(axes))


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_col2im_matches_the_definition(data):
    n, c = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 4))
    h, w = data.draw(st.integers(1, 8)), data.draw(st.integers(1, 8))
    kernel, stride, dilation, pads_h, pads_w = draw_windows(data)
    layout = data.draw(st.sampled_from(["plain", "batch last", "channels last"]))
    threads = data.draw(st.sampled_from([1, 3]))
    assume(h + sum(pads_h) > dilation[0] * (kernel[0] - 1)
           and w + sum(pads_w) > dilation[1] * (kernel[1] - 1))      # an output at least
    out_size = tuple((size + sum(pads) - d * (k - 1) - 1) // s + 1 for size, pads, k, s, d in
                     zip((h, w), (pads_h, pads_w), kernel, stride, dilation))
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16)))
    dcols = rng.standard_normal((c * kernel[0] * kernel[1], out_size[0] * out_size[1] * n))
    dcols = dcols.astype(np.float32)
    dx = _empty((n, c, h, w), layout)
    previous = autograd.get_num_threads()
    autograd.set_num_threads(threads)
    try:
        native_pooling.col2im(dcols, dx, kernel, out_size, stride, dilation, pads_h[0],
                              pads_w[0])
    finally:
        autograd.set_num_threads(previous)
    expected = reference_col2im(dcols, (n, c, h, w), kernel, stride, dilation, pads_h, pads_w)
    assert np.array_equal(dx, expected)      # every element written: no NaN left


@pytest.mark.parametrize("stride, padding", [(1, 1), (2, 1), (2, 0), (3, 2), (1, (1, 0)), (2, (0, 2))])
def test_a_convolutions_input_gradient_by_col2im_is_the_numpy_adds_bits(stride, padding):
    """Eight images, 4 -> 16 channels (more outputs than inputs: the col2im rule), a batch-last
    x as a layer's output is; dx through the kernel and through the NumPy adds it replaced."""
    rng = np.random.default_rng(stride)
    x_data = rng.standard_normal((4, 9, 9, 8)).astype(np.float32).transpose(3, 0, 1, 2)
    W_data = rng.standard_normal((16, 4, 3, 3)).astype(np.float32)
    dy = None
    results = []
    for enabled in (True, False):
        previous = native.set_enabled(enabled)
        try:
            x = Tensor(data=x_data, stores_grad=True)
            W = Tensor(data=W_data, stores_grad=True)
            y = autograd.conv2d(x, W, stride=stride, padding=padding)
            if dy is None:
                dy = rng.standard_normal(y.shape).astype(np.float32)
            grads = dict((id(p), g.to_numpy()) for p, g in
                         autograd.backward(autograd.sum(y * Tensor(data=dy))))
            results.append(grads[id(x)])
        finally:
            native.set_enabled(previous)
    assert np.array_equal(results[0], results[1])


def test_the_binding_names_the_kernel_and_the_operand():
    dcols = np.ones((9, 16), np.float32)
    dx = np.empty((1, 1, 4, 4), np.float32)
    arguments = (3, 3, 1, 1, 1, 1, 1, 1, 4, 4, 1)
    with pytest.raises(ValueError, match="col2im: expected dcols as a C-contiguous float32 "
                                         "array of 9 x 16 values"):
        native._native.col2im(dcols[:, :8].copy(), dx, *arguments)
    with pytest.raises(ValueError, match="col2im: dcols: .*not C-contiguous"):
        native._native.col2im(np.ones((16, 9), np.float32).T, dx, *arguments)
    with pytest.raises(ValueError, match="col2im: expected dx as a 4-D float32 array"):
        native._native.col2im(dcols, dx.astype(np.float64), *arguments)
    with pytest.raises(ValueError, match="col2im: expected positive kernel"):
        native._native.col2im(dcols, dx, 0, 3, 1, 1, 1, 1, 1, 1, 4, 4, 1)
    shared = np.empty(144 + 16, np.float32)
    with pytest.raises(ValueError, match="col2im: dx overlaps dcols"):
        native._native.col2im(shared[:144].reshape(9, 16), shared[140:156].reshape(1, 1, 4, 4),
                              *arguments)
    read_only = np.empty((1, 1, 4, 4), np.float32)
    read_only.flags.writeable = False
    with pytest.raises(ValueError, match="col2im: dx: .*read-only"):
        native._native.col2im(dcols, read_only, *arguments)


def test_what_the_kernel_does_not_take_is_left_to_the_caller():
    """float64 or non-NumPy operands: None, dx untouched (the caller runs its NumPy adds)."""
    dx = np.full((1, 1, 4, 4), np.nan, np.float32)
    arguments = ((3, 3), (4, 4), (1, 1), (1, 1), 1, 1)
    assert native_pooling.col2im(np.ones((9, 16)), dx, *arguments) is None
    assert native_pooling.col2im(np.ones((9, 16), np.float32).tolist(), dx, *arguments) is None
    assert native_pooling.col2im(np.ones((9, 16)), dx.astype(np.float64), *arguments) is None
    assert np.isnan(dx).all()
    assert native_pooling.col2im(np.ones((9, 16), np.float32), dx, *arguments)
    assert not np.isnan(dx).any()
