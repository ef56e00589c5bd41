"""tools/mutate.py's choice of tests (the mutation-testing command of docs/testing.md)."""
import importlib.util
import pathlib

import pytest

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


def test_own_tests_list_a_placeholder_for_the_tests_a_run_will_lead_to(tmp_path):
    tool = load_tool()
    (tmp_path / "tests" / "layers").mkdir(parents=True)
    added = tool.placeholder_tests(["autograd/layers/no_such_module.py",
                                    "autograd/layers/linear.py"], tmp_path)
    # linear.py has its _mutants file already: only the missing one is made
    assert added == ["tests/layers/test_no_such_module_mutants.py"]
    assert (tmp_path / added[0]).read_text().startswith('"""Placeholder')


def test_a_kept_run_knows_its_modules(tmp_path):
    tool = load_tool()
    settings = tool.mutmut_settings(["autograd/opt/sgd.py", "autograd/opt/base.py"],
                                    ["tests/opt"], [])
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n" + settings)
    assert tool.kept_modules(tmp_path) == ["autograd/opt/sgd.py", "autograd/opt/base.py"]
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert tool.kept_modules(tmp_path) == []


def test_own_tests_of_linalg_take_the_einsum_tests_too():
    tests = load_tool().tests_for("autograd/operations/linalg.py", own=True)
    assert "tests/operations/test_einsum.py" in tests and "tests/operations/test_linalg.py" in tests


def test_the_deselected_tests_exist():
    """A renamed test would silently stay selected (pytest ignores an unknown --deselect)."""
    tool = load_tool()
    for test in tool.UNDER_TRAMPOLINE + tool.TOO_SLOW:
        path, name = test.split("::")
        assert f"def {name}(" in (ROOT / path).read_text(), test
    for path in tool.IN_ANOTHER_FOLDER:                  # whole files: a prefix of their ids
        assert (ROOT / path).is_file(), path


def test_a_folder_stands_for_its_modules_at_every_level_less_the_declarations():
    modules = load_tool().expand(["autograd", "autograd/opt/sgd.py"])
    assert "autograd/tensor.py" in modules and "autograd/operations/conv.py" in modules
    assert "autograd/opt/__init__.py" in modules            # has functions to mutate
    for declarations in ("autograd/__init__.py", "autograd/_types.py", "autograd/layer.py"):
        assert declarations not in modules
    assert modules.count("autograd/opt/sgd.py") == 1        # named twice, run once
    assert all(m.endswith(".py") for m in modules)


def test_per_package_runs_group_modules_by_their_folder_in_the_order_given():
    groups = load_tool().by_package(["autograd/opt/sgd.py", "autograd/tensor.py",
                                     "autograd/opt/base.py", "autograd/io/checkpoint.py"])
    assert list(groups.items()) == [
        ("autograd/opt", ["autograd/opt/sgd.py", "autograd/opt/base.py"]),
        ("autograd", ["autograd/tensor.py"]), ("autograd/io", ["autograd/io/checkpoint.py"])]


def test_kernels_are_tested_through_the_operations_too_and_main_by_the_install_check():
    tool = load_tool()
    assert tool.tests_for("autograd/backend/im2col.py") == ["tests/backend", "tests/operations"]
    assert tool.tests_for("autograd/__main__.py") == ["tests/test_install_check.py"]
    assert tool.tests_for("autograd/_install_check.py") == ["tests/test_install_check.py"]
    # the tests named for a module exist (a renamed file would widen nothing, silently)
    for extra in [t for tests in tool.ALSO_TESTED_BY.values() for t in tests] + \
            [t for tests in tool.ALSO_OWN.values() for t in tests]:
        assert (ROOT / extra).exists(), extra


def test_the_per_package_table_adds_up_the_packages(tmp_path, capsys):
    table = [{"package": "autograd/opt", "mutants": 1200, "seconds": 300, "counted": 1000,
              "killed": 900},
             {"package": "autograd/io", "mutants": 100, "seconds": 60, "counted": 100,
              "killed": 99}]
    load_tool().print_table(table, tmp_path)
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[-3:] == ["| autograd/opt | 1,200 | 5.0 min | 900 (90.0%) | 100 |",
                          "| autograd/io | 100 | 1.0 min | 99 (99.0%) | 1 |",
                          "| all | 1,300 | 6.0 min | 999 (90.8%) | 101 |"]
    assert '"package": "autograd/io"' in (tmp_path / "summary.json").read_text()


def test_survivors_diffs_are_read_from_the_mutated_tree_in_one_process(tmp_path):
    pytest.importorskip("mutmut", reason="the diffs are read by mutmut's own code (pip install "
                                         "-e '.[mutation]'; .ci/run installs it)")
    source = tmp_path / "mutants" / "autograd" / "m.py"
    source.parent.mkdir(parents=True)
    source.write_text("def x_f__mutmut_orig(a):\n    return a + 1\n\n\n"
                      "def x_f__mutmut_1(a):\n    return a - 1\n")
    shown = load_tool().diffs(tmp_path, ["autograd.m.x_f__mutmut_1", "autograd.m.x_g__mutmut_1"],
                              ["autograd/m.py"])
    diff = shown["autograd.m.x_f__mutmut_1"].splitlines()
    assert "-    return a + 1" in diff and "+    return a - 1" in diff
    assert "def f(a):" in shown["autograd.m.x_f__mutmut_1"]
    assert shown["autograd.m.x_g__mutmut_1"].startswith("(no diff: ")


def test_a_mutant_belongs_to_the_longest_module_name_it_starts_with():
    tool = load_tool()
    modules = ["autograd/onnx/__init__.py", "autograd/onnx/exporter.py", "autograd/tensor.py"]
    assert tool.module_of("autograd.onnx.x_load__mutmut_1", modules) == modules[0]
    assert tool.module_of("autograd.onnx.exporter.x_export__mutmut_3", modules) == modules[1]
    assert tool.module_of("autograd.tensor.xǁTensorǁclone__mutmut_2", modules) == modules[2]
    assert tool.module_of("autograd.graph.x_backward__mutmut_1", modules) == "?"


def test_a_top_level_module_gets_its_mutants_file_in_the_selection_from_the_start(tmp_path):
    """Its selection is a list of files: a test_<mod>_mutants.py written after the run would
    never be run by --rerun (mutmut forgets every result when the selection changes)."""
    tool = load_tool()
    (tmp_path / "tests" / "opt").mkdir(parents=True)
    tests = tool.test_selection(["autograd/no_such_module.py", "autograd/opt/sgd.py"], False,
                                [], False, tmp_path)
    assert "tests/test_no_such_module_mutants.py" in tests
    assert (tmp_path / "tests" / "test_no_such_module_mutants.py").is_file()
    assert "tests/opt" in tests and not (tmp_path / "tests/opt/test_sgd_mutants.py").exists()
    only = tool.test_selection(["autograd/no_such_module.py"], False, ["tests/test_graph.py"],
                               True, tmp_path)
    assert only == ["tests/test_graph.py"]


def test_the_run_copies_the_examples_and_the_docs_the_tests_read():
    settings = load_tool().mutmut_settings(["autograd/singa/names.py"], ["tests/singa"], [])
    assert 'also_copy = ["examples", "docs"]' in settings
    assert "tests/singa/test_main.py" in settings           # deselected: another folder


def test_the_run_keeps_one_blas_thread_but_two_of_autograds_own_unless_told():
    env = load_tool().run_environment({"PYTHONPATH": "/elsewhere", "OMP_NUM_THREADS": "4",
                                       "HOME": "/root"})
    assert "PYTHONPATH" not in env and env["HOME"] == "/root"
    assert env["OMP_NUM_THREADS"] == "4" and env["OPENBLAS_NUM_THREADS"] == "1"
    assert env["AUTOGRAD_NUM_THREADS"] == "2"       # else autograd reads OMP's 1: no split
    assert load_tool().run_environment({"AUTOGRAD_NUM_THREADS": "3"})["AUTOGRAD_NUM_THREADS"] == "3"
