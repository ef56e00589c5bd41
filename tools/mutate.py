"""Mutation testing of the modules a change touched, with mutmut (docs/testing.md).

    python tools/mutate.py                           # autograd modules changed since main
    python tools/mutate.py autograd/opt/sgd.py       # these modules
    python tools/mutate.py --base HEAD~3 --tests tests/test_model.py --jobs 2
    python tools/mutate.py autograd/operations/loss.py --own-tests          # its test files only
    python tools/mutate.py autograd/layers/*.py --sample 300 --seed 22      # a seeded sample
    python tools/mutate.py autograd --per-package --jobs 2 --keep /tmp/mutants   # all of it

Each module is mutated one small change at a time (an operator, a constant, a condition, a
call argument...) and only the tests that exercise the mutated function run against it: a
mutant that no test notices ("survived") is a wrong answer the suite would let through.

mutmut writes a ``mutants/`` tree and reads its settings from ``pyproject.toml``, so the run
happens in a scratch copy of the work tree (committed and uncommitted files alike) whose
pyproject gets the settings for this selection; the repository is left as it was. It runs under
``nice -n 19`` (``--nice``) with one worker by default (the machine is shared). The tests for
``autograd/<pkg>/<mod>.py`` are the whole ``tests/<pkg>/`` (a module's behaviour is often
checked from a sibling's tests, e.g. SGD's options by the optimizer-state tests; mutmut runs
only the tests that reach the mutated function, so the wider selection costs one extra pass to
map them); ``--own-tests`` narrows that to ``tests/<pkg>/test_<mod>.py`` and
``test_<mod>_*.py`` (where they exist), which is what makes a package the size of operations/
affordable. For ``autograd/<mod>.py``: ``tests/test_<mod>.py`` and ``tests/test_<mod>_*.py``,
else those of the name's first word (tensor_operators.py: tests/test_tensor*.py).
A folder stands for its modules; ``--per-package`` gives each folder its own run (its tests:
``tests/<pkg>/``, and for backend/ tests/operations/ too) and prints a table of them at the end.
Add more with ``--tests`` (with ``--only-tests``, only those). ``--sample N --seed S`` runs N
mutants drawn at random (seeded) from all those generated, for a package too large to run
whole: the score is then a sample's.
At the end it prints, per module, killed / total and every surviving mutant's diff; ``--keep
DIR`` keeps the copy to inspect them (``cd DIR && mutmut browse``). After writing tests from
the survivors, ``--rerun DIR`` copies the work tree's tests into the kept copy and runs its
survivors again (or the mutants named with ``--names``), without generating or mapping anew.
With ``--own-tests`` (and always for a top-level module, whose selection is a list of files)
each module's ``test_<mod>_mutants.py`` is in the selection from the start (an empty
placeholder in the copy where the file does not exist yet), so that the tests written from a
run's survivors are in its selection when it reruns: mutmut forgets every result when the
selection changes.
"""
import argparse
import json
import os
import pathlib
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
# mutmut's statuses: a mutant is killed when a test failed or it timed out / was killed by a
# signal (an infinite loop is a detected change too)
KILLED = {"killed", "timeout", "segfault"}
COUNTED = KILLED | {"survived", "no tests", "suspicious"}
# tests that would run for nearly every mutant of their package at ~15 s each: this one
# starts mpiexec and trains the CNN example for two epochs (tests/opt's other tests cover the
# same code in-process)
TOO_SLOW = [
    "tests/opt/test_distributed.py::"
    "test_the_cnn_example_trains_distributed_to_the_accuracy_of_one_process"]
MOST_DIFFS_PRINTED = 40
# test files of a module that do not carry its name (for --own-tests, and for the top-level
# modules, whose mirrored files are their tests)
ALSO_OWN = {"autograd/operations/linalg.py": ["tests/operations/test_einsum.py"],
            "autograd/__main__.py": ["tests/test_install_check.py"],
            "autograd/_install_check.py": ["tests/test_install_check.py"]}
# tests beyond tests/<pkg>/ that a whole package's run takes: the kernels are driven through the
# operations that call them (conv, pooling, normalization), the SINGA names from the top level
ALSO_TESTED_BY = {"autograd/backend": ["tests/operations"],
                  "autograd/singa": ["tests/test_singa_api_rest.py",
                                     "tests/test_singa_behaviour.py",
                                     "tests/test_singa_names.py"]}
# left out when a folder is named: declarations only (mutmut mutates function bodies, and these
# have none), and with no mirrored test file their selection would be the whole suite
NOTHING_TO_MUTATE = {"autograd/__init__.py", "autograd/_types.py", "autograd/_version.py",
                     "autograd/layer.py"}
# tests that cannot pass under mutmut: they read the caller's frame, which is mutmut's
# trampoline there (mutmut stops when a test fails on the unmutated code)
UNDER_TRAMPOLINE = [
    "tests/test_graph.py::test_debug_records_where_each_op_was_created",
    "tests/test_graph.py::test_debug_nan_in_forward_names_the_op_and_the_line",
    "tests/test_graph.py::test_debug_nan_in_backward_names_the_op_and_the_line",
    "tests/test_anomaly.py::test_detect_anomaly_names_the_op_in_a_backward_and_restores_the_mode",
    # a warning's stacklevel counts the trampoline's frame too
    "tests/opt/test_forgotten_step.py::test_a_forgotten_step_with_a_schedule_warns_once_naming_the_fix",
    "tests/singa/test_layers_mutants.py::"
    "test_the_ignored_seq_lengths_warning_points_at_the_programs_call",
    # counts page faults in a subprocess that imports the mutated tree (every function's
    # mutants: many times the code): 0 faults there against 749 in the work tree, as if that
    # import had raised glibc's dynamic mmap threshold already
    "tests/test_runtime.py::"
    "test_allocator_is_tuned_on_the_caches_first_use_or_when_asked_never_at_import"]
# test files whose every test starts Python on the mutated tree in another folder: there
# mutmut's wrapper finds no settings and fails at import (singa/names.py calls a wrapped
# function while it loads); mutmut could not credit a child process's result anyway
IN_ANOTHER_FOLDER = ["tests/singa/test_main.py", "tests/singa/test_programs.py"]


def git(*args):
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True,
                          text=True).stdout.split()


def changed_modules(base):
    names = set(git("diff", "--name-only", f"{base}...HEAD")) | set(git("diff", "--name-only",
                                                                       "HEAD"))
    names |= set(git("ls-files", "--others", "--exclude-standard"))
    return sorted(n for n in names if n.startswith("autograd/") and n.endswith(".py")
                  and (ROOT / n).exists())


def mirrored(folder, stem):
    return sorted(str(p.relative_to(ROOT)) for p in (ROOT / folder).glob(f"test_{stem}*.py")
                  if p.stem == f"test_{stem}" or p.stem.startswith(f"test_{stem}_"))


def tests_for(module, own=False):
    """The tests that mirror ``module`` (see the module docstring)."""
    parts = pathlib.PurePosixPath(module).parts[1:]            # drop "autograd"
    folder = pathlib.PurePosixPath("tests", *parts[:-1])
    stem = parts[-1][:-3]
    if len(parts) > 1:
        if not (ROOT / folder).is_dir():
            return ["tests"]
        own_files = own and mirrored(folder, stem) + ALSO_OWN.get(module, [])
        if own and not own_files:
            # one mutmut run has one test selection: this widens it for every module named
            print(f"--own-tests: {module} has no tests/{folder.relative_to('tests')}/"
                  f"test_{stem}*.py; running the whole {folder}/ for all modules",
                  file=sys.stderr)
        return own_files or [str(folder)] + ALSO_TESTED_BY.get(f"autograd/{parts[0]}", [])
    # tensor_operators.py is tested by tests/test_tensor*.py
    return (mirrored("tests", stem) + ALSO_OWN.get(module, []) or
            mirrored("tests", stem.split("_")[0]) or ["tests"])


def expand(paths):
    """Module paths, with each folder named replaced by its modules (all levels below it,
    less NOTHING_TO_MUTATE)."""
    modules = []
    for path in paths:
        if (ROOT / path).is_dir():
            modules += sorted(str(p.relative_to(ROOT)) for p in (ROOT / path).rglob("*.py")
                              if str(p.relative_to(ROOT)) not in NOTHING_TO_MUTATE)
        else:
            modules.append(str(pathlib.PurePosixPath(path)))
    return list(dict.fromkeys(modules))


def by_package(modules):
    """``{folder: its modules}`` in the order the folders first appear: one mutmut run each
    for ``--per-package``."""
    groups = {}
    for module in modules:
        groups.setdefault(str(pathlib.PurePosixPath(module).parent), []).append(module)
    return groups


def placeholder_tests(modules, destination):
    """An empty ``tests/<pkg>/test_<mod>_mutants.py`` in the copy for each module that has
    none, listed in the selection (see the module docstring); returns their paths."""
    added = []
    for module in modules:
        parts = pathlib.PurePosixPath(module).parts[1:]
        folder = pathlib.PurePosixPath("tests", *parts[:-1])
        name = str(folder / f"test_{parts[-1][:-3]}_mutants.py")
        if (ROOT / folder).is_dir() and not (ROOT / name).exists():
            path = destination / name
            path.write_text('"""Placeholder: tests from the survivors of a mutation run '
                            '(tools/mutate.py --rerun copies them in)."""\n', encoding="utf-8")
            added.append(name)
    return added


def copy_tests(workdir):
    """The work tree's test files into a kept run's copy and its ``mutants/`` tree."""
    for name in git("ls-files", "--cached", "--others", "--exclude-standard", "tests"):
        source = ROOT / name
        if not source.is_file():
            continue
        for target in (workdir / name, workdir / "mutants" / name):
            if target.parent.is_dir() and (not target.exists() or
                                           target.read_bytes() != source.read_bytes()):
                shutil.copy2(source, target)


def kept_modules(workdir):
    """The modules a kept run mutates (its ``only_mutate`` setting)."""
    text = (workdir / "pyproject.toml").read_text(encoding="utf-8")
    match = re.search(r"^only_mutate = (\[.*\])$", text, re.MULTILINE)
    return json.loads(match.group(1)) if match else []


def scratch_copy(destination):
    files = git("ls-files", "--cached", "--others", "--exclude-standard")
    for name in files:
        source = ROOT / name
        # examples/ and docs/ stay: tests load the examples and read docs/singa.md
        if not source.is_file() or name.startswith("benchmarks/"):
            continue
        target = destination / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)


def mutmut_settings(modules, tests, extra_pytest_args):
    def toml_list(values):
        return "[" + ", ".join(json.dumps(v) for v in values) + "]"
    deselect = [arg for test in UNDER_TRAMPOLINE + TOO_SLOW + IN_ANOTHER_FOLDER
                for arg in ("--deselect", test)]
    return (
        "\n[tool.mutmut]\n"
        'source_paths = ["autograd"]\n'
        f"only_mutate = {toml_list(modules)}\n"
        f"pytest_add_cli_args_test_selection = {toml_list(tests)}\n"
        "pytest_add_cli_args = "
        f"{toml_list(['-p', 'no:randomly', '-q'] + deselect + extra_pytest_args)}\n"
        "use_git_change_detection = false\n"
        # tests load the examples (the distributed optimizer's, test_examples.py) and read the
        # docs (the SINGA names on docs/singa.md)
        'also_copy = ["examples", "docs"]\n'
        # a mutated constant must not turn a short test into a minute-long one
        "timeout_multiplier = 5.0\n"
        "timeout_constant = 10.0\n"
    )


def results(workdir):
    out = subprocess.run(["mutmut", "results", "--all", "true"], cwd=workdir,
                         capture_output=True, text=True)
    text = out.stdout if out.returncode == 0 else subprocess.run(
        ["mutmut", "results"], cwd=workdir, capture_output=True, text=True).stdout
    found = {}
    for line in text.splitlines():
        match = re.match(r"\s*([\w.]+__mutmut_\d+):\s*(.+?)\s*$", line)
        if match:
            found[match.group(1)] = match.group(2)
    return found


def module_of(mutant, modules):
    """The module of ``modules`` a mutant's name is in (a package's ``__init__.py`` has the
    package's dotted name, so the longest match wins); "?" for none."""
    dotted = mutant.split("__mutmut_")[0].replace(".x_", ".").replace(".xǁ", ".")
    names = {module: module[:-3].removesuffix("/__init__").replace("/", ".") for module in modules}
    matches = [m for m, name in names.items() if dotted.startswith(name + ".")]
    return max(matches, key=lambda m: len(names[m])) if matches else "?"


def diffs(workdir, names, modules):
    """``{mutant: its diff}``, read in this process (``mutmut show`` is a process each: minutes
    for hundreds of survivors)."""
    from mutmut.mutation.diff_apply import get_diff_for_mutant
    shown, here = {}, os.getcwd()
    os.chdir(workdir)                     # mutmut reads mutants/<module> relative to the run
    try:
        for name in names:
            try:
                shown[name] = get_diff_for_mutant(name, path=module_of(name, modules)).strip()
            except (OSError, ValueError) as error:      # a mutant mutmut cannot read back
                shown[name] = f"(no diff: {error})"
    finally:
        os.chdir(here)
    return shown


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("modules", nargs="*",
                        help="autograd/... .py files or folders (default: changed)")
    parser.add_argument("--base", default="main", help="git ref the change is measured from")
    parser.add_argument("--tests", nargs="*", default=[], help="more test files or folders")
    parser.add_argument("--jobs", type=int, default=1, help="mutmut workers (default 1)")
    parser.add_argument("--keep", metavar="DIR", help="run in DIR and keep it")
    parser.add_argument("--pytest-args", nargs="*", default=[], help="more pytest arguments")
    parser.add_argument("--only-tests", action="store_true",
                        help="run only the --tests given, not the mirrored ones (recording.py "
                             "mirrors no test file, so its default is the whole suite)")
    parser.add_argument("--rerun", metavar="DIR",
                        help="rerun a kept run's survivors (or --names) with the current tests")
    parser.add_argument("--names", nargs="*", default=[], help="with --rerun: these mutants")
    parser.add_argument("--own-tests", action="store_true",
                        help="only tests/<pkg>/test_<module>*.py, not the whole tests/<pkg>/")
    parser.add_argument("--per-package", action="store_true",
                        help="one run per folder of the modules (each with its own tests), "
                             "then a table of them: the full run is `autograd --per-package`")
    parser.add_argument("--sample", type=int, metavar="N", help="run N mutants drawn at random")
    parser.add_argument("--seed", type=int, default=22, help="the sample's seed (default 22)")
    parser.add_argument("--nice", type=int, default=19,
                        help="niceness (default 19; under others' steady load 19 gets almost "
                             "no CPU, 5 shares it)")
    args = parser.parse_args(argv)
    if args.rerun:
        workdir = pathlib.Path(args.rerun)
        modules = kept_modules(workdir)
        if not modules:
            print(f"{workdir} is not a kept run of tools/mutate.py", file=sys.stderr)
            return 2
        copy_tests(workdir)
        chosen = args.names or sorted(k for k, v in results(workdir).items()
                                      if v not in KILLED)
        print(f"rerunning {len(chosen)} mutants of", *modules, flush=True)
        if not chosen:
            return 0
        return run_mutmut(args, workdir, modules, chosen)

    modules = expand(args.modules) or changed_modules(args.base)
    if not modules:
        print(f"no autograd module changed since {args.base}")
        return 0
    if not args.per_package:
        return new_run(args, modules, pathlib.Path(args.keep or tempfile.mkdtemp(prefix="mutate-")))
    table, status = [], 0
    for folder, members in by_package(modules).items():
        name = folder.replace("/", "_")
        workdir = pathlib.Path(args.keep) / name if args.keep else \
            pathlib.Path(tempfile.mkdtemp(prefix=f"mutate-{name}-"))
        report = {"package": folder}
        status = new_run(args, members, workdir, report) or status
        table.append(report)
        print_table(table, pathlib.Path(args.keep) if args.keep else None)
    return status


def test_selection(modules, own, extra, only, workdir):
    """A run's tests: the mirrored ones (:func:`tests_for`) and ``extra``, or ``extra`` alone
    with ``only``; plus a placeholder ``test_<mod>_mutants.py`` in ``workdir`` for each module
    with ``own`` and for each top-level module (whose selection is a list of files, so a folder
    cannot take the new file in)."""
    mirrored_tests = set() if only and extra else {t for m in modules for t in tests_for(m, own)}
    if not only:
        mirrored_tests |= set(placeholder_tests(
            [m for m in modules if own or pathlib.PurePosixPath(m).parent.name == "autograd"],
            workdir))
    return sorted(mirrored_tests | set(extra))


def new_run(args, modules, workdir, report=None):
    """One mutmut run over ``modules`` in a fresh scratch copy at ``workdir``."""
    workdir.mkdir(parents=True, exist_ok=True)
    scratch_copy(workdir)
    tests = test_selection(modules, args.own_tests, args.tests, args.only_tests, workdir)
    print("mutating:", *modules, "\ntests:", *tests, flush=True)
    with open(workdir / "pyproject.toml", "a", encoding="utf-8") as stream:
        stream.write(mutmut_settings(modules, tests, args.pytest_args))
    return run_mutmut(args, workdir, modules, report=report)


def print_table(table, keep):
    """The per-package summary of ``--per-package`` (again after each package, so that a run
    stopped part-way has its finished packages' figures), and ``summary.json`` in ``keep``."""
    total = {key: sum(row.get(key, 0) for row in table)
             for key in ("mutants", "seconds", "killed", "counted")}
    print("\n| package | mutants | time | killed | survived or no test |\n"
          "|---|---:|---:|---:|---:|")
    for row in table + [dict(total, package="all")]:
        share = f" ({100 * row['killed'] / row['counted']:.1f}%)" if row.get("counted") else ""
        print(f"| {row['package']} | {row.get('mutants', 0):,} | "
              f"{row.get('seconds', 0) / 60:.1f} min | {row.get('killed', 0):,}{share} | "
              f"{row.get('counted', 0) - row.get('killed', 0):,} |", flush=True)
    if keep:
        (keep / "summary.json").write_text(json.dumps(table, indent=1), encoding="utf-8")


def run_environment(environ):
    """The environment mutmut runs in: ``environ`` less PYTHONPATH, with the thread counts set
    where ``environ`` leaves them unset."""
    env = {k: v for k, v in environ.items() if k != "PYTHONPATH"}   # mutants/ must win
    # mutmut forks a child per mutant from a process that has run tests: a thread pool the
    # parent started (OpenBLAS's, torch's OpenMP team in the PyTorch cross-checks) is gone in
    # the child, whose next parallel call then waits for it for ever (seen: gomp_team_barrier
    # in a torch test). One thread each keeps every pool from starting.
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(variable, "1")
    # autograd would read OMP_NUM_THREADS=1 too and never split a pass: its own team (Python
    # threads, rebuilt after a fork) keeps two, so the split paths' mutants meet their tests
    env.setdefault("AUTOGRAD_NUM_THREADS", "2")
    return env


def run_mutmut(args, workdir, modules, chosen=(), report=None):
    """Run mutmut in ``workdir`` (the ``chosen`` mutants, else all or ``--sample``), then print
    the scores per module and the survivors' diffs; the totals go into ``report``."""
    chosen = list(chosen)
    env = run_environment(os.environ)
    start = time.perf_counter()
    command = ["nice", "-n", str(args.nice), "mutmut", "run", "--max-children", str(args.jobs)]
    if args.sample and not chosen:
        # generate the mutants and map the tests, with a filter that matches no mutant (mutmut
        # stops there), then run the drawn ones by name
        subprocess.run(command + ["no_such_mutant_"], cwd=workdir, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        every = sorted(results(workdir))
        chosen = sorted(random.Random(args.seed).sample(every, min(args.sample, len(every))))
        print(f"sample: {len(chosen)} of {len(every)} mutants (seed {args.seed})", flush=True)
    run = subprocess.run(command + chosen, cwd=workdir, env=env, stdout=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    statuses = results(workdir)
    if args.sample and not args.rerun:        # a rerun reports the whole kept run
        statuses = {k: v for k, v in statuses.items() if k in set(chosen)}
    if run.returncode != 0 or not statuses:
        print(f"mutmut failed (exit {run.returncode}); see {workdir}", file=sys.stderr)
        return run.returncode or 1
    survivors = []
    counted_all = [v for v in statuses.values() if v in COUNTED]
    if report is not None:
        report.update(mutants=len(statuses), seconds=round(seconds), counted=len(counted_all),
                      killed=sum(v in KILLED for v in counted_all))
    ran = len(chosen) or len(statuses)       # a rerun's time is its named mutants', not the run's
    print(f"\n{ran} mutants in {seconds:.0f} s ({seconds / ran:.2f} s each)"
          + (f"; the run has {len(statuses)}" if ran != len(statuses) else ""))
    for module in modules:
        mine = {k: v for k, v in statuses.items() if module_of(k, modules) == module}
        counted = [v for v in mine.values() if v in COUNTED]
        killed = sum(v in KILLED for v in counted)
        score = f"{100 * killed / len(counted):.1f}%" if counted else "-"
        print(f"{module}: {killed}/{len(counted)} killed ({score})")
        survivors += sorted(k for k, v in mine.items() if v not in KILLED)
    shown = diffs(workdir, survivors, modules)
    if len(survivors) > MOST_DIFFS_PRINTED and (args.keep or args.rerun):
        listing = workdir / "survivors.txt"
        listing.write_text("".join(f"--- {name}: {statuses[name]}\n{shown[name]}\n\n"
                                   for name in survivors), encoding="utf-8")
        print(f"\n{len(survivors)} survivors and their diffs in {listing}")
        survivors = []
    for name in survivors:
        print(f"\n--- {name}: {statuses[name]}\n{shown[name]}")
    if not (args.keep or args.rerun):
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
