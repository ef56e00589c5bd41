/* A convolution's im2col columns, read straight from the unpadded input (part of _native.c,
 * included once, after pooling_bindings.h, whose take_image it uses): row (c, i, j) of the
 * columns holds, for every output pixel (oh, ow) and image n, the input its kernel offset (i, j)
 * reads, 0 where that falls in the padding. The rows are split over the C pool. Before, the
 * input was copied into a padded buffer, then a strided view of it copied into the columns,
 * each pass cut into chunks for autograd's Python threads (15-40 us a hand-off): a
 * SqueezeNet forward made 17 such passes. A pure copy: one build serves every instruction
 * set (memcpy and memset are the library's). */

/* The window arguments of columns and col2im: positive kernel, stride, dilation, output sizes
 * and groups, non-negative pads; else a ValueError naming `kernel`. */
static int check_windows_of(const char *kernel, int kernel_height, int kernel_width,
                            int stride_height, int stride_width, int dilation_height,
                            int dilation_width, int top, int left, Py_ssize_t out_height,
                            Py_ssize_t out_width, int groups)
{
    if (kernel_height < 1 || kernel_width < 1 || stride_height < 1 || stride_width < 1
            || dilation_height < 1 || dilation_width < 1 || top < 0 || left < 0
            || out_height < 1 || out_width < 1 || groups < 1) {
        PyErr_Format(PyExc_ValueError, "%s: expected positive kernel, stride, dilation, output "
                     "sizes and groups and non-negative pads", kernel);
        return -1;
    }
    return 0;
}

typedef struct {
    const float *x;
    Py_ssize_t x_strides[4];            /* (N, C, H, W), in elements */
    Py_ssize_t batch, channels_per_group, height, width, out_height, out_width;
    int kernel_height, kernel_width, stride_height, stride_width;
    int dilation_height, dilation_width, top, left;
    float *cols;                        /* (groups, rows of a group (+ more), length) */
    Py_ssize_t rows_per_group, group_stride;
    int offset_major;                   /* rows (i, j, c) rather than (c, i, j): Winograd's */
} Columns;

static void columns_rows(void *context, Py_ssize_t start, Py_ssize_t stop)
{
    const Columns *p = context;
    Py_ssize_t window = (Py_ssize_t)p->kernel_height * p->kernel_width;
    Py_ssize_t n = p->batch, row_length = p->out_width * n;
    for (Py_ssize_t q = start; q < stop; q++) {
        Py_ssize_t group = q / p->rows_per_group, r = q % p->rows_per_group;
        Py_ssize_t channel = group * p->channels_per_group + r / window;
        Py_ssize_t offset_index = r % window;
        if (p->offset_major) {
            channel = group * p->channels_per_group + r % p->channels_per_group;
            offset_index = r / p->channels_per_group;
        }
        Py_ssize_t i = offset_index / p->kernel_width, j = offset_index % p->kernel_width;
        float *out = p->cols + group * p->group_stride + r * p->out_height * row_length;
        const float *plane = p->x + channel * p->x_strides[1];
        Py_ssize_t offset = j * p->dilation_width - p->left, low, high;
        inside_outputs(offset, p->stride_width, p->width, p->out_width, &low, &high);
        Py_ssize_t step = p->stride_width * p->x_strides[3];
        for (Py_ssize_t oh = 0; oh < p->out_height; oh++) {
            float *row = out + oh * row_length;
            Py_ssize_t h = oh * p->stride_height + i * p->dilation_height - p->top;
            if (h < 0 || h >= p->height) {
                memset(row, 0, sizeof(float) * row_length);
                continue;
            }
            const float *source = plane + h * p->x_strides[2]
                                  + (low * p->stride_width + offset) * p->x_strides[3];
            if (n == 1) {
                /* loops the compiler vectorizes: a 13-pixel row's three library calls (two
                 * memsets and a memcpy) took longer than the copy */
                for (Py_ssize_t ow = 0; ow < low; ow++)
                    row[ow] = 0.0f;
                if (step == 1)
                    for (Py_ssize_t ow = low; ow < high; ow++)
                        row[ow] = source[ow - low];
                else
                    for (Py_ssize_t ow = low; ow < high; ow++)
                        row[ow] = source[(ow - low) * step];
                for (Py_ssize_t ow = high; ow < p->out_width; ow++)
                    row[ow] = 0.0f;
                continue;
            }
            memset(row, 0, sizeof(float) * low * n);
            memset(row + high * n, 0, sizeof(float) * (p->out_width - high) * n);
            if (step == n && p->x_strides[0] == 1)      /* one block of pixels */
                memcpy(row + low * n, source, sizeof(float) * (high - low) * n);
            else if (p->x_strides[0] == 1)      /* batch-last: a pixel's n values together */
                for (Py_ssize_t ow = low; ow < high; ow++)
                    memcpy(row + ow * n, source + (ow - low) * step, sizeof(float) * n);
            else                                 /* the images apart: one value at a time */
                for (Py_ssize_t ow = low; ow < high; ow++) {
                    const float *pixel = source + (ow - low) * step;
                    for (Py_ssize_t k = 0; k < n; k++)
                        row[ow * n + k] = pixel[k * p->x_strides[0]];
                }
        }
    }
}

/* columns(x, cols, kernel_h, kernel_w, stride_h, stride_w, dilation_h, dilation_w, top, left,
 * out_h, out_w, groups, threads[, offset_major]): the first C / groups * kernel_h * kernel_w
 * rows of each group of cols (groups, rows, out_h * out_w * N), C-contiguous, written from x
 * (N, C, H, W) in any layout (fastest batch-last: the batch innermost in memory, or one
 * image); rows ordered (c, i, j), or (i, j, c) with offset_major (Winograd's input tiles:
 * 6x6 windows of stride 4, a component's rows for every channel together) */
static PyObject *columns(PyObject *self, PyObject *args)
{
    const char *kernel = "columns";
    PyObject *x_object, *cols_object;
    Columns p;
    int groups, threads;
    p.offset_major = 0;
    if (!PyArg_ParseTuple(args, "OOiiiiiiiinnii|p:columns", &x_object, &cols_object,
                          &p.kernel_height, &p.kernel_width, &p.stride_height, &p.stride_width,
                          &p.dilation_height, &p.dilation_width, &p.top, &p.left,
                          &p.out_height, &p.out_width, &groups, &threads, &p.offset_major))
        return NULL;
    if (check_windows_of(kernel, p.kernel_height, p.kernel_width, p.stride_height,
                         p.stride_width, p.dilation_height, p.dilation_width, p.top, p.left,
                         p.out_height, p.out_width, groups) < 0)
        return NULL;
    Py_buffer x_view, cols_view;
    Py_ssize_t shape[4] = {-1, -1, -1, -1};
    if (take_image(kernel, "x", x_object, &x_view, 0, 4, "f", shape, p.x_strides) < 0)
        return NULL;
    p.batch = shape[0];
    p.height = shape[2];
    p.width = shape[3];
    if (shape[1] % groups) {
        PyErr_Format(PyExc_ValueError, "%s: expected x with channels in whole groups, got %zd "
                     "channels in %d groups", kernel, shape[1], groups);
        PyBuffer_Release(&x_view);
        return NULL;
    }
    p.channels_per_group = shape[1] / groups;
    p.rows_per_group = p.channels_per_group * p.kernel_height * p.kernel_width;
    Py_ssize_t length = p.out_height * p.out_width * p.batch;
    if (PyObject_GetBuffer(cols_object, &cols_view,
                           PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE) < 0) {
        name_the_operand(kernel, "cols");
        PyBuffer_Release(&x_view);
        return NULL;
    }
    if (cols_view.ndim != 3 || cols_view.itemsize != 4 || strcmp(cols_view.format, "f") != 0
            || cols_view.shape[0] != groups || cols_view.shape[1] < p.rows_per_group
            || cols_view.shape[2] != length) {
        PyErr_Format(PyExc_ValueError, "%s: expected cols as a C-contiguous float32 array of "
                     "shape (%d, %zd or more, %zd)", kernel, groups, p.rows_per_group, length);
        PyBuffer_Release(&cols_view);
        PyBuffer_Release(&x_view);
        return NULL;
    }
    p.x = (const float *)x_view.buf;
    p.cols = (float *)cols_view.buf;
    p.group_stride = cols_view.shape[1] * length;
    Py_BEGIN_ALLOW_THREADS
    parallel(columns_rows, &p, groups * p.rows_per_group,
             row_parts(groups * p.rows_per_group, length, threads));
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&cols_view);
    PyBuffer_Release(&x_view);
    Py_RETURN_NONE;
}

/* col2im, the columns' adjoint: dx[n, c, h, w] = the sum, over the rows (c, i, j) of dcols
 * and the output pixels (oh, ow) whose window offset (i, j) reads (h, w), of dcols[(c, i, j),
 * (oh, ow, n)]; padding positions dropped. A convolution's input gradient from dcols = W^T dy
 * (convolution.py's _input_gradient_by_col2im). Each thread zeroes and sums its own channels,
 * the offsets in (i, j) order, as the NumPy adds into a zeroed padded buffer did. */
typedef struct {
    const float *dcols;                 /* (C * kh * kw, out_h * out_w * N), C-contiguous */
    float *dx;
    Py_ssize_t dx_strides[4];           /* (N, C, H, W), in elements */
    Py_ssize_t batch, height, width, out_height, out_width;
    int kernel_height, kernel_width, stride_height, stride_width;
    int dilation_height, dilation_width, top, left;
} Col2im;

static void col2im_zero(const Col2im *p, float *plane)
{
    const Py_ssize_t *s = p->dx_strides;
    if (s[0] == 1 && s[3] == p->batch && s[2] == p->width * p->batch) {
        memset(plane, 0, sizeof(float) * p->height * p->width * p->batch);
        return;
    }
    for (Py_ssize_t n = 0; n < p->batch; n++)
        for (Py_ssize_t h = 0; h < p->height; h++)
            for (Py_ssize_t w = 0; w < p->width; w++)
                plane[n * s[0] + h * s[2] + w * s[3]] = 0.0f;
}

static void col2im_channels(void *context, Py_ssize_t start, Py_ssize_t stop)
{
    const Col2im *p = context;
    const Py_ssize_t *s = p->dx_strides;
    Py_ssize_t n = p->batch, row_length = p->out_width * n;
    Py_ssize_t length = p->out_height * row_length;
    for (Py_ssize_t c = start; c < stop; c++) {
        float *plane = p->dx + c * s[1];
        col2im_zero(p, plane);
        for (int i = 0; i < p->kernel_height; i++)
            for (int j = 0; j < p->kernel_width; j++) {
                const float *rows = p->dcols
                    + ((c * p->kernel_height + i) * p->kernel_width + j) * length;
                Py_ssize_t offset = (Py_ssize_t)j * p->dilation_width - p->left, low, high;
                inside_outputs(offset, p->stride_width, p->width, p->out_width, &low, &high);
                Py_ssize_t step = p->stride_width * s[3];
                for (Py_ssize_t oh = 0; oh < p->out_height; oh++) {
                    Py_ssize_t h = oh * p->stride_height + (Py_ssize_t)i * p->dilation_height
                                   - p->top;
                    if (h < 0 || h >= p->height || low >= high)
                        continue;
                    const float *source = rows + oh * row_length + low * n;
                    float *target = plane + h * s[2] + (low * p->stride_width + offset) * s[3];
                    Py_ssize_t count = (high - low) * n;
                    if ((s[0] == 1 || n == 1) && step == n) {    /* one run of pixels */
                        for (Py_ssize_t k = 0; k < count; k++)
                            target[k] += source[k];
                    } else if (s[0] == 1) {        /* batch-last: a pixel's n values together */
                        for (Py_ssize_t ow = 0; ow < high - low; ow++)
                            for (Py_ssize_t k = 0; k < n; k++)
                                target[ow * step + k] += source[ow * n + k];
                    } else {
                        for (Py_ssize_t ow = 0; ow < high - low; ow++)
                            for (Py_ssize_t k = 0; k < n; k++)
                                target[ow * step + k * s[0]] += source[ow * n + k];
                    }
                }
            }
    }
}

/* col2im(dcols, dx, kernel_h, kernel_w, stride_h, stride_w, dilation_h, dilation_w, top, left,
 * out_h, out_w, threads): dx (N, C, H, W), float32 in any layout (fastest batch-last, or one
 * image), written whole from dcols, C-contiguous float32 of C * kh * kw rows of
 * out_h * out_w * N (im2col.columns's layout) */
static PyObject *col2im(PyObject *self, PyObject *args)
{
    const char *kernel = "col2im";
    PyObject *dcols_object, *dx_object;
    Col2im p;
    int threads;
    if (!PyArg_ParseTuple(args, "OOiiiiiiiinni:col2im", &dcols_object, &dx_object,
                          &p.kernel_height, &p.kernel_width, &p.stride_height, &p.stride_width,
                          &p.dilation_height, &p.dilation_width, &p.top, &p.left,
                          &p.out_height, &p.out_width, &threads))
        return NULL;
    if (check_windows_of(kernel, p.kernel_height, p.kernel_width, p.stride_height,
                         p.stride_width, p.dilation_height, p.dilation_width, p.top, p.left,
                         p.out_height, p.out_width, 1) < 0)
        return NULL;
    Py_buffer dx_view, dcols_view;
    Py_ssize_t shape[4] = {-1, -1, -1, -1};
    if (take_image(kernel, "dx", dx_object, &dx_view, 1, 4, "f", shape, p.dx_strides) < 0)
        return NULL;
    p.batch = shape[0];
    p.height = shape[2];
    p.width = shape[3];
    if (PyObject_GetBuffer(dcols_object, &dcols_view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        name_the_operand(kernel, "dcols");
        PyBuffer_Release(&dx_view);
        return NULL;
    }
    Py_ssize_t rows = shape[1] * p.kernel_height * p.kernel_width;
    Py_ssize_t length = p.out_height * p.out_width * p.batch;
    if (dcols_view.itemsize != 4 || strcmp(dcols_view.format, "f") != 0
            || dcols_view.len != 4 * rows * length) {
        PyErr_Format(PyExc_ValueError, "%s: expected dcols as a C-contiguous float32 array of "
                     "%zd x %zd values", kernel, rows, length);
        PyBuffer_Release(&dcols_view);
        PyBuffer_Release(&dx_view);
        return NULL;
    }
    if (views_overlap(&dx_view, &dcols_view)) {
        PyErr_Format(PyExc_ValueError, "%s: dx overlaps dcols", kernel);
        PyBuffer_Release(&dcols_view);
        PyBuffer_Release(&dx_view);
        return NULL;
    }
    p.dcols = (const float *)dcols_view.buf;
    p.dx = (float *)dx_view.buf;
    Py_BEGIN_ALLOW_THREADS
    parallel(col2im_channels, &p, shape[1],
             row_parts(shape[1], (Py_ssize_t)p.kernel_height * p.kernel_width * length,
                       threads));
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&dcols_view);
    PyBuffer_Release(&dx_view);
    Py_RETURN_NONE;
}
