"""The compiled small products (autograd/backend/csrc/kernel_products.h and product_bindings.h,
through native.product and matmul.py's matmul) and the thread pool they split over
(thread_pool.h): c = a @ b against float64 NumPy for every instruction-set build this CPU runs,
over row counts on both sides of each band (8, 4, 2, 1), inner dimensions on both sides of the
short-inner path, a and b stored plainly, transposed or as strided slices, on one thread and
split over several; the pool after a fork and under two callers at once; when the kernels step
aside; the binding's errors."""
import os
import threading

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import autograd
from autograd.backend import matmul as backend_matmul, native
from tests.backend.native_helpers import close, draw, on_lines

pytestmark = pytest.mark.skipif(not native.available(),
                                reason="the compiled kernels are not built in this install")


def stored(rng, shape, layout):
    """float32 values of ``shape`` (native_helpers.draw: some exact zeros and tiny ones),
    stored C-ordered, transposed (F-ordered), or as every other row of a wider array."""
    if layout == "transposed":
        return np.asfortranarray(draw(rng, shape, 1.0, "plain"))
    return draw(rng, shape, 1.0, layout)


def expect_product(a, b, c):
    """c against a @ b in float64, within the error bound of summing the inner dimension one
    term at a time (k float32 epsilons of sum |a| |b|)."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    inner = a.shape[1]
    close(c, a64 @ b64, max(inner, 1) / 8 * (np.abs(a64) @ np.abs(b64)))


@settings(max_examples=60, deadline=None)
@given(rows=st.integers(1, 19), inner=st.one_of(st.integers(0, 12), st.integers(13, 90)),
       columns=st.one_of(st.integers(1, 40), st.integers(250, 300)),
       a_layout=st.sampled_from(["plain", "transposed", "strided"]),
       b_layout=st.sampled_from(["plain", "transposed", "strided"]),
       threads=st.sampled_from([1, 2, 3]), with_bias=st.booleans(),
       seed=st.integers(0, 2 ** 16))
def test_product_matches_numpy(instruction_set, rows, inner, columns, a_layout, b_layout,
                               threads, with_bias, seed):
    """Every band of rows, the one-row panel (256 columns) and its tail, the row-by-row path
    of short inner dimensions (up to 8), b transposed read as dot products; split over up to
    three threads with no size floor (min_work_per_thread=1); with a bias row added to every
    row of c by each path, or none."""
    rng = np.random.default_rng(seed)
    a = stored(rng, (rows, inner), a_layout)
    b = stored(rng, (inner, columns), b_layout)
    if b_layout == "transposed" and a_layout != "plain" and inner > 1:
        a = np.ascontiguousarray(a)          # the dot products read a's rows contiguously
    c = np.full((rows, columns), np.nan, np.float32)
    if not with_bias:
        native._native.product(a, b, c, threads, 1)
        expect_product(a, b, c)
        return
    bias = rng.standard_normal(columns).astype(np.float32)
    native._native.product(a, b, c, threads, 1, bias)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    bound = max(inner, 1) / 8 * (np.abs(a64) @ np.abs(b64)) + np.abs(bias) / 8
    close(c, a64 @ b64 + bias, bound)


@pytest.mark.parametrize("shape", [(1, 784, 512), (8, 784, 512), (784, 1, 512), (784, 8, 512),
                                   (5, 300, 70)])
def test_the_split_gives_the_bits_of_one_thread(shape):
    """Each column of c is summed by one thread in the same order, so the split changes no
    bit, whether it runs 2 or 5 ways (more threads than the pool had: it starts more)."""
    rows, inner, columns = shape
    rng = np.random.default_rng(1)
    a = rng.standard_normal((rows, inner)).astype(np.float32)
    b = rng.standard_normal((inner, columns)).astype(np.float32)
    results = []
    for threads in (1, 2, 5):
        for b_stored in (b, np.asfortranarray(b)):
            c = np.empty((rows, columns), np.float32)
            native._native.product(a, b_stored, c, threads, 1)
            results.append(c)
    expect_product(a, b, results[0])
    for c in results[2::2]:
        np.testing.assert_array_equal(c, results[0])
    for c in results[3::2]:
        np.testing.assert_array_equal(c, results[1])


def test_empty_products():
    """No rows or no columns write nothing; an empty inner dimension writes zeros."""
    c = np.full((3, 4), np.nan, np.float32)
    native._native.product(np.ones((3, 0), np.float32), np.ones((0, 4), np.float32), c, 2, 1)
    np.testing.assert_array_equal(c, 0)
    native._native.product(np.ones((0, 5), np.float32), np.ones((5, 4), np.float32),
                           np.empty((0, 4), np.float32), 2, 1)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_starts_its_own_workers():
    """The parent's workers do not exist in a child: a product there that splits must start
    new ones, not wait for ghosts (a hang, which the parent sees as a timeout)."""
    rng = np.random.default_rng(2)
    a = rng.standard_normal((8, 300)).astype(np.float32)
    b = rng.standard_normal((300, 512)).astype(np.float32)
    c = np.empty((8, 512), np.float32)
    native._native.product(a, b, c, 3, 1)             # the parent's pool is running
    read, write = os.pipe()
    child = os.fork()
    if child == 0:                                     # pragma: no cover (the child)
        try:
            mine = np.empty_like(c)
            native._native.product(a, b, mine, 3, 1)
            os.write(write, b"1" if np.array_equal(mine, c) else b"0")
        finally:
            os._exit(0)
    os.close(write)
    done = threading.Event()
    answer = []
    reader = threading.Thread(target=lambda: (answer.append(os.read(read, 1)), done.set()))
    reader.start()
    finished = done.wait(timeout=60)
    os.waitpid(child, 0) if finished else os.kill(child, 9)
    os.close(read)
    assert finished, "the child's product hung"
    assert answer == [b"1"]


def test_two_callers_at_once():
    """A second caller while the pool is busy runs its product alone; both are right."""
    rng = np.random.default_rng(4)
    a = rng.standard_normal((8, 512)).astype(np.float32)
    b = rng.standard_normal((512, 700)).astype(np.float32)
    want = np.empty((8, 700), np.float32)
    native._native.product(a, b, want, 1)
    failures = []

    def work():
        c = np.empty_like(want)
        for _ in range(50):
            native._native.product(a, b, c, 2, 1)
            if not np.array_equal(c, want):
                failures.append(c.copy())

    callers = [threading.Thread(target=work) for _ in range(3)]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join()
    assert not failures


@pytest.mark.parametrize("rows, inner, columns, used", [
    (1, 784, 512, True), (8, 784, 512, True), (32, 64, 32, True), (1, 256, 10, True),
    (784, 1, 512, True), (784, 8, 512, True),
    (33, 784, 512, False), (8, 64, 31, False), (784, 9, 512, False), (40, 8, 100, False),
    (16, 31, 512, False), (1, 16, 512, True)])
def test_where_the_compiled_products_take_over(rows, inner, columns, used):
    """native.product takes few rows by a wide b at least 32 tall (up to 32 rows, or 16 where b
    is a transposed matrix), one row by any b, and short inner dimensions with 4096 outputs or
    more (where they beat OpenBLAS: see its docstring); None elsewhere. (More rows by a b on
    cache lines: the tests below; b here is 16 bytes off its lines.)"""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((rows, inner)).astype(np.float32)
    b = on_lines(rng, (inner, columns), 16)
    c = np.full((rows, columns), np.nan, np.float32)
    transposed = np.asfortranarray(b)
    assert bool(native.product(a, transposed, c.copy())) is (used and (rows <= 16 or inner <= 8))
    assert bool(native.product(a, b, c)) is used
    if used:
        expect_product(a, b, c)
    else:
        assert np.isnan(c).all()


def test_they_step_aside_for_what_they_do_not_take():
    """float64, integer and CuPy-like operands, 3-D ones, a b strided both ways, negative
    strides, a non-contiguous out, and the kernels switched off: None, nothing written."""
    rng = np.random.default_rng(6)
    a = rng.standard_normal((2, 64)).astype(np.float32)
    b = rng.standard_normal((64, 48)).astype(np.float32)
    out = np.full((2, 48), np.nan, np.float32)
    wide = np.zeros((64, 96), np.float32)
    for operands in [(a.astype(np.float64), b.astype(np.float64), out.astype(np.float64)),
                     (a, b.astype(np.float64), out), (a.astype(np.int32), b, out),
                     (a[None], b, out), (a, wide[:, ::2], out), (a, b[::-1], out),
                     (a[:, ::-1], b, out), (a, np.asfortranarray(b)[:, ::-1], out),
                     (a, b, np.full((48, 2), np.nan, np.float32).T)]:
        assert native.product(*operands) is None
    assert np.isnan(out).all()
    previous = native.set_enabled(False)
    try:
        assert native.product(a, b, out) is None
    finally:
        native.set_enabled(previous)
    assert np.isnan(out).all()


@pytest.mark.parametrize("rows, inner, columns", [(1, 784, 512), (8, 512, 256), (784, 1, 512),
                                                  (3, 40, 100)])
def test_matmul_gives_numpys_product_either_way(rows, inner, columns):
    """backend matmul with the compiled products and without (the portable path), for a, for
    the transposes a weight gradient and an input gradient multiply by."""
    rng = np.random.default_rng(7)
    a = rng.standard_normal((rows, inner)).astype(np.float32)
    b = rng.standard_normal((inner, columns)).astype(np.float32)
    dy = rng.standard_normal((rows, columns)).astype(np.float32)
    cases = [(a, b), (a.T.copy().T, b), (dy, b.T), (a.T, dy)]
    for left, right in cases:
        compiled = backend_matmul.matmul(left, right)
        previous = native.set_enabled(False)
        try:
            portable = backend_matmul.matmul(left, right)
        finally:
            native.set_enabled(previous)
        expect_product(left, right, compiled)
        expect_product(left, right, portable)


def test_a_linear_layer_at_batch_one_learns_the_same(compiled_and_portable):
    """A batch-1 step of a two-layer MLP (forward GEMVs, outer-product weight gradients, dy
    W^T) gives the gradients of the float64 formulas, compiled or portable."""
    rng = np.random.default_rng(8)
    x_data = rng.standard_normal((1, 50)).astype(np.float32)
    w1 = rng.standard_normal((50, 64)).astype(np.float32) * 0.2
    w2 = rng.standard_normal((64, 40)).astype(np.float32) * 0.2
    x = autograd.Tensor(data=x_data, requires_grad=False)
    W1 = autograd.Tensor(data=w1, stores_grad=True)
    W2 = autograd.Tensor(data=w2, stores_grad=True)
    y = autograd.matmul(autograd.relu(autograd.matmul(x, W1)), W2)
    grads = {id(p): g.data for p, g in autograd.backward(autograd.sum(y))}
    h = x_data.astype(np.float64) @ w1
    dh = np.ones((1, 40)) @ w2.T.astype(np.float64) * (h > 0)
    np.testing.assert_allclose(grads[id(W2)], np.maximum(h, 0).T @ np.ones((1, 40)),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(grads[id(W1)], x_data.T.astype(np.float64) @ dh, rtol=1e-5,
                               atol=1e-5)


@pytest.mark.parametrize("operands, message", [
    (lambda: (np.ones((2, 3)), np.ones((3, 4), np.float32), np.ones((2, 4), np.float32)),
     "product: expected a as a 2-D float32 array"),
    (lambda: (np.ones((2, 3), np.float32), np.ones((5, 4), np.float32),
              np.ones((2, 4), np.float32)), r"product: cannot write \(2, 3\) @ \(5, 4\)"),
    (lambda: (np.ones((2, 3), np.float32), np.ones((3, 8), np.float32)[:, ::2],
              np.ones((2, 4), np.float32)), "product: expected b with contiguous rows or"),
    (lambda: (np.ones((2, 3), np.float32), np.ones((3, 4), np.float32),
              np.ones((4, 2), np.float32).T), "product: expected b with contiguous rows or"),
    (lambda: (np.ones((2, 3), np.float32), np.ones((3, 4), np.float32),
              np.ones((2, 4), np.float32)[::-1]), "product: expected c as a 2-D float32"),
])
def test_the_binding_refuses_what_it_cannot_read(operands, message):
    with pytest.raises(ValueError, match=message):
        native._native.product(*operands(), 2)


def test_the_binding_refuses_a_read_only_result_and_a_bad_work_floor():
    a, b = np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)
    c = np.ones((2, 4), np.float32)
    c.flags.writeable = False
    with pytest.raises(ValueError, match="product: c: "):
        native._native.product(a, b, c, 2)
    with pytest.raises(ValueError, match="product: expected a positive min_work_per_thread"):
        native._native.product(a, b, np.ones((2, 4), np.float32), 2, 0)


@pytest.fixture
def product_calls(monkeypatch):
    """The argument counts of the compiled product's calls (6: with a bias), the kernels on."""
    monkeypatch.setitem(native._state, "enabled", True)     # a module fixture may have it off
    calls = []
    real = native._native.product

    def recorded(*arguments):
        calls.append(len(arguments))
        return real(*arguments)
    monkeypatch.setattr(native._native, "product", recorded)
    return calls


@pytest.mark.parametrize("bias_shape", [(300,), (1, 300)])
@pytest.mark.parametrize("rows", [1, 5, 8])
def test_matmul_add_puts_a_bias_row_in_the_compiled_product(product_calls, rows, bias_shape):
    """A bias row (c of n values, 1-D or (1, n)) rides in the compiled product: one call, and
    the sum a @ b + c; a full matrix c is added after the product."""
    calls = product_calls
    rng = np.random.default_rng(rows)
    a = rng.standard_normal((rows, 64)).astype(np.float32)
    b = rng.standard_normal((64, 300)).astype(np.float32)
    c = rng.standard_normal(bias_shape).astype(np.float32)
    y = backend_matmul.matmul_add(a, b, c)
    assert calls == [6]                          # the bias passed to the kernel
    np.testing.assert_allclose(y, a.astype(np.float64) @ b + c, rtol=1e-5, atol=1e-4)
    full = rng.standard_normal((rows, 300)).astype(np.float32)
    calls.clear()
    np.testing.assert_allclose(backend_matmul.matmul_add(a, b, full),
                               a.astype(np.float64) @ b + full, rtol=1e-5, atol=1e-4)
    assert calls == ([6] if rows == 1 else [4])     # one row of c is a bias row


def test_the_binding_refuses_a_bias_of_the_wrong_length():
    a, b = np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)
    c = np.zeros((2, 4), np.float32)
    with pytest.raises(ValueError, match="product: expected bias of 4 elements, got 3"):
        native._native.product(a, b, c, 1, 1, np.ones(3, np.float32))
    assert not c.any()


@pytest.mark.parametrize("rows, inner, columns, fits", [
    (33, 256, 1024, True), (32, 256, 1024, False), (280, 256, 10000, True),
    (35, 32, 1024, True), (35, 31, 1024, False), (35, 1024, 1024, True),
    (35, 1025, 1024, False), (35, 256, 64, True), (35, 256, 63, False),
    (4095, 256, 1024, True), (4096, 256, 1024, False)])     # the work: 4096 * 2^18 = 2^30
def test_the_many_rows_rule(rows, inner, columns, fits):
    assert native.many_rows_fit(rows, inner, columns) is fits


@pytest.mark.parametrize("offset, layout, taken", [
    (0, "plain", True), (16, "plain", False), (32, "plain", False),
    (0, "transposed", False), (0, "narrow rows", False)])
def test_many_rows_need_b_on_cache_lines(monkeypatch, offset, layout, taken):
    """Many rows by a wide b whose rows start on 64-byte lines: taken, within float32 of the
    definition; b off its lines, transposed, or with rows a line apart plus 4 bytes: None,
    nothing written (OpenBLAS's)."""
    monkeypatch.setitem(native._state, "enabled", True)     # a module fixture may have it off
    rng = np.random.default_rng(9)
    a = on_lines(rng, (40, 64))
    b = on_lines(rng, (64, 1024), offset)
    if layout == "transposed":
        b = np.asfortranarray(b)
    elif layout == "narrow rows":
        b = on_lines(rng, (64, 1025))[:, :1024]
    c = np.full((40, 1024), np.nan, np.float32)
    assert native.takes_many_rows(a, b) is taken
    assert bool(native.product(a, b, c)) is taken
    if taken:
        expect_product(a, b, c)
    else:
        assert np.isnan(c).all()


@pytest.mark.parametrize("rows, inner, columns, a_layout", [
    (40, 64, 1040, "plain"), (123, 200, 1040, "plain"), (77, 96, 1040, "transposed"),
    (40, 64, 80, "plain"), (123, 200, 300, "plain"), (77, 96, 592, "transposed")])
def test_many_rows_give_the_same_bits_on_any_thread_count(instruction_set, rows, inner,
                                                          columns, a_layout):
    """Bands of 8 rows, then 4, 2, 1 (123 = 15 x 8 + 2 + 1), a read as stored or transposed
    (a weight gradient's x^T), with and without a bias row; c split by columns (b 1,024 wide
    or more) or by blocks of 32 rows (the last one partial) and panels of 256 columns: each
    value is summed in the one order, so 1, 2 and 3 threads give the same bits, within
    float32 of the sums."""
    rng = np.random.default_rng(rows + columns)
    a = on_lines(rng, (rows, inner))
    if a_layout == "transposed":
        a = np.asfortranarray(a)
    b = on_lines(rng, (inner, columns))
    bias = rng.standard_normal(columns).astype(np.float32)
    for extra in ((), (bias,)):
        results = []
        for threads in (1, 2, 3):
            c = np.full((rows, columns), np.nan, np.float32)
            native._native.product(a, b, c, threads, 1, *extra)
            results.append(c)
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        want = a64 @ b64 + (bias if extra else 0)
        close(results[0], want, inner / 8 * (np.abs(a64) @ np.abs(b64)) + np.abs(want) / 8)
        for c in results[1:]:
            np.testing.assert_array_equal(c, results[0])


def test_matmul_add_and_its_plan_take_many_rows_by_a_wide_weight(product_calls):
    """A bias row and many rows by a weight on its lines: one compiled product with the bias
    (not the fused GEMM), in eager calls and in the forward plan; a weight off its lines goes
    to the GEMM."""
    from autograd.backend import forward_plans
    calls = product_calls
    rng = np.random.default_rng(11)
    a = on_lines(rng, (70, 64))
    b = on_lines(rng, (64, 1024))
    c = rng.standard_normal(1024).astype(np.float32)
    want = a.astype(np.float64) @ b + c
    np.testing.assert_allclose(backend_matmul.matmul_add(a, b, c), want, rtol=1e-5, atol=1e-4)
    assert calls == [4 + 2]
    plan = forward_plans.matmul_add_plan(a, b, c)
    calls.clear()
    np.testing.assert_allclose(plan(a, b, c), want, rtol=1e-5, atol=1e-4)
    assert calls == [6]
    calls.clear()
    off = on_lines(rng, (64, 1024), 16)
    assert forward_plans.matmul_add_plan(a, off, c) is None
    np.testing.assert_allclose(backend_matmul.matmul_add(a, off, c),
                               a.astype(np.float64) @ off + c, rtol=1e-5, atol=1e-4)
    assert calls == []
