"""benchmarks/distributed.py runs end to end under mpiexec and reports what it promises (no
timing is asserted: the machine is shared)."""
import json

import pytest

from tests.opt.test_distributed import mpi_missing


@pytest.mark.skipif(mpi_missing() is not None, reason=str(mpi_missing()))
def test_distributed_benchmark_reports_the_mlp_on_two_processes(tmp_path, capsys):
    from benchmarks import distributed
    path = tmp_path / "reports.json"
    distributed.main(["--models", "mlp", "--processes", "2", "--steps", "1", "--rounds", "1",
                      "--json", str(path)])
    (report,) = json.loads(path.read_text())
    # 784*512 + 512 + 512*256 + 256 + 256*10 + 10 float32 parameters
    assert report["gradient_bytes"] == 4 * (784 * 512 + 512 + 512 * 256 + 256 + 2560 + 10)
    assert report["processes"] == 2 and report["batch_per_process"] == 128
    for way in ("plain", "overlap", "after"):
        assert report[way]["step_ms"] > 0 and 0 <= report[way]["wait_share"] < 1
    assert "overlapping saves" in capsys.readouterr().out
