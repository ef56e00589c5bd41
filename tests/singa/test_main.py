"""The runner ``python -m autograd.singa`` (autograd/singa/__main__.py)."""
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def run(args, cwd):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
    return subprocess.run([sys.executable, "-m", "autograd.singa", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_program_runs_as_main_with_its_argv_and_folder(tmp_path):
    folder = tmp_path / "prog"
    folder.mkdir()
    (folder / "helper.py").write_text("VALUE = 42\n")
    (folder / "prog.py").write_text(
        "import sys\n"
        "from singa import tensor\n"
        "import helper\n"                      # found in the program's own folder
        "import os\n"
        "assert __file__ == os.path.abspath('prog/prog.py'), __file__\n"   # as python does
        "print(__name__, sys.argv, helper.VALUE, tensor.Tensor.__module__)\n")
    result = run(["prog/prog.py", "a", "--b"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["__main__", "['prog/prog.py',", "'a',", "'--b']", "42",
                                     "autograd.tensor"]


def test_usage_errors(tmp_path):
    assert run([], cwd=tmp_path).returncode == 2
    missing = run(["nope.py"], cwd=tmp_path)
    assert missing.returncode == 2 and "no such program file: 'nope.py'" in missing.stderr
    bad = run(["--gpu", "x.py"], cwd=tmp_path)
    assert bad.returncode == 2 and "unknown option '--gpu'" in bad.stderr


def test_a_program_error_propagates(tmp_path):
    (tmp_path / "bad.py").write_text("from singa import converter\n")
    result = run(["bad.py"], cwd=tmp_path)
    assert result.returncode == 1
    assert "ModuleNotFoundError: singa.converter: there is no Caffe converter" in result.stderr
