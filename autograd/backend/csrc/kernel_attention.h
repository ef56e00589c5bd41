/* Scaled dot-product attention, forward and backward, one (batch, head) at a time: the small
 * products, the softmax and its backward for one head stay in the core's caches, where NumPy
 * made one pass over every head per step (nine in all, six of them batched GEMMs of a few
 * hundred microseconds each, on one thread).
 * (part of kernels.h: included once per instruction set, with KERNEL naming the functions) */

/* The register tile of the small products: TILE_ROWS rows of c, TILE_COLUMNS wide, summed in
 * registers over the whole inner dimension (the widths keep the tile in the vector registers
 * the instruction set has: 16 of 16 floats for AVX-512, 16 of 8 for AVX2, 16 of 4 for SSE). */
#ifndef TILE_ROWS
#error "dispatch.h defines TILE_ROWS for each instruction set"
#endif
#define TILE_COLUMNS 32

/* c = alpha a b for one full tile: a (TILE_ROWS, k) with row stride lda, b (k, TILE_COLUMNS)
 * with row stride ldb. */
static inline void KERNEL(product_tile)(
    Py_ssize_t k, const float *restrict a, Py_ssize_t lda, const float *restrict b,
    Py_ssize_t ldb, float *restrict c, Py_ssize_t ldc, float alpha)
{
    float sum[TILE_ROWS][TILE_COLUMNS];
    for (int r = 0; r < TILE_ROWS; r++)
        for (int j = 0; j < TILE_COLUMNS; j++)
            sum[r][j] = 0.0f;
    for (Py_ssize_t p = 0; p < k; p++) {
        const float *restrict row = b + p * ldb;
        for (int r = 0; r < TILE_ROWS; r++) {
            float x = a[r * lda + p];
            for (int j = 0; j < TILE_COLUMNS; j++)
                sum[r][j] += x * row[j];
        }
    }
    for (int r = 0; r < TILE_ROWS; r++)
        for (int j = 0; j < TILE_COLUMNS; j++)
            c[r * ldc + j] = alpha * sum[r][j];
}

/* One row of c = alpha a b where the tiles do not reach: c (width) from a's row (k). */
static inline void KERNEL(product_row)(
    Py_ssize_t width, Py_ssize_t k, const float *restrict a, const float *restrict b,
    Py_ssize_t ldb, float *restrict c, float alpha)
{
    for (Py_ssize_t j = 0; j < width; j++)
        c[j] = 0.0f;
    for (Py_ssize_t p = 0; p < k; p++) {
        float x = alpha * a[p];
        const float *restrict row = b + p * ldb;
        for (Py_ssize_t j = 0; j < width; j++)
            c[j] += x * row[j];
    }
}

/* c (m, n) = alpha a (m, k) b (k, n), every operand row-major with its own row stride. */
static void KERNEL(small_product)(
    Py_ssize_t m, Py_ssize_t n, Py_ssize_t k, const float *a, Py_ssize_t lda, const float *b,
    Py_ssize_t ldb, float *c, Py_ssize_t ldc, float alpha)
{
    Py_ssize_t tiled_rows = m - m % TILE_ROWS, tiled_columns = n - n % TILE_COLUMNS;
    for (Py_ssize_t i = 0; i < tiled_rows; i += TILE_ROWS)
        for (Py_ssize_t j = 0; j < tiled_columns; j += TILE_COLUMNS)
            KERNEL(product_tile)(k, a + i * lda, lda, b + j, ldb, c + i * ldc + j, ldc, alpha);
    for (Py_ssize_t i = 0; i < m; i++) {
        Py_ssize_t from = i < tiled_rows ? tiled_columns : 0;
        if (from < n)
            KERNEL(product_row)(n - from, k, a + i * lda, b + from, ldb, c + i * ldc + from,
                                alpha);
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
    KERNEL(small_product)(queries, keys, depth, q.data, q.stride, scratch, keys, p, keys, scale);
    KERNEL(attention_softmax)(queries, keys, (Rows){p, keys}, queries, causal);
    KERNEL(small_product)(queries, value_depth, keys, p, keys, v.data, v.stride, y.data,
                          y.stride, 1.0f);
}

/* One head of the backward: dv = p^T dy; dS = p * (dy v^T - rowsum(dy * y)); dq = dS k scale;
 * dk = dS^T q scale. scratch holds 2 Tq Tk + Dv Tk floats. */
static void KERNEL(attention_head_backward)(
    Py_ssize_t queries, Py_ssize_t keys, Py_ssize_t depth, Py_ssize_t value_depth,
    Rows q, Rows k, Rows v, const float *p, Rows y, Rows dy, Rows dq, Rows dk, Rows dv,
    float scale, float *scratch)
{
    float *transposed = scratch;                          /* (Tk, Tq): p^T, then dS^T */
    float *ds = scratch + queries * keys;                 /* (Tq, Tk) */
    float *v_transposed = ds + queries * keys;            /* (Dv, Tk) */
    KERNEL(transpose)(queries, keys, p, keys, transposed);
    KERNEL(small_product)(keys, value_depth, queries, transposed, queries, dy.data, dy.stride,
                          dv.data, dv.stride, 1.0f);
    KERNEL(transpose)(keys, value_depth, v.data, v.stride, v_transposed);
    KERNEL(small_product)(queries, keys, value_depth, dy.data, dy.stride, v_transposed, keys,
                          ds, keys, 1.0f);
    for (Py_ssize_t i = 0; i < queries; i++) {
        const float *restrict dy_row = ROW(dy, i), *restrict y_row = ROW(y, i);
        float partial[LANES] = {0.0f};
        Py_ssize_t j = 0;
        for (; j + LANES <= value_depth; j += LANES)
            for (int l = 0; l < LANES; l++)
                partial[l] += dy_row[j + l] * y_row[j + l];
        float total = KERNEL(sum_of_lanes)(partial);
        for (; j < value_depth; j++)
            total += dy_row[j] * y_row[j];
        float *restrict ds_row = ds + i * keys;
        const float *restrict p_row = p + i * keys;
        for (j = 0; j < keys; j++)
            ds_row[j] = p_row[j] * (ds_row[j] - total);
    }
    KERNEL(small_product)(queries, depth, keys, ds, keys, k.data, k.stride, dq.data, dq.stride,
                          scale);
    KERNEL(transpose)(queries, keys, ds, keys, transposed);
    KERNEL(small_product)(keys, depth, queries, transposed, queries, q.data, q.stride, dk.data,
                          dk.stride, scale);
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
    Heads dk, Heads dv, float scale, float *scratch)
{
    for (Py_ssize_t h = start; h < stop; h++)
        KERNEL(attention_head_backward)(queries, keys, depth, value_depth, HEAD_ROWS(q, h),
                                        HEAD_ROWS(k, h), HEAD_ROWS(v, h), HEAD(p, h),
                                        HEAD_ROWS(y, h), HEAD_ROWS(dy, h), HEAD_ROWS(dq, h),
                                        HEAD_ROWS(dk, h), HEAD_ROWS(dv, h), scale, scratch);
}
