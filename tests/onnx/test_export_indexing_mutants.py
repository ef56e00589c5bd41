"""autograd/onnx/export_indexing.py: indexing that test_export.py does not export (an index
that is not a tuple, ints on both sides of an array, ints apart from it, a 2-D mask, an int64
index array given as a graph input), checked in onnxruntime against NumPy's own indexing, and
the refusals' messages word for word."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="the onnx extra is not installed")
onnxruntime = pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")

import autograd                                  # noqa: E402
import autograd.onnx                             # noqa: E402
from tests.onnx.onnxruntime_run import run_onnxruntime as _ort   # noqa: E402

RNG = np.random.default_rng(11)
X = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)
PROBE = RNG.standard_normal((3, 3, 4, 5)).astype(np.float32)     # another batch size


def _exports_like_numpy(index):
    proto = autograd.onnx.export(lambda x: autograd.getitem(x, index), [X])
    np.testing.assert_array_equal(_ort(proto, {"input": PROBE})[0], PROBE[index])
    return proto


@pytest.mark.parametrize("index", [slice(0, 2), slice(None), Ellipsis, None],
                         ids=["slice", "whole", "ellipsis", "none"])
def test_an_index_that_is_not_a_tuple_exports(index):
    _exports_like_numpy(index)


def test_ints_on_both_sides_of_an_array_stay_in_place():
    """x[:, 1, [0, 2], 3]: the ints and the array are adjacent, so NumPy keeps the array's axis
    where it is: (N, 2)."""
    proto = _exports_like_numpy((slice(None), 1, [0, 2], 3))
    assert PROBE[:, 1, [0, 2], 3].shape == (3, 2)
    assert "Gather" in [node.op_type for node in proto.graph.node]


def test_ints_apart_from_an_array_with_three_parts_are_refused():
    """x[1, :, [0, 2], 3]: an int apart from the array (NumPy moves the array's axes first)."""
    with pytest.raises(NotImplementedError) as caught:
        autograd.onnx.export(lambda x: autograd.getitem(x, (1, slice(None), [0, 2], 3)), [X])
    assert str(caught.value) == ("autograd.onnx.export: ints apart from an index array (NumPy "
                                 "moves the array's axes first) have no mapping")


def test_a_boolean_mask_of_two_axes_is_refused_word_for_word():
    mask = np.zeros((3, 4), bool)
    mask[0, 1] = mask[2, 3] = True
    with pytest.raises(NotImplementedError) as caught:
        autograd.onnx.export(lambda x: autograd.getitem(x, (slice(None), mask)), [X])
    assert str(caught.value) == ("autograd.onnx.export: a boolean mask of more than one axis "
                                 "has no mapping (a 1-D mask does)")


def test_an_index_array_given_as_a_graph_input_is_gathered_from_it():
    """x[:, ids] with int64 ids as the second graph input: other ids at run time."""
    ids = np.array([2, 0], np.int64)
    proto = autograd.onnx.export(lambda x, ids: autograd.getitem(x, (slice(None), ids)),
                                 [X, ids])
    other = np.array([1, 1, 0], np.int64)
    np.testing.assert_array_equal(_ort(proto, {"input_0": PROBE, "input_1": other})[0],
                                  PROBE[:, other])


def test_a_constant_mask_keeps_its_positions():
    """A mask that is no graph input: the positions of its True values, as a constant."""
    mask = np.array([False, True, True, False, True])
    proto = _exports_like_numpy((Ellipsis, mask))
    assert "NonZero" not in [node.op_type for node in proto.graph.node]


def test_a_mask_graph_input_after_a_slice_stays_an_input():
    """x[0:2, mask] with the mask as the second graph input: the Slice's constants are
    initializers already, and the mask must still be read at run time (NonZero), not frozen
    as the traced positions."""
    x = RNG.standard_normal((3, 5)).astype(np.float32)
    mask = np.array([True, False, True, False, False])
    proto = autograd.onnx.export(lambda x, m: autograd.getitem(x, (slice(0, 2), m)), [x, mask])
    assert "NonZero" in [node.op_type for node in proto.graph.node]
    other = np.array([False, True, True, True, False])
    np.testing.assert_array_equal(_ort(proto, {"input_0": x, "input_1": other})[0],
                                  x[0:2, other])
