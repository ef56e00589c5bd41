"""Is ``import autograd`` this project (distribution ``tapegrad``)? The HIPS ``autograd``
package (``pip install autograd``) has the same import name, and pip installs it beside ours
without a word: then one shadows the other, or both write into one ``autograd/`` folder.

Standard library only and no relative imports, so that it runs (``python -m autograd``, the
examples, the test suite's conftest) even when the package beside it is broken or shadowed.

>>> clash_message(None, hips_version=None) is None
True
>>> "pip uninstall" in clash_message(None, hips_version="1.7.0")
True
"""
import importlib.metadata

__all__ = ["hips_autograd_version", "clash_message"]


def hips_autograd_version():
    """The version of the installed ``autograd`` distribution (HIPS autograd), or None."""
    try:
        return importlib.metadata.version("autograd")
    except importlib.metadata.PackageNotFoundError:
        return None


def clash_message(module, hips_version=None):
    """The explanation and fix when ``module`` (what ``import autograd`` gave, or None) is not
    ours or HIPS autograd is installed; None when all is well. ``hips_version`` defaults to
    what :func:`hips_autograd_version` finds."""
    if hips_version is None:
        hips_version = hips_autograd_version()
    shadowed = module is not None and not hasattr(module, "Tensor")
    if hips_version is None and not shadowed:
        return None
    where = getattr(module, "__file__", None) or "an unknown place"
    found = (f"`import autograd` gives another package, at {where}"
             if shadowed else "`import autograd` may give either package, or a mixture")
    other = (f"HIPS autograd {hips_version} (`pip install autograd`)" if hips_version
             else "a package named autograd that is not tapegrad")
    return (
        "The import name `autograd` is taken twice.\n"
        f"  {other} is installed, and tapegrad (this project) is imported as `autograd` "
        f"too: {found}.\n"
        "Fix: remove the other package and reinstall this one:\n"
        "  python -m pip uninstall -y autograd\n"
        "  python -m pip install --force-reinstall --no-deps tapegrad"
        "    (from a clone: python -m pip install -e .)\n"
        "Need HIPS autograd as well? Give each its own virtual environment.\n"
        "Check with: python -m autograd")
