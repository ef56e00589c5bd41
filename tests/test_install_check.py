"""The import-name clash with HIPS autograd is explained where our code can run: the examples,
``python -m autograd`` and the test suite's conftest."""
import os
import pathlib
import subprocess
import sys
import types

import pytest

import autograd
from autograd._install_check import clash_message

ROOT = pathlib.Path(autograd.__file__).resolve().parents[1]


def test_no_message_when_all_is_well():
    assert clash_message(autograd, hips_version=None) is None


def test_a_shadowing_package_is_named_with_the_fix():
    hips = types.ModuleType("autograd")
    hips.__file__ = "/site-packages/autograd/__init__.py"
    message = clash_message(hips, hips_version="1.7.0")
    assert "HIPS autograd 1.7.0" in message
    assert "gives another package, at /site-packages/autograd/__init__.py" in message
    assert "python -m pip uninstall -y autograd" in message


def _fake_hips(folder, with_package):
    """What ``pip install autograd`` leaves: its metadata, and (unless ``with_package`` is
    False) an ``autograd`` package without Tensor."""
    info = folder / "autograd-1.7.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: autograd\nVersion: 1.7.0\n")
    if with_package:
        (folder / "autograd").mkdir()
        (folder / "autograd" / "__init__.py").write_text("def grad(fun):\n    return fun\n")
    return folder


def _run(arguments, pythonpath):
    return subprocess.run([sys.executable] + arguments, capture_output=True, text=True,
                          cwd=ROOT, timeout=120,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(map(str, pythonpath))})


@pytest.mark.parametrize("example", ["train_cnn", "train_mlp", "train_model",
                                     "custom_operation"])
def test_an_example_under_hips_autograd_exits_with_the_explanation(tmp_path, example):
    hips = _fake_hips(tmp_path, with_package=True)
    result = _run([f"examples/{example}.py", "--help"], [hips])
    assert result.returncode == 1
    assert "The import name `autograd` is taken twice" in result.stderr
    assert "HIPS autograd 1.7.0" in result.stderr and "AttributeError" not in result.stderr


def test_python_m_autograd_reports_an_installed_hips_autograd(tmp_path):
    hips = _fake_hips(tmp_path, with_package=False)
    result = _run(["-m", "autograd"], [ROOT, hips])
    assert result.returncode == 1
    assert "HIPS autograd 1.7.0 (`pip install autograd`) is installed" in result.stdout
    assert "a training step runs" in result.stdout


def test_python_m_autograd_on_a_good_install():
    result = _run(["-m", "autograd"], [ROOT])
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"location   {ROOT / 'autograd' / '__init__.py'}" in result.stdout
    assert "a training step runs" in result.stdout


def test_the_test_suite_stops_with_the_explanation(tmp_path):
    hips = _fake_hips(tmp_path, with_package=False)
    result = _run(["-m", "pytest", "tests/test_install_check.py", "-q", "-k", "all_is_well"],
                  [ROOT, hips])
    assert result.returncode == 4
    assert "The import name `autograd` is taken twice" in result.stdout + result.stderr
