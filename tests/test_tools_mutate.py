"""tools/mutate.py's choice of tests (the mutation-testing command of docs/testing.md)."""
import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def load_tool():
    spec = importlib.util.spec_from_file_location("mutate", ROOT / "tools" / "mutate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_own_tests_are_the_mirrored_files():
    tests = load_tool().tests_for("autograd/layers/linear.py", own=True)
    assert tests == ["tests/layers/test_linear.py", "tests/layers/test_linear_mutants.py"]


def test_without_own_tests_the_whole_package_folder_runs():
    assert load_tool().tests_for("autograd/layers/linear.py") == ["tests/layers"]


def test_own_tests_without_a_mirrored_file_says_it_widens_the_selection(capsys):
    tests = load_tool().tests_for("autograd/layers/no_such_module.py", own=True)
    assert tests == ["tests/layers"]
    assert capsys.readouterr().err.strip() == (
        "--own-tests: autograd/layers/no_such_module.py has no "
        "tests/layers/test_no_such_module*.py; running the whole tests/layers/ for all modules")
