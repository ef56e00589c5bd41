"""The matmul kernel (autograd/backend/matmul.py) against the plain formula y[i, j] =
sum_k a[i, k] b[k, j], written here as a loop over k: the outer product (inner dimension 1),
the GEMV (one row), the general case, batched and 1-D operands, transposed and strided views,
large results from the buffer cache; and the bias add (elementwise.py) against x + b."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from autograd.backend import buffer_cache, numpy_kernels


def reference(a, b):
    """The sum over k of a[:, k] b[k, :] as outer products (float64)."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    total = np.zeros((a.shape[0], b.shape[1]))
    for k in range(a.shape[1]):
        total += a[:, k][:, None] * b[k, :][None, :]
    return total


def _stored(array, how):
    """The same values as C order, a transposed (Fortran) view, or a strided view."""
    if how == "transposed":
        return np.ascontiguousarray(array.T).T
    if how == "strided":
        buffer = np.full((array.shape[0], 2 * array.shape[1]), np.nan, array.dtype)
        buffer[:, ::2] = array
        return buffer[:, ::2]
    return array


@given(rows=st.integers(1, 6), inner=st.integers(0, 5), columns=st.integers(1, 6),
       layouts=st.tuples(*[st.sampled_from(["c", "transposed", "strided"])] * 2),
       dtype=st.sampled_from([np.float32, np.float64]), seed=st.integers(0, 2 ** 16))
def test_matches_the_sum_of_outer_products(rows, inner, columns, layouts, dtype, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((rows, inner)).astype(dtype)
    b = rng.standard_normal((inner, columns)).astype(dtype)
    y = numpy_kernels.matmul(_stored(a, layouts[0]), _stored(b, layouts[1]))
    assert y.shape == (rows, columns) and y.dtype == dtype
    np.testing.assert_allclose(y, reference(a, b), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("rows, inner, columns", [(784, 1, 512), (1, 784, 512), (512, 1, 1),
                                                  (1, 1, 300000), (8, 784, 512)])
def test_small_batch_shapes_of_an_mlp_step(rows, inner, columns):
    """The weight gradient x^T dy of batch 1 (an outer product), the forward and dx of one row
    (GEMVs), results large enough to come from the buffer cache."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((rows, inner)).astype(np.float32)
    b = rng.standard_normal((inner, columns)).astype(np.float32)
    y = numpy_kernels.matmul(a, b)
    np.testing.assert_allclose(y, reference(a, b), rtol=1e-4, atol=1e-4)
    # a transposed operand, as MatMul's backward passes x^T and W^T
    y = numpy_kernels.matmul(np.ascontiguousarray(a.T).T, np.ascontiguousarray(b.T).T)
    np.testing.assert_allclose(y, reference(a, b), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("rows, inner, columns, asked, swapped", [
    (35, 1024, 256, True, True), (17, 512, 128, True, True), (48, 300, 100, True, True),
    (16, 1024, 256, False, False), (49, 1024, 256, False, False),
    (32, 64, 64, True, False)])           # 131,072 multiply-adds: under the minimum
def test_a_few_rows_times_a_transposed_matrix_swaps_the_roles_where_it_pays(
        rows, inner, columns, asked, swapped, dtype, monkeypatch):
    """a @ B^T at 17-48 rows (where the rule is asked) and 2^20 multiply-adds or more is
    computed as (B @ a^T)^T and copied into a C-order result (matmul.py's
    _transposed_is_faster): the same product, in C order; elsewhere, and for a b that is not a
    transposed matrix, the plain product. Called below the compiled products (which take up
    to 16 float32 rows by a transposed matrix first), so that every case reaches the rule."""
    from autograd.backend import matmul
    calls = []
    real = matmul._transposed_is_faster
    monkeypatch.setattr(matmul, "_transposed_is_faster",
                        lambda *operands: calls.append(real(*operands)) or calls[-1])
    rng = np.random.default_rng(rows)
    a = rng.standard_normal((rows, inner)).astype(dtype)
    weight = rng.standard_normal((columns, inner)).astype(dtype)      # b = weight^T
    tolerance = 1e-4 if dtype == np.float32 else 1e-10
    for b, answer in ((weight.T, swapped), (np.ascontiguousarray(weight.T), False)):
        calls.clear()
        y = matmul._blas_product_into(a, b, np.full((rows, columns), np.nan, dtype))
        assert y.flags.c_contiguous and y.dtype == dtype
        np.testing.assert_allclose(y, reference(a, weight.T), rtol=tolerance, atol=tolerance)
        assert calls == ([answer] if asked else [])
    calls.clear()
    y = numpy_kernels.matmul(a, weight.T)                # through matmul's whole choice
    np.testing.assert_allclose(y, reference(a, weight.T), rtol=tolerance, atol=tolerance)


def test_a_large_result_reuses_a_cached_buffer():
    a = np.ones((1024, 1), np.float32)
    b = np.ones((1, 1024), np.float32)
    address = numpy_kernels.matmul(a, b).ctypes.data          # dropped at once
    assert buffer_cache.kept_bytes() >= 1024 * 1024 * 4
    assert numpy_kernels.matmul(2 * a, b).ctypes.data == address


@pytest.mark.parametrize("a_shape, b_shape", [((2, 3, 4), (4, 5)), ((3,), (3, 2)),
                                              ((2, 3), (3,)), ((3,), (3,)),
                                              ((2, 1, 3, 1), (4, 1, 2))])
def test_other_shapes_follow_numpy(a_shape, b_shape):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal(a_shape), rng.standard_normal(b_shape)
    np.testing.assert_allclose(numpy_kernels.matmul(a, b), np.einsum(
        "...ij,...jk->...ik", np.atleast_2d(a), b if b.ndim > 1 else b[:, None]).reshape(
            np.matmul(a, b).shape), rtol=1e-12)


def test_mixed_dtypes_promote_as_numpy_does():
    a = np.ones((1, 3), np.float32)
    b = np.ones((3, 2), np.float64)
    assert numpy_kernels.matmul(a, b).dtype == np.float64


@pytest.mark.gpu
def test_gpu_kernel_matches_the_cpu_kernel():
    cupy = pytest.importorskip("cupy")
    from autograd.backend import kernels_for
    a, b = np.random.default_rng(2).standard_normal((2, 5, 1)), np.ones((1, 3))
    gpu = kernels_for(cupy.asarray(a))
    np.testing.assert_allclose(gpu.matmul(cupy.asarray(a[0]), cupy.asarray(b)).get(),
                               numpy_kernels.matmul(a[0], b), rtol=1e-12)


@pytest.mark.parametrize("shape, bias_shape", [((3, 4), (1, 4)), ((3, 4), (3, 1)),
                                               ((1200, 300), (1, 300)), ((600, 900), (600, 1))])
def test_add_broadcasts_a_bias_as_numpy_does(shape, bias_shape):
    """The add kernel (elementwise.py) against x + b, small and large (threaded, cached)."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shape).astype(np.float32)
    b = rng.standard_normal(bias_shape).astype(np.float32)
    for stored in (x, np.ascontiguousarray(x.T).T):
        np.testing.assert_array_equal(numpy_kernels.add(stored, b), x + b)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layouts", [("c", "c"), ("strided", "transposed"),
                                     ("transposed", "strided")])
def test_a_large_outer_product_is_each_product_rounded_once(dtype, layouts):
    """(m, 1) @ (1, n) over the size where BLAS's ger writes it: exactly a[i] * b[j], into a
    buffer that held other values before (the cache hands out dirty memory)."""
    rng = np.random.default_rng(7)
    a = rng.standard_normal((300, 1)).astype(dtype)
    b = rng.standard_normal((1, 400)).astype(dtype)
    for _ in range(2):
        dirty = numpy_kernels.matmul(np.full((300, 1), 3.0, dtype), np.ones((1, 400), dtype))
        del dirty
        y = numpy_kernels.matmul(_stored(a, layouts[0]), _stored(b, layouts[1]))
        assert y.shape == (300, 400) and y.dtype == dtype and y.flags.c_contiguous
        np.testing.assert_array_equal(y, a * b)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("c_shape", [(300,), (1, 300), (200, 1), (200, 300), ()])
@pytest.mark.parametrize("layouts", [("c", "c"), ("transposed", "strided")])
def test_matmul_add_is_the_product_plus_c(dtype, c_shape, layouts):
    """a @ b + c on the fused GEMM's sizes (and a dirty cached buffer) against float64."""
    rng = np.random.default_rng(11)
    a = rng.standard_normal((200, 70)).astype(dtype)
    b = rng.standard_normal((70, 300)).astype(dtype)
    c = rng.standard_normal(c_shape).astype(dtype)
    for _ in range(2):
        dirty = numpy_kernels.matmul(np.ones((200, 70), dtype), np.ones((70, 300), dtype))
        del dirty
        y = numpy_kernels.matmul_add(_stored(a, layouts[0]), _stored(b, layouts[1]), c)
        assert y.shape == (200, 300) and y.dtype == dtype
        expected = reference(a, b) + c.astype(np.float64)
        tolerance = 1e-5 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(y, expected, rtol=tolerance, atol=tolerance * 10)


@pytest.mark.parametrize("c_shape", [(1000,), (1, 1000), (1100, 1000)])
def test_matmul_add_fills_a_large_result_over_the_threads(c_shape, thread_count):
    """A result of 2^20 elements or more is filled with c by rows split over the threads (the
    dirty cached buffer must be overwritten everywhere), then the GEMM adds a @ b."""
    rng = np.random.default_rng(12)
    a = rng.standard_normal((1100, 3)).astype(np.float32)
    b = rng.standard_normal((3, 1000)).astype(np.float32)
    c = rng.standard_normal(c_shape).astype(np.float32)
    for _ in range(2):
        dirty = numpy_kernels.matmul(np.full((1100, 1), np.nan, np.float32),
                                     np.ones((1, 1000), np.float32))
        del dirty
        y = numpy_kernels.matmul_add(a, b, c)
        np.testing.assert_allclose(y, reference(a, b) + c, rtol=1e-5, atol=1e-5)


@given(rows=st.integers(1, 40), columns=st.integers(0, 9),
       dtype=st.sampled_from([np.float32, np.float64, np.float16]),
       layout=st.sampled_from(["c", "transposed", "strided"]), seed=st.integers(0, 2 ** 16))
def test_sum_rows_is_the_sum_over_rows(rows, columns, dtype, layout, seed):
    """sum_rows (a GEMV by ones for float32/float64) against a float64 loop over the rows."""
    x = np.random.default_rng(seed).standard_normal((rows, columns)).astype(dtype)
    got = numpy_kernels.sum_rows(_stored(x, layout))
    expected = np.zeros(columns)
    for row in x.astype(np.float64):
        expected += row
    assert got.shape == (columns,) and got.dtype == dtype
    tolerance = {np.float16: 1e-2, np.float32: 1e-5, np.float64: 1e-12}[dtype]
    np.testing.assert_allclose(got, expected, rtol=tolerance, atol=tolerance * rows)


def test_sum_rows_of_many_rows_after_a_short_call():
    """The cached vector of ones grows for a longer matrix (and is never written)."""
    short = numpy_kernels.sum_rows(np.ones((3, 2), np.float32))
    long = numpy_kernels.sum_rows(np.ones((5000, 2), np.float32))
    np.testing.assert_array_equal(short, [3, 3])
    np.testing.assert_array_equal(long, [5000, 5000])


def test_matmul_add_small_and_mixed_dtypes_take_the_plain_path():
    a, b = np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)
    np.testing.assert_array_equal(numpy_kernels.matmul_add(a, b, np.arange(4.0, dtype=np.float32)),
                                  3 + np.arange(4.0)[None, :].repeat(2, 0))


@pytest.mark.parametrize("rows, uses, copied", [(4, 16, True), (32, 35, True), (3, 35, False),
                                                (32, 15, False)])
def test_a_repeated_transposed_operand_is_copied_row_major_where_it_pays(rows, uses, copied):
    weights = np.random.default_rng(7).standard_normal((21, 10)).astype(np.float32)
    prepared = numpy_kernels.repeated_operand(weights.T, rows, uses)   # 21 columns: 8, 8, 5
    np.testing.assert_array_equal(prepared, weights.T)
    assert prepared.flags.c_contiguous is copied
    assert (prepared is weights.T.base or np.shares_memory(prepared, weights)) is not copied


def test_a_row_major_or_gpu_operand_is_left_as_it_is():
    weights = np.ones((10, 6), np.float32)
    assert numpy_kernels.repeated_operand(weights, 32, 35) is weights
    strided = np.ones((10, 12), np.float32)[:, ::2]
    assert numpy_kernels.repeated_operand(strided, 32, 35) is strided
