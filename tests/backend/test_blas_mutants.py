"""Where the backend's mutation run found autograd/backend/blas.py's tests blind
(docs/testing.md): which library is found and loaded (NumPy's bundled OpenBLAS, checked against
the file found here on disk), the kind it reports, the load done once, SciPy missing, and
SciPy's wrappers handing back a copy instead of writing in place. Values against NumPy formulas."""
import ctypes
import glob
import io
import os
import sys

import numpy as np
import pytest

from autograd.backend import blas


def _bundled_openblas():
    """The OpenBLAS file NumPy's wheel ships (numpy.libs/ or numpy/.libs/) that exports the
    64-bit CBLAS names blas.py calls, found on disk here; None where NumPy has none."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(np.__file__)))
    for folder in ("numpy.libs", os.path.join("numpy", ".libs")):
        for path in sorted(glob.glob(os.path.join(root, folder, "*openblas*.so*"))):
            library = ctypes.CDLL(path)
            if all(hasattr(library, f"scipy_cblas_{p}{n}64_") for p in "sd"
                   for n in ("axpy", "gemm")):
                return path
    return None


BUNDLED = _bundled_openblas()
needs_bundled = pytest.mark.skipif(BUNDLED is None, reason="NumPy bundles no OpenBLAS here")


@pytest.fixture
def unloaded(monkeypatch):
    """blas.py as before its first call; the suite's own routines put back afterwards."""
    monkeypatch.setattr(blas, "_routines", None)
    yield
    monkeypatch.setattr(blas, "_routines", None)


def _fake_maps(monkeypatch, paths):
    """/proc/self/maps as blas.py reads it, listing these files (one mapping each)."""
    text = "".join(f"7f{k:04x}000-7f{k:04x}fff r-xp 00000000 08:01 {1000 + k}    {path}\n"
                   for k, path in enumerate(paths))

    def fake_open(name, *args, **kwargs):
        assert name == "/proc/self/maps"
        return io.StringIO(text)
    monkeypatch.setattr(blas, "open", fake_open, raising=False)


@needs_bundled
def test_the_library_found_is_the_openblas_numpy_bundles():
    """Kills the mutants of _numpy_openblas's maps filter, numpy-root test and symbol check
    (each falls back to no library, so SciPy's BLAS would serve every call)."""
    library = blas._numpy_openblas()
    assert library is not None and os.path.samefile(library._name, BUNDLED)


@needs_bundled
def test_other_openblas_files_and_ones_that_fail_to_load_are_skipped(monkeypatch):
    """An OpenBLAS outside NumPy's folders is passed over (``continue``, not ``break``), and so
    is a file in NumPy's folder that cannot be loaded; the next one is still found."""
    numpy_libs = os.path.dirname(BUNDLED)
    _fake_maps(monkeypatch, ["/aaa/site-packages/scipy.libs/libscipy_openblas-0.so",
                             os.path.join(numpy_libs, "libaaa_openblas_not_there.so"),
                             BUNDLED])
    library = blas._numpy_openblas()
    assert library is not None and os.path.samefile(library._name, BUNDLED)
    _fake_maps(monkeypatch, ["/aaa/lib/libopenblas.so"])          # none of NumPy's
    assert blas._numpy_openblas() is None


def test_unreadable_maps_mean_no_library(monkeypatch):
    def failing_open(name, *args, **kwargs):
        raise OSError("no /proc here")
    monkeypatch.setattr(blas, "open", failing_open, raising=False)
    assert blas._numpy_openblas() is None


@needs_bundled
def test_numpys_openblas_serves_the_routines_and_says_so(unloaded):
    """library_kind() is "numpy" and the routines are the bundled library's own functions."""
    assert blas.library_kind() == "numpy"
    bundled = ctypes.CDLL(BUNDLED)
    for prefix, dtype in (("s", np.float32), ("d", np.float64)):
        for name in ("axpy", "gemm"):
            called = ctypes.cast(blas._routines[name, np.dtype(dtype)], ctypes.c_void_p)
            own = ctypes.cast(getattr(bundled, f"scipy_cblas_{prefix}{name}64_"),
                              ctypes.c_void_p)
            assert called.value == own.value


def test_scipy_alone_says_scipy(unloaded, monkeypatch):
    """Kills ``routines["kind"] = None`` / another string in _load's SciPy branch."""
    pytest.importorskip("scipy")
    monkeypatch.setattr(blas, "_numpy_openblas", lambda: None)
    assert blas.library_kind() == "scipy"


def test_the_libraries_are_looked_up_once(unloaded, monkeypatch):
    """_load keeps what it found (``_routines``) and library_kind() reuses it: one search of
    the process's libraries, however many calls follow."""
    found = blas._numpy_openblas
    calls = []

    def counted():
        calls.append(1)
        return found()
    monkeypatch.setattr(blas, "_numpy_openblas", counted)
    first = blas.library_kind()
    for _ in range(3):
        assert blas.library_kind() == first
        y = np.ones(300)
        assert blas.axpy(2.0, np.ones(300), y) == (first is not None)
    assert len(calls) == 1


@needs_bundled
@pytest.mark.parametrize("size", [30, 300, 9000])        # below and above blas._SMALL
def test_without_scipy_numpys_openblas_serves_every_size(unloaded, monkeypatch, size):
    """SciPy not importable: no small-axpy routine, every axpy by NumPy's OpenBLAS, right."""
    monkeypatch.setitem(sys.modules, "scipy.linalg", None)        # import fails
    assert blas.library_kind() == "numpy"
    rng = np.random.default_rng(size)
    x, y0 = rng.standard_normal(size), rng.standard_normal(size)
    y = y0.copy()
    assert blas.axpy(-1.5, x, y)
    np.testing.assert_allclose(y, y0 - 1.5 * x, rtol=1e-13, atol=1e-13)


def test_with_neither_library_every_routine_declines(unloaded, monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy.linalg", None)
    monkeypatch.setattr(blas, "_numpy_openblas", lambda: None)
    assert blas.library_kind() is None
    y, c = np.ones(300), np.ones((3, 4))
    assert not blas.axpy(1.0, np.ones(300), y)
    assert not blas.gemm(np.ones((3, 2)), np.ones((2, 4)), c)
    assert not blas.gemm(np.ones((3, 2)), np.ones((2, 4)), c, beta=0.0)
    assert (y == 1).all() and (c == 1).all()


@pytest.fixture(params=["numpy", "scipy"])
def either_library(request, unloaded, monkeypatch):
    if request.param == "numpy" and BUNDLED is None:
        pytest.skip("NumPy bundles no OpenBLAS here")
    if request.param == "scipy":
        pytest.importorskip("scipy")
        monkeypatch.setattr(blas, "_numpy_openblas", lambda: None)
    return request.param


def _returning_copies(monkeypatch, name, flag):
    """SciPy's routine ``name`` for both dtypes, wrapped to hand back a new array (as SciPy
    does where it cannot write in place) instead of writing its argument."""
    routines = blas._routines if blas._routines is not None else blas._load()
    for dtype in (np.dtype(np.float32), np.dtype(np.float64)):
        original = routines[name, dtype]

        def copying(*args, _original=original, **kwargs):
            kwargs[flag] = 0
            return _original(*args, **kwargs)
        monkeypatch.setitem(routines, (name, dtype), copying)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_scipy_gemm_handing_back_a_copy_is_copied_into_c(unloaded, monkeypatch, dtype):
    pytest.importorskip("scipy")
    monkeypatch.setattr(blas, "_numpy_openblas", lambda: None)
    _returning_copies(monkeypatch, "gemm", "overwrite_c")
    rng = np.random.default_rng(7)
    a = rng.standard_normal((13, 9)).astype(dtype)
    b = rng.standard_normal((9, 11)).astype(dtype)
    c0 = rng.standard_normal((13, 11)).astype(dtype)
    c = c0.copy()
    assert blas.gemm(a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b + c0, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("m, k, n", [(5, 1, 7), (5, 3, 1), (1, 3, 4), (6, 2, 1), (1, 1, 1),
                                     (4, 0, 3)])
@pytest.mark.parametrize("layout", ["c", "f"])
def test_gemm_of_degenerate_shapes(either_library, m, k, n, layout):
    """A row or column of length 1 gives a leading dimension of 1 (and k = 0 one of 0, which
    BLAS must get as 1): c = a @ b + c all the same."""
    rng = np.random.default_rng(m * 100 + k * 10 + n)
    a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    if layout == "f":
        a, b = np.asfortranarray(a), np.asfortranarray(b)
    c0 = rng.standard_normal((m, n))
    c = c0.copy()
    assert blas.gemm(a, b, c)
    np.testing.assert_allclose(c, a @ b + c0, rtol=1e-13, atol=1e-13)
