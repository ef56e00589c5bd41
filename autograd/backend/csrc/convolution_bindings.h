/* A stride-1 convolution without im2col columns (part of _native.c, included once, after
 * pooling_bindings.h and columns_bindings.h, whose take_image and check_windows_of it uses):
 * the input copied once into a padded batch-last buffer, then the product of kernel
 * _convolution.h over the C pool. The columns path wrote K = C * kh * kw rows of the
 * output's length and the GEMM read them back (1.7 MB for a 3x3 convolution of 16 channels
 * on a 55x55 image, more than the GEMM's own time's worth of memory traffic at batch 1). */

typedef struct {
    const float *x;
    Py_ssize_t x_strides[4];            /* (N, C, H, W), in elements */
    Py_ssize_t batch, height, width, padded_height, padded_width;
    int top, left;
    float *padded;                      /* (C, Hp, Wp, N) */
} Padding;

/* Channels [start, stop) of the padded copy: zeros around each image's rows. */
static void padding_channels(void *context, Py_ssize_t start, Py_ssize_t stop)
{
    const Padding *p = context;
    const Py_ssize_t *s = p->x_strides;
    Py_ssize_t n = p->batch, row_length = p->padded_width * n;
    Py_ssize_t before = p->left * n, inside = p->width * n;
    for (Py_ssize_t c = start; c < stop; c++) {
        float *plane = p->padded + c * p->padded_height * row_length;
        for (Py_ssize_t ph = 0; ph < p->padded_height; ph++) {
            float *row = plane + ph * row_length;
            Py_ssize_t h = ph - p->top;
            if (h < 0 || h >= p->height) {
                memset(row, 0, sizeof(float) * row_length);
                continue;
            }
            const float *source = p->x + c * s[1] + h * s[2];
            for (Py_ssize_t q = 0; q < before; q++)
                row[q] = 0.0f;
            float *target = row + before;
            if ((n == 1 && s[3] == 1) || (s[0] == 1 && s[3] == n))     /* one run */
                for (Py_ssize_t q = 0; q < inside; q++)
                    target[q] = source[q];
            else
                for (Py_ssize_t w = 0; w < p->width; w++)
                    for (Py_ssize_t k = 0; k < n; k++)
                        target[w * n + k] = source[w * s[3] + k * s[0]];
            for (Py_ssize_t q = before + inside; q < row_length; q++)
                row[q] = 0.0f;
        }
    }
}

static void shifted_tiles(void *context, Py_ssize_t start, Py_ssize_t stop)
{
    chosen.shifted_products(context, start, stop);
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

static int views_overlap(const Py_buffer *a, const Py_buffer *b)
{
    return (const char *)a->buf < view_end(b) && (const char *)b->buf < view_end(a);
}

/* shifted_convolution(x, weights, bias or None, y, padded, top, left, dilation_h, dilation_w,
 * out_h, out_w, relu, threads): y = conv2d(x, weights) + bias (then max(y, 0) where relu) at
 * stride 1, groups 1: x (N, C, H, W) float32 in any layout, weights (O, C, kh, kw)
 * C-contiguous, y (O, out_h * out_w * N) batch-last with contiguous rows, padded a
 * C-contiguous float32 scratch of C * Hp * Wp * N + SHIFT_COLUMNS values or more (Hp =
 * out_h + (kh - 1) dh, Wp likewise; the pads past the bottom and right are what is left) */
static PyObject *shifted_convolution(PyObject *self, PyObject *args)
{
    const char *kernel = "shifted_convolution";
    PyObject *x_object, *weights_object, *bias_object, *y_object, *padded_object;
    int top, left, dilation_height, dilation_width, relu, threads;
    Py_ssize_t out_height, out_width;
    if (!PyArg_ParseTuple(args, "OOOOOiiiinnpi:shifted_convolution", &x_object,
                          &weights_object, &bias_object, &y_object, &padded_object, &top, &left,
                          &dilation_height, &dilation_width, &out_height, &out_width, &relu,
                          &threads))
        return NULL;
    Py_buffer views[5];                 /* x, weights, bias, y, padded */
    int taken = 0;
    Padding pad;
    ShiftedProduct job;
    Py_ssize_t shape[4] = {-1, -1, -1, -1}, *offsets = NULL;
    if (take_image(kernel, "x", x_object, &views[0], 0, 4, "f", shape, pad.x_strides) < 0)
        return NULL;
    taken = 1;
    if (PyObject_GetBuffer(weights_object, &views[1], PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        name_the_operand(kernel, "weights");
        goto fail;
    }
    taken = 2;
    Py_buffer *w = &views[1];
    if (w->ndim != 4 || w->itemsize != 4 || strcmp(w->format, "f") != 0
            || w->shape[1] != shape[1]) {
        PyErr_Format(PyExc_ValueError, "%s: expected weights as a C-contiguous float32 array "
                     "of shape (O, %zd, kh, kw)", kernel, shape[1]);
        goto fail;
    }
    int kernel_height = (int)w->shape[2], kernel_width = (int)w->shape[3];
    if (check_windows_of(kernel, kernel_height, kernel_width, 1, 1, dilation_height,
                         dilation_width, top, left, out_height, out_width, 1) < 0)
        goto fail;
    if (w->shape[0] < 1 || shape[0] < 1 || shape[1] < 1) {
        PyErr_Format(PyExc_ValueError, "%s: expected at least one image, channel and output "
                     "channel, got x of shape (%zd, %zd, ...) and %zd output channels", kernel,
                     shape[0], shape[1], w->shape[0]);
        goto fail;
    }
    float *bias;
    if (take_optional_vector(kernel, "bias", bias_object, &views[2], 0, w->shape[0], &bias) < 0)
        goto fail;
    taken = 3;
    pad.batch = shape[0];
    pad.height = shape[2];
    pad.width = shape[3];
    pad.padded_height = out_height + (Py_ssize_t)(kernel_height - 1) * dilation_height;
    pad.padded_width = out_width + (Py_ssize_t)(kernel_width - 1) * dilation_width;
    pad.top = top;
    pad.left = left;
    if (pad.padded_height < top + pad.height || pad.padded_width < left + pad.width) {
        PyErr_Format(PyExc_ValueError, "%s: expected an output of %zd x %zd or more for a "
                     "%zd x %zd input with pads (%d, %d), got %zd x %zd", kernel,
                     top + pad.height - (Py_ssize_t)(kernel_height - 1) * dilation_height,
                     left + pad.width - (Py_ssize_t)(kernel_width - 1) * dilation_width,
                     pad.height, pad.width, top, left, out_height, out_width);
        goto fail;
    }
    Py_ssize_t n = pad.batch, plane = pad.padded_height * pad.padded_width * n;
    if (PyObject_GetBuffer(y_object, &views[3], PyBUF_STRIDES | PyBUF_FORMAT | PyBUF_WRITABLE)
            < 0) {
        name_the_operand(kernel, "y");
        goto fail;
    }
    taken = 4;
    Py_buffer *y = &views[3];
    if (y->ndim != 2 || y->itemsize != 4 || strcmp(y->format, "f") != 0
            || y->shape[0] != w->shape[0] || y->shape[1] != out_height * out_width * n
            || (y->shape[1] > 1 && y->strides[1] != 4) || y->strides[0] < 4 * y->shape[1]) {
        PyErr_Format(PyExc_ValueError, "%s: expected y as a float32 array of shape (%zd, %zd) "
                     "with contiguous rows", kernel, w->shape[0], out_height * out_width * n);
        goto fail;
    }
    if (PyObject_GetBuffer(padded_object, &views[4],
                           PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE) < 0) {
        name_the_operand(kernel, "padded");
        goto fail;
    }
    taken = 5;
    Py_ssize_t needed = shape[1] * plane + SHIFT_COLUMNS;
    if (views[4].itemsize != 4 || strcmp(views[4].format, "f") != 0
            || views[4].len < 4 * needed) {
        PyErr_Format(PyExc_ValueError, "%s: expected padded as a C-contiguous float32 array of "
                     "%zd values or more", kernel, needed);
        goto fail;
    }
    for (int k = 0; k < 4; k++)
        if (views[k].obj != NULL && (views_overlap(&views[4], &views[k])
                                     || ((k == 1 || k == 2) && views_overlap(y, &views[k])))) {
            PyErr_Format(PyExc_ValueError, "%s: padded and y must not overlap the operands",
                         kernel);
            goto fail;
        }
    Py_ssize_t k = shape[1] * kernel_height * kernel_width;
    offsets = PyMem_Malloc(sizeof(Py_ssize_t) * k);
    if (offsets == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    for (Py_ssize_t c = 0, p = 0; c < shape[1]; c++)
        for (int i = 0; i < kernel_height; i++)
            for (int j = 0; j < kernel_width; j++)
                offsets[p++] = c * plane + ((Py_ssize_t)i * dilation_height * pad.padded_width
                                            + (Py_ssize_t)j * dilation_width) * n;
    pad.x = (const float *)views[0].buf;
    pad.padded = (float *)views[4].buf;
    job = (ShiftedProduct){(const float *)w->buf, pad.padded, bias, offsets, (float *)y->buf,
                           y->strides[0] / 4, w->shape[0], k, pad.padded_width * n,
                           out_width * n, out_height, (w->shape[0] + SHIFT_ROWS - 1)
                                                      / SHIFT_ROWS, relu};
    Py_ssize_t flat = out_height * job.row_length;
    Py_ssize_t tasks = (flat + SHIFT_COLUMNS - 1) / SHIFT_COLUMNS * job.row_tiles;
    Py_BEGIN_ALLOW_THREADS
    parallel(padding_channels, &pad, shape[1], row_parts(shape[1], plane, threads));
    memset(pad.padded + shape[1] * plane, 0, sizeof(float) * SHIFT_COLUMNS);
    parallel(shifted_tiles, &job, tasks, tasks < threads ? (int)tasks : threads);
    Py_END_ALLOW_THREADS
    PyMem_Free(offsets);
    release_views(views, taken);
    Py_RETURN_NONE;
fail:
    release_views(views, taken);
    return NULL;
}
