"""ConvGeometry: every spelling of padding resolves to the pads a formula written here gives,
and the output size is what the operations and layers produce."""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

import autograd
from autograd import ConvGeometry, Tensor


@given(size=st.integers(1, 12), kernel=st.integers(1, 4), stride=st.integers(1, 3),
       dilation=st.integers(1, 2), pad=st.integers(0, 2))
def test_explicit_padding_gives_the_convolution_formula_and_the_ops_shape(size, kernel, stride,
                                                                          dilation, pad):
    geometry = ConvGeometry(kernel, stride, pad, dilation)
    formula = (size + 2 * pad - dilation * (kernel - 1) - 1) // stride + 1
    assert geometry.pads((size, size)) == ((pad, pad), (pad, pad))
    assert geometry.output_size((size, size)) == (max(formula, 0),) * 2
    if formula >= 1:
        y = autograd.conv2d(Tensor(shape=(1, 1, size, size)), Tensor(shape=(1, 1, kernel, kernel)),
                            stride=stride, padding=pad, dilation=dilation)
        assert y.shape[2:] == geometry.output_size((size, size))
        layer = autograd.Conv2d(1, 1, kernel, stride=stride, padding=pad, dilation=dilation)
        assert layer.output_shape((1, 1, size, size)) == y.shape


@given(size=st.integers(1, 20), kernel=st.integers(1, 5), stride=st.integers(1, 4),
       lower=st.booleans())
def test_same_padding_gives_ceil_of_size_over_stride_with_the_odd_pixel_placed(size, kernel,
                                                                              stride, lower):
    mode = "SAME_LOWER" if lower else "SAME_UPPER"
    geometry = ConvGeometry(kernel, stride, pad_mode=mode)
    (before, after), _ = geometry.pads((size, size))
    total = max((math.ceil(size / stride) - 1) * stride + kernel - size, 0)
    assert before + after == total and abs(before - after) <= 1
    assert (before >= after) if lower else (after >= before)
    assert geometry.output_size((size, size)) == (math.ceil(size / stride),) * 2
    if not lower:       # PyTorch's "same" is ONNX's SAME_UPPER
        assert ConvGeometry(kernel, stride, "same").pads((size, size)) == geometry.pads(
            (size, size))


def test_every_spelling_of_padding_resolves_once():
    assert ConvGeometry(3, padding=(1, 2)).pads((5, 5)) == ((1, 1), (2, 2))
    assert ConvGeometry(3, padding=(0, 1, 1, 0)).pads((5, 5)) == ((0, 1), (1, 0))
    assert ConvGeometry(3, padding="VALID".lower()).pads((5, 5)) == ((0, 0), (0, 0))
    assert ConvGeometry(3, padding=2, pad_mode="valid").pads((5, 5)) == ((0, 0), (0, 0))
    assert ConvGeometry(3, padding=np.int64(1), dims=1).pads((5,)) == ((1, 1),)
    assert ConvGeometry(3, stride=2, ceil_mode=True).output_size((8, 8)) == (4, 4)
    assert ConvGeometry(3, stride=2).output_size((8, 8)) == (3, 3)
    assert ConvGeometry(3, padding=1) == ConvGeometry((3, 3), 1, (1, 1))
    assert len({ConvGeometry(3), ConvGeometry(3), ConvGeometry(2)}) == 2


@pytest.mark.parametrize("arguments, error, message", [
    (dict(kernel_size=0), ValueError, "conv2d: kernel_size must be positive, got 0"),
    (dict(kernel_size=3, stride=(1, 2, 3)), TypeError, r"conv2d: stride must be an int or 2 ints"),
    (dict(kernel_size=3, padding=-1), ValueError, "conv2d: padding must be non-negative"),
    (dict(kernel_size=3, padding="full"), ValueError, "padding must be an int, a pair, 'same'"),
    (dict(kernel_size=3, pad_mode="SAME"), ValueError, "conv2d: pad_mode must be one of"),
    (dict(kernel_size=3, groups=0), ValueError, "conv2d: groups must be a positive int"),
    (dict(kernel_size=3, padding=1.5), TypeError, "conv2d: padding must be"),
])
def test_bad_arguments_name_the_caller_and_the_value(arguments, error, message):
    with pytest.raises(error, match=message):
        ConvGeometry(**arguments)


def test_equal_plain_arguments_share_one_resolved_geometry():
    from autograd.geometry import ConvGeometry
    import copy
    import pickle
    first = ConvGeometry((3, 3), 2, "same", name="conv2d")
    assert ConvGeometry((3, 3), 2, "same", name="conv2d") is first
    assert ConvGeometry((3, 3), 2, "same", name="pool") is not first        # its own messages
    assert ConvGeometry([3, 3], 2, "same").pads((7, 8)) == first.pads((7, 8))   # lists: no key
    for copied in (pickle.loads(pickle.dumps(first)), copy.deepcopy(first)):
        assert copied == first and copied.pads((7, 8)) == ((1, 1), (0, 1))


@pytest.mark.parametrize("arguments", [
    {"padding": (1, True)}, {"padding": True}, {"stride": (True, 1)}, {"dilation": True}])
def test_a_bool_never_finds_the_geometry_of_its_int(arguments):
    from autograd.geometry import ConvGeometry
    ConvGeometry(3, stride=(1, 1), padding=(1, 1), dilation=1)      # the int spelling first
    with pytest.raises(TypeError):
        ConvGeometry(3, **{"stride": (1, 1), "padding": (1, 1), "dilation": 1, **arguments})
