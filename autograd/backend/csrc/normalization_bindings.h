/* The bindings of layer normalization (part of _native.c, included once): the rows split over
 * the thread pool (thread_pool.h). A GPT layer's (768, 128) activations are under the size at
 * which autograd's Python threads pay for their handoff (15-40 us), so they ran on one core;
 * the pool hands a part over in about a microsecond. */

typedef struct {
    Py_ssize_t width;
    Rows x, y, xhat;
    const float *scale, *bias;
    float eps;
    float *invstd;
} LayerNormForwardJob;

static void layer_norm_forward_rows(void *context, Py_ssize_t start, Py_ssize_t stop)
{
    const LayerNormForwardJob *j = context;
    chosen.layer_norm_forward(stop - start, j->width, (Rows){ROW(j->x, start), j->x.stride},
                              j->scale, j->bias, j->eps, (Rows){ROW(j->y, start), j->y.stride},
                              (Rows){ROW(j->xhat, start), j->xhat.stride}, j->invstd + start);
}

static const Operand LAYER_NORM_FORWARD[] = {
    {"x", 1, 0, 0}, {"y", 1, 1, 0}, {"xhat", 1, 1, 0}};

/* layer_norm_forward(x, scale or None, bias or None, eps, y, xhat, invstd[, threads]) */
static PyObject *layer_norm_forward(PyObject *self, PyObject *args)
{
    const char *kernel = "layer_norm_forward";
    PyObject *x, *scale, *bias, *y, *xhat, *invstd;
    float eps;
    int threads = 1;
    if (!PyArg_ParseTuple(args, "OOOfOOO|i:layer_norm_forward", &x, &scale, &bias, &eps, &y,
                          &xhat, &invstd, &threads))
        return NULL;
    Operands a;
    if (take_operand_array(kernel, (PyObject *[]){x, y, xhat}, LAYER_NORM_FORWARD, 3, 0,
                           &a) < 0)
        return NULL;
    Py_buffer views[3];
    float *scale_data, *bias_data;
    views[0].obj = views[1].obj = views[2].obj = NULL;
    if (take_optional_vector(kernel, "scale", scale, &views[0], 0, a.hidden, &scale_data) < 0
            || take_optional_vector(kernel, "bias", bias, &views[1], 0, a.hidden,
                                    &bias_data) < 0
            || take_vector(kernel, "invstd", invstd, &views[2], 1, a.count, 4, "f",
                           "float32") < 0) {
        for (int k = 0; k < 3; k++)
            release_vector(&views[k]);
        release(&a, 3);
        return NULL;
    }
    LayerNormForwardJob job = {a.hidden, a.rows[0], a.rows[1], a.rows[2], scale_data, bias_data,
                             eps, (float *)views[2].buf};
    Py_BEGIN_ALLOW_THREADS
    parallel(layer_norm_forward_rows, &job, a.count, row_parts(a.count, a.hidden,
                                                                      threads));
    Py_END_ALLOW_THREADS
    for (int k = 0; k < 3; k++)
        release_vector(&views[k]);
    release(&a, 3);
    Py_RETURN_NONE;
}

/* The backward's work is cut into `parts` parts of rows, each summing its own dscale and dbias
 * (partial + 2 * width * part), added up in part order after all have run: the same sums
 * whichever threads ran which parts. */
typedef struct {
    Py_ssize_t rows, width;
    Rows dy, xhat, dx;
    const float *invstd, *scale;
    float *dscale, *dbias, *partial;
    int parts;
} LayerNormBackwardJob;

static void layer_norm_backward_parts(void *context, Py_ssize_t start, Py_ssize_t stop)
{
    const LayerNormBackwardJob *j = context;
    for (Py_ssize_t part = start; part < stop; part++) {
        Py_ssize_t first = j->rows * part / j->parts, last = j->rows * (part + 1) / j->parts;
        float *sums = j->partial != NULL ? j->partial + 2 * j->width * part : NULL;
        Rows dx = {j->dx.data != NULL ? ROW(j->dx, first) : NULL, j->dx.stride};
        chosen.layer_norm_backward(last - first, j->width,
                                   (Rows){ROW(j->dy, first), j->dy.stride},
                                   (Rows){ROW(j->xhat, first), j->xhat.stride},
                                   j->invstd + first, j->scale, dx,
                                   sums != NULL && j->dscale != NULL ? sums : j->dscale,
                                   sums != NULL && j->dbias != NULL ? sums + j->width
                                                                    : j->dbias);
    }
}

static const Operand LAYER_NORM_BACKWARD[] = {
    {"dy", 1, 0, 0}, {"xhat", 1, 0, 0}, {"dx", 1, 1, 1}};

/* layer_norm_backward(dy, xhat, invstd, scale, dx, dscale, dbias[, threads]): dx written,
 * dscale and dbias added to (None: not wanted) */
static PyObject *layer_norm_backward(PyObject *self, PyObject *args)
{
    const char *kernel = "layer_norm_backward";
    PyObject *dy, *xhat, *invstd, *scale, *dx, *dscale, *dbias;
    int threads = 1;
    if (!PyArg_ParseTuple(args, "OOOOOOO|i:layer_norm_backward", &dy, &xhat, &invstd, &scale,
                          &dx, &dscale, &dbias, &threads))
        return NULL;
    Operands a;
    if (take_operand_array(kernel, (PyObject *[]){dy, xhat, dx}, LAYER_NORM_BACKWARD, 3, 0,
                           &a) < 0)
        return NULL;
    Py_buffer views[4];
    float *scale_data, *dscale_data, *dbias_data;
    for (int k = 0; k < 4; k++)
        views[k].obj = NULL;
    if (take_vector(kernel, "invstd", invstd, &views[0], 0, a.count, 4, "f", "float32") < 0
            || take_optional_vector(kernel, "scale", scale, &views[1], 0, a.hidden,
                                    &scale_data) < 0
            || take_optional_vector(kernel, "dscale", dscale, &views[2], 1, a.hidden,
                                    &dscale_data) < 0
            || take_optional_vector(kernel, "dbias", dbias, &views[3], 1, a.hidden,
                                    &dbias_data) < 0) {
        for (int k = 0; k < 4; k++)
            release_vector(&views[k]);
        release(&a, 3);
        return NULL;
    }
    int parts = row_parts(a.count, a.hidden, threads);
    float *partial = NULL;
    if (parts > 1 && (dscale_data != NULL || dbias_data != NULL)) {
        partial = PyMem_RawCalloc((size_t)(2 * a.hidden * parts), sizeof(float));
        if (partial == NULL) {
            for (int k = 0; k < 4; k++)
                release_vector(&views[k]);
            release(&a, 3);
            return PyErr_NoMemory();
        }
    }
    LayerNormBackwardJob job = {a.count, a.hidden, a.rows[0], a.rows[1], a.rows[2],
                              (const float *)views[0].buf, scale_data, dscale_data, dbias_data,
                              partial, parts};
    Py_BEGIN_ALLOW_THREADS
    parallel(layer_norm_backward_parts, &job, parts, parts);
    if (partial != NULL)
        for (int part = 0; part < parts; part++) {
            const float *sums = partial + 2 * a.hidden * part;
            for (Py_ssize_t k = 0; k < a.hidden; k++) {
                if (dscale_data != NULL)
                    dscale_data[k] += sums[k];
                if (dbias_data != NULL)
                    dbias_data[k] += sums[a.hidden + k];
            }
        }
    Py_END_ALLOW_THREADS
    PyMem_RawFree(partial);
    for (int k = 0; k < 4; k++)
        release_vector(&views[k]);
    release(&a, 3);
    Py_RETURN_NONE;
}
