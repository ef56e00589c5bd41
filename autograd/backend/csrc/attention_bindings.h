/* The bindings of the attention kernels (part of _native.c, included once): operands are 4-D
 * float32 arrays (batch, heads, rows, columns) with contiguous rows and any other strides, so
 * that the heads of a packed projection are read in place. */

/* A (batch, heads, rows, columns) operand; `shape` gives the expected sizes, -1 for one that
 * this operand sets (written back). */
static int take_heads(const char *kernel, const char *name, PyObject *object, Py_buffer *view,
                      int writable, Py_ssize_t shape[4], Heads *out)
{
    int flags = PyBUF_STRIDES | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(object, view, flags) < 0) {
        name_the_operand(kernel, name);
        return -1;
    }
    int ok = view->ndim == 4 && view->itemsize == 4 && strcmp(view->format, "f") == 0
             && (view->shape[3] <= 1 || view->strides[3] == 4);
    for (int axis = 0; ok && axis < 3; axis++)
        ok = view->strides[axis] >= 0 && view->strides[axis] % 4 == 0;
    if (!ok) {
        PyErr_Format(PyExc_ValueError, "%s: expected %s as a 4-D float32 array with contiguous "
                     "rows", kernel, name);
        PyBuffer_Release(view);
        return -1;
    }
    int matches = 1;
    for (int axis = 0; axis < 4; axis++) {
        if (shape[axis] < 0)                  /* any size: this operand sets it */
            shape[axis] = view->shape[axis];
        matches = matches && view->shape[axis] == shape[axis];
    }
    if (!matches) {
        PyErr_Format(PyExc_ValueError, "%s: expected %s of shape (%zd, %zd, %zd, %zd), got "
                     "(%zd, %zd, %zd, %zd)", kernel, name, shape[0], shape[1], shape[2],
                     shape[3], view->shape[0], view->shape[1], view->shape[2], view->shape[3]);
        PyBuffer_Release(view);
        return -1;
    }
    *out = (Heads){(float *)view->buf, view->shape[1], view->strides[0] / 4,
                   view->strides[1] / 4, view->strides[2] / 4};
    return 0;
}

static void release_views(Py_buffer *views, int count)
{
    for (int k = 0; k < count; k++)
        PyBuffer_Release(&views[k]);
}

/* Room for `floats` floats; else NULL, a MemoryError raised and the `count` views released. */
static float *take_scratch(Py_ssize_t floats, Py_buffer *views, int count)
{
    float *scratch = PyMem_RawMalloc(sizeof(float) * (floats + 1));
    if (scratch == NULL) {
        release_views(views, count);
        PyErr_NoMemory();
    }
    return scratch;
}

typedef struct {
    const char *name;
    int writable;
    int shape[4];      /* which of the sizes below each axis is */
} HeadsOperand;

enum { BATCH, HEADS, QUERIES, KEYS, DEPTH, VALUE_DEPTH, SIZES };

/* Reads `count` operands of `kernel` (q first: its shape names N, H, Tq, D; then k's Tk, v's
 * Dv), checks [start, stop) against the N * H heads and p's rows against Tk. */
static int take_attention(const char *kernel, PyObject *const *objects, const HeadsOperand *spec,
                          int count, Py_buffer *views, Heads *heads, Py_ssize_t sizes[SIZES],
                          Py_ssize_t start, Py_ssize_t stop, int p_index)
{
    for (int s = 0; s < SIZES; s++)
        sizes[s] = -1;
    for (int k = 0; k < count; k++) {
        Py_ssize_t shape[4];
        for (int axis = 0; axis < 4; axis++)
            shape[axis] = sizes[spec[k].shape[axis]];
        if (take_heads(kernel, spec[k].name, objects[k], &views[k], spec[k].writable, shape,
                       &heads[k]) < 0) {
            release_views(views, k);
            return -1;
        }
        for (int axis = 0; axis < 4; axis++)
            sizes[spec[k].shape[axis]] = shape[axis];
    }
    const char *problem = NULL;
    if (heads[p_index].row_stride != sizes[KEYS])
        problem = "p's rows must be contiguous, one after another";
    else if (start < 0 || stop < start || stop > sizes[BATCH] * sizes[HEADS])
        problem = "start and stop must satisfy 0 <= start <= stop <= batch * heads";
    if (problem != NULL) {
        PyErr_Format(PyExc_ValueError, "%s: %s", kernel, problem);
        release_views(views, count);
        return -1;
    }
    return 0;
}

static const HeadsOperand ATTENTION_FORWARD[] = {
    {"q", 0, {BATCH, HEADS, QUERIES, DEPTH}}, {"k", 0, {BATCH, HEADS, KEYS, DEPTH}},
    {"v", 0, {BATCH, HEADS, KEYS, VALUE_DEPTH}}, {"p", 1, {BATCH, HEADS, QUERIES, KEYS}},
    {"y", 1, {BATCH, HEADS, QUERIES, VALUE_DEPTH}}};

static PyObject *attention_forward(PyObject *self, PyObject *args)
{
    PyObject *objects[5];
    float scale;
    int causal;
    Py_ssize_t start, stop, sizes[SIZES];
    if (!PyArg_ParseTuple(args, "OOOOOfpnn:attention_forward", &objects[0], &objects[1],
                          &objects[2], &objects[3], &objects[4], &scale, &causal, &start, &stop))
        return NULL;
    Py_buffer views[5];
    Heads h[5];
    if (take_attention("attention_forward", objects, ATTENTION_FORWARD, 5, views, h, sizes,
                       start, stop, 3) < 0)
        return NULL;
    float *scratch = take_scratch(sizes[DEPTH] * sizes[KEYS], views, 5);
    if (scratch == NULL)
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    chosen.attention_forward(start, stop, sizes[QUERIES], sizes[KEYS], sizes[DEPTH],
                             sizes[VALUE_DEPTH], h[0], h[1], h[2], h[3], h[4], scale, causal,
                             scratch);
    Py_END_ALLOW_THREADS
    PyMem_RawFree(scratch);
    release_views(views, 5);
    Py_RETURN_NONE;
}

static const HeadsOperand ATTENTION_BACKWARD[] = {
    {"q", 0, {BATCH, HEADS, QUERIES, DEPTH}}, {"k", 0, {BATCH, HEADS, KEYS, DEPTH}},
    {"v", 0, {BATCH, HEADS, KEYS, VALUE_DEPTH}}, {"p", 0, {BATCH, HEADS, QUERIES, KEYS}},
    {"y", 0, {BATCH, HEADS, QUERIES, VALUE_DEPTH}},
    {"dy", 0, {BATCH, HEADS, QUERIES, VALUE_DEPTH}},
    {"dq", 1, {BATCH, HEADS, QUERIES, DEPTH}}, {"dk", 1, {BATCH, HEADS, KEYS, DEPTH}},
    {"dv", 1, {BATCH, HEADS, KEYS, VALUE_DEPTH}}};

static PyObject *attention_backward(PyObject *self, PyObject *args)
{
    PyObject *objects[9];
    float scale;
    int causal;
    Py_ssize_t start, stop, sizes[SIZES];
    if (!PyArg_ParseTuple(args, "OOOOOOOOOfpnn:attention_backward", &objects[0], &objects[1],
                          &objects[2], &objects[3], &objects[4], &objects[5], &objects[6],
                          &objects[7], &objects[8], &scale, &causal, &start, &stop))
        return NULL;
    Py_buffer views[9];
    Heads h[9];
    if (take_attention("attention_backward", objects, ATTENTION_BACKWARD, 9, views, h, sizes,
                       start, stop, 3) < 0)
        return NULL;
    float *scratch = take_scratch((sizes[QUERIES] + sizes[VALUE_DEPTH]) * sizes[KEYS], views, 9);
    if (scratch == NULL)
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    chosen.attention_backward(start, stop, sizes[QUERIES], sizes[KEYS], sizes[DEPTH],
                              sizes[VALUE_DEPTH], h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7],
                              h[8], scale, causal, scratch);
    Py_END_ALLOW_THREADS
    PyMem_RawFree(scratch);
    release_views(views, 9);
    Py_RETURN_NONE;
}
