"""The benchmark suite (benchmarks/): every implementation of a workload computes the same step
(so the timings compare like with like), and `python -m benchmarks --quick` runs end to end and
writes the JSON it promises. No timing is asserted: times on shared machines vary."""
import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from benchmarks import tape, mlp
from benchmarks.common import Missing
from benchmarks.run import WORKLOADS

pytestmark = pytest.mark.cpu_only     # benchmarks time the CPU backend against NumPy/PyTorch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HAS_TORCH = importlib.util.find_spec("torch") is not None
ROW_KEYS = {"description", "unit", "size", "status", "float32", "repetitions", "autograd",
            "floor", "torch", "autograd/floor", "autograd/torch", "samples"}


def _outcomes(workload):
    """{implementation: outcome after one step} for those that exist here."""
    size = workload.sizes(quick=True)
    builders = {"autograd": workload.build_autograd, "floor": workload.build_floor}
    if HAS_TORCH:
        import torch
        builders["torch"] = lambda s: workload.build_torch(s, torch)
    outcomes = {}
    for name, build in builders.items():
        try:
            bench = build(size)
        except Missing:
            continue
        bench.step()
        outcomes[name] = bench.outcome()
    return outcomes


@pytest.mark.parametrize("workload", WORKLOADS, ids=lambda w: w.NAME)
def test_implementations_compute_the_same_step(workload):
    outcomes = _outcomes(workload)
    reference = outcomes.pop("floor")
    assert reference and all(a.dtype == np.float32 for a in reference.values())
    for implementation, outcome in outcomes.items():
        for name in set(reference) & set(outcome):
            np.testing.assert_allclose(
                outcome[name], reference[name], rtol=2e-3, atol=2e-4,
                err_msg=f"{workload.NAME}: {implementation} and the NumPy floor differ on {name}")
        assert set(reference) <= set(outcome) or workload is tape


def test_floor_batch_norm_gradient_matches_finite_differences():
    from benchmarks import floor
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 2, 2, 2))
    scale, bias, dy = rng.standard_normal(2), rng.standard_normal(2), rng.standard_normal(x.shape)

    def loss(values):
        y, _, _ = floor.batch_norm(values, scale, bias, np.zeros(2), np.ones(2))
        return float((y * dy).sum())

    _, x_hat, inv_std = floor.batch_norm(x, scale, bias, np.zeros(2), np.ones(2))
    dx, _, _ = floor.batch_norm_backward(dy, x_hat, inv_std, scale)
    numeric = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        shifted = x.copy()
        shifted[index] += 1e-6
        numeric[index] = (loss(shifted) - loss(x)) / 1e-6
    np.testing.assert_allclose(dx, numeric, rtol=1e-4, atol=1e-5)


def _run_suite(tmp_path, *options):
    path = tmp_path / "results.json"
    process = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--threads", "1", "--json", str(path),
         *options],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert process.returncode == 0, process.stdout + process.stderr
    with open(path) as results:
        return process.stdout, json.load(results)


def test_quick_suite_reports_every_workload(tmp_path):
    output, results = _run_suite(tmp_path)
    assert {"date", "command", "threads", "versions", "settings", "workloads",
            "memory"} <= set(results)
    # One thread keeps the smoke test quick on a shared machine (no BLAS threads spinning
    # against each other); it also shows that --threads reaches the libraries.
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        assert results["threads"][variable] == "1"
    assert results["threads"]["numpy_openblas"] in (1, None)      # None: symbol not found
    if HAS_TORCH:
        assert results["threads"]["torch"] == 1
    assert list(results["workloads"]) == [w.NAME for w in WORKLOADS]
    for name, row in results["workloads"].items():
        assert ROW_KEYS <= set(row), name
        assert row["stolen_s"] is None or row["stolen_s"] >= 0, name
        assert row["floor"] > 0 and row["status"]["floor"] == "ok"
        assert name in output
        if row["status"]["autograd"].startswith("missing: "):
            assert row["autograd"] is None and row["float32"] is None
        else:
            assert row["autograd"] > 0 and row["float32"] == "ok", (name, row["float32"])
            assert row["autograd/floor"] == pytest.approx(row["autograd"] / row["floor"],
                                                          rel=1e-2)
        if HAS_TORCH:
            assert row["torch"] > 0 and row["status"]["torch"] == "ok"
        else:
            assert row["torch"] is None and row["status"]["torch"] == "n/a"
    memory = results["memory"]
    if memory["status"] == "ok":
        assert memory["grows"] is False, memory
        assert memory["live_operations"][0] == memory["live_operations"][1]


def test_stolen_seconds_reads_the_steal_column_of_proc_stat(tmp_path):
    from benchmarks import run
    stat = tmp_path / "stat"
    ticks = os.sysconf("SC_CLK_TCK")
    stat.write_text(f"cpu  100 5 30 900 7 0 2 {3 * ticks} 0 0\ncpu0 50 2 15 450 3 0 1 1 0 0\n")
    assert run.stolen_seconds(str(stat)) == 3.0
    stat.write_text("cpu  100 5 30\n")                  # a kernel without the column
    assert run.stolen_seconds(str(stat)) is None
    assert run.stolen_seconds(str(tmp_path / "absent")) is None


def test_a_timed_block_runs_its_settle_steps_first_and_untimed(monkeypatch):
    from benchmarks import run
    clock = {"now": 0.0}
    monkeypatch.setattr(run, "_clock", lambda: clock["now"])
    calls = []

    def step():
        calls.append(clock["now"])
        clock["now"] += 10.0 if len(calls) <= 2 else 1.0     # the settle steps are slow

    assert run.time_block(step, 3, collect=False, settle=2) == 1.0
    assert len(calls) == 5
    assert run.parse_args([]).settle == 1 and run.parse_args(["--quick"]).settle == 0
    assert run.parse_args(["--settle", "3"]).settle == 3


def test_an_onnx_run_is_timed_after_its_pause_and_settle_calls(monkeypatch):
    from benchmarks import onnx_models
    clock = {"now": 0.0}
    monkeypatch.setattr(onnx_models, "_wall_clock", lambda: clock["now"])
    monkeypatch.setattr(onnx_models, "_cpu_clock", lambda: 2 * clock["now"])
    slept = []
    monkeypatch.setattr(onnx_models.time, "sleep", slept.append)
    calls = []

    def run_once():
        calls.append(clock["now"])
        clock["now"] += 10.0 if len(calls) <= 2 else 1.0     # the settle calls are slow

    assert onnx_models.timed_run(run_once, pause=0.2, settle=2) == (1.0, 2.0)
    assert len(calls) == 3 and slept == [0.2]


def test_the_table_names_the_workloads_the_host_took_cpu_from():
    from benchmarks import run
    row = {"unit": "ms", "status": {name: "ok" for name in run.IMPLEMENTATIONS},
           "autograd": 2.0, "floor": 1.0, "torch": 4.0, "autograd/floor": 2.0,
           "autograd/torch": 0.5, "float32": "ok", "wall_s": 40.0}
    quiet = dict(row, stolen_s=0.05)
    table = run.format_table({"workloads": {"lstm_lm": dict(row, stolen_s=2.5), "mlp_b1": quiet,
                                            "tape": dict(row, stolen_s=None)}})
    steal = [line for line in table.splitlines() if "the host took" in line]
    assert len(steal) == 1 and "lstm_lm 2.5 s of 40 s" in steal[0]
    assert "mlp_b1" not in steal[0] and "tape" not in steal[0]
    assert not any("the host took" in line for line in
                   run.format_table({"workloads": {"mlp_b1": quiet}}).splitlines())


def test_only_one_workload_without_torch_says_na(tmp_path):
    output, results = _run_suite(tmp_path, "--only", "tape", "--no-torch")
    assert list(results["workloads"]) == ["tape"] and "memory" not in results
    row = results["workloads"]["tape"]
    assert row["torch"] is None and row["status"]["torch"] == "n/a"
    assert row["autograd/torch"] is None
    table_line = next(line for line in output.splitlines() if line.startswith("tape "))
    assert "n/a" in table_line


def test_profile_summary_splits_samples_by_kind(tmp_path, capsys):
    from benchmarks import profile
    raw = tmp_path / "raw.txt"
    step = "main (benchmarks/profile.py:1);build_autograd.<locals>.step (benchmarks/mlp.py:57)"
    raw.write_text(
        f"{step};MatMul.forward (autograd/operations/linalg.py:21);"
        "sgemm_kernel_HASWELL (libscipy_openblas64_.so) 6\n"
        f"{step};MatMul.forward (autograd/operations/linalg.py:21);"
        "inner_thread (libscipy_openblas64_.so) 2\n"
        f"{step};backward (autograd/graph.py:222) 2\n"
        "<module> (benchmarks/profile.py:3);_find_and_load (<frozen importlib>:1) 90\n")
    profile.summarize(str(raw))
    report = capsys.readouterr().out
    assert "10 samples inside the step" in report            # the import samples are left out
    assert " 60.0%  BLAS kernels" in report
    assert " 20.0%  BLAS thread hand-off" in report
    assert " 20.0%  Python bytecode" in report
    assert " 80.0%  MatMul.forward" in report


def test_gpt_torch_reference_fast_run_learns():
    pytest.importorskip("torch")
    from benchmarks import gpt_torch_reference
    result = gpt_torch_reference.main(["--fast", "--threads", "1"])
    assert result["val_loss"] < np.log(65) - 0.5


def test_transformer_memory_child_reports_a_flat_autograd_step():
    from benchmarks import transformer_memory
    row = transformer_memory.child("autograd", 20, quick=True)
    # (the step peak is not checked: in the suite's long-lived process ru_maxrss is an old peak)
    assert row["implementation"] == "autograd"
    assert set(row["rss_after_steps_mb"]) == {"2", "20"}
    # no graph outlives its step: as many Operation objects alive after 2 steps as after 20
    assert row["live_operations_after_steps"]["2"] == row["live_operations_after_steps"]["20"]
    assert row["growth_mb"] < 16        # the quick graphs are KiB; heap noise is about a MiB
