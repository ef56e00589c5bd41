"""autograd.runtime: importing changes nothing; the CPU backend's tuning comes on first use or
when asked for, and every setting reads back."""
import os
import subprocess
import sys
import time

import numpy as np
import pytest

import autograd
from autograd.backend import buffer_cache, native

pytestmark = pytest.mark.cpu_only     # CPU tuning and import behaviour, checked in subprocesses

_GLIBC = hasattr(os, "confstr") and os.confstr("CS_GNU_LIBC_VERSION").startswith("glibc")

_MEDIUM_ARRAYS_FAULTS = """
import resource, sys
import numpy as np
if sys.argv[1] != "numpy":
    import autograd
    from autograd.backend import buffer_cache
if sys.argv[1] == "opted_out":
    autograd.runtime.configure(allocator_tuning=False)
if sys.argv[1] in ("first_use", "opted_out"):
    kept = buffer_cache.empty(np, (1 << 20,), np.float32)      # the cache's first buffer
if sys.argv[1] == "explicit":
    autograd.runtime.tune_allocator()
faults = []
for step in range(6):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    arrays = [np.ones(200_000, np.float32) for _ in range(4)]      # 800 KB each
    del arrays
    faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
print(min(faults[2:]))
"""


def _faults(case):
    run = subprocess.run([sys.executable, "-c", _MEDIUM_ARRAYS_FAULTS, case],
                         capture_output=True, text=True, check=True)
    return int(run.stdout)


@pytest.mark.skipif(not _GLIBC, reason="the malloc thresholds are glibc's")
def test_allocator_is_tuned_on_the_caches_first_use_or_when_asked_never_at_import():
    assert _faults("numpy") >= 4 * 150          # each 800 KB array mapped afresh: ~195 pages
    assert _faults("import_only") >= 4 * 150    # importing autograd changed nothing
    assert _faults("first_use") < 50            # the heap's pages, reused
    assert _faults("explicit") < 50
    assert _faults("opted_out") >= 4 * 150      # configure(allocator_tuning=False) is kept


_IMPORT_SIDE_EFFECTS = """
import os, sys, threading
import numpy as np
environment, threads = dict(os.environ), threading.active_count()
calls = []
original = os.register_at_fork
os.register_at_fork = lambda **hooks: calls.append(hooks) or original(**hooks)
import autograd
print(dict(os.environ) == environment, threading.active_count() == threads, calls == [],
      type(sys.modules["autograd"]) is type(os))
"""


def test_import_sets_no_variable_starts_no_thread_registers_no_hook_swaps_no_class():
    run = subprocess.run([sys.executable, "-c", _IMPORT_SIDE_EFFECTS], capture_output=True,
                         text=True, check=True)
    assert run.stdout.split() == ["True", "True", "True", "True"]


def test_cache_limit_reads_back_and_zero_keeps_nothing():
    previous = autograd.runtime.set_cache_limit(0)
    try:
        assert autograd.runtime.get_cache_limit() == 0
        before = buffer_cache.kept_bytes()
        array = buffer_cache.empty(np, (1 << 20,), np.float32)
        assert buffer_cache.kept_bytes() == before and array.shape == (1 << 20,)
    finally:
        assert autograd.runtime.set_cache_limit(previous) == 0
    assert autograd.runtime.get_cache_limit() == previous


@pytest.mark.parametrize("bad", [-1, 1.5, True, "1"])
def test_cache_limit_rejects_what_is_not_a_byte_count(bad):
    with pytest.raises(ValueError, match="set_cache_limit"):
        autograd.runtime.set_cache_limit(bad)


def test_configure_sets_threads_and_describe_reports_them():
    previous = autograd.get_num_threads()
    try:
        autograd.runtime.configure(num_threads=1)
        assert autograd.runtime.describe()["threads"] == 1 == autograd.get_num_threads()
    finally:
        autograd.set_num_threads(previous)


@pytest.mark.parametrize("seconds", [0, 0.0005, 0.02])
def test_the_pool_spin_reads_back_and_the_split_kernels_stay_right(seconds):
    """Whatever the workers do between kernels (sleep at once, spin briefly, spin through),
    a product split over three threads gives NumPy's result, kernel after kernel, across
    pauses longer than the spin."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 300)).astype(np.float32)
    b = rng.standard_normal((300, 2000)).astype(np.float32)
    previous = autograd.runtime.set_pool_spin(seconds)
    threads = autograd.get_num_threads()
    autograd.set_num_threads(3)
    try:
        assert autograd.runtime.get_pool_spin() == pytest.approx(seconds)
        assert autograd.runtime.describe()["pool_spin_seconds"] == pytest.approx(seconds)
        for pause in (0, 0.001, 0, 0.03):
            time.sleep(pause)
            out = np.empty((4, 2000), np.float32)
            if native.product(a, b, out):         # the compiled kernels, where built
                np.testing.assert_allclose(out, a @ b, rtol=1e-4, atol=1e-3)
    finally:
        autograd.set_num_threads(threads)
        autograd.runtime.set_pool_spin(previous)
    assert autograd.runtime.get_pool_spin() == pytest.approx(previous)


@pytest.mark.parametrize("bad", [-0.001, 2.0, True, "0.001", None])
def test_the_pool_spin_rejects_what_is_not_seconds(bad):
    before = autograd.runtime.get_pool_spin()
    with pytest.raises(ValueError, match="set_pool_spin"):
        autograd.runtime.set_pool_spin(bad)
    assert autograd.runtime.get_pool_spin() == before


_SPIN = """
import os, sys
import numpy as np
import autograd
from autograd.backend import threads
library = autograd.runtime._numpy_openblas()
if library is None:
    print("no-openblas"); sys.exit()
before = library.openblas_thread_timeout()
if sys.argv[1] == "opted_out":
    autograd.runtime.configure(blas_spin_tuning=False)
threads.parallel_for(lambda a, b: None, 1 << 20, np.empty(1 << 20))   # the first split
a = np.ones((200, 200)); a @ a                                      # OpenBLAS still works
print(before, library.openblas_thread_timeout(), "OPENBLAS_THREAD_TIMEOUT" in os.environ,
      autograd.runtime.describe()["blas_spin_shortened"])
"""


@pytest.mark.parametrize("case, expected", [("first_split", ["0", "4", "False", "True"]),
                                            ("opted_out", ["0", "0", "False", "False"])])
def test_the_blas_spin_is_shortened_at_the_first_split_without_touching_the_environment(
        case, expected):
    environment = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    environment["AUTOGRAD_NUM_THREADS"] = "2"
    run = subprocess.run([sys.executable, "-c", _SPIN, case], capture_output=True, text=True,
                         check=True, env=environment)
    if run.stdout.strip() == "no-openblas":
        pytest.skip("NumPy's OpenBLAS does not export openblas_read_env here")
    assert run.stdout.split() == expected


def test_a_users_openblas_thread_timeout_stands():
    code = ("import numpy, autograd; print(autograd.runtime.shorten_blas_spin(), "
            "autograd.runtime._numpy_openblas().openblas_thread_timeout())")
    environment = dict(os.environ, OPENBLAS_THREAD_TIMEOUT="12")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=environment)
    assert run.stdout.split() == ["False", "12"]
