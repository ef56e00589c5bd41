"""DistOpt over NCCL (CuPy's ``cupy.cuda.nccl``), one process per visible GPU under mpiexec:
data-parallel SGD on the GPU equals one process on the concatenated batch, and all-reduce and
broadcast move CuPy arrays. Needs CuPy, a GPU and the ``dist`` extra."""
import json

import pytest

from tests.opt.test_distributed import WORKER, launch, mpi_missing

pytestmark = pytest.mark.gpu


def test_nccl_data_parallel_training_matches_one_process():
    missing = mpi_missing()
    if missing:
        pytest.skip(missing)
    import cupy
    processes = min(cupy.cuda.runtime.getDeviceCount(), 2)
    done = launch(processes, WORKER, "--nccl")
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULTS ")]
    assert done.returncode == 0 and lines, done.stdout[-3000:] + done.stderr[-3000:]
    checks = json.loads(lines[0][len("RESULTS "):])["checks"]
    failures = {name: messages for name, messages in checks.items() if any(messages)}
    assert set(checks) == {"nccl_sgd_momentum_equals_one_process",
                           "nccl_all_reduce_and_broadcast"}
    assert not failures, failures
