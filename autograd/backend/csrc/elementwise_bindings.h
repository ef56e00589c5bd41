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
