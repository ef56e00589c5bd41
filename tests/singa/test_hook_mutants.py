"""The import hook's proxy modules and finder (autograd/singa/hook.py) and install/uninstall
(autograd/singa/__init__.py): survivors of the full mutation run killed here, each test
against a value written out by hand (messages word for word, which names a proxy lists and
where an assignment lands)."""
import sys
import types

import numpy as np
import pytest

import autograd
import autograd.singa
from autograd import Tensor
from autograd.singa import hook, names


def test_finder_answers_only_singa_and_its_submodules():
    """``startswith("singa.")``: a module merely starting with "singa" is not ours."""
    finder = hook.SingaFinder()
    for other in ("singapore", "singa_extra", "json", "autograd.singa", "xsinga.tensor"):
        assert finder.find_spec(other) is None
    spec = finder.find_spec("singa")
    assert spec.name == "singa" and spec.loader is finder.loader
    assert spec.submodule_search_locations == []
    sub = finder.find_spec("singa.tensor")
    assert sub.name == "singa.tensor" and sub.submodule_search_locations is None
    assert sub.loader is finder.loader


def test_missing_module_messages_word_for_word():
    finder = hook.SingaFinder()
    with pytest.raises(ModuleNotFoundError) as info:
        finder.find_spec("singa.converter")
    assert str(info.value) == ("singa.converter: there is no Caffe converter; docs/singa.md "
                               "lists the SINGA modules and names autograd supports")
    assert info.value.name is None
    with pytest.raises(ModuleNotFoundError) as info:
        finder.find_spec("singa.utils")
    assert str(info.value) == ("singa.utils: autograd has no counterpart of it; docs/singa.md "
                               "lists the SINGA modules and names autograd supports")


def test_missing_name_messages_word_for_word():
    assert hook._missing_name("singa.tensor", "from_raw_tensor") == (
        "singa.tensor.from_raw_tensor: this SINGA name has no counterpart in autograd; "
        "docs/singa.md lists the supported SINGA names and the workarounds for the missing ones")
    assert hook._missing_name("singa.singa_wrap", "Tensor") == (
        "singa.singa_wrap.Tensor: singa_wrap is SINGA's compiled C++ binding; autograd has "
        "none (its Tensors hold NumPy/CuPy arrays). See docs/singa.md")


def test_the_package_has_a_docstring_and_its_submodules_as_attributes(singa):
    assert singa.__doc__ == ("SINGA's names answered by autograd for this run (python -m "
                             "autograd.singa); see docs/singa.md")
    assert singa.opt is sys.modules["singa.opt"]               # imported on first access
    assert singa.device.cpu is autograd.device.cpu
    with pytest.raises(AttributeError) as info:
        singa.nothing_here
    assert str(info.value) == hook._missing_name("singa", "nothing_here")
    from singa import tensor
    assert tensor.__doc__ is None                               # only the package's is set


def test_dunder_names_are_plain_attribute_errors(singa):
    from singa import tensor
    with pytest.raises(AttributeError) as info:
        tensor.__wrapped__
    assert str(info.value) == "__wrapped__"
    with pytest.raises(AttributeError) as info:
        singa.__all__                                          # no target: no __all__
    assert str(info.value) == "__all__"


def test_extras_come_before_autograds_names(singa):
    from singa import tensor, autograd as singa_autograd
    assert tensor.from_numpy is names.from_numpy                 # autograd.tensor has its own
    assert autograd.tensor.from_numpy is not names.from_numpy
    assert singa_autograd.backward is names.backward
    assert tensor.__all__ == list(autograd.tensor.__all__) + sorted(names.TENSOR)


def test_dir_lists_the_targets_and_the_extras(singa):
    from singa import tensor, singa_wrap
    listed = dir(tensor)
    assert listed == sorted(listed)
    assert {"Tensor", "zeros", "to_numpy", "PlaceHolder", "float16", "gt"} <= set(listed)
    assert set(dir(autograd.tensor)) <= set(listed)
    assert "NcclIdHolder" in dir(singa_wrap) and "Tensor" not in dir(singa_wrap)
    assert {"_target", "_extras", "__name__"} <= set(listed)          # the proxy's own names


def test_dir_of_the_package_lists_its_own_names_and_nothing_of_none(singa):
    import singa.tensor  # noqa: F401   (the import system sets singa.tensor on the proxy)
    listed = dir(singa)
    assert "tensor" in listed and "__doc__" in listed and "_extras" in listed
    assert "__bool__" not in listed                  # singa has no target: not dir(None)


def test_assignments_reach_the_target_only_for_its_existing_plain_names(singa):
    from singa import autograd as singa_autograd
    singa_autograd.training = False
    assert autograd.training is False and "training" not in vars(singa_autograd)
    singa_autograd.training = True
    singa_autograd.brand_new_name = 5                  # autograd has no such name: the proxy
    assert singa_autograd.brand_new_name == 5 and not hasattr(autograd, "brand_new_name")
    submodule = types.ModuleType("singa.autograd.tensor")
    singa_autograd.tensor = submodule                  # import bookkeeping stays on the proxy
    assert autograd.tensor is not submodule and vars(singa_autograd)["tensor"] is submodule
    singa_autograd.__custom__ = 1
    assert not hasattr(autograd, "__custom__")
    singa.anything = 3                                 # no target: always the proxy
    assert vars(singa)["anything"] == 3


def test_forget_modules_drops_only_the_proxies(singa):
    import singa.tensor  # noqa: F401
    stranger = types.ModuleType("singa.stranger")
    sys.modules["singa.stranger"] = stranger
    try:
        autograd.singa.installed().forget_modules()
        assert "singa" not in sys.modules and "singa.tensor" not in sys.modules
        assert sys.modules["singa.stranger"] is stranger
    finally:
        sys.modules.pop("singa.stranger", None)


def test_install_twice_adds_one_finder_and_uninstall_restores_everything():
    getitem = Tensor.__getitem__
    truth = Tensor.__bool__
    autograd.singa.install()
    autograd.singa.install(cpu=True)
    try:
        assert sum(isinstance(f, hook.SingaFinder) for f in sys.meta_path) == 1
        assert sys.meta_path[0] is autograd.singa.installed()           # ahead of the rest
        assert names.settings.gpu_as_cpu is True
        assert Tensor(data=np.zeros(3, np.float32))[0].shape == (1,)
        assert bool(Tensor(data=np.zeros(3, np.float32)))                 # "is not None"
        assert bool(Tensor(data=[2.0])) and not bool(Tensor(data=[0.0]))
    finally:
        autograd.singa.uninstall()
    assert autograd.singa.installed() is None and names.settings.gpu_as_cpu is False
    assert Tensor.__getitem__ is getitem and Tensor.__bool__ is truth
    with pytest.raises(ValueError):
        bool(Tensor(data=np.zeros(3, np.float32)))
    autograd.singa.uninstall()                               # harmless without the hook
    assert names.settings.gpu_as_cpu is False


def test_install_cpu_flag_is_a_bool():
    autograd.singa.install(cpu=1)
    try:
        assert names.settings.gpu_as_cpu is True
    finally:
        autograd.singa.uninstall()
    autograd.singa.install()
    try:
        assert names.settings.gpu_as_cpu is False
    finally:
        autograd.singa.uninstall()


def test_uninstall_without_the_hook_clears_the_cpu_flag():
    names.settings.gpu_as_cpu = True
    autograd.singa.uninstall()
    assert names.settings.gpu_as_cpu is False


def test_one_element_truth_is_its_value_under_the_hook(singa):
    assert bool(Tensor(data=np.float32(3.0))) and not bool(Tensor(data=np.float32(0.0)))
    assert bool(Tensor(data=np.zeros((2, 1), np.float32)))


def test_all_of_a_target_without_one_is_the_extras_and_dunders_are_not_forwarded(singa):
    proxy = hook.SingaModule("singa.made_up", types.ModuleType("plain"), {"b": 1, "a": 2})
    assert proxy.__all__ == ["a", "b"]
    from singa import tensor
    assert autograd.tensor.__file__
    with pytest.raises(AttributeError) as info:
        tensor.__file__                           # the target has one; the proxy does not pass it
    assert str(info.value) == "__file__"
