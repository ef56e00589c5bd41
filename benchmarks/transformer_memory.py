"""Peak memory of a GPT training step (the ``transformer`` workload) in autograd and in PyTorch,
measured the same way, and whether autograd's resident memory stays flat over many steps.

    python -m benchmarks.transformer_memory [--steps 200] [--quick]

Each implementation runs in a fresh interpreter (so one's allocations do not inflate the
other's peak) with one BLAS/OpenMP thread. A child builds the model and data, reads its resident
set size (RSS, /proc/self/statm), runs one step and reads the peak RSS (``ru_maxrss``): the step's
peak is the difference. Then it runs ``--steps`` more steps and reads RSS at the first tenth and
at the end: a leak of one graph per step would grow it by megabytes per step. For autograd it
also counts the live Operation objects at both points (a constant count: no graph survives).
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def child(implementation, steps, quick):
    import gc
    import resource
    import scipy.special      # noqa: F401  autograd's erf imports it lazily: not step memory
    from benchmarks import transformer
    from benchmarks.memory import resident_mb, live_operations
    size = transformer.sizes(quick)
    if implementation == "torch":
        import torch
        torch.set_num_threads(1)
        bench = transformer.build_torch(size, torch)
    else:
        bench = transformer.build_autograd(size)
    gc.collect()
    before = resident_mb()
    bench.step()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    early_at = max(1, steps // 10)
    rss, operations = {}, {}
    for step in range(1, steps + 1):
        bench.step()
        if step in (early_at, steps):
            if implementation == "autograd":
                # counted before the RSS reading: the list it builds is then already allocated
                operations[str(step)] = live_operations()
            gc.collect()
            rss[step] = resident_mb()
    return {"implementation": implementation, "rss_before_mb": round(before, 1),
            "peak_mb": round(peak, 1), "step_peak_mb": round(peak - before, 1),
            "rss_after_steps_mb": {str(k): round(v, 1) for k, v in rss.items()},
            "growth_mb": round(rss[steps] - rss[early_at], 2),
            "live_operations_after_steps": operations}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--child", choices=["autograd", "torch"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.steps, args.quick)))
        return 0
    environment = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
                       MKL_NUM_THREADS="1")
    results = {}
    for implementation in ("autograd", "torch"):
        command = [sys.executable, "-m", "benchmarks.transformer_memory", "--child",
                   implementation, "--steps", str(args.steps)] + (["--quick"] if args.quick
                                                                   else [])
        process = subprocess.run(command, cwd=ROOT, env=environment, capture_output=True,
                                 text=True)
        if process.returncode != 0:
            results[implementation] = {"error": process.stderr.strip().splitlines()[-1:]}
            continue
        results[implementation] = json.loads(process.stdout.strip().splitlines()[-1])
    for name, row in results.items():
        print(f"{name:9s} {row}")
    ours, theirs = results.get("autograd", {}), results.get("torch", {})
    if "step_peak_mb" in ours and theirs.get("step_peak_mb"):
        print(f"step peak autograd/torch: {ours['step_peak_mb'] / theirs['step_peak_mb']:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
