/* Max pooling of (N, C, H, W) float32 arrays with any non-negative strides (the batch-last
 * layouts of layout.py included), one (n, c) plane per task over the thread pool (part of
 * _native.c, included once).
 *
 * Each output is the maximum of its window, the kernel offsets visited in row-major order and
 * a padding offset (outside the input) counting as -inf; `winner` records the offset of the
 * first maximum (a later offset wins only where strictly greater) and a NaN propagates, as
 * the portable code in pooling.py computes them with NumPy's maximum. Backward gives each
 * output's gradient to the input its winner names (nothing to a padding offset). */

typedef struct {
    const float *x;
    Py_ssize_t x_strides[4];
    float *y;
    Py_ssize_t y_strides[4];
    unsigned char *winner;             /* NULL where not wanted */
    Py_ssize_t winner_strides[4];
    Py_ssize_t channels, height, width, out_height, out_width;
    int kernel_height, kernel_width, stride_height, stride_width, top, left;
} MaxPool;

/* Outputs of a row handled at once (each thread's scratch, on its stack) */
#define POOL_ROW_CHUNK 512

#define AT(base, strides, n, c) ((base) + (n) * (strides)[0] + (c) * (strides)[1])

/* Without winners: each plane separably (kernel_pooling.h), a row of scratch per thread; with
 * no room for it, the row-pass kernel below. */
static int max_pool_planes_separably(const MaxPool *p, Py_ssize_t start, Py_ssize_t stop)
{
    int shuffled = p->x_strides[3] == 1 && p->y_strides[3] == 1 && p->stride_width == 2
                   && p->width >= POOL_CHUNK && p->left <= POOL_SHUFFLE_GUARD;
    Py_ssize_t size = shuffled ? POOL_SHUFFLE_SCRATCH(p->width, p->out_width, p->kernel_width)
                               : p->width + p->out_width + 2;
    float *row_max = PyMem_RawMalloc(sizeof(float) * (size_t)size);
    if (row_max == NULL)
        return 0;
    float *best = row_max + p->width + 1;
    for (Py_ssize_t t = 0; shuffled && t < size; t++)
        row_max[t] = -INFINITY;
    for (Py_ssize_t plane = start; plane < stop; plane++) {
        Py_ssize_t n = plane / p->channels, c = plane % p->channels;
        if (shuffled) {
            chosen.max_pool_plane_shuffled(
                AT(p->x, p->x_strides, n, c), p->x_strides[2], p->height, p->width,
                AT(p->y, p->y_strides, n, c), p->y_strides[2], p->out_height, p->out_width,
                p->kernel_height, p->kernel_width, p->stride_height, p->top, p->left, row_max);
            continue;
        }
        chosen.max_pool_plane_separable(
            p->x + n * p->x_strides[0] + c * p->x_strides[1], p->x_strides[2],
            p->x_strides[3], p->height, p->width,
            p->y + n * p->y_strides[0] + c * p->y_strides[1], p->y_strides[2],
            p->y_strides[3], p->out_height, p->out_width, p->kernel_height, p->kernel_width,
            p->stride_height, p->stride_width, p->top, p->left, row_max, best);
    }
    PyMem_RawFree(row_max);
    return 1;
}

static void max_pool_planes(void *context, Py_ssize_t start, Py_ssize_t stop)
{
    const MaxPool *p = context;
    if (p->winner == NULL && max_pool_planes_separably(p, start, stop))
        return;
    float best[POOL_ROW_CHUNK];
    int32_t first[POOL_ROW_CHUNK];
    for (Py_ssize_t plane = start; plane < stop; plane++) {
        Py_ssize_t n = plane / p->channels, c = plane % p->channels;
        for (Py_ssize_t from = 0; from < p->out_width; from += POOL_ROW_CHUNK) {
            Py_ssize_t count = p->out_width - from < POOL_ROW_CHUNK ? p->out_width - from
                                                                      : POOL_ROW_CHUNK;
            unsigned char *winner = p->winner == NULL ? NULL
                : AT(p->winner, p->winner_strides, n, c) + from * p->winner_strides[3];
            chosen.max_pool_plane(AT(p->x, p->x_strides, n, c), p->x_strides[2],
                                  p->x_strides[3], p->height, p->width,
                                  AT(p->y, p->y_strides, n, c) + from * p->y_strides[3],
                                  p->y_strides[2], p->y_strides[3], winner,
                                  p->winner_strides[2], p->winner_strides[3], p->out_height,
                                  from, count, p->kernel_height, p->kernel_width,
                                  p->stride_height, p->stride_width, p->top, p->left, best,
                                  first);
        }
    }
}

/* Without winners, at stride 2 along the rows of a batch-last batch (C, H, W, N): channels
 * [start, stop), each a plane of pixels N values deep (kernel_pooling_halves.h) */
static void max_pool_channels_by_halves(void *context, Py_ssize_t start, Py_ssize_t stop)
{
    const MaxPool *p = context;
    Py_ssize_t depth = p->x_strides[3];
    Py_ssize_t span = POOL_HALVES_SPAN(p->width, p->out_width, p->kernel_width, p->left);
    float *row = PyMem_RawMalloc(sizeof(float) * (size_t)((p->width + 1 + 2 * span) * depth));
    if (row == NULL) {                  /* no room for the scratch: plane by plane */
        for (Py_ssize_t c = start; c < stop; c++)
            for (Py_ssize_t n = 0; n < depth; n++)
                max_pool_planes(context, n * p->channels + c, n * p->channels + c + 1);
        return;
    }
    for (Py_ssize_t c = start; c < stop; c++)
        chosen.max_pool_plane_halves(p->x + c * p->x_strides[1], p->x_strides[2], p->height,
                                     p->width, depth, p->y + c * p->y_strides[1],
                                     p->y_strides[2], p->out_height, p->out_width,
                                     p->kernel_height, p->kernel_width, p->stride_height,
                                     p->top, p->left, row, row + (p->width + 1) * depth);
    PyMem_RawFree(row);
}

typedef struct {
    const float *dy;
    Py_ssize_t dy_strides[4];
    const unsigned char *winner;
    Py_ssize_t winner_strides[4];
    float *dx;
    Py_ssize_t dx_strides[4];
    Py_ssize_t channels, height, width, out_height, out_width;
    int kernel_width, stride_height, stride_width, top, left;
} MaxPoolBackward;

static void max_pool_backward_planes(void *context, Py_ssize_t start, Py_ssize_t stop)
{
    const MaxPoolBackward *p = context;
    const Py_ssize_t xh = p->dx_strides[2], xw = p->dx_strides[3];
    for (Py_ssize_t plane = start; plane < stop; plane++) {
        Py_ssize_t n = plane / p->channels, c = plane % p->channels;
        const float *dy = AT(p->dy, p->dy_strides, n, c);
        const unsigned char *winner = AT(p->winner, p->winner_strides, n, c);
        float *dx = AT(p->dx, p->dx_strides, n, c);
        for (Py_ssize_t row = 0; row < p->height; row++)
            for (Py_ssize_t column = 0; column < p->width; column++)
                dx[row * xh + column * xw] = 0.0f;
        for (Py_ssize_t oh = 0; oh < p->out_height; oh++)
            for (Py_ssize_t ow = 0; ow < p->out_width; ow++) {
                int k = winner[oh * p->winner_strides[2] + ow * p->winner_strides[3]];
                Py_ssize_t row = oh * p->stride_height - p->top + k / p->kernel_width;
                Py_ssize_t column = ow * p->stride_width - p->left + k % p->kernel_width;
                if (row >= 0 && row < p->height && column >= 0 && column < p->width)
                    dx[row * xh + column * xw] += dy[oh * p->dy_strides[2]
                                                      + ow * p->dy_strides[3]];
            }
    }
}

/* A 4-D operand of `itemsize` bytes and format `format` with non-negative strides, its shape
 * checked against `shape` (-1: any, then set); its strides in elements into `strides`. */
static int take_image(const char *kernel, const char *name, PyObject *object, Py_buffer *view,
                      int writable, Py_ssize_t itemsize, const char *format, Py_ssize_t shape[4],
                      Py_ssize_t strides[4])
{
    int flags = PyBUF_STRIDES | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(object, view, flags) < 0) {
        name_the_operand(kernel, name);
        return -1;
    }
    int ok = view->ndim == 4 && view->itemsize == itemsize && strcmp(view->format, format) == 0;
    for (int axis = 0; ok && axis < 4; axis++)
        ok = view->strides[axis] >= 0 && view->strides[axis] % itemsize == 0;
    if (!ok) {
        PyErr_Format(PyExc_ValueError, "%s: expected %s as a 4-D %s array with non-negative "
                     "strides", kernel, name, itemsize == 4 ? "float32" : "uint8");
        PyBuffer_Release(view);
        return -1;
    }
    for (int axis = 0; axis < 4; axis++) {
        if (shape[axis] < 0)
            shape[axis] = view->shape[axis];
        if (view->shape[axis] != shape[axis]) {
            PyErr_Format(PyExc_ValueError, "%s: expected %s of shape (%zd, %zd, %zd, %zd), got "
                         "(%zd, %zd, %zd, %zd)", kernel, name, shape[0], shape[1], shape[2],
                         shape[3], view->shape[0], view->shape[1], view->shape[2],
                         view->shape[3]);
            PyBuffer_Release(view);
            return -1;
        }
        strides[axis] = view->strides[axis] / itemsize;
    }
    return 0;
}

typedef struct {
    int kernel_height, kernel_width, stride_height, stride_width, top, left, threads;
} PoolWindows;

static int check_windows(const char *kernel, const PoolWindows *w)
{
    if (w->kernel_height < 1 || w->kernel_width < 1 || w->kernel_height * w->kernel_width > 256
            || w->stride_height < 1 || w->stride_width < 1 || w->top < 0 || w->left < 0) {
        PyErr_Format(PyExc_ValueError, "%s: expected a kernel of 1 to 256 offsets, strides of "
                     "1 or more and pads of 0 or more, got kernel (%d, %d), stride (%d, %d), "
                     "pads (%d, %d)", kernel, w->kernel_height, w->kernel_width,
                     w->stride_height, w->stride_width, w->top, w->left);
        return -1;
    }
    return 0;
}

/* A pooling binding's three arrays and its windows (`format` names the binding) */
static int take_pool_arguments(const char *kernel, const char *format, PyObject *args,
                               PyObject *objects[3], PoolWindows *w)
{
    if (!PyArg_ParseTuple(args, format, &objects[0], &objects[1], &objects[2],
                          &w->kernel_height, &w->kernel_width, &w->stride_height,
                          &w->stride_width, &w->top, &w->left, &w->threads))
        return -1;
    return check_windows(kernel, w);
}

/* Planes a thread must have before the planes are split: a few thousand outputs */
#define POOL_MIN_OUTPUTS_PER_THREAD 4096

static int pool_parts(Py_ssize_t planes, Py_ssize_t plane_outputs, int threads)
{
    Py_ssize_t most = planes * plane_outputs / POOL_MIN_OUTPUTS_PER_THREAD;
    if (most > planes)
        most = planes;
    return threads < most ? threads : (int)(most > 1 ? most : 1);
}

/* The values per pixel of a dense (N, C, H, W) array, each pixel's side by side: 1 where it is
 * C-contiguous, N where it is batch-last (a C-contiguous (C, H, W, N) block, layout.py); 0
 * where it is neither. A stride of an axis of length 1 is never used, so any is accepted. */
static Py_ssize_t pixel_depth(const Py_ssize_t shape[4], const Py_ssize_t strides[4])
{
    static const int orders[2][4] = {{3, 2, 1, 0}, {0, 3, 2, 1}};   /* innermost first */
    for (int layout = 0; layout < 2; layout++) {
        Py_ssize_t expected = 1;
        int dense = 1;
        for (int k = 0; k < 4 && dense; k++) {
            int axis = orders[layout][k];
            dense = shape[axis] == 1 || strides[axis] == expected;
            expected *= shape[axis];
        }
        if (dense)
            return layout == 0 ? 1 : shape[0];
    }
    return 0;
}

/* 2x2 windows of stride 2 with no padding that tile the (height, width) input exactly */
static int is_pairs(const PoolWindows *w, Py_ssize_t height, Py_ssize_t width,
                    Py_ssize_t out_height, Py_ssize_t out_width)
{
    return w->kernel_height == 2 && w->kernel_width == 2 && w->stride_height == 2
        && w->stride_width == 2 && w->top == 0 && w->left == 0 && height == 2 * out_height
        && width == 2 * out_width;
}

/* Output rows [start, stop) of max_pool_pairs (forward) or its backward, on a dense batch:
 * out_width pixels of `depth` values a row (pixel_depth) */
typedef struct {
    const float *x;                    /* x, or dy for the backward */
    float *y;                          /* y, or dx */
    unsigned char *winner;             /* NULL where not wanted (forward only) */
    Py_ssize_t out_width, depth;
} PoolPairs;

static void max_pool_pairs_rows(void *context, Py_ssize_t start, Py_ssize_t stop)
{
    const PoolPairs *p = context;
    Py_ssize_t out_row = p->out_width * p->depth;
    chosen.max_pool_pairs(stop - start, p->out_width, p->depth, p->x + 4 * start * out_row,
                          p->y + start * out_row,
                          p->winner != NULL ? p->winner + start * out_row : NULL);
}

static void max_pool_pairs_backward_rows(void *context, Py_ssize_t start, Py_ssize_t stop)
{
    const PoolPairs *p = context;
    Py_ssize_t out_row = p->out_width * p->depth;
    chosen.max_pool_pairs_backward(stop - start, p->out_width, p->depth,
                                   p->x + start * out_row, p->winner + start * out_row,
                                   p->y + 4 * start * out_row);
}

/* A pooling's task over the thread pool: `rows_task` over the output rows of a dense batch
 * (pairs: out_height of each plane, `depth` planes side by side in a row), or `planes_task`
 * over the (n, c) planes. Called with the GIL, which it releases. */
static void run_pooling(int as_rows, Task rows_task, PoolPairs *pairs, Task planes_task,
                        void *planes_context, Py_ssize_t planes, Py_ssize_t out_height,
                        int threads)
{
    Py_ssize_t row_outputs = pairs->out_width * pairs->depth;
    Py_BEGIN_ALLOW_THREADS
    if (as_rows) {
        Py_ssize_t rows = planes * out_height / pairs->depth;
        parallel(rows_task, pairs, rows, pool_parts(rows, row_outputs, threads));
    } else {
        parallel(planes_task, planes_context, planes,
                 pool_parts(planes, out_height * pairs->out_width, threads));
    }
    Py_END_ALLOW_THREADS
}

/* Whether a pooling without winners takes max_pool_channels_by_halves: stride 2 along rows
 * of a batch-last batch of 2 or more (x and y), whole chunks of values in its rows */
static int by_halves(const MaxPool *p, Py_ssize_t depth, const Py_ssize_t y_shape[4])
{
    return p->winner == NULL && p->stride_width == 2 && depth > 1 && p->x_strides[0] == 1
        && pixel_depth(y_shape, p->y_strides) == depth && p->y_strides[0] == 1
        && p->width * depth >= 2 * POOL_CHUNK && p->out_width * depth >= POOL_CHUNK;
}

/* max_pool_forward(x, y, winner or None, kernel_h, kernel_w, stride_h, stride_w, top, left,
 * threads): y (N, C, OH, OW) and winner (uint8, same shape) written from x (N, C, H, W) */
static PyObject *max_pool_forward(PyObject *self, PyObject *args)
{
    const char *kernel = "max_pool_forward";
    PyObject *objects[3];
    PoolWindows w;
    if (take_pool_arguments(kernel, "OOOiiiiiii:max_pool_forward", args, objects, &w) < 0)
        return NULL;
    MaxPool p = {.kernel_height = w.kernel_height, .kernel_width = w.kernel_width,
                 .stride_height = w.stride_height, .stride_width = w.stride_width,
                 .top = w.top, .left = w.left};
    Py_buffer views[3];
    Py_ssize_t shape[4] = {-1, -1, -1, -1};
    if (take_image(kernel, "x", objects[0], &views[0], 0, 4, "f", shape, p.x_strides) < 0)
        return NULL;
    p.channels = shape[1];
    p.height = shape[2];
    p.width = shape[3];
    shape[2] = shape[3] = -1;
    if (take_image(kernel, "y", objects[1], &views[1], 1, 4, "f", shape, p.y_strides) < 0) {
        release_views(views, 1);
        return NULL;
    }
    int taken = 2;
    if (objects[2] != Py_None) {
        if (take_image(kernel, "winner", objects[2], &views[2], 1, 1, "B", shape,
                       p.winner_strides) < 0) {
            release_views(views, 2);
            return NULL;
        }
        taken = 3;
    }
    p.x = (const float *)views[0].buf;
    p.y = (float *)views[1].buf;
    p.winner = taken == 3 ? (unsigned char *)views[2].buf : NULL;
    p.out_height = shape[2];
    p.out_width = shape[3];
    Py_ssize_t planes = shape[0] * shape[1];
    Py_ssize_t x_shape[4] = {shape[0], shape[1], p.height, p.width};
    Py_ssize_t depth = pixel_depth(x_shape, p.x_strides);
    int as_rows = is_pairs(&w, p.height, p.width, p.out_height, p.out_width) && depth > 0
        && pixel_depth(shape, p.y_strides) == depth
        && (p.winner == NULL || pixel_depth(shape, p.winner_strides) == depth);
    PoolPairs pairs = {p.x, p.y, p.winner, p.out_width, depth};
    if (!as_rows && by_halves(&p, depth, shape)) {
        Py_BEGIN_ALLOW_THREADS
        parallel(max_pool_channels_by_halves, &p, p.channels,
                 pool_parts(p.channels, depth * p.out_height * p.out_width, w.threads));
        Py_END_ALLOW_THREADS
        release_views(views, taken);
        Py_RETURN_NONE;
    }
    run_pooling(as_rows, max_pool_pairs_rows, &pairs, max_pool_planes, &p, planes,
                p.out_height, w.threads);
    release_views(views, taken);
    Py_RETURN_NONE;
}

/* max_pool_backward(dy, winner, dx, kernel_h, kernel_w, stride_h, stride_w, top, left,
 * threads): dx (N, C, H, W) written, each dy added at its winner */
static PyObject *max_pool_backward(PyObject *self, PyObject *args)
{
    const char *kernel = "max_pool_backward";
    PyObject *objects[3];
    PoolWindows w;
    if (take_pool_arguments(kernel, "OOOiiiiiii:max_pool_backward", args, objects, &w) < 0)
        return NULL;
    MaxPoolBackward p = {.kernel_width = w.kernel_width, .stride_height = w.stride_height,
                         .stride_width = w.stride_width, .top = w.top, .left = w.left};
    Py_buffer views[3];
    Py_ssize_t shape[4] = {-1, -1, -1, -1};
    if (take_image(kernel, "dy", objects[0], &views[0], 0, 4, "f", shape, p.dy_strides) < 0)
        return NULL;
    if (take_image(kernel, "winner", objects[1], &views[1], 0, 1, "B", shape,
                   p.winner_strides) < 0) {
        release_views(views, 1);
        return NULL;
    }
    p.out_height = shape[2];
    p.out_width = shape[3];
    shape[2] = shape[3] = -1;
    if (take_image(kernel, "dx", objects[2], &views[2], 1, 4, "f", shape, p.dx_strides) < 0) {
        release_views(views, 2);
        return NULL;
    }
    p.channels = shape[1];
    p.height = shape[2];
    p.width = shape[3];
    p.dy = (const float *)views[0].buf;
    p.winner = (const unsigned char *)views[1].buf;
    p.dx = (float *)views[2].buf;
    Py_ssize_t planes = shape[0] * shape[1];
    Py_ssize_t out_shape[4] = {shape[0], shape[1], p.out_height, p.out_width};
    Py_ssize_t depth = pixel_depth(shape, p.dx_strides);
    int as_rows = is_pairs(&w, p.height, p.width, p.out_height, p.out_width) && depth > 0
        && pixel_depth(out_shape, p.dy_strides) == depth
        && pixel_depth(out_shape, p.winner_strides) == depth;
    PoolPairs pairs = {p.dy, p.dx, (unsigned char *)p.winner, p.out_width, depth};
    run_pooling(as_rows, max_pool_pairs_backward_rows, &pairs, max_pool_backward_planes, &p,
                planes, p.out_height, w.threads);
    release_views(views, 3);
    Py_RETURN_NONE;
}
