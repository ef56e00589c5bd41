"""Run the benchmark suite: ``python -m benchmarks [--quick] [--only NAME] [--json PATH]``.

Every workload runs for autograd, the hand-written NumPy floor and PyTorch (when installed) in
one process, interleaved: after warm-up, each repetition times every implementation once in
turn, and the table reports the median over repetitions. The BLAS/OpenMP thread counts are set
in the environment before NumPy or PyTorch is imported (hence the code above the imports), and
``torch.set_num_threads`` and ``autograd.set_num_threads`` match them. Nothing else is tuned by
hand: autograd runs with its default runtime, as users run it (``OPENBLAS_THREAD_TIMEOUT`` is
left as the environment has it, and reported).
"""
import os
import sys


def _threads_from_argv(argv, default=2):
    for i, arg in enumerate(argv):
        if arg == "--threads" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--threads="):
            return arg.split("=", 1)[1]
    return str(default)


THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
# numpy may already be loaded (run.py imported from a test): then OpenBLAS has read its thread
# count already, and main() re-runs the suite in a fresh interpreter.
_NUMPY_LOADED_BEFORE = "numpy" in sys.modules
if not _NUMPY_LOADED_BEFORE:
    for _variable in THREAD_VARIABLES:
        os.environ[_variable] = _threads_from_argv(sys.argv[1:])

if __package__ in (None, ""):        # `python benchmarks/run.py`
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import argparse           # noqa: E402  (the environment above must be set first)
import ctypes             # noqa: E402
import datetime           # noqa: E402
import gc                 # noqa: E402
import json               # noqa: E402
import platform           # noqa: E402
import statistics         # noqa: E402
import subprocess         # noqa: E402
import time               # noqa: E402
import traceback          # noqa: E402

import numpy as np        # noqa: E402

import autograd           # noqa: E402

from benchmarks import tape, mlp, mlp_layers, cnn, batchnorm, resnet, memory   # noqa: E402
from benchmarks import transformer, transformer_large                           # noqa: E402
from benchmarks import tape_replay, mlp_replay                                  # noqa: E402
from benchmarks import recurrent_lm, small_batch                                # noqa: E402
from benchmarks.common import Missing                                # noqa: E402
from benchmarks.replayed import Replayed                             # noqa: E402

WORKLOADS = [tape, mlp, mlp_layers, cnn, batchnorm, resnet, transformer, transformer_large,
             recurrent_lm.LSTM_LM, recurrent_lm.GRU_LM, *small_batch.WORKLOADS,
             tape_replay, mlp_replay, Replayed(recurrent_lm.LSTM_LM),
             Replayed(recurrent_lm.GRU_LM), *[Replayed(w) for w in small_batch.WORKLOADS],
             Replayed(transformer), Replayed(transformer_large)]
IMPLEMENTATIONS = ("autograd", "floor", "torch")
DEFAULT_JSON = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results.json")
SCALE = {"ms": 1e3, "us": 1e6}


def parse_args(argv):
    names = [w.NAME for w in WORKLOADS] + [memory.NAME, "onnx"]
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="tiny sizes, 1 repetition, no pauses: a smoke test, not a measure")
    parser.add_argument("--only", action="append", choices=names, metavar="NAME",
                        help=f"run only this workload (repeatable): {', '.join(names)}")
    parser.add_argument("--json", default=DEFAULT_JSON, metavar="PATH",
                        help="where to write the results (default benchmarks/results.json)")
    parser.add_argument("--repetitions", type=int, default=None,
                        help="timed repetitions per implementation (default 11, quick 1)")
    parser.add_argument("--warmup", type=int, default=None,
                        help="untimed runs per implementation first, at least 1 (default 3, quick 1)")
    parser.add_argument("--min-time", type=float, default=None,
                        help="seconds one timed block should last at least; a block repeats "
                             "the step as often as needed (default 0.1, quick 0)")
    parser.add_argument("--pause", type=float, default=None,
                        help="seconds to sleep before each timed block, so that BLAS threads "
                             "still spinning from the previous variant do not starve this one "
                             "(default 0.2, quick 0)")
    parser.add_argument("--settle", type=int, default=None,
                        help="untimed steps right before each timed block, after the pause, so "
                             "that the block times steps that follow a step, as a training loop "
                             "runs them, not the first after an idle pause (default 1, quick 0)")
    parser.add_argument("--threads", type=int, default=2,
                        help="threads for OpenBLAS/OpenMP/MKL and torch (default 2)")
    parser.add_argument("--no-torch", action="store_true", help="skip PyTorch even if installed")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="wall",
                        help="wall (default) or cpu: the process's CPU time, for a machine "
                             "with more runnable processes than cores (use with --threads 1)")
    args = parser.parse_args(argv)
    defaults = {"repetitions": (1, 11), "warmup": (1, 3), "min_time": (0.0, 0.1),
                "pause": (0.0, 0.2), "settle": (0, 1)}
    for name, (quick_value, full_value) in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, quick_value if args.quick else full_value)
    return args


def load_torch(args):
    if args.no_torch:
        return None, "skipped (--no-torch)"
    try:
        import torch
    except ImportError:
        return None, "not installed"
    torch.set_num_threads(args.threads)
    return torch, torch.__version__


def openblas_threads():
    """The thread count NumPy's OpenBLAS reports, read from the loaded library (best effort)."""
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if "openblas" in line.lower()}
    except OSError:
        return None
    for path in sorted(p for p in paths if p.startswith("/")):
        try:
            library = ctypes.CDLL(path)
        except OSError:
            continue
        for symbol in ("openblas_get_num_threads", "openblas_get_num_threads64_",
                       "scipy_openblas_get_num_threads64_", "scipy_openblas_get_num_threads"):
            function = getattr(library, symbol, None)
            if function is not None:
                return int(function())
    return None


def thread_report(args, torch):
    report = {name: os.environ.get(name) for name in THREAD_VARIABLES}
    report["numpy_openblas"] = openblas_threads()
    report["torch"] = torch.get_num_threads() if torch is not None else None
    report["autograd"] = autograd.get_num_threads()
    report["OPENBLAS_THREAD_TIMEOUT"] = os.environ.get("OPENBLAS_THREAD_TIMEOUT")
    report["requested"] = args.threads
    return report


# --clock cpu: the process's CPU time instead of the wall clock. On a machine shared by more
# runnable processes than cores, wall time counts the time a variant waits for a core; with
# --threads 1 (no BLAS or OpenMP thread spinning) CPU time counts only the work it did.
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
_clock = time.perf_counter


def time_block(step, count, collect=True, settle=0):
    """Seconds per step over ``count`` steps, after ``settle`` untimed ones."""
    if collect:             # a collection due inside the block would be charged to this variant
        gc.collect()
    for _ in range(settle):
        step()
    start = _clock()
    for _ in range(count):
        step()
    return (_clock() - start) / count


def describe_error(error):
    line = traceback.format_exception_only(type(error), error)[-1].strip()
    return line if len(line) < 300 else line[:297] + "..."


def build_all(workload, size, torch):
    """{implementation: Bench} for those that could be built, and a status for each."""
    benches, status = {}, {}
    builders = {"autograd": lambda: workload.build_autograd(size),
                "floor": lambda: workload.build_floor(size),
                "torch": (lambda: workload.build_torch(size, torch)) if torch else None}
    for name, build in builders.items():
        if build is None:
            status[name] = "n/a"
            continue
        try:
            benches[name] = build()
            status[name] = "ok"
        except Missing as missing:
            status[name] = f"missing: {missing}"
        except Exception as error:                       # noqa: BLE001 (reported, not hidden)
            status[name] = f"error: {describe_error(error)}"
    return benches, status


def run_workload(workload, args, torch):
    """Warm up, check float32, time interleaved; the workload's row as a dict."""
    size = workload.sizes(args.quick)
    benches, status = build_all(workload, size, torch)
    float32 = None
    counts = {}
    for name in list(benches):
        bench = benches[name]
        try:
            if bench.check is not None:
                problems = bench.check()
                float32 = "ok" if not problems else "FAILED: " + "; ".join(problems)
            for _ in range(max(1, args.warmup)):         # the last one sizes the blocks
                warm = time_block(bench.step, 1, collect=not args.quick)
            counts[name] = max(1, int(np.ceil(args.min_time / max(warm, 1e-9))))
        except Exception as error:                       # noqa: BLE001
            status[name] = f"error: {describe_error(error)}"
            del benches[name]
    samples = {name: [] for name in benches}
    for _ in range(args.repetitions):
        for name, bench in benches.items():              # round-robin: one block each, in turn
            time.sleep(args.pause)
            samples[name].append(time_block(bench.step, counts[name], collect=not args.quick,
                                            settle=args.settle))
    scale = SCALE[workload.UNIT]
    row = {"description": workload.DESCRIPTION, "unit": workload.UNIT, "size": size,
           "status": status, "float32": float32, "repetitions": args.repetitions,
           "steps_per_block": counts, "samples": {}}
    for name in IMPLEMENTATIONS:
        if name in samples:
            per_op = scale / benches[name].ops_per_step
            row["samples"][name] = [round(s * per_op, 4) for s in samples[name]]
            row[name] = round(statistics.median(samples[name]) * per_op, 4)
            row.setdefault("min", {})[name] = round(min(samples[name]) * per_op, 4)
        else:
            row[name] = None
    for other in ("floor", "torch"):
        ratio = None
        if row["autograd"] is not None and row[other]:
            ratio = round(row["autograd"] / row[other], 3)
        row[f"autograd/{other}"] = ratio
        fastest = row.get("min", {})
        if "autograd" in fastest and fastest.get(other):
            row.setdefault("min_ratios", {})[f"autograd/{other}"] = round(
                fastest["autograd"] / fastest[other], 3)
    return row


def run_memory(args):
    size = memory.sizes(args.quick)
    try:
        result = memory.measure(size)
        result["status"] = "ok"
        replay_size = dict(size, steps=(5, 60) if args.quick else memory.REPLAY_STEPS)
        result["replay"] = memory.measure(replay_size, build=mlp_replay.build_autograd_layers)
    except Missing as missing:
        result = {"status": f"missing: {missing}"}
    except Exception as error:                           # noqa: BLE001
        result = {"status": f"error: {describe_error(error)}"}
    result["description"] = memory.DESCRIPTION
    return result


def format_value(value, status):
    if value is not None:
        return f"{value:.3f}" if value < 10 else f"{value:.1f}"
    return "n/a" if status in ("n/a", "skipped") else status.split(":")[0]


def format_table(results):
    lines = []
    header = (f"{'workload':<10} {'unit':<6} {'autograd':>10} {'floor':>10} {'torch':>10} "
              f"{'ag/floor':>9} {'ag/torch':>9}  float32")
    lines.append(header)
    lines.append("-" * len(header))
    notes = []
    for name, row in results["workloads"].items():
        unit = "us/op" if row["unit"] == "us" else "ms"
        cells = [format_value(row[impl], row["status"][impl]) for impl in IMPLEMENTATIONS]
        ratios = [f"{row[k]:.2f}x" if row[k] is not None else "-"
                  for k in ("autograd/floor", "autograd/torch")]
        lines.append(f"{name:<10} {unit:<6} {cells[0]:>10} {cells[1]:>10} {cells[2]:>10} "
                     f"{ratios[0]:>9} {ratios[1]:>9}  {row['float32'] or '-'}")
        for impl in IMPLEMENTATIONS:
            if row["status"][impl] not in ("ok", "n/a"):
                notes.append(f"  {name}/{impl}: {row['status'][impl]}")
    lines.append("")
    lines.append("fastest repetition (min over repetitions: what a busy machine disturbs least):")
    for name, row in results["workloads"].items():
        fastest, ratios = row.get("min", {}), row.get("min_ratios", {})
        cells = [format_value(fastest.get(impl), row["status"][impl]) for impl in IMPLEMENTATIONS]
        shown = [f"{ratios[k]:.2f}x" if k in ratios else "-"
                 for k in ("autograd/floor", "autograd/torch")]
        lines.append(f"{name:<10} {'':<6} {cells[0]:>10} {cells[1]:>10} {cells[2]:>10} "
                     f"{shown[0]:>9} {shown[1]:>9}")
    stolen = [f"{name} {row['stolen_s']:.1f} s of {row['wall_s']:.0f} s"
              for name, row in results["workloads"].items()
              if (row.get("stolen_s") or 0) >= 0.1]
    if stolen:
        lines.append("CPU time the host took from this machine during a workload (its figures "
                     "are disturbed): " + ", ".join(stolen))
    mem = results.get("memory")
    if mem is not None:
        if mem["status"] == "ok":
            first, last = mem["steps"]
            verdict = "GROWS" if mem["grows"] else "flat"
            lines.append(f"memory: autograd RSS {mem['rss_mb'][0]:.1f} MiB after {first} MLP "
                         f"steps, {mem['rss_mb'][1]:.1f} MiB after {last}: growth "
                         f"{mem['growth_mb']:+.2f} MiB, live Operations "
                         f"{mem['live_operations'][0]} -> {mem['live_operations'][1]} "
                         f"({verdict})")
            replay = mem.get("replay")
            if replay is not None:
                first, last = replay["steps"]
                lines.append(f"memory: graph-mode replay RSS {replay['rss_mb'][0]:.1f} MiB after "
                             f"{first} steps, {replay['rss_mb'][1]:.1f} MiB after {last}: growth "
                             f"{replay['growth_mb']:+.2f} MiB "
                             f"({'GROWS' if replay['grows'] else 'flat'})")
        else:
            lines.append(f"memory: {mem['status']}")
    if notes:
        lines.append("not measured:")
        lines.extend(notes)
    return "\n".join(lines)


def stolen_seconds(path="/proc/stat"):
    """CPU time the host has taken from this virtual machine since boot (the ``steal`` column
    of Linux's /proc/stat, all CPUs together), in seconds; None where it cannot be read. A
    run's share of it says how much a hypervisor's other guests disturbed the timings, which
    the load average inside the machine does not show."""
    try:
        with open(path) as stat:
            fields = stat.readline().split()
        return int(fields[8]) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError, AttributeError):
        return None


def _load_average():
    """The 1-minute load average: on a shared machine it says how much the times are worth."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if _NUMPY_LOADED_BEFORE:
        # OpenBLAS fixed its thread count when numpy was imported: measure in a fresh process.
        return subprocess.call([sys.executable, "-m", "benchmarks", *argv],
                               cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    args = parse_args(argv)
    global _clock
    _clock = CLOCKS[args.clock]
    torch, torch_version = load_torch(args)
    autograd.set_num_threads(args.threads)
    selected = args.only or [w.NAME for w in WORKLOADS] + [memory.NAME]
    results = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join(["python -m benchmarks", *argv]),
        "machine": {"python": platform.python_version(), "platform": platform.platform(),
                    "cpus": os.cpu_count(), "load_average_at_start": _load_average()},
        "versions": {"autograd": getattr(autograd, "__version__", None),
                     "numpy": np.__version__, "torch": torch_version},
        "threads": thread_report(args, torch),
        "settings": {"quick": args.quick, "repetitions": args.repetitions,
                     "warmup": args.warmup, "min_time_s": args.min_time,
                     "pause_s": args.pause, "settle_steps": args.settle, "clock": args.clock},
        "workloads": {},
    }
    threads = results["threads"]
    print(f"threads: " + ", ".join(f"{k}={v}" for k, v in threads.items()))
    print(f"numpy {np.__version__}, torch {torch_version}; {args.repetitions} repetitions, "
          f"median, {args.clock} clock; pause {args.pause}s between variants, then "
          f"{args.settle} untimed step(s); load average "
          f"{results['machine']['load_average_at_start']}", flush=True)
    for workload in WORKLOADS:
        if workload.NAME in selected:
            print(f"running {workload.NAME}: {workload.DESCRIPTION} ...", flush=True)
            started, stolen = time.perf_counter(), stolen_seconds()
            row = results["workloads"][workload.NAME] = run_workload(workload, args, torch)
            row["wall_s"] = round(time.perf_counter() - started, 2)
            after = stolen_seconds()
            row["stolen_s"] = None if None in (stolen, after) else round(after - stolen, 2)
    if memory.NAME in selected:
        print(f"running {memory.NAME}: {memory.DESCRIPTION} ...", flush=True)
        results["memory"] = run_memory(args)
    if "onnx" in selected:           # only on request: it needs the onnx extra
        from benchmarks import onnx_models
        print(f"running onnx: {onnx_models.DESCRIPTION} ...", flush=True)
        onnx_results = onnx_models.measure(args.threads, args.repetitions, args.quick,
                                            args.pause, args.settle)
        print(onnx_models.format_results(onnx_results))
        results["onnx"] = {f"{name} batch {batch}": row
                           for (name, batch), row in onnx_results.items()}
    print()
    print(format_table(results))
    if args.json:
        directory = os.path.dirname(os.path.abspath(args.json))
        os.makedirs(directory, exist_ok=True)
        with open(args.json, "w") as out:
            json.dump(results, out, indent=2)
            out.write("\n")
        print(f"\nwrote {args.json}")
    failed = [name for name, row in results["workloads"].items()
              if (row["float32"] or "").startswith("FAILED")
              or any(s.startswith("error") for s in row["status"].values())]
    if results.get("memory", {}).get("grows") or results.get("memory", {}).get(
            "status", "ok").startswith("error"):
        failed.append("memory")
    if failed:
        print(f"FAILED: {', '.join(failed)} (float32 leak, error or memory growth)")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
