"""``python -m autograd`` and the HIPS clash message, run in this process (survivors of the full
mutation run: test_install_check.py runs them in subprocesses, which mutmut cannot credit, so
every mutant of autograd/__main__.py had no test). Each output is checked word for word against
text written here."""
import importlib.metadata
import platform
import sys
import types

import numpy as np
import pytest

import autograd
from autograd import __main__ as diagnostics
from autograd import _install_check
from autograd._install_check import clash_message

FIX = ("Fix: remove the other package and reinstall this one:\n"
       "  python -m pip uninstall -y autograd\n"
       "  python -m pip install --force-reinstall --no-deps tapegrad"
       "    (from a clone: python -m pip install -e .)\n"
       "Need HIPS autograd as well? Give each its own virtual environment.\n"
       "Check with: python -m autograd")


def _clash(other, found):
    return ("The import name `autograd` is taken twice.\n"
            f"  {other} is installed, and tapegrad (this project) is imported as `autograd` "
            f"too: {found}.\n" + FIX)


@pytest.fixture
def hips_installed(tmp_path, monkeypatch):
    """What ``pip install autograd`` leaves on sys.path: its metadata (version 1.7.0)."""
    info = tmp_path / "autograd-1.7.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: autograd\nVersion: 1.7.0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    return "1.7.0"


@pytest.fixture
def no_hips():
    if _install_check.hips_autograd_version() is not None:
        pytest.skip("HIPS autograd is installed in this environment")


def test_hips_autograd_version_reads_the_autograd_distribution(no_hips, hips_installed):
    # catches the distribution name mutated ("XXautogradXX" finds nothing)
    assert _install_check.hips_autograd_version() == "1.7.0"


def test_clash_message_looks_the_hips_version_up_itself(no_hips, hips_installed):
    # catches `hips_version = None` in place of the lookup: our own module and HIPS installed
    assert clash_message(autograd) == _clash(
        "HIPS autograd 1.7.0 (`pip install autograd`)",
        "`import autograd` may give either package, or a mixture")
    assert clash_message(autograd, hips_version=None) == clash_message(autograd)


def test_no_message_for_our_module_and_no_hips(no_hips):
    assert clash_message(autograd) is None and clash_message(None) is None


def test_a_shadowing_package_beside_hips_is_named_word_for_word():
    other = types.ModuleType("autograd")
    other.__file__ = "/elsewhere/autograd/__init__.py"
    message = clash_message(other, "0.9")
    assert message == _clash("HIPS autograd 0.9 (`pip install autograd`)",
                             "`import autograd` gives another package, at "
                             "/elsewhere/autograd/__init__.py")


def test_a_shadowing_package_with_no_version_and_no_file(no_hips):
    # catches `(hips_version) or True` (it would say "HIPS autograd None"), the unknown-place
    # text, and getattr(module, "__file__") without its default (a module may have no file)
    other = types.ModuleType("autograd")
    assert clash_message(other) == _clash(
        "a package named autograd that is not tapegrad",
        "`import autograd` gives another package, at an unknown place")


def test_a_package_with_a_lowercase_tensor_but_no_tensor_class_is_another_package(no_hips):
    # catches hasattr(module, "tensor"): ours has both, HIPS-like code may have `tensor`
    other = types.ModuleType("autograd")
    other.__file__ = "/x/autograd/__init__.py"
    other.tensor = lambda value: value
    assert clash_message(other) == _clash(
        "a package named autograd that is not tapegrad",
        "`import autograd` gives another package, at /x/autograd/__init__.py")


def test_our_module_beside_hips_names_both_word_for_word():
    # catches `or` for `and` in the early return (our module is not shadowed, HIPS is there)
    # and `(shadowed) or True`
    assert clash_message(autograd, "1.6.2") == _clash(
        "HIPS autograd 1.6.2 (`pip install autograd`)",
        "`import autograd` may give either package, or a mixture")


# -- python -m autograd ------------------------------------------------------------------------

def test_version_of_a_missing_distribution_is_none():
    assert diagnostics._version("tapegrad") == importlib.metadata.version("tapegrad")
    assert diagnostics._version("no-such-distribution-here") is None


def test_optional_modules_are_listed_with_version_or_fix(monkeypatch):
    monkeypatch.setitem(sys.modules, "stand_in_without_version", types.ModuleType("x"))
    monkeypatch.setitem(sys.modules, "absent_module", None)        # import raises ImportError
    lines = []
    diagnostics._optional(lines, "numpy")
    diagnostics._optional(lines, "stand_in_without_version")
    diagnostics._optional(lines, "absent_module")
    diagnostics._optional(lines, "absent_module", "examples")
    assert lines == [f"  numpy      {np.__version__}",
                     "  stand_in_without_versioninstalled",
                     "  absent_modulenot installed (required: pip install tapegrad)",
                     '  absent_modulenot installed (pip install "tapegrad[examples]")']


def _stand_in_cupy(count):
    cupy = types.ModuleType("cupy")
    cupy.__version__ = "13.1.0"

    def device_count():
        if isinstance(count, Exception):
            raise count
        return count
    cupy.cuda = types.SimpleNamespace(runtime=types.SimpleNamespace(getDeviceCount=device_count))
    return cupy


def test_gpu_line_for_each_state_of_cupy(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)
    assert diagnostics._gpu_line() == \
        '  GPU        none: CuPy is not installed (pip install "tapegrad[gpu]")'
    monkeypatch.setitem(sys.modules, "cupy", _stand_in_cupy(2))
    assert diagnostics._gpu_line() == "  GPU        CuPy 13.1.0, 2 CUDA device(s)"
    monkeypatch.setitem(sys.modules, "cupy", _stand_in_cupy(RuntimeError("no CUDA driver")))
    assert diagnostics._gpu_line() == "  GPU        CuPy 13.1.0, but CUDA is unusable: no CUDA driver"


class _Recording(types.ModuleType):
    """autograd with mse_loss recorded (and optionally an SGD that never moves anything)."""

    def __init__(self, frozen=False):
        super().__init__("autograd")
        self.__file__ = autograd.__file__
        self.losses, self.frozen = [], frozen
        for name in ("Tensor", "matmul", "backward", "get_num_threads"):
            setattr(self, name, getattr(autograd, name))
        self.opt = types.SimpleNamespace(SGD=self._sgd)

    def _sgd(self, lr):
        self.lrs = getattr(self, "lrs", []) + [lr]
        return autograd.opt.SGD(lr=0.0 if self.frozen else lr)

    def mse_loss(self, y, target):
        loss = autograd.mse_loss(y, target)
        self.losses.append(float(loss.item()))
        return loss


def test_the_smoke_test_is_one_sgd_step_on_the_identity_least_squares_problem():
    # w = 0, x = I (3x3), target = 1: mse 1; dL/dw = -2/3 each, w -> 1/3 at lr 0.5: mse 4/9.
    # Catches every mutated shape, flag, learning rate and step count in _smoke_test.
    recording = _Recording()
    assert diagnostics._smoke_test(recording) is True
    assert recording.lrs == [0.5]
    assert recording.losses == [1.0, pytest.approx(4 / 9, rel=1e-6)]


def test_the_smoke_test_fails_when_the_loss_does_not_move():
    # catches `<=` for `<`: an equal loss is a failed check
    recording = _Recording(frozen=True)
    assert diagnostics._smoke_test(recording) is False
    assert recording.losses == [1.0, 1.0]


def _header(location, tapegrad):
    return ["autograd (distribution tapegrad) diagnostics",
            f"  tapegrad   {tapegrad}",
            f"  location   {location}",
            f"  Python     {platform.python_version()} on {platform.platform()}",
            f"  numpy      {np.__version__}",
            "  scipy      installed",
            "  tqdm       not installed (required: pip install tapegrad)",
            '  matplotlib not installed (pip install "tapegrad[examples]")',
            '  GPU        none: CuPy is not installed (pip install "tapegrad[gpu]")']


@pytest.fixture
def fixed_environment(monkeypatch, no_hips):
    """scipy without a version, tqdm and matplotlib absent, no CuPy: every kind of line."""
    monkeypatch.setitem(sys.modules, "scipy", types.ModuleType("scipy"))
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "cupy", None)


def test_main_on_a_good_install_prints_every_line_and_exits_0(fixed_environment, capsys):
    assert diagnostics.main() == 0
    expected = _header(autograd.__file__, importlib.metadata.version("tapegrad")) + [
        f"  threads    {autograd.get_num_threads()} (autograd.set_num_threads)",
        "  check      a training step runs"]
    assert capsys.readouterr().out == "\n".join(expected) + "\n"


def test_main_without_distribution_metadata_says_so(fixed_environment, monkeypatch, capsys):
    monkeypatch.setattr(diagnostics, "_version", lambda distribution: None)
    assert diagnostics.main() == 0
    assert capsys.readouterr().out.splitlines()[1] == \
        "  tapegrad   not installed as a distribution"


def test_main_beside_hips_prints_the_clash_after_the_report_and_exits_1(fixed_environment,
                                                                        hips_installed, capsys):
    assert diagnostics.main() == 1
    expected = _header(autograd.__file__, importlib.metadata.version("tapegrad")) + [
        f"  threads    {autograd.get_num_threads()} (autograd.set_num_threads)",
        "  check      a training step runs"]
    assert capsys.readouterr().out == "\n".join(expected) + "\n\n" + _clash(
        "HIPS autograd 1.7.0 (`pip install autograd`)",
        "`import autograd` may give either package, or a mixture") + "\n"


def test_main_under_a_shadowing_package_skips_the_check_and_exits_1(fixed_environment,
                                                                    monkeypatch, capsys):
    other = types.ModuleType("autograd")
    other.__file__ = "/elsewhere/autograd/__init__.py"
    monkeypatch.setitem(sys.modules, "autograd", other)
    status = diagnostics.main()
    output = capsys.readouterr().out
    monkeypatch.undo()
    assert status == 1
    assert output == "\n".join(_header(other.__file__, importlib.metadata.version("tapegrad"))) \
        + "\n\n" + _clash("a package named autograd that is not tapegrad",
                          "`import autograd` gives another package, at "
                          "/elsewhere/autograd/__init__.py") + "\n"


def test_main_under_a_package_without_a_file_says_location_none(fixed_environment,
                                                                monkeypatch, capsys):
    # a namespace package (a folder named autograd without __init__.py) has no __file__
    other = types.ModuleType("autograd")
    monkeypatch.setitem(sys.modules, "autograd", other)
    status = diagnostics.main()
    output = capsys.readouterr().out
    monkeypatch.undo()
    assert status == 1
    assert output.splitlines()[2] == "  location   None"
    assert "gives another package, at an unknown place" in output


def _main_with(module, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "autograd", module)
    status = diagnostics.main()
    output = capsys.readouterr().out
    monkeypatch.undo()
    return status, output.splitlines()[-2:]


def test_main_reports_a_check_that_raises_and_exits_1(fixed_environment, monkeypatch, capsys):
    broken = _Recording()

    def tensor(**arguments):
        raise RuntimeError("no memory for three floats")
    broken.Tensor = tensor
    broken.get_num_threads = lambda: 7
    assert _main_with(broken, monkeypatch, capsys) == (1, [
        "  threads    7 (autograd.set_num_threads)",
        "  check      FAILED: RuntimeError: no memory for three floats"])


def test_main_reports_a_step_that_does_not_lower_the_loss_and_exits_1(fixed_environment,
                                                                       monkeypatch, capsys):
    frozen = _Recording(frozen=True)
    assert _main_with(frozen, monkeypatch, capsys) == (1, [
        f"  threads    {autograd.get_num_threads()} (autograd.set_num_threads)",
        "  check      FAILED: a gradient step did not lower the loss"])
