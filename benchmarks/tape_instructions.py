"""Instructions per recorded op of the tape workload, for callgrind (how tape changes are judged).

Runs the tape workload's own step (benchmarks/tape.py: tanh(x * 1.01 + 0.1), 50 links = 150
recorded ops, forward + backward) three times to warm up, then N times inside
``functools.reduce``, so that callgrind counts only those steps:

    PYTHONHASHSEED=0 PYTHONPATH=$PWD setarch $(uname -m) -R valgrind --tool=callgrind \\
        --toggle-collect=functools_reduce python -m benchmarks.tape_instructions 20

Instructions per op = callgrind's "Collected" / (20 * 150). Address randomisation off
(``setarch -R``) and a fixed hash seed make it repeatable to about 50 instructions per op.
"""
import functools
import sys

from . import tape

LINKS = 50


def main(steps):
    bench = tape.build_autograd({"links": LINKS, "elements": 4})
    for _ in range(3):
        bench.step()
    functools.reduce(lambda _, __: bench.step(), range(steps), None)
    print(f"{steps} steps of {tape.OPS_PER_LINK * LINKS} recorded ops")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
