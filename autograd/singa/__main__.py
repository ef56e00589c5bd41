"""``python -m autograd.singa [--cpu] PROGRAM.py [args...]``: run a SINGA program unchanged.

The program runs as ``__main__`` (as ``python PROGRAM.py args...`` would run it: ``sys.argv``
is ``[PROGRAM.py, args...]``, ``__file__`` its absolute path, and its folder comes first on
``sys.path``) with the import hook of
:mod:`autograd.singa` installed for this run. ``--cpu`` makes SINGA's ``create_cuda_gpu()`` /
``create_cuda_gpu_on(i)`` give the CPU, for GPU drivers on a machine without one.
"""
import builtins
import os
import sys
import types

from . import install

USAGE = "usage: python -m autograd.singa [--cpu] PROGRAM.py [args...]"


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    cpu = False
    while argv and argv[0].startswith("-"):
        option = argv.pop(0)
        if option == "--cpu":
            cpu = True
        elif option in ("-h", "--help"):
            print(USAGE + "\n\n" + __doc__.split("\n\n", 1)[1].strip())
            return 0
        else:
            print(f"autograd.singa: unknown option {option!r}\n{USAGE}", file=sys.stderr)
            return 2
    if not argv:
        print(USAGE, file=sys.stderr)
        return 2
    program = argv[0]
    if not os.path.isfile(program):
        print(f"autograd.singa: no such program file: {program!r}", file=sys.stderr)
        return 2
    install(cpu=cpu)
    sys.argv = argv
    path = os.path.abspath(program)
    sys.path[0] = os.path.dirname(path)
    run_as_main(path)
    return 0


def run_as_main(path):
    """Run the file at ``path`` (absolute) as ``__main__`` the way ``python PATH`` does:
    ``__file__`` is ``path`` while ``sys.argv[0]`` stays as the user wrote it (runpy.run_path
    would replace it)."""
    with open(path, "rb") as source:
        code = compile(source.read(), path, "exec")
    main = types.ModuleType("__main__")
    main.__dict__.update(__file__=path, __builtins__=builtins, __cached__=None)
    previous = sys.modules.get("__main__")
    sys.modules["__main__"] = main
    try:
        exec(code, main.__dict__)
    finally:
        sys.modules["__main__"] = previous


if __name__ == "__main__":
    sys.exit(main())
