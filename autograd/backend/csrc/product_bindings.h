/* The binding of the small products (part of _native.c, included once): c = a @ b for 2-D
 * float32 operands, with c's columns (or, for many rows by a narrow b, its rows) split over
 * the thread pool (thread_pool.h). */

/* Columns per chunk handed to a thread (a one-row product: a whole VECTOR_PANEL, whose sums
 * stay in registers; a narrower chunk took twice as long), and per call of the kernel within
 * a chunk: a panel of c's rows stays in L1 while the inner dimension is summed into it. */
#define PRODUCT_COLUMN_BLOCK 32
#define PRODUCT_PANEL 256
/* An inner dimension up to this is summed row by row of c (product_rows) */
#define PRODUCT_SHORT_INNER 8
/* Multiply-adds (and written elements) a thread must have before a product is split: below
 * it, waking a worker costs more than it saves. */
#define PRODUCT_MIN_WORK_PER_THREAD (1 << 15)

#define BIAS_FROM(x, column) ((x)->bias != NULL ? (x)->bias + (column) : NULL)

typedef struct {
    Py_ssize_t m, n, k;
    Left a;
    const float *b;
    Py_ssize_t ldb;            /* b's row stride, or (transposed) the stride of w = b^T's rows */
    int transposed;
    float *c;
    Py_ssize_t ldc;
    Py_ssize_t block;          /* columns of c per chunk */
    const float *bias;         /* n values added to every row of c, or NULL */
} Product;

/* Rows [start, stop) of c, each written whole: a product with a short inner dimension (an
 * outer product, a weight gradient of a batch of 8) writes far more than it reads, and a
 * thread writing whole rows writes one stream (column chunks of a tile wrote eight at once, and
 * took four times as long). */
static void product_rows(void *context, Py_ssize_t start, Py_ssize_t stop)
{
    const Product *x = context;
    for (Py_ssize_t i = start; i < stop; i++) {
        const float *a_row = x->a.data + i * x->a.row;
        float *c_row = x->c + i * x->ldc;
        Py_ssize_t j = 0;
        for (; j + VECTOR_PANEL <= x->n; j += VECTOR_PANEL)
            chosen.vector_panel(x->k, a_row, x->a.column, x->b + j, x->ldb, c_row + j,
                                BIAS_FROM(x, j));
        if (j < x->n)
            chosen.product_row(x->n - j, x->k, a_row, x->a.column, x->b + j, x->ldb, c_row + j,
                               1.0f, BIAS_FROM(x, j));
    }
}

static void product_chunk(void *context, Py_ssize_t start, Py_ssize_t stop)
{
    const Product *x = context;
    if (x->transposed) {          /* chunks of four columns of c: four rows of w */
        Py_ssize_t first = 4 * start, last = 4 * stop < x->n ? 4 * stop : x->n;
        chosen.product_transposed(x->m, last - first, x->k, x->a.data, x->a.row,
                                  x->b + first * x->ldb, x->ldb, x->c + first, x->ldc,
                                  BIAS_FROM(x, first));
        return;
    }
    Py_ssize_t first = x->block * start;
    Py_ssize_t last = x->block * stop < x->n ? x->block * stop : x->n;
    Py_ssize_t j = first;
    if (x->m == 1)
        for (; j + VECTOR_PANEL <= last; j += VECTOR_PANEL)
            chosen.vector_panel(x->k, x->a.data, x->a.column, x->b + j, x->ldb, x->c + j,
                                BIAS_FROM(x, j));
    for (; j < last; j += PRODUCT_PANEL) {
        Py_ssize_t width = last - j < PRODUCT_PANEL ? last - j : PRODUCT_PANEL;
        chosen.few_rows_product(x->m, width, x->k, x->a, x->b + j, x->ldb, x->c + j, x->ldc,
                                BIAS_FROM(x, j));
    }
}

/* Rows of c per chunk where a product of more rows than that is split by rows: b narrower than
 * PRODUCT_WIDE_B columns. Split by columns, each row of c was written half by each core, and
 * the next op, which reads c by rows (a layer norm, the next product's a), read half of every
 * row from the other core's cache: a transformer step lost 1-2% where each of its products
 * alone won; split by rows it gains 0-4% (benchmarks/NOTES.md, twenty-fifth session). A wide
 * b (an LSTM's gates, a vocabulary) stays split by columns, so that each core reads only its
 * share of it. Each value is the same sum either way. */
#define PRODUCT_ROW_BLOCK 32
#define PRODUCT_WIDE_B 1024

/* Rows [start, stop) PRODUCT_ROW_BLOCK at a time of c, each by panels of PRODUCT_PANEL
 * columns, so that a panel of b stays in L2 while the block's bands read it. */
static void product_row_blocks(void *context, Py_ssize_t start, Py_ssize_t stop)
{
    const Product *x = context;
    Py_ssize_t first = start * PRODUCT_ROW_BLOCK;
    Py_ssize_t last = stop * PRODUCT_ROW_BLOCK < x->m ? stop * PRODUCT_ROW_BLOCK : x->m;
    Left a = {x->a.data + first * x->a.row, x->a.row, x->a.column};
    for (Py_ssize_t j = 0; j < x->n; j += PRODUCT_PANEL) {
        Py_ssize_t width = x->n - j < PRODUCT_PANEL ? x->n - j : PRODUCT_PANEL;
        chosen.few_rows_product(last - first, width, x->k, a, x->b + j, x->ldb,
                                x->c + first * x->ldc + j, x->ldc, BIAS_FROM(x, j));
    }
}

/* Columns of c per chunk: a one-row product by whole panels. */
static Py_ssize_t product_block(Py_ssize_t m)
{
    return m == 1 ? VECTOR_PANEL : PRODUCT_COLUMN_BLOCK;
}

/* The threads a product as `x` describes takes: up to `threads`, each with `min_work`
 * multiply-adds or more. */
static int product_parts(const Product *x, int threads, Py_ssize_t min_work)
{
    Py_ssize_t most = x->m * x->n * (x->k + 1) / min_work;
    return threads < most ? threads : (int)(most > 1 ? most : 1);
}

/* c = a @ b as `x` describes it, its chunks split over up to `threads` threads of at least
 * `min_work` multiply-adds each. Called without the GIL. */
static void run_product(Product *x, int threads, Py_ssize_t min_work)
{
    int by_rows = !x->transposed && x->k <= PRODUCT_SHORT_INNER;
    int by_blocks = !x->transposed && !by_rows && x->m > PRODUCT_ROW_BLOCK
                    && x->n < PRODUCT_WIDE_B;
    Py_ssize_t chunks = by_rows ? x->m
                        : by_blocks ? (x->m + PRODUCT_ROW_BLOCK - 1) / PRODUCT_ROW_BLOCK
                        : x->transposed ? (x->n + 3) / 4 : (x->n + x->block - 1) / x->block;
    if (x->m > 0 && x->n > 0)
        parallel(by_rows ? product_rows : by_blocks ? product_row_blocks : product_chunk, x,
                 chunks, product_parts(x, threads, min_work));
}

/* b (k, n) of a product as `x` reads it: with contiguous rows, or (transposed) contiguous
 * columns, read as the rows of w = b^T; -1 where it is neither. */
static int set_b(const Py_buffer *view, Product *x)
{
    Py_ssize_t row = view->strides[0] / 4, column = view->strides[1] / 4;
    Py_ssize_t k = view->shape[0], n = view->shape[1];
    int rows_contiguous = column == 1 || n <= 1;
    if (!rows_contiguous && row != 1 && k > 1)
        return -1;
    x->b = (const float *)view->buf;
    x->transposed = !rows_contiguous;
    x->ldb = rows_contiguous ? row : column;
    x->k = k;
    x->n = n;
    return 0;
}

/* A 2-D float32 operand with non-negative strides that are whole elements. */
static int take_matrix(const char *kernel, const char *name, PyObject *object,
                       Py_buffer *view, int writable)
{
    int flags = PyBUF_STRIDES | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(object, view, flags) < 0) {
        name_the_operand(kernel, name);
        return -1;
    }
    if (view->ndim != 2 || view->itemsize != 4 || strcmp(view->format, "f") != 0
            || view->strides[0] < 0 || view->strides[1] < 0 || view->strides[0] % 4 != 0
            || view->strides[1] % 4 != 0) {
        PyErr_Format(PyExc_ValueError, "%s: expected %s as a 2-D float32 array with "
                     "non-negative strides", kernel, name);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* product(a, b, c, threads[, min_work_per_thread[, bias]]): c = a @ b (+ bias, a contiguous
 * float32 vector of n values added to every row, where given and not None). a (m, k) any
 * layout; b (k, n) with contiguous rows or contiguous columns (a transposed matrix; then a's
 * rows must be contiguous); c (m, n) with contiguous rows, written. It runs on at most
 * `threads` threads, each with at least min_work_per_thread multiply-adds (the tests give 1 to
 * split tiny products). */
static PyObject *product(PyObject *self, PyObject *args)
{
    PyObject *objects[3], *bias = Py_None;
    int threads;
    Py_ssize_t min_work = PRODUCT_MIN_WORK_PER_THREAD;
    if (!PyArg_ParseTuple(args, "OOOi|nO:product", &objects[0], &objects[1], &objects[2],
                          &threads, &min_work, &bias))
        return NULL;
    if (min_work < 1) {
        PyErr_Format(PyExc_ValueError, "product: expected a positive min_work_per_thread, got "
                     "%zd", min_work);
        return NULL;
    }
    static const char *names[3] = {"a", "b", "c"};
    Py_buffer views[3];
    for (int k = 0; k < 3; k++)
        if (take_matrix("product", names[k], objects[k], &views[k], k == 2) < 0) {
            release_views(views, k);
            return NULL;
        }
    Py_ssize_t m = views[0].shape[0], k = views[0].shape[1], n = views[1].shape[1];
    if (views[1].shape[0] != k || views[2].shape[0] != m || views[2].shape[1] != n) {
        PyErr_Format(PyExc_ValueError, "product: cannot write (%zd, %zd) @ (%zd, %zd) into "
                     "(%zd, %zd)", m, k, views[1].shape[0], n, views[2].shape[0],
                     views[2].shape[1]);
        release_views(views, 3);
        return NULL;
    }
    Py_ssize_t a_column = views[0].strides[1] / 4;
    Py_buffer bias_view;
    float *bias_data;
    if (take_optional_vector("product", "bias", bias, &bias_view, 0, n, &bias_data) < 0) {
        release_views(views, 3);
        return NULL;
    }
    Product x = {m, n, k, {(const float *)views[0].buf, views[0].strides[0] / 4, a_column},
                 NULL, 0, 0, (float *)views[2].buf, views[2].strides[0] / 4, product_block(m),
                 bias_data};
    if (set_b(&views[1], &x) < 0 || (x.transposed && a_column != 1 && k > 1)
            || (views[2].strides[1] != 4 && n > 1)) {
        PyErr_SetString(PyExc_ValueError, "product: expected b with contiguous rows or "
                        "columns (with contiguous rows of a), and c with contiguous rows");
        release_vector(&bias_view);
        release_views(views, 3);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    run_product(&x, threads, min_work);
    Py_END_ALLOW_THREADS
    release_vector(&bias_view);
    release_views(views, 3);
    Py_RETURN_NONE;
}
