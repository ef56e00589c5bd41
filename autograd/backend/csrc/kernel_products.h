/* Small matrix products: a few rows times a matrix (a batch of 1 or 8 through a linear layer),
 * an outer product (its weight gradient), and the products of one attention head. Each is a
 * register tile that sums over the whole inner dimension, with no packing of b: OpenBLAS packs
 * all of b (a 1.6 MB weight) before it multiplies 1 or 8 rows by it, and that copy is most of
 * such a product's time. The product of a few rows by a transposed matrix (a layer's input
 * gradient dy W^T) reads W's rows in place as dot products.
 * (part of kernels.h: included once per instruction set, with KERNEL naming the functions) */

/* The register tile of the small products: TILE_ROWS rows of c, TILE_COLUMNS wide, summed in
 * registers over the whole inner dimension. The sizes keep the tile and a row of b in the
 * vector registers the instruction set has: 8 rows of 32 floats are 16 of AVX-512's 32
 * registers, 2 rows 8 of AVX2's 16, 1 row 8 of SSE's 16 (dispatch.h). */
#ifndef TILE_ROWS
#error "dispatch.h defines TILE_ROWS for each instruction set"
#endif
#define TILE_COLUMNS 32

/* c = alpha a b (+ bias, TILE_COLUMNS values for every row; NULL: none) for one tile of
 * `rows` rows (at most TILE_ROWS; a constant where it is inlined, so that the sums stay in
 * registers): a (rows, k), b (k, TILE_COLUMNS) with row stride ldb. The bias is added where
 * the sums are stored, by the thread that wrote them: as a pass of its own after a product
 * split over threads, it read every line back from the other core's cache. Always inlined, it
 * and product_band: as a function of its own, GCC compiled one loop over any `rows`, testing
 * the row count inside the inner loop ((32, 256) @ (256, 1024) on one core: 192 us, 157
 * inlined, b on a cache line). */
static ALWAYS_INLINE void KERNEL(product_tile_of)(
    const int rows, Py_ssize_t k, const float *restrict a, Py_ssize_t a_row,
    Py_ssize_t a_column, const float *restrict b, Py_ssize_t ldb, float *restrict c,
    Py_ssize_t ldc, float alpha, const float *restrict bias)
{
    float sum[TILE_ROWS][TILE_COLUMNS];
    for (int r = 0; r < rows; r++)
        for (int j = 0; j < TILE_COLUMNS; j++)
            sum[r][j] = 0.0f;
    for (Py_ssize_t p = 0; p < k; p++) {
        const float *restrict row = b + p * ldb;
        PREFETCH(row + PREFETCH_ROWS * ldb);
        PREFETCH(row + PREFETCH_ROWS * ldb + TILE_COLUMNS - 1);
        for (int r = 0; r < rows; r++) {
            float x = a[r * a_row + p * a_column];
            for (int j = 0; j < TILE_COLUMNS; j++)
                sum[r][j] += x * row[j];
        }
    }
    if (bias != NULL)
        for (int r = 0; r < rows; r++)
            for (int j = 0; j < TILE_COLUMNS; j++)
                c[r * ldc + j] = alpha * sum[r][j] + bias[j];
    else
        for (int r = 0; r < rows; r++)
            for (int j = 0; j < TILE_COLUMNS; j++)
                c[r * ldc + j] = alpha * sum[r][j];
}

static inline void KERNEL(product_tile)(
    Py_ssize_t k, const float *restrict a, Py_ssize_t a_row, Py_ssize_t a_column,
    const float *restrict b, Py_ssize_t ldb, float *restrict c, Py_ssize_t ldc, float alpha)
{
    KERNEL(product_tile_of)(TILE_ROWS, k, a, a_row, a_column, b, ldb, c, ldc, alpha, NULL);
}

/* One row of c = alpha a b (+ bias, width values; NULL: none) where the tiles do not reach:
 * c (width) from a's row (k elements, a_column apart). */
static inline void KERNEL(product_row)(
    Py_ssize_t width, Py_ssize_t k, const float *restrict a, Py_ssize_t a_column,
    const float *restrict b, Py_ssize_t ldb, float *restrict c, float alpha,
    const float *restrict bias)
{
    for (Py_ssize_t j = 0; j < width; j++)
        c[j] = 0.0f;
    for (Py_ssize_t p = 0; p < k; p++) {
        float x = alpha * a[p * a_column];
        const float *restrict row = b + p * ldb;
        for (Py_ssize_t j = 0; j < width; j++)
            c[j] += x * row[j];
    }
    if (bias != NULL)
        for (Py_ssize_t j = 0; j < width; j++)
            c[j] += bias[j];
}

/* c (VECTOR_PANEL) = a b for one row a (k elements, a_column apart): the product of a batch of
 * one, its sums in registers (a fixed width the compiler unrolls) while b's rows stream by. */
#define VECTOR_PANEL 256
static inline void KERNEL(vector_panel)(
    Py_ssize_t k, const float *restrict a, Py_ssize_t a_column, const float *restrict b,
    Py_ssize_t ldb, float *restrict c, const float *restrict bias)
{
    float sum[VECTOR_PANEL];
    /* The first row sets the sums: zeroing the array first was a `rep stos` of a quarter of
     * the time of a short product. */
    float first = k > 0 ? a[0] : 0.0f;
    for (int j = 0; j < VECTOR_PANEL; j++)
        sum[j] = k > 0 ? first * b[j] : 0.0f;
    for (Py_ssize_t p = 1; p < k; p++) {
        float x = a[p * a_column];
        const float *restrict row = b + p * ldb;
        for (int j = 0; j < VECTOR_PANEL; j++)
            sum[j] += x * row[j];
    }
    if (bias != NULL)
        for (int j = 0; j < VECTOR_PANEL; j++)
            c[j] = sum[j] + bias[j];
    else
        for (int j = 0; j < VECTOR_PANEL; j++)
            c[j] = sum[j];
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
                                    b_start + from, ldb, c + (i + r) * ldc + from, alpha, NULL);
            i = last;
        } else
            KERNEL(product_row)(columns, stop - start, a_start, a.column, b_start, ldb,
                                c + i * ldc, alpha, NULL);
    }
}

/* c (m, n) = a (m, k) w^T (+ bias, n values; NULL: none) for w (n, k) with contiguous rows:
 * c[i, j] = a_i . w_j, four rows of w at a time (each read once from memory, then from L1 for
 * every row of a); a's rows are contiguous, lda apart. */
static void KERNEL(product_transposed)(
    Py_ssize_t m, Py_ssize_t n, Py_ssize_t k, const float *a, Py_ssize_t lda,
    const float *w, Py_ssize_t ldw, float *c, Py_ssize_t ldc, const float *bias)
{
    Py_ssize_t j = 0;
    for (; j + 4 <= n; j += 4) {
        const float *restrict w0 = w + j * ldw, *restrict w1 = w0 + ldw;
        const float *restrict w2 = w1 + ldw, *restrict w3 = w2 + ldw;
        for (Py_ssize_t i = 0; i < m; i++) {
            const float *restrict x = a + i * lda;
            float s0[LANES] = {0.0f}, s1[LANES] = {0.0f}, s2[LANES] = {0.0f};
            float s3[LANES] = {0.0f};
            Py_ssize_t p = 0;
            for (; p + LANES <= k; p += LANES)
                for (int l = 0; l < LANES; l++) {
                    s0[l] += x[p + l] * w0[p + l];
                    s1[l] += x[p + l] * w1[p + l];
                    s2[l] += x[p + l] * w2[p + l];
                    s3[l] += x[p + l] * w3[p + l];
                }
            float t0 = KERNEL(sum_of_lanes)(s0), t1 = KERNEL(sum_of_lanes)(s1);
            float t2 = KERNEL(sum_of_lanes)(s2), t3 = KERNEL(sum_of_lanes)(s3);
            for (; p < k; p++) {
                t0 += x[p] * w0[p];
                t1 += x[p] * w1[p];
                t2 += x[p] * w2[p];
                t3 += x[p] * w3[p];
            }
            float *row = c + i * ldc + j;
            row[0] = bias != NULL ? t0 + bias[j] : t0;
            row[1] = bias != NULL ? t1 + bias[j + 1] : t1;
            row[2] = bias != NULL ? t2 + bias[j + 2] : t2;
            row[3] = bias != NULL ? t3 + bias[j + 3] : t3;
        }
    }
    for (; j < n; j++)
        for (Py_ssize_t i = 0; i < m; i++) {
            float dot = KERNEL(row_dot)(k, a + i * lda, w + j * ldw);
            c[i * ldc + j] = bias != NULL ? dot + bias[j] : dot;
        }
}

/* `rows` rows of c (m, n) = a b (+ bias) from a tile of that many rows, then row by row past
 * the last whole tile of columns. */
static ALWAYS_INLINE void KERNEL(product_band)(
    const int rows, Py_ssize_t n, Py_ssize_t k, const float *a, Py_ssize_t a_row,
    Py_ssize_t a_column, const float *b, Py_ssize_t ldb, float *c, Py_ssize_t ldc,
    const float *bias)
{
    Py_ssize_t j = 0;
    for (; j + TILE_COLUMNS <= n; j += TILE_COLUMNS)
        KERNEL(product_tile_of)(rows, k, a, a_row, a_column, b + j, ldb, c + j, ldc, 1.0f,
                                bias != NULL ? bias + j : NULL);
    for (int r = 0; r < rows && j < n; r++)
        KERNEL(product_row)(n - j, k, a + r * a_row, a_column, b + j, ldb, c + r * ldc + j,
                            1.0f, bias != NULL ? bias + j : NULL);
}

/* c (m, n) = a (m, k) b (k, n) (+ bias, n values for every row; NULL: none) for a few rows
 * (a batch of 2 to 32 through a linear layer): bands of TILE_ROWS rows, then of 4, 2 and 1, so
 * that no row is left to the one-row loop that reads all of b once per row. */
static void KERNEL(few_rows_product)(
    Py_ssize_t m, Py_ssize_t n, Py_ssize_t k, Left a, const float *b, Py_ssize_t ldb, float *c,
    Py_ssize_t ldc, const float *bias)
{
    Py_ssize_t i = 0;
#define BAND(rows) KERNEL(product_band)(rows, n, k, a.data + i * a.row, a.row, a.column, b, \
                                        ldb, c + i * ldc, ldc, bias)
    for (; i + TILE_ROWS <= m; i += TILE_ROWS)
        BAND(TILE_ROWS);
#if TILE_ROWS > 4
    if (i + 4 <= m) {
        BAND(4);
        i += 4;
    }
#endif
#if TILE_ROWS > 2
    if (i + 2 <= m) {
        BAND(2);
        i += 2;
    }
#endif
    for (; i < m; i++)
        BAND(1);
#undef BAND
}

