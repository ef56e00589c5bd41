/* An LSTM layer's loop over time in one call (part of _native.c, included once, after the
 * product bindings): each step's hidden projection h W_hh by the small products and its cell by
 * lstm_forward / lstm_backward (forward, from a batch of 2: both per block of hidden units, in
 * one hand-off), with no return to Python between steps. At a batch of 1 the
 * Python of a step (two wrappers, their checks, four allocations) cost about as much as its
 * arithmetic.
 *
 * The per-step operands are (steps, 1, batch, width) arrays read as Heads (a (T, N, W) array
 * with an axis of 1 inserted), so that step t's rows are HEAD_ROWS(x, t). */

static int take_steps(const char *kernel, const char *name, PyObject *object, Py_buffer *view,
                      int writable, Py_ssize_t steps, Py_ssize_t batch, Py_ssize_t width,
                      Heads *out)
{
    Py_ssize_t shape[4] = {steps, 1, batch, width};
    return take_heads(kernel, name, object, view, writable, shape, out);
}

/* W (rows, columns) as the b of a product: rows contiguous, or (transposed) columns
 * contiguous (set_b); the Product fields it sets. */
static int take_weight(const char *kernel, const char *name, PyObject *object, Py_buffer *view,
                       Py_ssize_t rows, Py_ssize_t columns, Product *x)
{
    if (take_matrix(kernel, name, object, view, 0) < 0)
        return -1;
    if (view->shape[0] != rows || view->shape[1] != columns || set_b(view, x) < 0) {
        PyErr_Format(PyExc_ValueError, "%s: expected %s of shape (%zd, %zd) with contiguous "
                     "rows or columns, got (%zd, %zd)", kernel, name, rows, columns,
                     view->shape[0], view->shape[1]);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* One step of the loop over the C pool for a batch of 2 or more: task q is hidden units
 * [q LSTM_STEP_UNITS, (q + 1) LSTM_STEP_UNITS), their four gates' columns of h_gates = h W_hh
 * and then their cells, so that a step is one hand-off and each thread's gates and cells stay
 * on its core (the product over the threads and then every cell on the calling thread read
 * half the gates from the other core each step). Each value is the one the whole product and
 * cell give: the same products in the same order, the same cell. A batch-8 layer's loop over
 * 35 steps 0.905x its time, batch 32 0.974x; 0.765x and 0.858x where the host runs the two
 * cores far apart (benchmarks/NOTES.md, twenty-fourth session). */
#define LSTM_STEP_UNITS 32

typedef struct {
    const Product *product;            /* m, k, a = h_t, b = W_hh with contiguous rows */
    Py_ssize_t hidden;
    Rows x_gates, h_gates, c, h_out, c_out, gates, tanh_c;      /* step t's */
} LSTMStep;

static void lstm_step_units(void *context, Py_ssize_t start, Py_ssize_t stop)
{
    const LSTMStep *s = context;
    const Product *x = s->product;
    Py_ssize_t first = start * LSTM_STEP_UNITS;
    Py_ssize_t last = stop * LSTM_STEP_UNITS < s->hidden ? stop * LSTM_STEP_UNITS : s->hidden;
    if (first >= last)
        return;
    for (Py_ssize_t gate = 0; gate < 4; gate++) {
        Py_ssize_t column = gate * s->hidden + first;
        chosen.few_rows_product(x->m, last - first, x->k, x->a, x->b + column, x->ldb,
                                x->c + column, x->ldc, NULL);
    }
    chosen.lstm_forward(x->m, s->hidden, first, last - first, s->x_gates, s->h_gates,
                        s->c, s->h_out, s->c_out, s->gates, s->tanh_c);
}

/* lstm_sequence_forward(x_gates, hs, cs, gates, tanh_cs, h_gates, W_hh, threads): for t in
 * [0, T): h_gates = hs[t] W_hh, then the cell from x_gates[t], h_gates and cs[t] into hs[t + 1],
 * cs[t + 1], gates[t], tanh_cs[t]. x_gates and gates (T, 1, N, 4H), hs and cs (T + 1, 1, N, H)
 * with hs[0] and cs[0] given, tanh_cs (T, 1, N, H), h_gates (1, 1, N, 4H) scratch, W_hh (H, 4H). */
static PyObject *lstm_sequence_forward(PyObject *self, PyObject *args)
{
    const char *kernel = "lstm_sequence_forward";
    PyObject *o[7];
    int threads;
    if (!PyArg_ParseTuple(args, "OOOOOOOi:lstm_sequence_forward", &o[0], &o[1], &o[2], &o[3],
                          &o[4], &o[5], &o[6], &threads))
        return NULL;
    Py_buffer views[7];
    Heads x_gates, hs, cs, gates, tanh_cs, h_gates;
    Py_ssize_t first[4] = {-1, 1, -1, -1};
    if (take_heads(kernel, "x_gates", o[0], &views[0], 0, first, &x_gates) < 0)
        return NULL;
    Py_ssize_t steps = first[0], batch = first[2], hidden = first[3] / 4;
    Product x = {0};       /* no bias: the gates' biases are in x_gates */
    if (first[3] % 4 != 0 || hidden < 1) {
        PyErr_Format(PyExc_ValueError, "%s: expected x_gates 4H wide, got %zd", kernel,
                     first[3]);
        release_views(views, 1);
        return NULL;
    }
    static const char *names[5] = {"hs", "cs", "gates", "tanh_cs", "h_gates"};
    Py_ssize_t counts[5] = {steps + 1, steps + 1, steps, steps, 1};
    Py_ssize_t widths[5] = {hidden, hidden, 4 * hidden, hidden, 4 * hidden};
    Heads *written[5] = {&hs, &cs, &gates, &tanh_cs, &h_gates};
    for (int k = 0; k < 5; k++)
        if (take_steps(kernel, names[k], o[k + 1], &views[k + 1], 1, counts[k], batch,
                       widths[k], written[k]) < 0) {
            release_views(views, k + 1);
            return NULL;
        }
    if (take_weight(kernel, "W_hh", o[6], &views[6], hidden, 4 * hidden, &x) < 0) {
        release_views(views, 6);
        return NULL;
    }
    x.m = batch;
    x.c = h_gates.data;
    x.ldc = h_gates.row_stride;
    x.block = product_block(batch);
    /* a batch of one keeps the whole product's one-row panels (256 sums in registers) */
    int by_units = batch > 1 && !x.transposed;
    Py_ssize_t tasks = (hidden + LSTM_STEP_UNITS - 1) / LSTM_STEP_UNITS;
    int parts = product_parts(&x, threads, PRODUCT_MIN_WORK_PER_THREAD);
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t t = 0; t < steps; t++) {
        x.a = (Left){HEAD(hs, t), hs.row_stride, 1};
        if (by_units) {
            LSTMStep step = {&x, hidden, HEAD_ROWS(x_gates, t), HEAD_ROWS(h_gates, 0),
                             HEAD_ROWS(cs, t), HEAD_ROWS(hs, t + 1), HEAD_ROWS(cs, t + 1),
                             HEAD_ROWS(gates, t), HEAD_ROWS(tanh_cs, t)};
            parallel(lstm_step_units, &step, tasks, parts);
            continue;
        }
        run_product(&x, threads, PRODUCT_MIN_WORK_PER_THREAD);
        chosen.lstm_forward(batch, hidden, 0, hidden, HEAD_ROWS(x_gates, t),
                            HEAD_ROWS(h_gates, 0),
                            HEAD_ROWS(cs, t), HEAD_ROWS(hs, t + 1), HEAD_ROWS(cs, t + 1),
                            HEAD_ROWS(gates, t), HEAD_ROWS(tanh_cs, t));
    }
    Py_END_ALLOW_THREADS
    release_views(views, 7);
    Py_RETURN_NONE;
}

/* lstm_sequence_backward(gates, cs, tanh_cs, dhs, dh_last, dc_last, da, dh0, dc0, W_hh_T,
 * threads): for t from T - 1 down to 0: dh = dhs[t] + dh_next (dh_last at first), the cell's
 * backward into da[t] and dc, then dh_next = da[t] W_hh^T; dh0 and dc0 get the last dh_next
 * and dc. gates and da (T, 1, N, 4H), cs (T + 1, 1, N, H) (cs[t] is step t's c_(t-1)),
 * tanh_cs and dhs (T, 1, N, H), dh_last, dc_last, dh0, dc0 (1, 1, N, H), W_hh_T (4H, H). */
static PyObject *lstm_sequence_backward(PyObject *self, PyObject *args)
{
    const char *kernel = "lstm_sequence_backward";
    PyObject *o[10];
    int threads;
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOi:lstm_sequence_backward", &o[0], &o[1], &o[2],
                          &o[3], &o[4], &o[5], &o[6], &o[7], &o[8], &o[9], &threads))
        return NULL;
    Py_buffer views[10];
    Heads h[9];        /* gates, cs, tanh_cs, dhs, dh_last, dc_last, da, dh0, dc0 */
    Py_ssize_t first[4] = {-1, 1, -1, -1};
    if (take_heads(kernel, "gates", o[0], &views[0], 0, first, &h[0]) < 0)
        return NULL;
    Py_ssize_t steps = first[0], batch = first[2], hidden = first[3] / 4;
    if (first[3] % 4 != 0 || hidden < 1 || steps < 1) {
        PyErr_Format(PyExc_ValueError, "%s: expected gates of one step or more, 4H wide, got "
                     "(%zd, 1, %zd, %zd)", kernel, steps, batch, first[3]);
        release_views(views, 1);
        return NULL;
    }
    static const char *names[8] = {"cs", "tanh_cs", "dhs", "dh_last", "dc_last", "da", "dh0",
                                   "dc0"};
    Py_ssize_t counts[8] = {steps + 1, steps, steps, 1, 1, steps, 1, 1};
    Py_ssize_t widths[8] = {hidden, hidden, hidden, hidden, hidden, 4 * hidden, hidden, hidden};
    for (int k = 0; k < 8; k++)
        if (take_steps(kernel, names[k], o[k + 1], &views[k + 1], k >= 5, counts[k], batch,
                       widths[k], &h[k + 1]) < 0) {
            release_views(views, k + 1);
            return NULL;
        }
    Product x = {0};       /* no bias: the gates' biases are in x_gates */
    if (take_weight(kernel, "W_hh_T", o[9], &views[9], 4 * hidden, hidden, &x) < 0) {
        release_views(views, 9);
        return NULL;
    }
    /* dh, dh_next and two dc, each N x H, contiguous */
    float *scratch = take_scratch(4 * batch * hidden, views, 10);
    if (scratch == NULL)
        return NULL;
    Rows dh = {scratch, hidden}, dh_next = {scratch + batch * hidden, hidden};
    Rows dc_spare[2] = {{scratch + 2 * batch * hidden, hidden},
                        {scratch + 3 * batch * hidden, hidden}};
    x.m = batch;
    x.block = product_block(batch);
    Py_BEGIN_ALLOW_THREADS
    Rows next = HEAD_ROWS(h[4], 0), dc = HEAD_ROWS(h[5], 0);
    for (Py_ssize_t t = steps - 1; t >= 0; t--) {
        Rows incoming = HEAD_ROWS(h[3], t);
        for (Py_ssize_t i = 0; i < batch; i++)
            for (Py_ssize_t j = 0; j < hidden; j++)
                ROW(dh, i)[j] = ROW(incoming, i)[j] + ROW(next, i)[j];
        Rows dc_out = t == 0 ? HEAD_ROWS(h[8], 0) : dc_spare[t % 2];
        Rows da = HEAD_ROWS(h[6], t);
        chosen.lstm_backward(batch, hidden, HEAD_ROWS(h[0], t), HEAD_ROWS(h[1], t),
                             HEAD_ROWS(h[2], t), dh, dc, da, dc_out);
        dc = dc_out;
        next = t == 0 ? HEAD_ROWS(h[7], 0) : dh_next;
        x.a = (Left){da.data, da.stride, 1};
        x.c = next.data;
        x.ldc = next.stride;
        run_product(&x, threads, PRODUCT_MIN_WORK_PER_THREAD);
    }
    Py_END_ALLOW_THREADS
    PyMem_RawFree(scratch);
    release_views(views, 10);
    Py_RETURN_NONE;
}
