"""Resize and Upsample (import_resize.py) against onnxruntime and onnx's ReferenceEvaluator on
single-node models: every coordinate transformation mode, sizes of one, rounding below zero,
a scale that keeps the size, empty scales beside sizes, and the message for neither. Found by
the mutation run (issue 22): the conformance suite never ran align_corners, pytorch_half_pixel,
tf_half_pixel_for_nn or half_pixel_symmetric."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="the onnx extra is not installed")
onnxruntime = pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")
from onnx import helper, numpy_helper, TensorProto   # noqa: E402
from onnx.reference import ReferenceEvaluator        # noqa: E402

import autograd                                      # noqa: E402


def _resize_model(x_shape, scales=None, sizes=None, opset=19, op_type="Resize", **attributes):
    """One Resize node reading x and the given scales / sizes initializers ('' when None)."""
    initializers, inputs = [], ["x"]
    if op_type == "Resize" and opset < 13:                      # roi: required before 13
        inputs.append("roi")
        initializers.append(numpy_helper.from_array(np.zeros(0, np.float32), "roi"))
    elif op_type == "Resize":
        inputs.append("")
    for name, value, dtype in (("scales", scales, np.float32), ("sizes", sizes, np.int64)):
        if value is None:
            inputs.append("")
        else:
            inputs.append(name)
            initializers.append(numpy_helper.from_array(np.asarray(value, dtype), name))
    if op_type == "Upsample" or opset == 10:
        inputs = ["x", "scales"]
    while inputs and inputs[-1] == "":
        inputs.pop()
    node = helper.make_node(op_type, inputs, ["y"], **attributes)
    graph = helper.make_graph(
        [node], "resize", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _check(proto, x, runtime=True, evaluator=True):
    """Our import's output, equal to onnxruntime's and the ReferenceEvaluator's (where each
    runs the mode)."""
    ours = autograd.onnx.load(proto)(x).to_numpy()
    if evaluator:
        np.testing.assert_array_equal(ours, ReferenceEvaluator(proto).run(None, {"x": x})[0])
    if runtime:
        session = onnxruntime.InferenceSession(proto.SerializeToString(),
                                               providers=["CPUExecutionProvider"])
        np.testing.assert_array_equal(ours, session.run(None, {"x": x})[0])
    return ours


def _image(shape):
    return np.arange(np.prod(shape), dtype=np.float32).reshape(shape)


TRANSFORMS = ["half_pixel", "align_corners", "pytorch_half_pixel", "tf_half_pixel_for_nn",
              "asymmetric", "half_pixel_symmetric"]
ROUNDINGS = ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]


@pytest.mark.parametrize("transform", TRANSFORMS)
@pytest.mark.parametrize("rounding", ROUNDINGS)
def test_every_transform_and_rounding_matches_the_references(transform, rounding):
    """Kills the mutated formulas and mode names of ``_nearest_indices`` (each transform's
    branch changed, its constants moved by one): up and down by uneven sizes and scales."""
    x = _image((1, 1, 5, 7))
    for sizes in ([1, 1, 8, 11], [1, 1, 3, 4], [1, 1, 12, 3]):
        # tf_half_pixel_for_nn left the operator in opset 18; the evaluator lacks it
        # onnxruntime 1.32 reads half_pixel_symmetric's offset otherwise than the operator's
        # definition (and its evaluator) when sizes are given
        legacy = transform == "tf_half_pixel_for_nn"
        proto = _resize_model(x.shape, sizes=sizes, opset=13 if legacy else 19,
                              mode="nearest", coordinate_transformation_mode=transform,
                              nearest_mode=rounding)
        ours = _check(proto, x, runtime=transform != "half_pixel_symmetric",
                      evaluator=not legacy)
        assert ours.shape == tuple(sizes)
    # scales whose sizes are not whole (6.85, 4.27): half_pixel_symmetric's offset is not 0.
    # Chosen so that no position falls on a rounding tie (float32 and float64 arithmetic
    # would round those apart). For such sizes the evaluator's align_corners divides by the
    # unrounded size - 1 (4.27 - 1), onnxruntime (and this importer) by the output's 4 - 1.
    proto = _resize_model(x.shape, scales=[1, 1, 1.37, 0.61], opset=13 if legacy else 19,
                          mode="nearest", coordinate_transformation_mode=transform,
                          nearest_mode=rounding)
    ours = _check(proto, x, runtime=transform != "half_pixel_symmetric",
                  evaluator=not legacy and transform != "align_corners")
    assert ours.shape == (1, 1, 6, 4)


@pytest.mark.parametrize("transform", ["align_corners", "pytorch_half_pixel"])
def test_an_axis_resized_to_one_reads_its_first_element(transform):
    """align_corners and pytorch_half_pixel read position 0 for an output of size 1 (the
    mutants taking the general formula there divide by zero or read elsewhere; those testing
    ``out_size > 2`` read position 0 for an output of size 2 too)."""
    x = _image((1, 1, 6, 4))
    for sizes in ([1, 1, 1, 4], [1, 1, 2, 1], [1, 1, 1, 1]):
        proto = _resize_model(x.shape, sizes=sizes, mode="nearest",
                              coordinate_transformation_mode=transform, nearest_mode="floor")
        ours = _check(proto, x, runtime=transform != "pytorch_half_pixel")
        assert ours.shape == tuple(sizes)
    ours = autograd.onnx.load(_resize_model(x.shape, sizes=[1, 1, 1, 1], mode="nearest",
                                            coordinate_transformation_mode=transform)
                              )(x).to_numpy()
    np.testing.assert_array_equal(ours, x[:, :, :1, :1])


def test_half_pixel_floor_upsampling_clamps_the_first_index_at_zero():
    """(0 + 0.5) / 2 - 0.5 = -0.25 floors to -1: clipped to 0, not read from the end."""
    x = _image((1, 1, 3, 3))
    proto = _resize_model(x.shape, scales=[1, 1, 2, 2], mode="nearest",
                          coordinate_transformation_mode="half_pixel", nearest_mode="floor")
    ours = _check(proto, x)
    np.testing.assert_array_equal(ours[0, 0, 0], [0, 0, 0, 1, 1, 2])


def test_a_scale_that_keeps_an_axis_size_still_moves_its_positions():
    """Scale 1.2 on 3 pixels keeps 3 outputs (floor(3.6)) but, asymmetric with floor, reads
    [0, 0, 1] by the operator's definition (onnxruntime 1.32 copies such an axis unchanged):
    the axis must be gathered though its size is unchanged."""
    x = _image((1, 1, 3, 4))
    proto = _resize_model(x.shape, scales=[1, 1, 1.2, 1], mode="nearest",
                          coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    ours = _check(proto, x, runtime=False)
    np.testing.assert_array_equal(ours[0, 0, :, 0], [0, 0, 4])


def test_empty_scales_beside_sizes_take_the_sizes():
    """Opsets 11-12 give scales as an empty tensor when sizes are set."""
    x = _image((1, 2, 3, 3))
    proto = _resize_model(x.shape, scales=np.zeros(0), sizes=[1, 2, 6, 2], opset=11,
                          mode="nearest", coordinate_transformation_mode="asymmetric",
                          nearest_mode="floor")
    assert _check(proto, x).shape == (1, 2, 6, 2)


def test_resize_with_neither_scales_nor_sizes_says_so():
    proto = _resize_model((1, 1, 2, 2), mode="nearest")
    proto.graph.node[0].name = "up"
    net = autograd.onnx.load(proto)
    with pytest.raises(ValueError) as caught:
        net(_image((1, 1, 2, 2)))
    assert str(caught.value) == ("autograd.onnx: Resize node 'up' has neither scales nor "
                                 "sizes")


def test_resize_opset_10_and_upsample_opsets_7_and_9_are_asymmetric_floor():
    x = _image((1, 2, 3, 4))
    proto = _resize_model(x.shape, scales=[1, 1, 2.5, 1.5], opset=10, mode="nearest")
    assert _check(proto, x, evaluator=False).shape == (1, 2, 7, 6)
    proto = _resize_model(x.shape, scales=[1, 1, 2, 3], opset=9, op_type="Upsample",
                          mode="nearest")
    ours = _check(proto, x, evaluator=False)
    np.testing.assert_array_equal(ours, x.repeat(2, axis=2).repeat(3, axis=3))
    node = helper.make_node("Upsample", ["x"], ["y"], mode="nearest", scales=[1.0, 1.0, 2.0,
                                                                              1.5])
    graph = helper.make_graph(
        [node], "up7", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 7)])
    ours = autograd.onnx.load(proto)(x).to_numpy()
    np.testing.assert_array_equal(ours, x.repeat(2, axis=2)[:, :, :, [0, 0, 1, 2, 2, 3]])


def test_resize_of_some_axes_only_opset_18():
    x = _image((1, 2, 3, 4))
    proto = _resize_model(x.shape, sizes=[5, 2], opset=18, mode="nearest", axes=[-1, 2],
                          coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    assert _check(proto, x, evaluator=False).shape == (1, 2, 2, 5)     # (negative axes)
    proto = _resize_model(x.shape, scales=[2.0], opset=18, mode="nearest", axes=[1])
    assert _check(proto, x).shape == (1, 4, 3, 4)


@pytest.mark.parametrize("attributes, message", [
    ({"mode": "linear"}, "mode 'linear' with 'half_pixel' is not supported (nearest is)"),
    ({"mode": "cubic", "coordinate_transformation_mode": "asymmetric"},
     "mode 'cubic' with 'asymmetric' is not supported (nearest is)"),
    ({"coordinate_transformation_mode": "tf_crop_and_resize"},
     "mode 'nearest' with 'tf_crop_and_resize' is not supported (nearest is)"),
    ({"antialias": 1}, "attribute antialias is not supported"),
    ({"keep_aspect_ratio_policy": "not_larger"},
     "attribute keep_aspect_ratio_policy is not supported"),
])
def test_unsupported_resize_modes_are_refused_word_for_word(attributes, message):
    proto = _resize_model((1, 1, 2, 2), scales=[1, 1, 2, 2], **attributes)
    proto.graph.node[0].name = "r"
    with pytest.raises(NotImplementedError) as caught:
        autograd.onnx.load(proto)(_image((1, 1, 2, 2)))
    assert str(caught.value) == "autograd.onnx: Resize node 'r': " + message


def test_a_default_resize_is_nearest_half_pixel_round_prefer_floor():
    x = _image((1, 1, 4, 5))
    proto = _resize_model(x.shape, sizes=[1, 1, 7, 3])
    _check(proto, x)
    # the supported values given explicitly are accepted
    proto = _resize_model(x.shape, sizes=[1, 1, 7, 3], keep_aspect_ratio_policy="stretch",
                          antialias=0)
    _check(proto, x)


def test_linear_upsample_is_refused_word_for_word():
    proto = _resize_model((1, 1, 2, 2), scales=[1, 1, 2, 2], opset=9, op_type="Upsample",
                          mode="linear")
    proto.graph.node[0].name = "u"
    with pytest.raises(NotImplementedError) as caught:
        autograd.onnx.load(proto)(_image((1, 1, 2, 2)))
    assert str(caught.value) == ("autograd.onnx: Upsample node 'u': mode 'linear' is not "
                                 "supported (nearest is)")
