"""ONNX's own conformance suite (shipped inside the onnx wheel) against the importer: every
node test whose node types the importer supports, and the model cases (pytorch-converted,
pytorch-operator, simple) likewise. Which cases ran is printed by ``-rA``; the selection is
computed from the test models themselves, so adding an importer adds its cases."""
import pathlib
import re

import pytest

onnx = pytest.importorskip("onnx", reason="the onnx extra is not installed")
from onnx.backend.test import BackendTest                # noqa: E402
from onnx.backend.test.loader import load_model_tests   # noqa: E402

import autograd.onnx                                     # noqa: E402
from autograd.onnx.backend import AutogradBackend       # noqa: E402

SUPPORTED = set(autograd.onnx.supported_node_types())

# Cases of supported node types that use what the importer does not (docs/onnx.md says why).
NOT_SUPPORTED = {
    r"3d|Conv3d|Pool3d": "3-D convolution and pooling (the ops are 1-D and 2-D)",
    r"pool.*dilation|Pool.*dilation": "dilated pooling",
    r"FLOAT8|FLOAT16|e8m0|FLOAT4|INT4|UINT4|string|BFLOAT16": "float8/float16/int4/string types",
    r"identity_opt|identity_sequence|optional": "sequence and optional values",
    r"training_dropout": "dropout in training mode draws from autograd's generator, not the "
                        "reference's",
    r"batchnorm_.*training_mode": "the running variance uses the unbiased batch variance "
                                  "(SINGA, PyTorch), ONNX's reference the biased one",
    r"with_argmax": "MaxPool's Indices output",
    r"wrap_pad": "pad mode 'wrap'",
    r"empty_set": "reductions over an empty axis",
    r"pow_types_int": "Pow with an integer base and a float exponent",
    r"maxpool_2d_uint8": "pooling of integer images",
    r"reshape_allowzero_reordered": "zero-size tensors",
    r"resize_.*(linear|cubic|tf_crop_and_resize)|upsample_.*linear": "linear and cubic "
    "Resize (nearest is imported)",
    r"resize_.*not_(larger|smaller)": "Resize's keep_aspect_ratio_policy",
    r"averagepool_2d_ceil_last_window_starts_on_pad": "ceil_mode windows that start in the "
                                                     "trailing padding (PyTorch's rule drops them)",
}
_NOT_SUPPORTED = re.compile("|".join(NOT_SUPPORTED))


LIGHT = "onnx/backend/test/data/light/"
ONNX_DIRECTORY = pathlib.Path(onnx.__file__).parent


def _model_of(case):
    if case.model_dir is not None:
        return onnx.load(f"{case.model_dir}/model.onnx", load_external_data=False)
    if case.url and case.url.startswith(LIGHT):       # real networks shipped in the wheel
        return onnx.load(str(ONNX_DIRECTORY / case.url[len("onnx/"):]))
    return case.model


def _supported_cases(kind):
    names = []
    for case in load_model_tests(kind=kind):
        if kind == "real" and not (case.url or "").startswith(LIGHT):
            continue                                   # the rest are downloads
        model = _model_of(case)
        if model is None:
            continue
        types = {node.op_type for node in model.graph.node}
        domains = {node.domain for node in model.graph.node}
        if types <= SUPPORTED and domains <= {"", "ai.onnx"} and not _NOT_SUPPORTED.search(
                case.name):
            names.append(case.name)
    return names


SELECTED = {kind: _supported_cases(kind)
            for kind in ("node", "pytorch-converted", "pytorch-operator", "simple", "real")}

backend_test = BackendTest(AutogradBackend, __name__)
for _names in SELECTED.values():
    for _name in _names:
        backend_test.include("^" + re.escape(_name) + "_cpu$")
globals().update(backend_test.test_cases)


def test_the_selection_covers_many_node_tests_and_every_light_network():
    assert len(SELECTED["node"]) > 500
    assert len(SELECTED["real"]) == 9, SELECTED["real"]
