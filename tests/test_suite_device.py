"""The switch that runs the whole suite on the GPU (issue 23, docs/testing-on-gpu.md):
``pytest --device gpu`` or ``AUTOGRAD_TEST_DEVICE=gpu`` makes gpu:0 the default device for the
session, skips tests marked ``cpu_only``, and stops at once with a clear message where no GPU
can be used. Each case runs pytest in a subprocess on one small test of this suite."""
import os
import pathlib
import subprocess
import sys

import pytest

from tests.conftest import DEVICE_VARIABLE, _gpu_missing

ROOT = pathlib.Path(__file__).resolve().parent.parent
SMALL_TEST = "tests/test_tensor_inplace.py::test_copy_data_and_bernoulli"
CPU_ONLY_TEST = "tests/test_runtime.py::test_cache_limit_reads_back_and_zero_keeps_nothing"

pytestmark = pytest.mark.cpu_only       # each case starts its own pytest with its own device


def _pytest(*args, variable=None):
    environment = dict(os.environ, PYTHONPATH=str(ROOT))
    environment.pop(DEVICE_VARIABLE, None)
    if variable is not None:
        environment[DEVICE_VARIABLE] = variable
    return subprocess.run([sys.executable, "-m", "pytest", "-rs", *args], cwd=ROOT,
                          env=environment, capture_output=True, text=True, timeout=300)


@pytest.mark.skipif(_gpu_missing() is None, reason="a GPU is present: the suite would run on it")
@pytest.mark.parametrize("how", [("--device", "gpu"), (DEVICE_VARIABLE, "gpu")], ids=str)
def test_asking_for_the_gpu_without_one_stops_with_the_reason(how):
    if how[0] == "--device":
        run = _pytest("--device", "gpu", SMALL_TEST)
    else:
        run = _pytest(SMALL_TEST, variable="gpu")
    output = run.stdout + run.stderr
    assert run.returncode == pytest.ExitCode.USAGE_ERROR, output
    assert "--device gpu (AUTOGRAD_TEST_DEVICE=gpu) needs a GPU" in output, output
    assert _gpu_missing() in output, output
    assert " passed" not in output


def test_a_bad_device_name_is_a_usage_error():
    run = _pytest(SMALL_TEST, variable="tpu")
    assert run.returncode == pytest.ExitCode.USAGE_ERROR
    assert "AUTOGRAD_TEST_DEVICE='tpu': expected 'cpu' or 'gpu'" in run.stdout + run.stderr
    run = _pytest("--device", "tpu", SMALL_TEST)
    assert run.returncode == pytest.ExitCode.USAGE_ERROR
    assert "invalid choice: 'tpu'" in run.stderr


def test_the_default_is_the_cpu_and_cpu_only_tests_run():
    run = _pytest(SMALL_TEST, CPU_ONLY_TEST, "--device", "cpu")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "autograd default device: cpu" in run.stdout
    assert "skipped" not in run.stdout


@pytest.mark.gpu
def test_the_gpu_switch_sets_the_default_device_and_skips_cpu_only_tests(tmp_path):
    probe = tmp_path / "test_probe.py"
    probe.write_text("import autograd\n\n"
                     "def test_new_tensors_go_to_gpu0():\n"
                     "    assert str(autograd.Tensor(shape=(2,)).device) == 'gpu:0'\n")
    run = _pytest("--device", "gpu", SMALL_TEST, CPU_ONLY_TEST, "--rootdir", str(ROOT),
                  "-c", str(ROOT / "pyproject.toml"), str(probe))
    output = run.stdout + run.stderr
    assert run.returncode == 0, output
    assert "autograd default device: gpu" in output
    assert "CPU-only by nature: skipped under --device gpu" in output
