"""Test settings: the import-name check, hypothesis profiles and the GPU marker's skip."""
import importlib.util
import os
import pathlib

import pytest
from hypothesis import HealthCheck, settings


def _check_the_import_name():
    """Stop with the explanation when ``import autograd`` is (or may be) HIPS autograd: every
    test would otherwise fail with an AttributeError that hides the cause."""
    import autograd
    # loaded by path: with HIPS autograd shadowing this package, autograd._install_check is
    # not importable
    here = pathlib.Path(__file__).resolve().parents[1] / "autograd" / "_install_check.py"
    spec = importlib.util.spec_from_file_location("_tapegrad_install_check", here)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    problem = module.clash_message(autograd)
    if problem is not None:
        pytest.exit(problem, returncode=4)


_check_the_import_name()

# CI runs on 2 shared cores: few examples per property, no per-example deadline.
settings.register_profile("ci", max_examples=12, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=200, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def _gpu_missing():
    try:
        import cupy
    except ImportError:
        return "CuPy is not installed (pip install -e \".[gpu]\")"
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            return "CuPy is installed but no CUDA GPU is visible"
    except Exception as error:          # no driver: CuPy raises its own runtime error
        return f"CuPy is installed but CUDA is unusable: {error}"
    return None


def pytest_collection_modifyitems(config, items):
    reason = None
    for item in items:
        if "gpu" in item.keywords:
            reason = reason or _gpu_missing() or ""
            if reason:
                item.add_marker(pytest.mark.skip(reason=f"GPU test skipped: {reason}"))
