"""ConvGeometry survivors of the full mutation run. Most were resolutions the tests did reach,
but through the cache of resolved geometries: under mutmut the parent process had resolved
them with the original code, so the mutant never ran. Each test here starts from an empty
cache. Expected values: window counts by brute force, pads and messages written out by hand."""
import itertools
import re

import numpy as np
import pytest

from autograd import geometry
from autograd.geometry import ConvGeometry, axis_slice, output_size, pair, per_axis, same_pads


@pytest.fixture(autouse=True)
def empty_cache(monkeypatch):
    monkeypatch.setattr(geometry, "_RESOLVED", {})


def _error(kind, text, build):
    with pytest.raises(kind) as info:
        build()
    assert str(info.value) == text


def test_axis_slice_takes_start_stop_step_along_its_axis():
    x = np.arange(2 * 9 * 3).reshape(2, 9, 3)
    np.testing.assert_array_equal(x[axis_slice(1, 1, 8, 3)], x[:, 1:8:3])
    np.testing.assert_array_equal(x[axis_slice(2, 1, 3)], x[:, :, 1:3])
    assert axis_slice(0, 2, 5) == (slice(2, 5, None),)


def _windows(size, kernel, stride, dilation, pads, ceil_mode):
    """Count window starts by brute force: floor mode keeps the windows inside the padded
    input; ceil mode also one that overhangs its end (by less than a stride), and keeps only
    windows that start inside the input or the leading padding (PyTorch's rule)."""
    span = dilation * (kernel - 1) + 1
    padded = size + pads[0] + pads[1]
    if padded < span:
        return 0
    count = 0
    for start in range(0, padded + stride, stride):
        if ceil_mode:
            count += start + span <= padded + stride - 1 and start < size + pads[0]
        else:
            count += start + span <= padded
    return count


def test_output_size_counts_the_windows_in_floor_and_ceil_mode():
    for size, kernel, stride, dilation, before, after in itertools.product(
            range(1, 11), range(1, 5), range(1, 5), (1, 2), range(3), range(3)):
        pads = (before, after)
        if max(pads) > (dilation * (kernel - 1) + 1) // 2:
            continue                    # PyTorch refuses pads over half the window
        for ceil_mode in (False, True):
            assert output_size(size, kernel, stride, dilation, pads, ceil_mode) == \
                _windows(size, kernel, stride, dilation, pads, ceil_mode), \
                (size, kernel, stride, dilation, pads, ceil_mode)
    assert output_size(8, 3, 2, 1, (0, 0)) == 3                 # ceil_mode defaults to False


def test_same_pads_put_the_odd_pixel_after_by_default():
    assert same_pads(5, 2, 1, 1) == (0, 1)
    assert same_pads(5, 2, 1, 1, lower=True) == (1, 0)


def test_ceil_mode_is_kept_by_a_fresh_geometry():
    assert ConvGeometry(3, stride=2, ceil_mode=True).output_size((8, 8)) == (4, 4)
    assert ConvGeometry(3, stride=2, ceil_mode=1).ceil_mode is True


@pytest.mark.parametrize("padding, pad_mode, pads", [
    ("same", "NOTSET", ((1, 1), (0, 1))),          # PyTorch's "same" is SAME_UPPER
    ("same", "SAME_LOWER", ((1, 1), (1, 0))),      # pad_mode wins over the word
    ("same", "valid", ((0, 0), (0, 0))),
    ("valid", "NOTSET", ((0, 0), (0, 0))),
    (2, "VALID", ((0, 0), (0, 0))),
    (2, "same_upper", ((1, 1), (0, 1))),           # pad_mode upper-cased
    ((0, 1, 2, 3), "NOTSET", ((0, 1), (2, 3))),    # SINGA's (top, bottom, left, right)
    ((np.int64(1), 0, 0, np.int32(2)), "NOTSET", ((1, 0), (0, 2))),
    ([1, 2], "NOTSET", ((1, 1), (2, 2))),
])
def test_every_spelling_of_padding_resolves_freshly(padding, pad_mode, pads):
    g = ConvGeometry(3, stride=2, padding=padding, pad_mode=pad_mode)
    assert g.pads((7, 8)) == pads
    assert all(type(v) is int for pair_ in g.pads((7, 8)) for v in pair_)


def test_a_pair_of_pads_is_no_spelling_for_one_axis():
    _error(TypeError, "conv1d: padding must be an int, 'same' or 'valid', got (1, 2)",
           lambda: ConvGeometry(3, padding=(1, 2), dims=1, name="conv1d"))


def test_padding_messages_word_for_word():
    _error(TypeError, "conv2d: padding must be an int, a pair, 4 ints (before and after each "
                      "axis), 'same' or 'valid', got (0, 1.5, 1, 0)",
           lambda: ConvGeometry(3, padding=(0, 1.5, 1, 0)))
    _error(ValueError, "conv2d: padding must be non-negative, got (0, -1, 1, 0)",
           lambda: ConvGeometry(3, padding=(0, -1, 1, 0)))
    _error(ValueError, "conv2d: padding must be non-negative, got -1",
           lambda: ConvGeometry(3, padding=-1))
    _error(ValueError, "conv1d: padding must be an int, 'same' or 'valid', got 'full'",
           lambda: ConvGeometry(3, padding="full", dims=1, name="conv1d"))
    _error(ValueError, "pool: padding must be an int, a pair, 'same' or 'valid', got 'full'",
           lambda: ConvGeometry(3, padding="full", name="pool"))


def test_argument_messages_word_for_word():
    _error(ValueError, "conv2d: dilation must be positive, got 0",
           lambda: ConvGeometry(3, dilation=0))
    _error(ValueError, "conv2d: pad_mode must be one of ('NOTSET', 'SAME_UPPER', "
                       "'SAME_LOWER', 'VALID'), got None",
           lambda: ConvGeometry(3, pad_mode=None))
    _error(TypeError, "conv2d: stride must be an int or 2 ints, got 'x'",
           lambda: pair("x", "conv2d", "stride"))
    _error(TypeError, "conv1d: stride must be an int, got (1, 2)",
           lambda: per_axis((1, 2), 1, "conv1d", "stride"))


def test_an_unknown_input_size_gets_no_padding_and_no_output_size():
    g = ConvGeometry(3, padding="same")
    assert g.pads((None, 5)) == ((0, 0), (1, 1))
    assert g.output_size((None, 5)) == (None, 5)


def test_output_size_with_pads_given_uses_them():
    g = ConvGeometry(3, padding=1)
    assert g.output_size((5, 5), pads=((2, 2), (0, 0))) == (7, 3)


def test_spans_and_smallest_input_of_a_dilated_kernel():
    g = ConvGeometry((3, 2), dilation=2)
    assert g.spans() == (5, 3)
    assert g.smallest_input(((1, 2), (0, 1))) == (2, 2)


def test_a_geometry_equals_only_geometries():
    assert ConvGeometry(3) != "conv2d" and not ConvGeometry(3) == 3
    assert ConvGeometry(3, padding=1) == ConvGeometry([3, 3], 1, [1, 1])


def test_repr_shows_fixed_pads_or_the_mode():
    assert repr(ConvGeometry(3, stride=2, padding=1)) == (
        "ConvGeometry(kernel=(3, 3), stride=(2, 2), padding=((1, 1), (1, 1)), "
        "dilation=(1, 1), groups=1)")
    assert repr(ConvGeometry(3, padding="same", groups=2)) == (
        "ConvGeometry(kernel=(3, 3), stride=(1, 1), padding=SAME_UPPER, "
        "dilation=(1, 1), groups=2)")


def test_a_geometry_pickled_in_another_process_hashes_as_one_built_here():
    """The hash is kept once computed but not pickled: a str's hash (the pad mode's) differs
    between processes, and a geometry from a pickle must find the plans keyed by an equal
    one built here."""
    import pickle
    import subprocess
    import sys
    from autograd.geometry import ConvGeometry
    code = ("import pickle, sys; from autograd.geometry import ConvGeometry; "
            "g = ConvGeometry(3, stride=2, padding='same'); hash(g); "
            "sys.stdout.buffer.write(pickle.dumps(g))")
    pickled = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                             env={**__import__("os").environ, "PYTHONHASHSEED": "123"}).stdout
    here = ConvGeometry(3, stride=2, padding="same")
    there = pickle.loads(pickled)
    assert there == here and hash(there) == hash(here)
    assert {here: "plan"}[there] == "plan"
