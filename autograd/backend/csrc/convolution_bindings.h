/* A convolution without im2col columns (part of _native.c, included once, after
 * pooling_bindings.h and columns_bindings.h, whose take_image and check_windows_of it uses):
 * the input copied once into a padded batch-last buffer, then the product of
 * kernel_convolution.h over the C pool. The columns path wrote K = C * kh * kw rows of the
 * output's length and the GEMM read them back (1.7 MB for a 3x3 convolution of 16 channels
 * on a 55x55 image, more than the GEMM's own time's worth of memory traffic at batch 1).
 *
 * At a stride s the padded input is split into its s_h x s_w phases, (C, s_h, s_w, Hq, Wq, N):
 * phase (a, b) holds the padded rows a, a + s_h, ... and columns b, b + s_w, ...; a kernel
 * offset (i, j) of every output reads one phase, (i dh % s_h, j dw % s_w), at a shift of
 * (i dh / s_h, j dw / s_w) phase pixels: again a run at a shift, as at stride 1 (where the
 * phase is the padded input itself). Phase (a, b) of channel c is the im2col row (c, a, b)
 * of an s_h x s_w kernel at stride s over Hq x Wq outputs, so the copy is
 * columns_bindings.h's columns_rows. */

static void shifted_tiles(void *context, Py_ssize_t start, Py_ssize_t stop)
{
    chosen.shifted_products(context, start, stop);
}

/* The columns (compact) built from the padded phases: output row oh of column row p is the run
 * of out_w N values at offsets[p] + oh Wq N, no bounds to check (straight from x, each of a 4x4
 * output's 1,152 four-value runs checked its bounds and took 6.5 of a 14 us convolution). */
typedef struct {
    const float *phases;
    const Py_ssize_t *offsets;          /* of each row's first run in the phases */
    float *cols;                        /* (k, length) */
    Py_ssize_t length, run, row_step, out_height;
} RunsOfPhases;

static void columns_of_phases(void *context, Py_ssize_t start, Py_ssize_t stop)
{
    const RunsOfPhases *p = context;
    for (Py_ssize_t q = start; q < stop; q++) {
        float *out = p->cols + q * p->length;
        const float *source = p->phases + p->offsets[q];
        for (Py_ssize_t oh = 0; oh < p->out_height; oh++, out += p->run) {
            const float *from = source + oh * p->row_step;
            Py_ssize_t v = 0;
            for (; v + 4 <= p->run; v += 4)
                memcpy(out + v, from + v, 4 * sizeof(float));
            for (; v < p->run; v++)
                out[v] = from[v];
        }
    }
}

/* shifted_convolution(x, weights, bias or None, y, padded, stride_h, stride_w, top, left,
 * dilation_h, dilation_w, out_h, out_w, relu, threads, compact[, minimum_work]):
 * y = conv2d(x, weights) + bias (then max(y, 0) where relu), groups 1, on at most `threads`
 * threads of minimum_work multiply-adds each or more: x (N, C, H, W) float32 in any layout, weights
 * (O, C, kh, kw) C-contiguous, y (O, out_h * out_w * N) batch-last with contiguous rows,
 * padded a C-contiguous float32 scratch of C * s_h * s_w * Hq * Wq * N + SHIFT_COLUMNS values
 * or more (Hq = out_h + (kh - 1) dh / s_h, Wq likewise; with compact, C kh kw rows of
 * out_h out_w N + SHIFT_COLUMNS more before them); zeros past the input's bottom and right,
 * whatever the output size asks */
static PyObject *shifted_convolution(PyObject *self, PyObject *args)
{
    const char *kernel = "shifted_convolution";
    PyObject *x_object, *weights_object, *bias_object, *y_object, *padded_object;
    int stride_height, stride_width, top, left, dilation_height, dilation_width, relu, threads;
    int compact;
    Py_ssize_t out_height, out_width, minimum_work = SHIFT_MIN_WORK_PER_THREAD;
    if (!PyArg_ParseTuple(args, "OOOOOiiiiiinnpip|n:shifted_convolution", &x_object,
                          &weights_object, &bias_object, &y_object, &padded_object,
                          &stride_height, &stride_width, &top, &left, &dilation_height,
                          &dilation_width, &out_height, &out_width, &relu, &threads, &compact,
                          &minimum_work))
        return NULL;
    Py_buffer views[5];                 /* x, weights, bias, y, padded */
    int taken = 0;
    ShiftedProduct job;
    Py_ssize_t shape[4] = {-1, -1, -1, -1}, s[4], *offsets = NULL;
    if (take_image(kernel, "x", x_object, &views[0], 0, 4, "f", shape, s) < 0)
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
    if (check_windows_of(kernel, kernel_height, kernel_width, stride_height, stride_width,
                         dilation_height, dilation_width, top, left, out_height, out_width,
                         1) < 0)
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
    Py_ssize_t phase_height = out_height + (Py_ssize_t)(kernel_height - 1) * dilation_height
                                           / stride_height;
    Py_ssize_t phase_width = out_width + (Py_ssize_t)(kernel_width - 1) * dilation_width
                                         / stride_width;
    Py_ssize_t n = shape[0], plane = phase_height * phase_width * n;
    Py_ssize_t channel_block = (Py_ssize_t)stride_height * stride_width * plane;
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
    /* With `compact` the columns themselves are built (from the padded phases, after them
     * in padded) and read as runs: no dropped columns, for one copy of the input kh kw times
     * (the caller's rule: small images, native_convolution.compact) */
    Py_ssize_t length = out_height * out_width * n, k = shape[1] * kernel_height * kernel_width;
    Py_ssize_t columns_size = compact ? k * length + SHIFT_COLUMNS : 0;
    Py_ssize_t needed = columns_size + shape[1] * channel_block + SHIFT_COLUMNS;
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
    /* A 1x1 kernel at stride 1 on an unpadded x whose channels are dense (C, H, W, N) planes
     * (one image, or batch-last): x is its own padded copy, read in place, but for the last
     * tile's runs, copied (they would end past x). */
    int in_place = !compact && kernel_height == 1 && kernel_width == 1 && stride_height == 1
        && stride_width == 1 && top == 0 && left == 0 && out_height == shape[2]
        && out_width == shape[3] && s[3] == n && s[2] == shape[3] * n
        && (n == 1 || s[0] == 1) && s[1] >= shape[2] * s[2] && !views_overlap(y, &views[0]);
    offsets = PyMem_Malloc(sizeof(Py_ssize_t) * k * (in_place || compact ? 2 : 1)
                           + (in_place ? sizeof(float) * k * SHIFT_COLUMNS : 0));
    if (offsets == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    for (Py_ssize_t c = 0, p = 0; c < shape[1]; c++)
        for (int i = 0; i < kernel_height; i++)
            for (int j = 0; j < kernel_width; j++) {
                Py_ssize_t down = (Py_ssize_t)i * dilation_height;
                Py_ssize_t across = (Py_ssize_t)j * dilation_width;
                Py_ssize_t phase = (down % stride_height) * stride_width + across % stride_width;
                offsets[p] = in_place ? c * s[1]
                    : c * channel_block + phase * plane
                      + (down / stride_height * phase_width + across / stride_width) * n;
                p++;
            }
    const float *x = views[0].buf;
    float *padded = views[4].buf;
    float *columns_built = padded;
    padded += columns_size;             /* the phases: past the columns, where built */
    job = (ShiftedProduct){(const float *)w->buf, padded, bias, offsets, (float *)y->buf,
                           y->strides[0] / 4, w->shape[0], k, phase_width * n,
                           out_width * n, out_height, (w->shape[0] + SHIFT_ROWS - 1)
                                                      / SHIFT_ROWS, 0, 0, NULL, NULL, relu};
    /* the padded input's phases (im2col rows of an s_h x s_w kernel at stride s) */
    Columns phases = {x, {s[0], s[1], s[2], s[3]}, n, shape[1], shape[2], shape[3],
                      phase_height, phase_width, stride_height, stride_width, stride_height,
                      stride_width, 1, 1, top, left, padded,
                      shape[1] * stride_height * stride_width,
                      shape[1] * channel_block, 0};
    RunsOfPhases runs = {padded, offsets, columns_built, length, out_width * n,
                         phase_width * n, out_height};
    if (compact) {                      /* one row of all the outputs, every column kept */
        job.row_length = job.valid_length = length;
        job.out_height = 1;
        job.padded = columns_built;
        job.offsets = offsets + k;
        for (Py_ssize_t p = 0; p < k; p++)
            offsets[k + p] = p * length;
    }
    Py_ssize_t flat = job.out_height * job.row_length;
    job.flat_tiles = (flat + SHIFT_COLUMNS - 1) / SHIFT_COLUMNS;
    if (in_place) {
        Py_ssize_t *tail_offsets = offsets + k, last = (job.flat_tiles - 1) * SHIFT_COLUMNS;
        float *tail = (float *)(tail_offsets + k);
        for (Py_ssize_t c = 0; c < k; c++) {
            tail_offsets[c] = c * SHIFT_COLUMNS;
            for (Py_ssize_t q = 0; q < SHIFT_COLUMNS; q++)
                tail[c * SHIFT_COLUMNS + q] = last + q < flat ? x[offsets[c] + last + q]
                                                              : 0.0f;
        }
        job.padded = x;
        job.tail = tail;
        job.tail_offsets = tail_offsets;
    }
    /* a block's runs of the input (K rows of a tile's width each) within 256 KB; a product
     * whose runs fit in 1 MB (a core's L2 here) is one block, so that the threads' parts
     * split its channel tiles evenly (cut between blocks, one part of a 13x13 image's 5.5
     * tiles had 3 and the other 2.5: SqueezeNet's 3x3 convolutions there 5-6% faster) */
    job.block = ((Py_ssize_t)1 << 16) / (k * SHIFT_COLUMNS);
    job.block = job.block < 1 ? 1 : job.block > SHIFT_BLOCK ? SHIFT_BLOCK : job.block;
    if (job.flat_tiles <= SHIFT_BLOCK && k * job.flat_tiles * SHIFT_COLUMNS <= (1 << 18))
        job.block = job.flat_tiles;
    Py_ssize_t tasks = job.flat_tiles * job.row_tiles;
    /* a thread's share of the products at least minimum_work multiply-adds: below it the
     * second thread's start and wait cost more than its half (a batch-1 8x8 image's 3x3
     * convolutions from 1 to 16 channels: 1.1-1.6x one thread's time at 2) */
    Py_ssize_t most = w->shape[0] * flat * k / (minimum_work > 1 ? minimum_work : 1);
    int parts = tasks < threads ? (int)tasks : threads;
    if (most < parts)
        parts = most > 1 ? (int)most : 1;
    /* every part of a built product reads all of its columns, built by one thread where
     * they are few: such a product (columns within a core's L1) takes a second thread only
     * for SHIFT_BUILT_CHANNELS output channels or more a part, each value moved from the
     * other core then serving that many products (the digits CNN's 32 -> 64 channels on a 4x4
     * output, 4.6K values: 10.3 us on one thread, as long on two where the second core is
     * near, 25 where it is far: benchmarks/NOTES.md, twenty-fourth session) */
    Py_ssize_t most_built = w->shape[0] / SHIFT_BUILT_CHANNELS;
    if (compact && k * length * (Py_ssize_t)sizeof(float) <= SHIFT_CACHED_COLUMNS
            && most_built < parts)
        parts = most_built > 1 ? (int)most_built : 1;
    Py_BEGIN_ALLOW_THREADS
    if (!in_place) {
        parallel(columns_rows, &phases, phases.rows_per_group,
                 row_parts(phases.rows_per_group, plane, threads));
        memset(padded + shape[1] * channel_block, 0, sizeof(float) * SHIFT_COLUMNS);
    }
    if (compact) {
        parallel(columns_of_phases, &runs, k, row_parts(k, length, threads));
        memset(columns_built + k * length, 0, sizeof(float) * SHIFT_COLUMNS);
    }
    parallel(shifted_tiles, &job, tasks, parts);
    Py_END_ALLOW_THREADS
    PyMem_Free(offsets);
    release_views(views, taken);
    Py_RETURN_NONE;
fail:
    release_views(views, taken);
    return NULL;
}
