/* Scaled dot-product attention, forward and backward, one (batch, head) at a time: the small
 * products, the softmax and its backward for one head stay in the core's caches, where NumPy
 * made one pass over every head per step (nine in all, six of them batched GEMMs of a few
 * hundred microseconds each, on one thread).
 * (part of kernels.h: included once per instruction set, with KERNEL naming the functions) */

/* The register tile of the small products: TILE_ROWS rows of c, TILE_COLUMNS wide, summed in
 * registers over the whole inner dimension. The sizes keep the tile and a row of b in the
 * vector registers the instruction set has: 8 rows of 32 floats are 16 of AVX-512's 32
 * registers, 2 rows 8 of AVX2's 16, 1 row 8 of SSE's 16 (dispatch.h). */
#ifndef TILE_ROWS
#error "dispatch.h defines TILE_ROWS for each instruction set"
#endif
#define TILE_COLUMNS 32

/* c = alpha a b for one full tile: a (TILE_ROWS, k), b (k, TILE_COLUMNS) with row stride
 * ldb. */
static inline void KERNEL(product_tile)(
    Py_ssize_t k, const float *restrict a, Py_ssize_t a_row, Py_ssize_t a_column,
    const float *restrict b, Py_ssize_t ldb, float *restrict c, Py_ssize_t ldc, float alpha)
{
    float sum[TILE_ROWS][TILE_COLUMNS];
    for (int r = 0; r < TILE_ROWS; r++)
        for (int j = 0; j < TILE_COLUMNS; j++)
            sum[r][j] = 0.0f;
    for (Py_ssize_t p = 0; p < k; p++) {
        const float *restrict row = b + p * ldb;
        for (int r = 0; r < TILE_ROWS; r++) {
            float x = a[r * a_row + p * a_column];
            for (int j = 0; j < TILE_COLUMNS; j++)
                sum[r][j] += x * row[j];
        }
    }
    for (int r = 0; r < TILE_ROWS; r++)
        for (int j = 0; j < TILE_COLUMNS; j++)
            c[r * ldc + j] = alpha * sum[r][j];
}

/* One row of c = alpha a b where the tiles do not reach: c (width) from a's row (k elements,
 * a_column apart). */
static inline void KERNEL(product_row)(
    Py_ssize_t width, Py_ssize_t k, const float *restrict a, Py_ssize_t a_column,
    const float *restrict b, Py_ssize_t ldb, float *restrict c, float alpha)
{
    for (Py_ssize_t j = 0; j < width; j++)
        c[j] = 0.0f;
    for (Py_ssize_t p = 0; p < k; p++) {
        float x = alpha * a[p * a_column];
        const float *restrict row = b + p * ldb;
        for (Py_ssize_t j = 0; j < width; j++)
            c[j] += x * row[j];
    }
}

/* c (m, n) = alpha a (m, k) b (k, n), b and c row-major with their row strides, less what
 * `triangle` (_native.c) lets it skip; with C_LOWER the entries of c past the wanted ones
 * (beyond whole tiles) are left as they were. */
static void KERNEL(small_product)(
    Py_ssize_t m, Py_ssize_t n, Py_ssize_t k, Left a, const float *b, Py_ssize_t ldb, float *c,
    Py_ssize_t ldc, float alpha, int triangle)
{
    Py_ssize_t tiled_rows = m - m % TILE_ROWS;
    for (Py_ssize_t i = 0; i < m; i++) {
        int tiled = i % TILE_ROWS == 0 && i < tiled_rows;
        Py_ssize_t last = tiled ? i + TILE_ROWS - 1 : i;        /* the rows done together */
        Py_ssize_t start = triangle == A_UPPER ? (i < k ? i : k) : 0;
        Py_ssize_t stop = triangle == A_LOWER && last + 1 < k ? last + 1 : k;
        Py_ssize_t columns = n;
        if (triangle == C_LOWER) {           /* whole tiles: a narrower one runs row by row */
            Py_ssize_t wanted = (last + TILE_COLUMNS) / TILE_COLUMNS * TILE_COLUMNS;
            columns = wanted < n ? wanted : n;
        }
        const float *a_start = a.data + i * a.row + start * a.column, *b_start = b + start * ldb;
        Py_ssize_t from = 0;
        if (tiled) {
            for (; from + TILE_COLUMNS <= columns; from += TILE_COLUMNS)
                KERNEL(product_tile)(stop - start, a_start, a.row, a.column, b_start + from, ldb,
                                     c + i * ldc + from, ldc, alpha);
            for (Py_ssize_t r = 0; r < TILE_ROWS && from < columns; r++)
                KERNEL(product_row)(columns - from, stop - start, a_start + r * a.row, a.column,
                                    b_start + from, ldb, c + (i + r) * ldc + from, alpha);
            i = last;
        } else
            KERNEL(product_row)(columns, stop - start, a_start, a.column, b_start, ldb,
                                c + i * ldc, alpha);
    }
}

/* t (columns, rows) = x (rows, columns) transposed; t is contiguous. */
static void KERNEL(transpose)(Py_ssize_t rows, Py_ssize_t columns, const float *x,
                              Py_ssize_t ldx, float *restrict t)
{
    for (Py_ssize_t i = 0; i < rows; i++)
        for (Py_ssize_t j = 0; j < columns; j++)
            t[j * rows + i] = x[i * ldx + j];
}

/* One head of the forward (see backend/attention.py, fused_forward): p (Tq, Tk) = softmax(q
 * k^T scale) over the keys (with `causal` the keys after each query masked), y (Tq, Dv) = p v.
 * scratch holds D * Tk floats. */
static void KERNEL(attention_head_forward)(
    Py_ssize_t queries, Py_ssize_t keys, Py_ssize_t depth, Py_ssize_t value_depth,
    Rows q, Rows k, Rows v, float *p, Rows y, float scale, int causal, float *scratch)
{
    KERNEL(transpose)(keys, depth, k.data, k.stride, scratch);
    KERNEL(small_product)(queries, keys, depth, (Left){q.data, q.stride, 1}, scratch, keys, p,
                          keys, scale, causal ? C_LOWER : FULL);
    KERNEL(attention_softmax)(queries, keys, (Rows){p, keys}, queries, causal);
    KERNEL(small_product)(queries, value_depth, keys, (Left){p, keys, 1}, v.data, v.stride,
                          y.data, y.stride, 1.0f, causal ? A_LOWER : FULL);
}

/* One head of the backward: dv = p^T dy; dS = p * (dy v^T - rowsum(dy * y)); dq = dS k scale;
 * dk = dS^T q scale (with `causal`, p and dS are 0 past each query's keys, and the products
 * skip those). p^T and dS^T are read in place; scratch holds Tq Tk + Dv Tk floats. */
static void KERNEL(attention_head_backward)(
    Py_ssize_t queries, Py_ssize_t keys, Py_ssize_t depth, Py_ssize_t value_depth,
    Rows q, Rows k, Rows v, const float *p, Rows y, Rows dy, Rows dq, Rows dk, Rows dv,
    float scale, int causal, float *scratch)
{
    float *ds = scratch;                                  /* (Tq, Tk) */
    float *v_transposed = ds + queries * keys;            /* (Dv, Tk) */
    KERNEL(small_product)(keys, value_depth, queries, (Left){p, 1, keys}, dy.data, dy.stride,
                          dv.data, dv.stride, 1.0f, causal ? A_UPPER : FULL);
    KERNEL(transpose)(keys, value_depth, v.data, v.stride, v_transposed);
    KERNEL(small_product)(queries, keys, value_depth, (Left){dy.data, dy.stride, 1},
                          v_transposed, keys, ds, keys, 1.0f, causal ? C_LOWER : FULL);
    for (Py_ssize_t i = 0; i < queries; i++) {
        float total = KERNEL(row_dot)(value_depth, ROW(dy, i), ROW(y, i));
        float *restrict ds_row = ds + i * keys;
        const float *restrict p_row = p + i * keys;
        Py_ssize_t kept = causal && i + 1 < keys ? i + 1 : keys;
        Py_ssize_t j = 0;
        for (; j < kept; j++)
            ds_row[j] = p_row[j] * (ds_row[j] - total);
        for (; j < keys; j++)
            ds_row[j] = 0.0f;
    }
    KERNEL(small_product)(queries, depth, keys, (Left){ds, keys, 1}, k.data, k.stride, dq.data,
                          dq.stride, scale, causal ? A_LOWER : FULL);
    KERNEL(small_product)(keys, depth, queries, (Left){ds, 1, keys}, q.data, q.stride, dk.data,
                          dk.stride, scale, causal ? A_UPPER : FULL);
}

/* Heads [start, stop) of (batch, heads) arrays: head h of operand x begins at
 * HEAD(x, h) and its rows are x.row_stride apart. */
static void KERNEL(attention_forward)(
    Py_ssize_t start, Py_ssize_t stop, Py_ssize_t queries, Py_ssize_t keys, Py_ssize_t depth,
    Py_ssize_t value_depth, Heads q, Heads k, Heads v, Heads p, Heads y, float scale,
    int causal, float *scratch)
{
    for (Py_ssize_t h = start; h < stop; h++)
        KERNEL(attention_head_forward)(queries, keys, depth, value_depth, HEAD_ROWS(q, h),
                                       HEAD_ROWS(k, h), HEAD_ROWS(v, h), HEAD(p, h),
                                       HEAD_ROWS(y, h), scale, causal, scratch);
}

static void KERNEL(attention_backward)(
    Py_ssize_t start, Py_ssize_t stop, Py_ssize_t queries, Py_ssize_t keys, Py_ssize_t depth,
    Py_ssize_t value_depth, Heads q, Heads k, Heads v, Heads p, Heads y, Heads dy, Heads dq,
    Heads dk, Heads dv, float scale, int causal, float *scratch)
{
    for (Py_ssize_t h = start; h < stop; h++)
        KERNEL(attention_head_backward)(queries, keys, depth, value_depth, HEAD_ROWS(q, h),
                                        HEAD_ROWS(k, h), HEAD_ROWS(v, h), HEAD(p, h),
                                        HEAD_ROWS(y, h), HEAD_ROWS(dy, h), HEAD_ROWS(dq, h),
                                        HEAD_ROWS(dk, h), HEAD_ROWS(dv, h), scale, causal,
                                        scratch);
}
