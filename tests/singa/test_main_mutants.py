"""``python -m autograd.singa``'s ``main`` and ``run_as_main`` (autograd/singa/__main__.py) run
in this process: test_main.py runs them in subprocesses, which mutmut cannot credit, so the
survivors of the full mutation run there (options, messages, exit codes, the program's
``__main__`` module, sys.argv and sys.path) are killed here."""
import os
import sys

import pytest

import autograd
import autograd.singa
from autograd.singa import __main__ as runner
from autograd.singa.names import settings


@pytest.fixture
def saved_interpreter_state():
    """main() sets sys.argv, sys.path[0] and installs the hook: put them back afterwards."""
    argv, path = list(sys.argv), list(sys.path)
    main_module = sys.modules.get("__main__")
    yield
    autograd.singa.uninstall()
    autograd.training = True
    sys.argv[:] = argv
    sys.path[:] = path
    sys.modules["__main__"] = main_module


def write_program(folder, body):
    folder.mkdir(exist_ok=True)
    program = folder / "prog.py"
    program.write_text(body)
    return program


REPORTING = (
    "import sys, builtins\n"
    "import singa\n"
    "from autograd.singa.names import settings\n"
    "RESULT = dict(name=__name__, file=__file__, argv=list(sys.argv), path0=sys.path[0],\n"
    "              cached=__cached__, builtins=__builtins__ is builtins,\n"
    "              main=sys.modules['__main__'].__dict__ is globals(),\n"
    "              cpu=settings.gpu_as_cpu)\n"
    "sys.modules['autograd.singa.__main__'].LAST = RESULT\n")


def test_a_program_runs_as_main_with_its_arguments_in_this_process(tmp_path,
                                                                   saved_interpreter_state):
    """Kills mutants of main's argument handling and of run_as_main's module set-up."""
    program = write_program(tmp_path / "prog", REPORTING)
    before = sys.modules.get("__main__")
    assert runner.main([str(program), "a", "--b"]) == 0
    got = runner.LAST
    assert got == dict(name="__main__", file=str(program), argv=[str(program), "a", "--b"],
                       path0=str(tmp_path / "prog"), cached=None, builtins=True, main=True,
                       cpu=False)
    assert sys.modules.get("__main__") is before          # the caller's __main__ is back
    assert autograd.singa.installed() is not None


def test_a_relative_program_gets_its_absolute_file_and_folder(tmp_path, monkeypatch,
                                                             saved_interpreter_state):
    """__file__ is the absolute path while sys.argv[0] stays as written (as ``python PATH``)."""
    write_program(tmp_path / "prog", REPORTING)
    monkeypatch.chdir(tmp_path)
    assert runner.main([os.path.join("prog", "prog.py")]) == 0
    assert runner.LAST["file"] == str(tmp_path / "prog" / "prog.py")
    assert runner.LAST["argv"] == [os.path.join("prog", "prog.py")]
    assert runner.LAST["path0"] == str(tmp_path / "prog")


def test_cpu_option_makes_gpu_requests_give_the_cpu(tmp_path, saved_interpreter_state):
    program = write_program(tmp_path / "prog", REPORTING)
    assert runner.main(["--cpu", str(program), "--cpu"]) == 0
    assert runner.LAST["cpu"] is True
    assert runner.LAST["argv"] == [str(program), "--cpu"]     # only leading options are ours
    assert settings.gpu_as_cpu is True


def test_main_reads_sys_argv_when_given_none(tmp_path, monkeypatch, saved_interpreter_state):
    program = write_program(tmp_path / "prog", REPORTING)
    monkeypatch.setattr(sys, "argv", ["autograd.singa", str(program), "x"])
    assert runner.main() == 0
    assert runner.LAST["argv"] == [str(program), "x"]


def test_help_prints_the_usage_and_the_docstring(capsys, saved_interpreter_state):
    for option in ("-h", "--help"):
        assert runner.main([option, "ignored.py"]) == 0
        out = capsys.readouterr().out
        want = runner.__doc__.split("\n\n", 1)[1].strip()
        assert out == ("usage: python -m autograd.singa [--cpu] PROGRAM.py [args...]\n\n"
                       + want + "\n")
        assert want.startswith("The program runs as ``__main__``")
    assert autograd.singa.installed() is None                # help runs nothing


def test_usage_errors_word_for_word(tmp_path, capsys, saved_interpreter_state):
    assert runner.main(["--gpu", "x.py"]) == 2
    assert capsys.readouterr().err == ("autograd.singa: unknown option '--gpu'\n"
                                       "usage: python -m autograd.singa [--cpu] PROGRAM.py "
                                       "[args...]\n")
    assert runner.main([]) == 2
    assert capsys.readouterr().err == ("usage: python -m autograd.singa [--cpu] PROGRAM.py "
                                       "[args...]\n")
    assert runner.main(["--cpu"]) == 2
    assert capsys.readouterr().err.startswith("usage: ")
    missing = str(tmp_path / "nope.py")
    assert runner.main([missing]) == 2
    assert capsys.readouterr().err == f"autograd.singa: no such program file: {missing!r}\n"
    assert runner.main([str(tmp_path)]) == 2                 # a folder is not a program file
    assert autograd.singa.installed() is None and settings.gpu_as_cpu is False


def test_a_failing_program_raises_and_restores_main(tmp_path, saved_interpreter_state):
    program = write_program(tmp_path / "bad", "import sys\nX = 1\nraise KeyError('boom')\n")
    before = sys.modules.get("__main__")
    with pytest.raises(KeyError, match="boom"):
        runner.run_as_main(str(program))
    assert sys.modules.get("__main__") is before


def test_run_as_main_compiles_with_the_path_as_filename(tmp_path, saved_interpreter_state):
    """A traceback names the program's file (compile's filename argument)."""
    program = write_program(tmp_path / "tb", "\n\nraise ValueError('line 3')\n")
    with pytest.raises(ValueError) as info:
        runner.run_as_main(str(program))
    frames = [(f.tb_frame.f_code.co_filename, f.tb_lineno) for f in _frames(info.tb)]
    assert (str(program), 3) in frames


def _frames(tb):
    while tb is not None:
        yield tb
        tb = tb.tb_next


def test_a_program_with_a_latin1_coding_cookie_runs(tmp_path, saved_interpreter_state):
    """The file is read as bytes, so compile() honours its coding declaration (text mode would
    decode it as UTF-8 and fail on the latin-1 byte)."""
    folder = tmp_path / "latin"
    folder.mkdir()
    program = folder / "prog.py"
    program.write_bytes(b"# -*- coding: latin-1 -*-\nimport sys\n"
                        b"sys.modules['autograd.singa.__main__'].LAST = '\xe9t\xe9'\n")
    assert runner.main([str(program)]) == 0
    assert runner.LAST == "\u00e9t\u00e9"
