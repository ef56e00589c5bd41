"""Test settings: the import-name check, hypothesis profiles, the GPU marker's skip, and the
device the suite runs on (``--device gpu`` or ``AUTOGRAD_TEST_DEVICE=gpu``:
docs/testing-on-gpu.md)."""
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


DEVICE_VARIABLE = "AUTOGRAD_TEST_DEVICE"


def pytest_addoption(parser):
    parser.addoption(
        "--device", choices=("cpu", "gpu"), default=None,
        help="the default device of the whole suite: 'gpu' runs every test with new Tensors on "
             "gpu:0 (tests marked cpu_only are skipped); default: $AUTOGRAD_TEST_DEVICE or cpu")


def suite_device(config):
    """The device the suite runs on: --device, else $AUTOGRAD_TEST_DEVICE, else 'cpu'."""
    choice = config.getoption("--device") or os.environ.get(DEVICE_VARIABLE) or "cpu"
    if choice not in ("cpu", "gpu"):
        raise pytest.UsageError(f"{DEVICE_VARIABLE}={choice!r}: expected 'cpu' or 'gpu'")
    return choice


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "cpu_only: CPU-only by nature (host buffers, intra-op threads, benchmarks, "
                   "import behaviour in a subprocess); skipped when the suite runs on the GPU")
    if suite_device(config) == "gpu":
        reason = _gpu_missing()
        if reason:
            pytest.exit(f"--device gpu ({DEVICE_VARIABLE}=gpu) needs a GPU: {reason}",
                        returncode=pytest.ExitCode.USAGE_ERROR)
        import autograd.device
        autograd.device.set_default_device(autograd.device.gpu(0))


def pytest_report_header(config):
    return f"autograd default device: {suite_device(config)}"


def pytest_collection_modifyitems(config, items):
    on_gpu = suite_device(config) == "gpu"
    reason = None
    for item in items:
        if on_gpu and "cpu_only" in item.keywords:
            item.add_marker(pytest.mark.skip(reason="CPU-only by nature: skipped under "
                                                    "--device gpu"))
        if "gpu" in item.keywords:
            reason = reason or _gpu_missing() or ""
            if reason:
                item.add_marker(pytest.mark.skip(reason=f"GPU test skipped: {reason}"))


@pytest.fixture(autouse=True)
def _restore_the_training_flag():
    """``Model.eval()`` clears the process-wide ``autograd.training`` (SINGA's semantics); a
    test that calls it must not leave the next test out of training mode (a dropout test run
    after tests/graph_mode/test_model_graph.py failed that way under mutmut's order)."""
    import autograd
    before = autograd.training
    yield
    autograd.training = before


@pytest.fixture(params=[1, 3], ids=["one thread", "three threads"])
def thread_count(request, monkeypatch):
    """One thread, or three with no size floor (every pass that can split does)."""
    import autograd
    from autograd.backend import threads
    previous = autograd.get_num_threads()
    monkeypatch.setattr(threads, "MIN_PARALLEL_ELEMENTS", 1)
    autograd.set_num_threads(request.param)
    yield request.param
    autograd.set_num_threads(previous)


@pytest.fixture(scope="module", params=["compiled", "portable"])
def compiled_and_portable(request):
    """Run a module's tests twice: with the compiled CPU kernels (autograd/backend/native.py)
    and with the portable NumPy code they stand in for, so that both stay tested (module-scoped:
    hypothesis tests may use it). Modules opt in with
    ``pytestmark = pytest.mark.usefixtures("compiled_and_portable")``."""
    from autograd.backend import native
    if request.param == "compiled" and not native.available():
        pytest.skip("the compiled kernels are not built in this install")
    previous = native.enabled()
    if native.available():
        native.set_enabled(request.param == "compiled")
    yield request.param
    if native.available():
        native.set_enabled(previous)
