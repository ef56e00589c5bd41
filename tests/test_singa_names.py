"""The SINGA names that docs/singa.md lists as supported exist in our package.

A SINGA user renames ``singa`` to ``autograd``: ``singa.autograd.X`` is ``autograd.X``, and
``singa.<module>.X`` is ``autograd.<module>.X`` (``singa.layer`` is ``autograd.layers``, whose
names are also exported from ``autograd`` itself). ``("tensor.Tensor", "lt")`` means the method
``Tensor.lt``; ``("layer.Layer", ...)``, ``("model.Model", ...)`` and ``("opt.Optimizer", ...)``
likewise name methods. Each entry must also appear on the page, so the two stay in step.
"""
import importlib
import pathlib
import re

import pytest

import autograd

_MODULES = {
    "autograd": "autograd",
    "layer": "autograd.layers",
    "model": "autograd.model",
    "opt": "autograd.opt",
    "tensor": "autograd.tensor",
    "initializer": "autograd.initializer",
    "device": "autograd.device",
}

_AUTOGRAD = """
    backward gradients training
    relu sigmoid tanh softmax leakyrelu elu selu hardsigmoid softplus softsign prelu erf
    identity abs exp log sqrt sign negative reciprocal pow ceil floor round rounde
    sin cos tan asin acos atan sinh cosh asinh acosh atanh
    add sub mul div matmul add_bias gemm clip
    sum mean max min reduce_sum reduce_mean
    greater less equal _and _or _not _xor
    reshape flatten transpose squeeze unsqueeze cat split gather tile expand pad
    where shape constant_of_shape cast onehot nonzero scatter_elements slice globalaveragepool embedding
    upsample depth_to_space space_to_depth dropout conv2d
    softmax_cross_entropy cross_entropy binary_cross_entropy mse_loss cossim ranking_loss
"""

_LAYER = """
    Layer Linear Gemm Embedding Conv2d SeparableConv2d BatchNorm2d Pooling2d MaxPool2d
    AvgPool2d MaxPool1d AvgPool1d RNN LSTM ReLU Sigmoid Add Flatten SoftMax Dropout Cat
    Reshape SoftMaxCrossEntropy MeanSquareError CrossEntropy BinaryCrossEntropy
"""

_OTHERS = {
    "layer.Layer": "initialize forward get_params set_params get_states set_states "
                   "register_layers",
    "model": "Model",
    "model.Model": "compile forward train_one_batch train eval set_optimizer save_states "
                   "load_states",
    "opt": "Optimizer SGD RMSProp AdaGrad Adam DecayScheduler Constant ExponentialDecay DistOpt",
    "opt.DistOpt": "backward_and_update update all_reduce fused_all_reduce wait world_size "
                   "local_rank global_rank",
    "opt.Optimizer": "update apply step get_states set_states backward_and_update step_counter",
    "tensor": "Tensor from_numpy to_numpy zeros ones zeros_like ones_like random repeat "
              "concatenate einsum tensordot float32 int32",
    "tensor.Tensor": "shape dtype device name requires_grad stores_grad creator ndim size "
                     "to_numpy to_device to_host T transpose reshape as_type set_value "
                     "gaussian uniform bernoulli copy copy_data clone deepcopy repeat "
                     "lt le gt ge eq copy_from_numpy copy_from",
    "initializer": "eye orthogonal lecun_uniform lecun_normal glorot_uniform glorot_normal "
                   "he_uniform he_normal gaussian xavier glorot msra",
    "device": "get_default_device create_cuda_gpu create_cuda_gpu_on",
    "device.Device": "SetRandSeed id graph_enabled SetVerbosity PrintTimeProfiling "
                     "SetSkipIteration Sync",
}

SUPPORTED = ([("autograd", name) for name in _AUTOGRAD.split()]
             + [("layer", name) for name in _LAYER.split()]
             + [(where, name) for where, names in _OTHERS.items() for name in names.split()])

_PAGE = pathlib.Path(__file__).resolve().parents[1] / "docs" / "singa.md"


def _owner(where):
    """The module (or, for "module.Class", the class) that should hold the names."""
    module, _, cls = where.partition(".")
    owner = importlib.import_module(_MODULES[module])
    return getattr(owner, cls) if cls else owner


@pytest.mark.parametrize("where,name", SUPPORTED, ids=[f"{w}.{n}" for w, n in SUPPORTED])
def test_supported_name_exists(where, name):
    owner = _owner(where)
    if where == "opt.Optimizer" and name == "step_counter":
        owner = autograd.opt.SGD(lr=0.1)          # an instance attribute
    if where == "tensor.Tensor" and name in ("shape", "dtype", "device", "ndim", "size",
                                             "name", "requires_grad", "stores_grad",
                                             "creator"):
        owner = autograd.Tensor(data=[1.0])       # instance attributes and properties
    assert hasattr(owner, name), f"singa.{where}.{name} is listed as supported but missing"


def test_layers_are_exported_from_the_package_too():
    missing = [name for name in _LAYER.split() if getattr(autograd, name, None) is not
               getattr(autograd.layers, name)]
    assert not missing, f"layers not exported from autograd itself: {missing}"


def test_every_supported_name_is_on_the_page():
    page = _PAGE.read_text(encoding="utf-8")
    words = set(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", page))
    absent = sorted({name for _, name in SUPPORTED if name not in words})
    assert not absent, f"names the test checks but docs/singa.md does not mention: {absent}"


def test_singa_module_spellings_import():
    from autograd import layer, tensor, device, opt, initializer, model   # noqa: F401
    assert layer.Conv2d is autograd.Conv2d and layer.Linear is autograd.Linear
    assert autograd.Operator is autograd.Operation
