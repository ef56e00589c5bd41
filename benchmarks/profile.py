"""Profile one implementation of one workload: ``python -m benchmarks.profile NAME``.

Two views of where autograd's time goes:

- ``--cprofile`` (default): cProfile of the step, grouped into the framework's own bookkeeping
  (autograd/graph.py, operations/base.py, tensor.py, utils), each Operation's forward and
  backward (the NumPy kernels run inside them: cProfile does not see ufuncs and ``@`` as calls),
  and the rest; plus the top functions by own time.
- ``--loop SECONDS``: just run the step in a loop, for an outside sampling profiler, e.g.
  ``py-spy record --native -f raw -o out.txt -- python -m benchmarks.profile cnn --loop 10``;
  ``--summarize out.txt`` then splits the samples into BLAS, other native code (NumPy's C
  loops, libc memcpy/memset, ...) and the Python interpreter.
"""
import os
import sys

if "numpy" not in sys.modules:
    for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_variable, "2")

import argparse       # noqa: E402
import collections    # noqa: E402
import cProfile       # noqa: E402
import pstats         # noqa: E402
import re             # noqa: E402
import time           # noqa: E402

from benchmarks import tape, mlp, mlp_layers, cnn, batchnorm, resnet   # noqa: E402

WORKLOADS = {w.NAME: w for w in (tape, mlp, mlp_layers, cnn, batchnorm, resnet)}
BOOKKEEPING = ("autograd/graph.py", "operations/base.py", "autograd/tensor.py",
               "operations/utils.py", "autograd/device.py")


def build(name, implementation, quick=False):
    workload = WORKLOADS[name]
    size = workload.sizes(quick)
    if implementation == "torch":
        import torch
        torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
        return workload.build_torch(size, torch)
    return getattr(workload, f"build_{implementation}")(size)


def cprofile_report(bench, seconds, top):
    for _ in range(3):
        bench.step()
    profiler = cProfile.Profile()
    steps = 0
    start = time.perf_counter()
    profiler.enable()
    while time.perf_counter() - start < seconds:
        bench.step()
        steps += 1
    profiler.disable()
    stats = pstats.Stats(profiler)
    total = sum(entry[2] for entry in stats.stats.values())     # sum of own (tottime) times
    groups = collections.Counter()
    per_op = collections.Counter()
    for (filename, _, function), (_, _, tottime, cumtime, _) in stats.stats.items():
        path = filename.replace(os.sep, "/")
        if any(path.endswith(part) for part in BOOKKEEPING):
            groups["bookkeeping (graph, Operation.__call__, Tensor, utils)"] += tottime
        elif "/autograd/operations/" in path:
            groups["op bodies: forward/backward incl. their NumPy kernels"] += tottime
            if function in ("forward", "backward"):
                per_op[f"{os.path.basename(path)}:{function}"] += cumtime
        elif "/benchmarks/" in path:
            groups["benchmark driver (the step function, SGD update)"] += tottime
        elif "numpy" in path:
            groups["NumPy Python-level wrappers"] += tottime
        elif path.startswith("~") or path == "~":
            groups["built-in calls (C functions cProfile sees)"] += tottime
        else:
            groups[f"other ({os.path.basename(path)})"] += tottime
    print(f"{steps} steps in {seconds:.1f} s under cProfile; own-time shares:")
    for group, seconds_spent in groups.most_common():
        print(f"  {100 * seconds_spent / total:5.1f}%  {group}")
    if per_op:
        print("cumulative time per operation method (per step, ms):")
        for name, seconds_spent in per_op.most_common(12):
            print(f"  {1e3 * seconds_spent / steps:8.3f}  {name}")
    print(f"top {top} functions by own time:")
    stats.sort_stats("tottime").print_stats(top)


STEP_FRAME = re.compile(r"<locals>\.(step|run) \([^)]*benchmarks/")


OPERATION_METHOD = re.compile(r"(\w+\.(?:forward|backward)) \(")


def classify(leaf):
    """The kind of code an innermost py-spy frame ('function (file:line)' or '(library)') is."""
    lower = leaf.lower()
    if "openblas" in lower or "libmkl" in lower:
        # OpenBLAS's own time in its thread driver is its threads waiting for one another
        # (spinning/yielding), not arithmetic: on a busy machine it can exceed the kernels.
        if lower.startswith(("inner_thread", "exec_blas", "blas_thread_server")):
            return "BLAS thread hand-off (waiting for the other BLAS thread)"
        return "BLAS kernels (GEMM micro-kernel and packing)"
    if "numpy" in lower:
        return "NumPy C (ufunc loops, copies, reductions, iterators)"
    if "libpython" in lower:
        return "Python runtime in C (objects, dicts, gc, calls)"
    if ".py:" in leaf:
        return "Python bytecode (a Python frame is innermost)"
    if "libtorch" in lower or "libc10" in lower or "libgomp" in lower or "libomp" in lower:
        return "PyTorch / OpenMP"
    if "libc.so" in lower or "libm.so" in lower:
        return "libc (memcpy, memset, malloc, page faults)"
    return "other native"


def summarize(path):
    """Split the py-spy raw (collapsed) samples taken inside a benchmark step by the kind of the
    innermost frame: BLAS, NumPy's C code, the Python interpreter, libc."""
    kinds = collections.Counter()
    leaves = collections.Counter()
    owners = collections.Counter()
    owner_kinds = collections.defaultdict(collections.Counter)
    with open(path) as samples:
        for line in samples:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            if not stack or not STEP_FRAME.search(stack):
                continue            # start-up, imports, building the data
            frames = stack.split(";")
            leaf, kind, count = frames[-1], classify(frames[-1]), int(count)
            kinds[kind] += count
            leaves[leaf] += count
            owner = next((OPERATION_METHOD.match(f).group(1) for f in reversed(frames)
                          if OPERATION_METHOD.match(f)), "outside any forward/backward")
            owners[owner] += count
            owner_kinds[owner][kind] += count
    total = sum(kinds.values()) or 1
    print(f"{total} samples inside the step")
    for kind, count in kinds.most_common():
        print(f"  {100 * count / total:5.1f}%  {kind}")
    print("by operation method (innermost forward/backward on the stack), and its main kinds:")
    for owner, count in owners.most_common(12):
        parts = ", ".join(f"{k.split(' (')[0]} {100 * c / count:.0f}%"
                          for k, c in owner_kinds[owner].most_common(3))
        print(f"  {100 * count / total:5.1f}%  {owner}  [{parts}]")
    print("top innermost frames:")
    for leaf, count in leaves.most_common(15):
        print(f"  {100 * count / total:5.1f}%  {leaf[:110]}")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.profile", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("workload", nargs="?", choices=sorted(WORKLOADS))
    parser.add_argument("--implementation", default="autograd",
                        choices=("autograd", "floor", "torch"))
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--loop", type=float, metavar="SECONDS",
                        help="run the step for this long without profiling (for py-spy)")
    parser.add_argument("--summarize", metavar="RAW_FILE",
                        help="summarise a py-spy raw (collapsed) output file and exit")
    args = parser.parse_args(argv)
    if args.summarize:
        summarize(args.summarize)
        return 0
    if args.workload is None:
        parser.error("name a workload")
    bench = build(args.workload, args.implementation)
    if args.loop:
        for _ in range(3):
            bench.step()
        start = time.perf_counter()
        steps = 0
        while time.perf_counter() - start < args.loop:
            bench.step()
            steps += 1
        print(f"{steps} steps, {1e3 * (time.perf_counter() - start) / steps:.2f} ms each")
        return 0
    cprofile_report(bench, args.seconds, args.top)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
