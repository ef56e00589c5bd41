/* The bindings of the elementwise passes (part of _native.c, included once, after
 * update_bindings.h, whose flat operands and parts they share): ReLU and its gradient over
 * C-contiguous float32 arrays, split over the thread pool. Why compiled: NumPy's maximum
 * against the scalar 0 has no SIMD loop (16K float32: 7 us, a multiply 1.6), and a small
 * batch's activations are a few such passes a step. */

typedef struct {
    const float *x;         /* relu_forward: x; relu_backward: dy */
    const float *y;         /* relu_backward: the forward's output */
    float *out;
    Py_ssize_t count;
} ElementwiseJob;

static void relu_forward_part(void *context, Py_ssize_t start, Py_ssize_t stop)
{
    const ElementwiseJob *j = context;
    Py_ssize_t first = start * UPDATE_ALIGNMENT;
    Py_ssize_t last = stop * UPDATE_ALIGNMENT < j->count ? stop * UPDATE_ALIGNMENT : j->count;
    chosen.relu_forward(last - first, j->x + first, j->out + first);
}

static void relu_backward_part(void *context, Py_ssize_t start, Py_ssize_t stop)
{
    const ElementwiseJob *j = context;
    Py_ssize_t first = start * UPDATE_ALIGNMENT;
    Py_ssize_t last = stop * UPDATE_ALIGNMENT < j->count ? stop * UPDATE_ALIGNMENT : j->count;
    chosen.relu_backward(last - first, j->x + first, j->y + first, j->out + first);
}

/* relu_forward(x, y, threads): y = max(x, 0); relu_backward(dy, y, dx, threads): dx = dy
 * (y > 0). Every operand C-contiguous float32 of the first one's size, the written one apart
 * from the others. */
static PyObject *run_elementwise(const char *kernel, PyObject *args, int operands, Task part)
{
    static const char *names[2][3] = {{"x", "y", ""}, {"dy", "y", "dx"}};
    PyObject *objects[3];
    int threads;
    int ok = operands == 2
        ? PyArg_ParseTuple(args, "OOi:relu_forward", &objects[0], &objects[1], &threads)
        : PyArg_ParseTuple(args, "OOOi:relu_backward", &objects[0], &objects[1], &objects[2], &threads);
    if (!ok)
        return NULL;
    const char *const *name = names[operands - 2];
    Py_buffer views[3];
    for (int k = 0; k < operands; k++)
        if (take_flat(kernel, name[k], objects[k], &views[k], k == operands - 1,
                      k == 0 ? -1 : views[0].len / 4) < 0) {
            release_flat(views, k);
            return NULL;
        }
    for (int k = 0; k < operands - 1; k++) {
        if (views_overlap(&views[operands - 1], &views[k])) {
            PyErr_Format(PyExc_ValueError, "%s: %s overlaps %s", kernel, name[operands - 1],
                         name[k]);
            release_flat(views, operands);
            return NULL;
        }
    }
    ElementwiseJob job = {views[0].buf, operands == 3 ? views[1].buf : NULL,
                          views[operands - 1].buf, views[0].len / 4};
    Py_ssize_t blocks = (job.count + UPDATE_ALIGNMENT - 1) / UPDATE_ALIGNMENT;
    if (blocks > 0) {
        Py_BEGIN_ALLOW_THREADS
        parallel(part, &job, blocks, update_parts(job.count, threads));
        Py_END_ALLOW_THREADS
    }
    release_flat(views, operands);
    Py_RETURN_NONE;
}

static PyObject *relu_forward(PyObject *self, PyObject *args)
{
    return run_elementwise("relu_forward", args, 2, relu_forward_part);
}

static PyObject *relu_backward(PyObject *self, PyObject *args)
{
    return run_elementwise("relu_backward", args, 3, relu_backward_part);
}

typedef struct {
    const float *x;
    float *out;
    Py_ssize_t count;            /* values a row */
    float scale;
} RowMeansJob;

static void row_means_part(void *context, Py_ssize_t start, Py_ssize_t stop)
{
    const RowMeansJob *j = context;
    chosen.row_means(stop - start, j->count, j->x + start * j->count, j->scale, j->out + start);
}

/* row_means(x, out, scale, threads): out[r] = scale * sum(x[r, :]) for x a C-contiguous
 * float32 array of out's size rows (out C-contiguous float32, apart from x), the rows split
 * over the thread pool */
static PyObject *row_means(PyObject *self, PyObject *args)
{
    PyObject *x, *out;
    float scale;
    int threads;
    if (!PyArg_ParseTuple(args, "OOfi:row_means", &x, &out, &scale, &threads))
        return NULL;
    Py_buffer views[2];
    if (take_flat("row_means", "out", out, &views[1], 1, -1) < 0)
        return NULL;
    if (take_flat("row_means", "x", x, &views[0], 0, -1) < 0) {
        release_flat(views + 1, 1);
        return NULL;
    }
    Py_ssize_t rows = views[1].len / 4, size = views[0].len / 4;
    if (rows == 0 || size % rows != 0 || views_overlap(&views[1], &views[0])) {
        PyErr_Format(PyExc_ValueError, rows == 0 || size % rows != 0
                     ? "row_means: expected x of a multiple of out's %zd values, got %zd"
                     : "row_means: out overlaps x", rows, size);
        release_flat(views, 2);
        return NULL;
    }
    RowMeansJob job = {views[0].buf, views[1].buf, size / rows, scale};
    Py_BEGIN_ALLOW_THREADS
    parallel(row_means_part, &job, rows, row_parts(rows, job.count, threads));
    Py_END_ALLOW_THREADS
    release_flat(views, 2);
    Py_RETURN_NONE;
}
