"""The import hook: a meta path finder that answers ``import singa`` and ``singa.*``.

Each SINGA module name maps to a proxy module over one of ours: attribute reads go to
autograd's module (SINGA-only spellings from :mod:`autograd.singa.names` first), assignments
such as ``autograd.training = False`` reach it too, and a name autograd lacks is an
:class:`AttributeError` that names the SINGA name and points at docs/singa.md. A SINGA module
with no counterpart (``singa.sonnx``) is a :class:`ModuleNotFoundError` saying so.
"""
import importlib
import importlib.abc
import importlib.machinery
import sys
import types

from . import names

__all__ = ["SingaFinder", "SINGA_MODULES", "DOCS"]

DOCS = "docs/singa.md"

# SINGA module -> (autograd module, its SINGA-only names) ; None: no autograd module behind it.
SINGA_MODULES = {
    "singa": (None, {}),
    "singa.autograd": ("autograd", names.AUTOGRAD),
    "singa.layer": ("autograd.layer", names.LAYER),
    "singa.model": ("autograd.model", names.MODEL),
    "singa.tensor": ("autograd.tensor", names.TENSOR),
    "singa.opt": ("autograd.opt", names.OPT),
    "singa.device": ("autograd.device", names.DEVICE),
    "singa.initializer": ("autograd.initializer", {}),
    "singa.singa_wrap": (None, names.SINGA_WRAP),
    "singa.sonnx": ("autograd.singa.sonnx", {}),
}

# Why a SINGA module has no counterpart, where one sentence helps.
MISSING_MODULES = {
    "singa.converter": "there is no Caffe converter",
}


class SingaModule(types.ModuleType):
    """A SINGA module name over an autograd module (see the module docstring)."""

    def __init__(self, name, target, extras):
        super().__init__(name)
        object.__setattr__(self, "_target", target)
        object.__setattr__(self, "_extras", extras)

    def __getattr__(self, name):
        extras = object.__getattribute__(self, "_extras")
        if name in extras:
            return extras[name]
        target = object.__getattribute__(self, "_target")
        if name == "__all__" and target is not None:          # from singa.tensor import *
            return list(getattr(target, "__all__", ())) + sorted(extras)
        if target is not None and not name.startswith("__"):
            try:
                return getattr(target, name)
            except AttributeError:
                pass
        if name.startswith("__"):
            raise AttributeError(name)
        submodule = f"{self.__name__}.{name}"
        if submodule in SINGA_MODULES:           # ``import singa; singa.tensor.Tensor``
            return importlib.import_module(submodule)
        raise AttributeError(_missing_name(self.__name__, name))

    def __setattr__(self, name, value):
        target = object.__getattribute__(self, "_target")
        # Module flags (``autograd.training = True``) must change autograd's own module; the
        # import system's bookkeeping (__spec__, submodules) stays on the proxy.
        if target is not None and not name.startswith("__") and hasattr(target, name) \
                and not isinstance(value, types.ModuleType):
            setattr(target, name, value)
        else:
            object.__setattr__(self, name, value)

    def __dir__(self):
        target = object.__getattribute__(self, "_target")
        own = set(object.__dir__(self)) | set(object.__getattribute__(self, "_extras"))
        return sorted(own | (set(dir(target)) if target is not None else set()))


def _missing_name(module, name):
    if module == "singa.singa_wrap":
        return (f"singa.singa_wrap.{name}: singa_wrap is SINGA's compiled C++ binding; autograd "
                f"has none (its Tensors hold NumPy/CuPy arrays). See {DOCS}")
    return (f"{module}.{name}: this SINGA name has no counterpart in autograd; {DOCS} lists "
            "the supported SINGA names and the workarounds for the missing ones")


class _Loader(importlib.abc.Loader):
    def create_module(self, spec):
        target_name, extras = SINGA_MODULES[spec.name]
        target = importlib.import_module(target_name) if target_name else None
        return SingaModule(spec.name, target, extras)

    def exec_module(self, module):
        if module.__name__ == "singa":
            module.__doc__ = ("SINGA's names answered by autograd for this run "
                              "(python -m autograd.singa); see " + DOCS)


class SingaFinder(importlib.abc.MetaPathFinder):
    """Finds ``singa`` and its submodules (and nothing else) for the run it is installed in."""

    def __init__(self):
        self.loader = _Loader()

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "singa" and not fullname.startswith("singa."):
            return None
        if fullname not in SINGA_MODULES:
            reason = MISSING_MODULES.get(fullname, "autograd has no counterpart of it")
            # No ``name=``: ``from singa import sonnx`` would then turn this into a bare
            # "cannot import name 'sonnx'" (the import system swallows errors naming the module).
            raise ModuleNotFoundError(
                f"{fullname}: {reason}; {DOCS} lists the SINGA modules and names autograd "
                "supports")
        spec = importlib.machinery.ModuleSpec(fullname, self.loader,
                                              is_package=fullname == "singa")
        if fullname == "singa":
            spec.submodule_search_locations = []
        return spec

    def forget_modules(self):
        """Drop every ``singa`` module this finder made from ``sys.modules``."""
        for name in [n for n in sys.modules if n == "singa" or n.startswith("singa.")]:
            if isinstance(sys.modules[name], SingaModule):
                del sys.modules[name]
