/* The bindings of the parameter updates (part of _native.c, included once): each pass split
 * over the thread pool (thread_pool.h) in contiguous parts, so that part k of a parameter is
 * updated by the same core from step to step, and a step's many updates find the pool's
 * workers still spinning from the one before (an OpenBLAS saxpy woke a sleeping worker of its
 * own for each of a GPT's 52 parameters). */

/* Elements a thread must have before a pass is split */
#define UPDATE_MIN_WORK_PER_THREAD (1 << 15)
/* Parts begin on a multiple of this many elements: a 64-byte cache line is never written by
 * two threads. */
#define UPDATE_ALIGNMENT 16

/* A C-contiguous float32 array of any shape, as its `count` elements (`count` < 0: any). */
static int take_flat(const char *kernel, const char *name, PyObject *object, Py_buffer *view,
                     int writable, Py_ssize_t count)
{
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    view->obj = NULL;
    if (PyObject_GetBuffer(object, view, flags) < 0) {
        name_the_operand(kernel, name);
        return -1;
    }
    if (view->itemsize != 4 || strcmp(view->format, "f") != 0) {
        PyErr_Format(PyExc_ValueError, "%s: expected %s as a C-contiguous float32 array",
                     kernel, name);
        PyBuffer_Release(view);
        view->obj = NULL;
        return -1;
    }
    if (count >= 0 && view->len / 4 != count) {
        PyErr_Format(PyExc_ValueError, "%s: expected %s of %zd elements, got %zd", kernel, name,
                     count, view->len / 4);
        PyBuffer_Release(view);
        view->obj = NULL;
        return -1;
    }
    return 0;
}

static int update_parts(Py_ssize_t count, int threads)
{
    Py_ssize_t most = count / UPDATE_MIN_WORK_PER_THREAD;
    return threads < most ? threads : (int)(most > 1 ? most : 1);
}

typedef struct {
    Py_ssize_t count;
    float alpha;
    float *data;
    const float *grad;
    float *m, *v;
    const AdamSettings *settings;
} UpdateJob;

/* [start, stop) in blocks of UPDATE_ALIGNMENT elements, as elements */
static void update_range(const UpdateJob *j, Py_ssize_t start, Py_ssize_t stop,
                         Py_ssize_t *first, Py_ssize_t *count)
{
    *first = start * UPDATE_ALIGNMENT;
    Py_ssize_t last = stop * UPDATE_ALIGNMENT < j->count ? stop * UPDATE_ALIGNMENT : j->count;
    *count = last - *first;
}

static void axpy_part(void *context, Py_ssize_t start, Py_ssize_t stop)
{
    const UpdateJob *j = context;
    Py_ssize_t first, count;
    update_range(j, start, stop, &first, &count);
    chosen.axpy(count, j->alpha, j->grad + first, j->data + first);
}

static void adam_part(void *context, Py_ssize_t start, Py_ssize_t stop)
{
    const UpdateJob *j = context;
    Py_ssize_t first, count;
    update_range(j, start, stop, &first, &count);
    chosen.adam(count, j->data + first, j->grad + first, j->m + first, j->v + first,
                j->settings);
}

static void run_update(Task part, UpdateJob *job, int threads)
{
    Py_ssize_t blocks = (job->count + UPDATE_ALIGNMENT - 1) / UPDATE_ALIGNMENT;
    Py_BEGIN_ALLOW_THREADS
    parallel(part, job, blocks, update_parts(job->count, threads));
    Py_END_ALLOW_THREADS
}

static void release_flat(Py_buffer *views, int count)
{
    for (int k = 0; k < count; k++)
        if (views[k].obj != NULL)
            PyBuffer_Release(&views[k]);
}

/* A binding (alpha, x, y, threads) of a pass of alpha over C-contiguous float32 x and y of
 * one size, in place on y: `part` (an UpdateJob's task) split over the pool; `format` is
 * "fOOi:" and the binding's name, which its errors give. */
static PyObject *alpha_x_y_pass(PyObject *args, const char *format, Task part)
{
    const char *kernel = strchr(format, ':') + 1;
    PyObject *x, *y;
    float alpha;
    int threads;
    if (!PyArg_ParseTuple(args, format, &alpha, &x, &y, &threads))
        return NULL;
    Py_buffer views[2];
    if (take_flat(kernel, "y", y, &views[1], 1, -1) < 0)
        return NULL;
    if (take_flat(kernel, "x", x, &views[0], 0, views[1].len / 4) < 0) {
        release_flat(views + 1, 1);
        return NULL;
    }
    UpdateJob job = {views[1].len / 4, alpha, views[1].buf, views[0].buf, NULL, NULL, NULL};
    run_update(part, &job, threads);
    release_flat(views, 2);
    Py_RETURN_NONE;
}

/* axpy(alpha, x, y, threads): y += alpha x for C-contiguous float32 x and y of one size */
static PyObject *axpy(PyObject *self, PyObject *args)
{
    return alpha_x_y_pass(args, "fOOi:axpy", axpy_part);
}

/* adam(data, grad, m, v, (beta_1, beta_2, keep_1, keep_2, epsilon, l2, decay,
 * inverse_correction, step), threads): one Adam step in place on data, m and v (C-contiguous
 * float32 of one size; the numbers as kernel_update.h's AdamSettings) */
static PyObject *adam(PyObject *self, PyObject *args)
{
    static const char *names[4] = {"data", "grad", "m", "v"};
    PyObject *objects[4];
    AdamSettings s;
    int threads;
    if (!PyArg_ParseTuple(args, "OOOO(fffffffff)i:adam", &objects[0], &objects[1],
                          &objects[2], &objects[3], &s.beta_1, &s.beta_2, &s.keep_1, &s.keep_2,
                          &s.epsilon, &s.l2, &s.decay, &s.inverse_correction, &s.step,
                          &threads))
        return NULL;
    Py_buffer views[4];
    for (int k = 0; k < 4; k++)
        if (take_flat("adam", names[k], objects[k], &views[k], k != 1,
                      k == 0 ? -1 : views[0].len / 4) < 0) {
            release_flat(views, k);
            return NULL;
        }
    UpdateJob job = {views[0].len / 4, 0.0f, views[0].buf, views[1].buf, views[2].buf,
                     views[3].buf, &s};
    run_update(adam_part, &job, threads);
    release_flat(views, 4);
    Py_RETURN_NONE;
}

static void scale_part(void *context, Py_ssize_t start, Py_ssize_t stop)
{
    const UpdateJob *j = context;
    Py_ssize_t first, count;
    update_range(j, start, stop, &first, &count);
    chosen.scale(count, j->alpha, j->grad + first, j->data + first);
}

/* scale(alpha, x, y, threads): y = alpha x for C-contiguous float32 x and y of one size */
static PyObject *scale(PyObject *self, PyObject *args)
{
    return alpha_x_y_pass(args, "fOOi:scale", scale_part);
}

/* Elements whose squares one block adds up: the blocks' sums are then added in order, so the
 * result is the same whatever the thread count */
#define SQUARES_BLOCK (1 << 14)

typedef struct {
    const float *x;
    Py_ssize_t count;
    double *sums;                 /* one per block */
} SquaresJob;

static void squares_part(void *context, Py_ssize_t start, Py_ssize_t stop)
{
    const SquaresJob *j = context;
    for (Py_ssize_t block = start; block < stop; block++) {
        Py_ssize_t first = block * SQUARES_BLOCK;
        Py_ssize_t count = j->count - first < SQUARES_BLOCK ? j->count - first : SQUARES_BLOCK;
        j->sums[block] = chosen.sum_of_squares(count, j->x + first);
    }
}

/* sum_of_squares(x, threads): sum(x^2) of a C-contiguous float32 array as a Python float,
 * computed in double (kernel_update.h) by blocks of SQUARES_BLOCK elements split over the
 * threads, the blocks' sums added in order */
static PyObject *sum_of_squares(PyObject *self, PyObject *args)
{
    PyObject *x;
    int threads;
    if (!PyArg_ParseTuple(args, "Oi:sum_of_squares", &x, &threads))
        return NULL;
    Py_buffer view;
    if (take_flat("sum_of_squares", "x", x, &view, 0, -1) < 0)
        return NULL;
    Py_ssize_t count = view.len / 4;
    Py_ssize_t blocks = (count + SQUARES_BLOCK - 1) / SQUARES_BLOCK;
    double *sums = PyMem_RawMalloc((size_t)(blocks > 0 ? blocks : 1) * sizeof(double));
    if (sums == NULL) {
        PyBuffer_Release(&view);
        return PyErr_NoMemory();
    }
    SquaresJob job = {view.buf, count, sums};
    Py_BEGIN_ALLOW_THREADS
    parallel(squares_part, &job, blocks, update_parts(count, threads));
    Py_END_ALLOW_THREADS
    double total = 0.0;
    for (Py_ssize_t block = 0; block < blocks; block++)
        total += sums[block];
    PyMem_RawFree(sums);
    PyBuffer_Release(&view);
    return PyFloat_FromDouble(total);
}
