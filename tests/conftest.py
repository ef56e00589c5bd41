"""Test settings: hypothesis profiles and the GPU marker's skip."""
import os

import pytest
from hypothesis import HealthCheck, settings

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
