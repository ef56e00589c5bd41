"""autograd.runtime in this process (survivors of the full mutation run: test_runtime.py checks
the tuning in subprocesses, which mutmut cannot credit). OpenBLAS is a stand-in library that
records its calls, glibc's allocator a recorded ``numpy.empty``; the runtime's state is put back
after each test."""
import ctypes
import os
import pathlib
import platform

import numpy as np
import pytest

import autograd
from autograd import runtime
from autograd.backend import buffer_cache, native

pytestmark = pytest.mark.cpu_only

_GLIBC = platform.libc_ver()[0] == "glibc"


@pytest.fixture(autouse=True)
def runtime_state(monkeypatch):
    """The runtime untuned and opted in, as after import; restored afterwards."""
    saved = dict(runtime._state)
    runtime._state.update(tune_allocator=True, allocator_tuned=False, shorten_blas_spin=True,
                          blas_spin_shortened=False)
    monkeypatch.delenv("OPENBLAS_THREAD_TIMEOUT", raising=False)
    yield runtime._state
    runtime._state.clear()
    runtime._state.update(saved)


class StandInOpenBLAS:
    """Records each call, with the OPENBLAS_THREAD_TIMEOUT that openblas_read_env saw."""

    def __init__(self):
        self.calls = []

    def openblas_read_env(self):
        self.calls.append(("read_env", os.environ.get("OPENBLAS_THREAD_TIMEOUT")))

    def blas_thread_shutdown_(self):
        self.calls.append(("shutdown",))

    def blas_thread_init(self):
        self.calls.append(("init",))


@pytest.fixture
def openblas(monkeypatch):
    library = StandInOpenBLAS()
    monkeypatch.setattr(runtime, "_numpy_openblas", lambda: library)
    return library


def test_shorten_blas_spin_has_openblas_read_4_then_restarts_its_threads(openblas):
    assert runtime.shorten_blas_spin() is True
    assert openblas.calls == [("read_env", "4"), ("shutdown",), ("init",)]
    assert "OPENBLAS_THREAD_TIMEOUT" not in os.environ            # the environment as it was
    assert runtime.describe()["blas_spin_shortened"] is True
    assert runtime.shorten_blas_spin() is False                   # once
    assert len(openblas.calls) == 3


def test_a_users_thread_timeout_stands(openblas, monkeypatch):
    monkeypatch.setenv("OPENBLAS_THREAD_TIMEOUT", "12")
    assert runtime.shorten_blas_spin() is False
    assert openblas.calls == [] and os.environ["OPENBLAS_THREAD_TIMEOUT"] == "12"
    assert runtime.describe()["blas_spin_shortened"] is False


def test_without_numpys_openblas_nothing_is_shortened(monkeypatch):
    monkeypatch.setattr(runtime, "_numpy_openblas", lambda: None)
    assert runtime.shorten_blas_spin() is False
    assert runtime.describe()["blas_spin_shortened"] is False


def test_the_first_split_shortens_the_spin_unless_configured_off(openblas):
    runtime.configure(blas_spin_tuning=False)
    runtime._on_first_split()
    assert openblas.calls == [] and runtime.describe()["blas_spin_shortened"] is False
    runtime.configure(blas_spin_tuning=True)                       # True: now
    assert openblas.calls[0] == ("read_env", "4")
    runtime._on_first_split()                                      # and only once
    assert len(openblas.calls) == 3


def test_opting_in_while_a_users_timeout_is_set_keeps_the_first_split_hook(openblas, monkeypatch):
    monkeypatch.setenv("OPENBLAS_THREAD_TIMEOUT", "12")
    runtime.configure(blas_spin_tuning=True)                       # theirs stands for now
    assert openblas.calls == []
    monkeypatch.delenv("OPENBLAS_THREAD_TIMEOUT")
    runtime._on_first_split()
    assert openblas.calls == [("read_env", "4"), ("shutdown",), ("init",)]


@pytest.fixture
def recorded_empty(monkeypatch):
    calls = []
    monkeypatch.setattr(np, "empty", lambda *arguments: calls.append(arguments))
    return calls


@pytest.mark.skipif(not _GLIBC, reason="the malloc thresholds are glibc's")
def test_tune_allocator_frees_one_block_just_under_glibcs_largest_mmap_threshold(recorded_empty):
    # glibc raises its thresholds only for a freed mmapped block up to M_MMAP_THRESHOLD's
    # maximum, 32 MiB on 64-bit (mallopt(3)): one uint8 block of 32 MiB - 64 KiB, once
    assert runtime.tune_allocator() is True
    assert recorded_empty == [((32 << 20) - (1 << 16), np.uint8)]
    assert runtime.describe()["allocator_tuned"] is True
    assert runtime.tune_allocator() is False and len(recorded_empty) == 1


def test_tune_allocator_does_nothing_off_glibc(recorded_empty, monkeypatch):
    monkeypatch.setattr(runtime, "_is_glibc", lambda: False)
    assert runtime.tune_allocator() is False
    assert recorded_empty == [] and runtime.describe()["allocator_tuned"] is False


def test_is_glibc_agrees_with_the_platform_and_is_false_when_it_cannot_tell(monkeypatch):
    assert runtime._is_glibc() is _GLIBC
    for error in (ValueError, OSError, AttributeError):
        def unknown(name, error=error):
            raise error(name)
        monkeypatch.setattr(os, "confstr", unknown)
        assert runtime._is_glibc() is False


@pytest.mark.skipif(not _GLIBC, reason="the malloc thresholds are glibc's")
def test_the_caches_first_buffer_registers_the_fork_hook_and_tunes_unless_configured_off(
        recorded_empty, monkeypatch):
    hooks = []
    monkeypatch.setattr(os, "register_at_fork", lambda **hook: hooks.append(hook))
    runtime.configure(allocator_tuning=False)
    runtime._on_first_buffer()
    assert hooks == [{"after_in_child": buffer_cache.new_lock_after_fork}]
    assert recorded_empty == [] and runtime.describe()["allocator_tuned"] is False
    runtime.configure(allocator_tuning=True)                       # True: now
    assert len(recorded_empty) == 1 and runtime.describe()["allocator_tuned"] is True


def test_configure_sets_what_is_given_and_leaves_the_rest(openblas):
    threads, limit = autograd.get_num_threads(), runtime.get_cache_limit()
    other = 2 if threads == 1 else 1
    try:
        runtime.configure()
        assert (autograd.get_num_threads(), runtime.get_cache_limit()) == (threads, limit)
        runtime.configure(num_threads=other, cache_limit_bytes=limit + 4096)
        assert (autograd.get_num_threads(), runtime.get_cache_limit()) == (other, limit + 4096)
    finally:
        autograd.set_num_threads(threads)
        runtime.set_cache_limit(limit)
    assert openblas.calls == []


def test_describe_names_every_setting_with_its_value(monkeypatch, runtime_state):
    monkeypatch.setenv("OPENBLAS_THREAD_TIMEOUT", "7")
    runtime_state.update(allocator_tuned=True, blas_spin_shortened=False)
    assert runtime.describe() == {
        "threads": autograd.get_num_threads(), "cache_limit_bytes": runtime.get_cache_limit(),
        "cache_bytes": buffer_cache.kept_bytes(), "allocator_tuned": True,
        "blas_spin_shortened": False, "blas_thread_timeout": "7",
        "native_kernels": native.instruction_set(),
        "pool_spin_seconds": runtime.get_pool_spin()}


def test_configure_sets_the_pool_spin():
    previous = runtime.get_pool_spin()
    try:
        runtime.configure(pool_spin=0.0003)
        assert runtime.describe()["pool_spin_seconds"] == pytest.approx(0.0003)
        runtime.configure(pool_spin=None)
        assert runtime.get_pool_spin() == pytest.approx(0.0003)
    finally:
        runtime.set_pool_spin(previous)


def test_without_the_compiled_kernels_the_pool_spin_is_only_remembered(monkeypatch):
    before = runtime.get_pool_spin()
    monkeypatch.setattr(native, "available", lambda: False)
    monkeypatch.setitem(runtime._state, "pool_spin", 0.001)
    assert runtime.set_pool_spin(0.25) == 0.001
    assert runtime.get_pool_spin() == 0.25
    monkeypatch.undo()
    assert runtime.get_pool_spin() == before        # the pool's own setting untouched


def test_configure_switches_the_native_kernels():
    if not native.available():
        pytest.skip("the compiled kernels are not built in this install")
    previous = native.enabled()
    try:
        runtime.configure(native_kernels=False)
        assert runtime.describe()["native_kernels"] == "off" and not native.enabled()
        runtime.configure(native_kernels=None)
        assert not native.enabled()
        runtime.configure(native_kernels=True)
        assert native.enabled() and runtime.describe()["native_kernels"] != "off"
    finally:
        native.set_enabled(previous)


def test_a_cache_limit_equal_to_what_is_kept_keeps_it():
    # catches `>=` for `>`: idle buffers are given back only beyond the new limit
    previous = runtime.get_cache_limit()
    array = buffer_cache.empty(np, (1 << 20,), np.float32)
    del array
    kept = buffer_cache.kept_bytes()
    try:
        assert kept >= 4 << 20
        runtime.set_cache_limit(kept)
        assert buffer_cache.kept_bytes() == kept
        runtime.set_cache_limit(kept - 1)
        assert buffer_cache.kept_bytes() == 0
    finally:
        runtime.set_cache_limit(previous)


# -- finding NumPy's OpenBLAS in /proc/self/maps ------------------------------------------------

def _numpy_openblas_file():
    folder = pathlib.Path(np.__file__).resolve().parent.parent / "numpy.libs"
    found = sorted(folder.glob("*openblas*.so"))
    return found[0] if found else None


def _maps(*paths):
    return "".join(f"7f00{i:04x}000-7f00{i:04x}fff r-xp 00000000 fe:00 {70000 + i}"
                   f"                      {path}\n" for i, path in enumerate(paths))


@pytest.fixture
def maps(monkeypatch):
    """Serve ``text`` as /proc/self/maps to runtime._numpy_openblas (other paths: the real
    open)."""
    served = {}

    def fake_open(path, *arguments, **keywords):
        if path == "/proc/self/maps":
            import io
            return io.StringIO(served["text"])
        return open(path, *arguments, **keywords)
    monkeypatch.setattr(runtime, "open", fake_open, raising=False)
    return served


@pytest.mark.skipif(_numpy_openblas_file() is None, reason="NumPy bundles no OpenBLAS here")
def test_numpys_openblas_is_found_under_a_versioned_name_past_broken_and_foreign_ones(
        maps, tmp_path):
    real = _numpy_openblas_file()
    versioned = tmp_path / "libopenblasp-r0.so.0"                  # ".so." in the name
    versioned.symlink_to(real)
    import _ctypes
    foreign = tmp_path / "libopenblas_a_stub.so"                   # loads, lacks the calls
    foreign.symlink_to(_ctypes.__file__)
    maps["text"] = _maps("/nonexistent/libopenblas_a.so", foreign, "/usr/lib/libm.so.6",
                         versioned, "[vdso]")
    library = runtime._numpy_openblas()
    assert library is not None and library._name == str(versioned)
    assert all(hasattr(library, name) for name in
               ("openblas_read_env", "blas_thread_shutdown_", "blas_thread_init"))


def test_no_openblas_in_the_maps_is_none(maps):
    maps["text"] = _maps("/usr/lib/libm.so.6", "/usr/lib/libc.so.6")
    assert runtime._numpy_openblas() is None


def test_unreadable_maps_are_none(monkeypatch):
    def refuse(path, *arguments, **keywords):
        raise PermissionError(path)
    monkeypatch.setattr(runtime, "open", refuse, raising=False)
    assert runtime._numpy_openblas() is None


@pytest.mark.skipif(_numpy_openblas_file() is None or not os.path.exists("/proc/self/maps"),
                    reason="NumPy bundles no OpenBLAS here, or no /proc")
def test_the_real_maps_give_numpys_bundled_openblas():
    library = runtime._numpy_openblas()
    assert isinstance(library, ctypes.CDLL)
    assert pathlib.Path(library._name).resolve() == _numpy_openblas_file()
