"""Make sure ``import autograd`` is this project's autograd before an example uses it.

The HIPS ``autograd`` package has the same import name; with it installed, an example would die
on ``autograd.Tensor`` with an AttributeError that says nothing of the cause.
"""
import importlib.util
import pathlib
import sys


def checked_autograd():
    """``autograd`` (tapegrad's), or exit with the explanation and the fix."""
    import autograd
    here = pathlib.Path(__file__).resolve().parents[1] / "autograd" / "_install_check.py"
    try:
        from autograd._install_check import clash_message
    except ImportError:          # the other package shadows ours entirely: use the clone's copy
        spec = importlib.util.spec_from_file_location("_tapegrad_install_check", here)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        clash_message = module.clash_message
    problem = clash_message(autograd)
    if problem is not None and not hasattr(autograd, "Tensor"):
        sys.exit(problem)
    if problem is not None:      # ours was imported this time, but it may not be next time
        print(problem, file=sys.stderr)
    return autograd
