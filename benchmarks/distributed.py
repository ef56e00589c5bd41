"""Data-parallel throughput: the digits CNN and the MLP on 1 and 2 processes (``DistOpt`` over
MPI), one BLAS/OpenMP/autograd thread per process, on this machine.

    python -m benchmarks.distributed                 # both models, 1 and 2 processes
    python -m benchmarks.distributed --steps 100 --rounds 7 --models mlp

For each model and process count it launches ``mpiexec -n P`` (the one beside the interpreter,
``pip install -e ".[dist]"``) on this file with ``--worker``. Every process keeps its own batch
(weak scaling: P processes train on P batches a step), and one run alternates, round-robin, four
ways of taking a step so that they meet the same machine: ``plain`` (the wrapped optimizer
alone, no communication: the compute floor), ``overlap`` (``DistOpt``, reductions started while
backward runs; MPI moves their data when DistOpt tests them, once per yielded gradient),
``thread`` (the same with ``MpiCommunicator(progress_thread=True)``, a thread testing them
every millisecond) and ``after`` (``DistOpt(overlap=False)``, reductions started after backward).
Reported per way, from rank 0: the median step time, the throughput of all processes, and the
share of the step spent waiting in ``Waitall`` for the reductions; ``allreduce`` is the median
time of one blocking all-reduce of all the gradient bytes, with nothing else running.
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import sysconfig
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
DEFAULT_BUCKET_BYTES = 4 * 1024 * 1024        # DistOpt's default
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                    "AUTOGRAD_NUM_THREADS")
MODELS = {"cnn": "the example's digits CNN, 8x8 images, batch 64 per process",
          "mlp": "MLP 784-512-256-10, batch 128 per process"}


def build(model_name, rank):
    """(model, loss function of nothing, parameter count) for one process's batch."""
    import numpy as np
    import autograd
    from autograd import Tensor
    autograd.manual_seed(0)
    generator = np.random.default_rng(rank)
    if model_name == "cnn":
        import importlib.util
        spec = importlib.util.spec_from_file_location("train_cnn", ROOT / "examples" /
                                                      "train_cnn.py")
        example = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(example)
        images, labels = autograd.data.load_digits("train")
        rows = generator.choice(len(images), 64, replace=False)
        x, y = images[rows], labels[rows]
        model = example.CNN(in_channels=1, num_classes=10)
    else:
        x = generator.standard_normal((128, 784)).astype(np.float32)
        y = generator.integers(0, 10, 128)
        model = autograd.Sequential(autograd.Linear(784, 512), autograd.ReLU(),
                                    autograd.Linear(512, 256), autograd.ReLU(),
                                    autograd.Linear(256, 10))
    batch = Tensor(data=x, requires_grad=False)
    model.eval()
    with autograd.no_grad():
        model(batch)                                # builds lazy layers
    model.train()

    def loss():
        return autograd.softmax_cross_entropy(model(batch), y)
    return model, loss, len(x)


def worker(args):
    import numpy as np
    from autograd import opt
    communicator = opt.MpiCommunicator()
    polled = opt.MpiCommunicator(progress_thread=True)
    rank, world = communicator.rank, communicator.world_size
    model, loss, batch = build(args.models[0], rank)
    ways = {
        "plain": opt.SGD(lr=0.01, momentum=0.9),
        "overlap": opt.DistOpt(opt.SGD(lr=0.01, momentum=0.9), communicator,
                               bucket_bytes=args.bucket_bytes),
        "thread": opt.DistOpt(opt.SGD(lr=0.01, momentum=0.9), polled,
                              bucket_bytes=args.bucket_bytes),
        "after": opt.DistOpt(opt.SGD(lr=0.01, momentum=0.9), communicator,
                             bucket_bytes=args.bucket_bytes, overlap=False),
    }
    ways["overlap"].broadcast_parameters(model)
    times = {name: [] for name in ways}
    waits = {name: [] for name in ways}
    for name, optimizer in ways.items():         # warm-up: buffers, caches, first messages
        for _ in range(5):
            optimizer(loss())
    for _ in range(args.rounds):
        for name, optimizer in ways.items():
            communicator.barrier()
            start = time.perf_counter()
            wait = 0.0
            for _ in range(args.steps):
                optimizer(loss())
                wait += getattr(optimizer, "last_times", {}).get("wait", 0.0)
            times[name].append((time.perf_counter() - start) / args.steps)
            waits[name].append(wait / args.steps)
    gradients = [p.data for p in model.parameters()]
    flat = np.concatenate([g.reshape(-1) for g in gradients])
    reduce_times = []
    for _ in range(args.rounds * 5):
        communicator.barrier()
        start = time.perf_counter()
        communicator.all_reduce(flat)
        reduce_times.append(time.perf_counter() - start)
    if rank == 0:
        report = {"model": args.models[0], "processes": world, "batch_per_process": batch,
                  "gradient_bytes": int(flat.nbytes), "steps": args.steps,
                  "rounds": args.rounds, "allreduce_ms": 1e3 * float(np.median(reduce_times))}
        for name in ways:
            step = float(np.median(times[name]))
            report[name] = {"step_ms": 1e3 * step, "samples_per_s": world * batch / step,
                            "wait_share": float(np.median(waits[name])) / step}
        print("REPORT " + json.dumps(report), flush=True)


def launch(model, processes, steps, rounds, bucket_bytes):
    mpiexec = pathlib.Path(sysconfig.get_path("scripts")) / "mpiexec"
    if not mpiexec.exists():
        raise SystemExit(f"no mpiexec beside the interpreter ({mpiexec}): "
                         "pip install -e \".[dist]\"")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    env.update({name: "1" for name in THREAD_VARIABLES})
    done = subprocess.run(
        [str(mpiexec), "-n", str(processes), sys.executable, "-m", "benchmarks.distributed",
         "--worker", "--models", model, "--steps", str(steps), "--rounds", str(rounds),
         "--bucket-bytes", str(bucket_bytes)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    lines = [l for l in done.stdout.splitlines() if l.startswith("REPORT ")]
    if done.returncode or not lines:
        raise SystemExit(f"the {model} run on {processes} processes failed:\n"
                         f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return json.loads(lines[0][len("REPORT "):])


WAYS = ("plain", "overlap", "thread", "after")


def table(reports):
    lines = ["model  procs  grad KiB  allreduce ms | way        step ms  samples/s  wait share "
             "| vs 1 process"]
    single = {r["model"]: r for r in reports if r["processes"] == 1}
    for r in reports:
        for way in WAYS:
            if r["processes"] == 1 and way in ("thread", "after"):
                continue
            row = r[way]
            base = single.get(r["model"], r)["plain"]["samples_per_s"]
            lines.append(f"{r['model']:5s}  {r['processes']:5d}  {r['gradient_bytes'] / 1024:8.0f}"
                         f"  {r['allreduce_ms']:12.3f} | {way:9s}  {row['step_ms']:7.2f}  "
                         f"{row['samples_per_s']:9.0f}  {row['wait_share']:10.1%} "
                         f"| {row['samples_per_s'] / base:5.2f}x")
        if r["processes"] > 1:
            saved = r["after"]["step_ms"] - r["overlap"]["step_ms"]
            lines.append(f"{'':5s}  overlapping saves {saved:+.2f} ms a step "
                         f"({saved / r['after']['step_ms']:+.1%} of all-reduce-after-backward)")
            saved = r["overlap"]["step_ms"] - r["thread"]["step_ms"]
            lines.append(f"{'':5s}  the progress thread saves {saved:+.2f} ms a step")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", nargs="+", choices=sorted(MODELS), default=["cnn", "mlp"])
    parser.add_argument("--processes", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--steps", type=int, default=50, help="steps per timed round")
    parser.add_argument("--rounds", type=int, default=5, help="round-robin repetitions")
    parser.add_argument("--bucket-bytes", type=int, default=DEFAULT_BUCKET_BYTES,
                        help="DistOpt's bucket_bytes (default %(default)s): gradients that fit "
                             "one bucket go as one message at the end of backward, leaving "
                             "nothing to overlap")
    parser.add_argument("--json", metavar="PATH", help="also write the reports here")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return worker(args)
    reports = [launch(model, processes, args.steps, args.rounds, args.bucket_bytes)
               for model in args.models for processes in args.processes]
    print(f"one thread per process ({', '.join(THREAD_VARIABLES)} = 1); "
          f"bucket_bytes {args.bucket_bytes}; {args.rounds} rounds of {args.steps} steps, "
          f"medians; load average "
          f"{os.getloadavg()[0]:.1f}")
    print(table(reports))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(reports, indent=1))


if __name__ == "__main__":
    main()
