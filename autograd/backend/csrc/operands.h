/* Reading operands through the buffer protocol (part of _native.c, included once): a 2-D
 * float32 array with contiguous rows becomes Rows, a 1-D array a pointer; anything else is an
 * error naming the kernel and the operand. */

#define MAX_OPERANDS 10

typedef struct {
    const char *name;
    int blocks;             /* its width is blocks * hidden */
    int writable;
    int optional;           /* None is allowed: the kernel gets data == NULL */
    int any_rows;           /* its row count is its own (a table the rows index into) */
} Operand;

typedef struct {
    Py_buffer views[MAX_OPERANDS];
    int taken[MAX_OPERANDS];
    Rows rows[MAX_OPERANDS];
    Py_ssize_t count, hidden;
} Operands;

static void release(Operands *operands, int count)
{
    for (int k = 0; k < count; k++)
        if (operands->taken[k])
            PyBuffer_Release(&operands->views[k]);
}

/* The pending error (the buffer protocol's own) raised again with the kernel and the operand
 * named, keeping its type. */
static void name_the_operand(const char *kernel, const char *name)
{
#if PY_VERSION_HEX >= 0x030C0000
    PyObject *error = PyErr_GetRaisedException();
    PyErr_Format((PyObject *)Py_TYPE(error), "%s: %s: %S", kernel, name, error);
    Py_DECREF(error);
#else
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyErr_NormalizeException(&type, &value, &traceback);
    PyErr_Format(type, "%s: %s: %S", kernel, name, value);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(traceback);
#endif
}

/* Reads the operands of `kernel` from `objects`: the rows and hidden width come from operand
 * `reference` (one block wide); every other operand must be (rows, blocks * hidden), or
 * (any, blocks * hidden) where marked any_rows. */
static int take_operand_array(const char *kernel, PyObject *const *objects, const Operand *spec,
                              int count, int reference, Operands *out)
{
    memset(out->taken, 0, sizeof out->taken);
    for (int k = 0; k < count; k++) {
        PyObject *object = objects[k];
        out->rows[k].data = NULL;
        out->rows[k].stride = 0;
        if (object == Py_None && spec[k].optional)
            continue;
        Py_buffer *view = &out->views[k];
        int flags = PyBUF_STRIDES | PyBUF_FORMAT | (spec[k].writable ? PyBUF_WRITABLE : 0);
        if (PyObject_GetBuffer(object, view, flags) < 0) {
            name_the_operand(kernel, spec[k].name);
            release(out, k);
            return -1;
        }
        out->taken[k] = 1;
        if (view->ndim != 2 || view->itemsize != 4 || strcmp(view->format, "f") != 0
                || (view->shape[1] > 1 && view->strides[1] != 4) || view->strides[0] % 4 != 0
                || view->strides[0] < 0) {
            PyErr_Format(PyExc_ValueError, "%s: expected %s as a 2-D float32 array with "
                         "contiguous rows", kernel, spec[k].name);
            release(out, k + 1);
            return -1;
        }
        out->rows[k].data = (float *)view->buf;
        out->rows[k].stride = view->strides[0] / 4;
    }
    const Py_buffer *shape_of = &out->views[reference];
    out->count = shape_of->shape[0];
    out->hidden = shape_of->shape[1];
    for (int k = 0; k < count; k++) {
        if (!out->taken[k])
            continue;
        const Py_buffer *view = &out->views[k];
        if (spec[k].any_rows && view->shape[1] != spec[k].blocks * out->hidden) {
            PyErr_Format(PyExc_ValueError, "%s: expected %s as a 2-D float32 array of %zd "
                         "contiguous columns, got (%zd, %zd)", kernel, spec[k].name,
                         spec[k].blocks * out->hidden, view->shape[0], view->shape[1]);
            release(out, count);
            return -1;
        }
        if (!spec[k].any_rows && (view->shape[0] != out->count
                                  || view->shape[1] != spec[k].blocks * out->hidden)) {
            PyErr_Format(PyExc_ValueError, "%s: expected %s of shape (%zd, %zd), got (%zd, %zd)",
                         kernel, spec[k].name, out->count, spec[k].blocks * out->hidden,
                         view->shape[0], view->shape[1]);
            release(out, count);
            return -1;
        }
    }
    return 0;
}

/* The same from a tuple of exactly `count` objects (a binding's arguments). */
static int take_operands(const char *kernel, PyObject *args, const Operand *spec, int count,
                         int reference, Operands *out)
{
    if (!PyTuple_Check(args) || PyTuple_GET_SIZE(args) != count) {
        PyErr_Format(PyExc_TypeError, "%s: expected %d arrays, got %zd", kernel, count,
                     PyTuple_Check(args) ? PyTuple_GET_SIZE(args) : (Py_ssize_t)-1);
        return -1;
    }
    return take_operand_array(kernel, &PyTuple_GET_ITEM(args, 0), spec, count, reference, out);
}

/* A 1-D operand of `count` elements of one item size and one of the given formats. */
static int take_vector(const char *kernel, const char *name, PyObject *object, Py_buffer *view,
                       int writable, Py_ssize_t count, Py_ssize_t itemsize, const char *formats,
                       const char *what)
{
    int flags = PyBUF_STRIDES | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(object, view, flags) < 0) {
        name_the_operand(kernel, name);
        return -1;
    }
    const char *format = view->format[0] == '<' || view->format[0] == '=' ? view->format + 1
                                                                          : view->format;
    if (view->ndim != 1 || view->itemsize != itemsize || strlen(format) != 1
            || strchr(formats, format[0]) == NULL
            || (view->shape[0] > 1 && view->strides[0] != itemsize)) {
        PyErr_Format(PyExc_ValueError, "%s: expected %s as a contiguous 1-D %s array", kernel,
                     name, what);
        PyBuffer_Release(view);
        return -1;
    }
    if (view->shape[0] != count) {
        PyErr_Format(PyExc_ValueError, "%s: expected %s of %zd elements, got %zd", kernel, name,
                     count, view->shape[0]);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* An optional 1-D float32 operand (None gives NULL). */
static int take_optional_vector(const char *kernel, const char *name, PyObject *object,
                                Py_buffer *view, int writable, Py_ssize_t count, float **data)
{
    *data = NULL;
    view->obj = NULL;
    if (object == Py_None)
        return 0;
    if (take_vector(kernel, name, object, view, writable, count, 4, "f", "float32") < 0)
        return -1;
    *data = (float *)view->buf;
    return 0;
}

static void release_vector(Py_buffer *view)
{
    if (view->obj != NULL)
        PyBuffer_Release(view);
}

/* The byte past the last element a view reaches (its strides non-negative) */
static const char *view_end(const Py_buffer *view)
{
    if (view->strides == NULL)
        return (const char *)view->buf + view->len;
    const char *end = (const char *)view->buf + view->itemsize;
    for (int axis = 0; axis < view->ndim; axis++) {
        if (view->shape[axis] == 0)
            return view->buf;
        end += (view->shape[axis] - 1) * view->strides[axis];
    }
    return end;
}

/* Whether two views' spans, first to last element, meet (a strided view's span is wider than
 * its len: the in-place checks of the kernels that write one operand while reading another) */
static int views_overlap(const Py_buffer *a, const Py_buffer *b)
{
    return (const char *)a->buf < view_end(b) && (const char *)b->buf < view_end(a);
}
