/* autograd.backend._native: compiled CPU kernels for float32 NumPy arrays, beside the portable
 * NumPy code that they must agree with (autograd/backend/native.py says when they are used).
 *
 * Why compiled: NumPy makes one pass over memory per ufunc, on one core, so a recurrent cell's
 * fifteen elementwise steps are fifteen passes and fifteen temporaries; here each is one loop
 * over the rows, with the GIL released, vectorized by the compiler for the instruction set the
 * CPU has (chosen once, when the module loads).
 *
 * Operands arrive through the buffer protocol (no NumPy headers are needed to build this): each
 * must be a 2-D float32 array with contiguous rows and the shape the kernel expects; anything
 * else is a ValueError naming the kernel and the operand, never a crash. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    float *data;
    Py_ssize_t stride;      /* elements from one row to the next */
} Rows;

/* "the loop carries no dependence" for GCC's vectorizer (it honours it, other compilers
 * ignore it) */
#if defined(__GNUC__) && !defined(__clang__)
#define IVDEP _Pragma("GCC ivdep")
#else
#define IVDEP
#endif

/* A hint to fetch the cache line at p: b's rows of a product are read one or two lines at a
 * time, a whole row apart (2 KB for a 512-wide weight), a stride the hardware prefetchers
 * follow poorly; PREFETCH_ROWS rows ahead covers a read from L3. */
#if defined(__GNUC__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)0)
#endif
#define PREFETCH_ROWS 8

/* A kernel inlined at every call, so that its caller's constants (a tile's row count) unroll
 * its loops into registers: GCC keeps a large function called with several constants as one
 * copy over any value (kernel_products.h). */
#if defined(__GNUC__)
#define ALWAYS_INLINE inline __attribute__((always_inline))
#elif defined(_MSC_VER)
#define ALWAYS_INLINE __forceinline
#else
#define ALWAYS_INLINE inline
#endif

#define ROW(operand, r) ((operand).data + (r) * (operand).stride)

/* The outputs [*low, *high) along a row of `outputs` windows, `stride` apart, whose input
 * index o * stride + offset is inside [0, size): a window offset's reach past the padding
 * (pooling's row passes, the im2col columns). low <= high. */
static inline void inside_outputs(Py_ssize_t offset, Py_ssize_t stride, Py_ssize_t size,
                                  Py_ssize_t outputs, Py_ssize_t *low, Py_ssize_t *high)
{
    Py_ssize_t first = offset < 0 ? (-offset + stride - 1) / stride : 0;
    Py_ssize_t stop = size - 1 - offset >= 0 ? (size - 1 - offset) / stride + 1 : 0;
    if (stop > outputs)
        stop = outputs;
    *low = first < stop ? first : stop;
    *high = stop;
}

/* The heads of a (batch, heads, rows, columns) array: head h (of batch * heads) begins at
 * HEAD(x, h); strides in elements. */
typedef struct {
    float *data;
    Py_ssize_t heads, batch_stride, head_stride, row_stride;
} Heads;

#define HEAD(x, h) ((x).data + ((h) / (x).heads) * (x).batch_stride \
                    + ((h) % (x).heads) * (x).head_stride)
#define HEAD_ROWS(x, h) ((Rows){HEAD(x, h), (x).row_stride})

/* What a causal head lets a product skip (row i of a or c; the zeros are exact, so the sums
 * are the same bits): with A_LOWER a's entries p > i are 0 (p and dS), with A_UPPER those
 * p < i (their transposes), with C_LOWER only c's entries j <= i are wanted (the scores, G). */
enum { FULL, A_LOWER, A_UPPER, C_LOWER };

/* The left operand of a product: element (r, p) at data[r * row + p * column], so that a
 * matrix and its transpose are read in place (row = its row stride, column = 1, or the other
 * way round). */
typedef struct {
    const float *data;
    Py_ssize_t row, column;
} Left;

/* Max pooling at stride 2 (kernel_pooling_halves.h, max_pool_plane_halves): the values in each half
 * of a row's columns, with -inf around them for the padding and past the row */
#define POOL_HALVES_SPAN(width, out_width, kernel_width, left) \
    (((left) + 1) / 2 + 1 + ((width) + 1) / 2 + (out_width) + (kernel_width) + 1)

/* A convolution as shifted products (kernel_convolution.h, convolution_bindings.h):
 * y (O, OH * OW * N) = weights (O, K) times the rows of the padded input's phases (or of the
 * built columns) that start at offsets[p], p = (c, i, j) of K = C * kh * kw, each
 * row_length = Wq * N long for each of out_height rows, of which the first
 * valid_length = OW * N are kept. */
#define SHIFT_ROWS 8
#define SHIFT_COLUMNS 32
#define SHIFT_BLOCK 16             /* flat tiles in a block at most */
#define SHIFT_BUILT_CHANNELS 64    /* output channels a part of a small built product takes */
#define SHIFT_CACHED_COLUMNS (32 << 10)     /* bytes of built columns that make it small */
#define SHIFT_MIN_WORK_PER_THREAD ((Py_ssize_t)1 << 17)     /* multiply-adds */
typedef struct {
    const float *weights, *padded, *bias;
    const Py_ssize_t *offsets;
    float *y;
    Py_ssize_t y_stride, out_channels, k, row_length, valid_length, out_height, row_tiles;
    Py_ssize_t flat_tiles, block;           /* tiles of SHIFT_COLUMNS; of them in a block */
    const float *tail;                      /* the last tile's runs where x is read in place */
    const Py_ssize_t *tail_offsets;
    int relu;
} ShiftedProduct;

#include "dispatch.h"
#include "operands.h"
#include "attention_bindings.h"
#include "thread_pool.h"
#include "product_bindings.h"
#include "sequence_bindings.h"
#include "normalization_bindings.h"
#include "pooling_bindings.h"
#include "columns_bindings.h"
#include "update_bindings.h"
#include "elementwise_bindings.h"
#include "convolution_bindings.h"

/* ------------------------------------------------------------------ kernels */

/* A binding whose operands are all rows: read them (the shape from operand `reference`), run
 * `call` on them (a.count rows of a.hidden, a.rows[k]) without the GIL, release them. */
#define ROWS_BINDING(name, spec, count, reference, call)                 \
    static PyObject *name(PyObject *self, PyObject *args)                \
    {                                                                    \
        Operands a;                                                      \
        if (take_operands(#name, args, spec, count, reference, &a) < 0)  \
            return NULL;                                                 \
        Py_BEGIN_ALLOW_THREADS                                           \
        call;                                                            \
        Py_END_ALLOW_THREADS                                             \
        release(&a, count);                                              \
        Py_RETURN_NONE;                                                  \
    }

static const Operand LSTM_FORWARD[] = {
    {"x_gates", 4, 0, 0}, {"h_gates", 4, 0, 0}, {"c", 1, 0, 0}, {"h_out", 1, 1, 0},
    {"c_out", 1, 1, 0}, {"gates", 4, 1, 0}, {"tanh_c", 1, 1, 0}};
ROWS_BINDING(lstm_forward, LSTM_FORWARD, 7, 2,
             chosen.lstm_forward(a.count, a.hidden, 0, a.hidden, a.rows[0], a.rows[1],
                                 a.rows[2], a.rows[3], a.rows[4], a.rows[5], a.rows[6]))

static const Operand LSTM_BACKWARD[] = {
    {"gates", 4, 0, 0}, {"c", 1, 0, 0}, {"tanh_c", 1, 0, 0}, {"dh", 1, 0, 0},
    {"dc_next", 1, 0, 0}, {"da", 4, 1, 0}, {"dc_out", 1, 1, 0}};
ROWS_BINDING(lstm_backward, LSTM_BACKWARD, 7, 1,
             chosen.lstm_backward(a.count, a.hidden, a.rows[0], a.rows[1], a.rows[2], a.rows[3],
                                  a.rows[4], a.rows[5], a.rows[6]))

static const Operand GRU_FORWARD[] = {
    {"x_gates", 3, 0, 0}, {"h_gates", 3, 0, 0}, {"h", 1, 0, 0}, {"h_out", 1, 1, 0},
    {"rz", 2, 1, 0}, {"n", 1, 1, 0}};
ROWS_BINDING(gru_forward, GRU_FORWARD, 6, 2,
             chosen.gru_forward(a.count, a.hidden, a.rows[0], a.rows[1], a.rows[2], a.rows[3],
                                a.rows[4], a.rows[5]))

static const Operand GRU_BACKWARD[] = {
    {"rz", 2, 0, 0}, {"n", 1, 0, 0}, {"h_n", 1, 0, 0}, {"h", 1, 0, 0}, {"dh", 1, 0, 0},
    {"dx_gates", 3, 1, 0}, {"dh_gates", 3, 1, 1}, {"direct", 1, 1, 0}};
ROWS_BINDING(gru_backward, GRU_BACKWARD, 8, 1,
             chosen.gru_backward(a.count, a.hidden, a.rows[0], a.rows[1], a.rows[2], a.rows[3],
                                 a.rows[4], a.rows[5], a.rows[6], a.rows[7]))

static const Operand GELU_FORWARD[] = {{"x", 1, 0, 0}, {"y", 1, 1, 0}, {"slope", 1, 1, 0}};
ROWS_BINDING(gelu_forward, GELU_FORWARD, 3, 0,
             chosen.gelu_forward(a.count, a.hidden, a.rows[0], a.rows[1], a.rows[2]))

static const Operand SOFTMAX_ROWS[] = {{"x", 1, 0, 0}, {"probabilities", 1, 1, 0}};

static PyObject *softmax_cross_entropy(PyObject *self, PyObject *args)
{
    const char *kernel = "softmax_cross_entropy";
    PyObject *x, *probabilities, *targets, *losses;
    if (!PyArg_ParseTuple(args, "OOOO:softmax_cross_entropy", &x, &probabilities, &targets,
                          &losses))
        return NULL;
    Operands a;
    if (take_operand_array(kernel, (PyObject *[]){x, probabilities}, SOFTMAX_ROWS, 2, 0,
                           &a) < 0)
        return NULL;
    Py_buffer target_view, loss_view;
    if (take_vector(kernel, "targets", targets, &target_view, 0, a.count, 8, "lq", "int64") < 0) {
        release(&a, 2);
        return NULL;
    }
    if (take_vector(kernel, "losses", losses, &loss_view, 1, a.count, 4, "f", "float32") < 0) {
        PyBuffer_Release(&target_view);
        release(&a, 2);
        return NULL;
    }
    Py_ssize_t bad;
    Py_BEGIN_ALLOW_THREADS
    bad = chosen.softmax_cross_entropy(a.count, a.hidden, a.rows[0], a.rows[1],
                                       (const int64_t *)target_view.buf, (float *)loss_view.buf);
    Py_END_ALLOW_THREADS
    int64_t target = bad >= 0 ? ((const int64_t *)target_view.buf)[bad] : 0;
    PyBuffer_Release(&target_view);
    PyBuffer_Release(&loss_view);
    release(&a, 2);
    if (bad >= 0) {
        PyErr_Format(PyExc_ValueError, "%s: target %lld of row %zd is outside [0, %zd)", kernel,
                     (long long)target, bad, a.hidden);
        return NULL;
    }
    Py_RETURN_NONE;
}

/* values (R, D) fixes R and D; the target is (V, D) for any V */
static const Operand SCATTER_ROWS_ADD[] = {{"values", 1, 0, 0, 0}, {"target", 1, 1, 0, 1}};

static PyObject *scatter_rows_add(PyObject *self, PyObject *args)
{
    const char *kernel = "scatter_rows_add";
    PyObject *target, *index, *values;
    if (!PyArg_ParseTuple(args, "OOO:scatter_rows_add", &target, &index, &values))
        return NULL;
    Operands a;
    if (take_operand_array(kernel, (PyObject *[]){values, target}, SCATTER_ROWS_ADD, 2, 0,
                           &a) < 0)
        return NULL;
    Py_buffer index_view;
    if (take_vector(kernel, "index", index, &index_view, 0, a.count, 8, "lq", "int64") < 0) {
        release(&a, 2);
        return NULL;
    }
    Py_ssize_t limit = a.views[1].shape[0], bad;
    Py_BEGIN_ALLOW_THREADS
    bad = chosen.scatter_rows_add(a.count, a.hidden, a.rows[1], limit,
                                  (const int64_t *)index_view.buf, a.rows[0]);
    Py_END_ALLOW_THREADS
    int64_t value = bad >= 0 ? ((const int64_t *)index_view.buf)[bad] : 0;
    PyBuffer_Release(&index_view);
    release(&a, 2);
    if (bad >= 0) {
        PyErr_Format(PyExc_IndexError, "%s: index %lld of row %zd is out of bounds for %zd "
                     "rows", kernel, (long long)value, bad, limit);
        return NULL;
    }
    Py_RETURN_NONE;
}

static const Operand EPILOGUE[] = {{"y", 1, 1, 0}, {"residual", 1, 0, 1}};

typedef struct {
    Py_ssize_t width;
    Rows y, residual;
    const float *bias;
    int relu;
} EpilogueJob;

static void epilogue_rows(void *context, Py_ssize_t start, Py_ssize_t stop)
{
    const EpilogueJob *j = context;
    Rows residual = j->residual;
    if (residual.data != NULL)
        residual.data = ROW(residual, start);
    chosen.epilogue(stop - start, j->width, (Rows){ROW(j->y, start), j->y.stride},
                    j->bias != NULL ? j->bias + start : NULL, residual, j->relu);
}

/* epilogue(y, bias or None, residual or None, relu[, threads]): the rows split over the pool
 * as layer normalization's (a convolution's output rows: one pass each, too short a pass for
 * autograd's Python threads to hand over at 15-40 us) */
static PyObject *epilogue(PyObject *self, PyObject *args)
{
    const char *kernel = "epilogue";
    PyObject *y, *bias, *residual;
    int relu, threads = 1;
    if (!PyArg_ParseTuple(args, "OOOp|i:epilogue", &y, &bias, &residual, &relu, &threads))
        return NULL;
    Operands a;
    if (take_operand_array(kernel, (PyObject *[]){y, residual}, EPILOGUE, 2, 0, &a) < 0)
        return NULL;
    Py_buffer bias_view;
    float *bias_data;
    if (take_optional_vector(kernel, "bias", bias, &bias_view, 0, a.count, &bias_data) < 0) {
        release(&a, 2);
        return NULL;
    }
    EpilogueJob job = {a.hidden, a.rows[0], a.rows[1], bias_data, relu};
    Py_BEGIN_ALLOW_THREADS
    parallel(epilogue_rows, &job, a.count, row_parts(a.count, a.hidden, threads));
    Py_END_ALLOW_THREADS
    release_vector(&bias_view);
    release(&a, 2);
    Py_RETURN_NONE;
}

static const Operand ATTENTION_SOFTMAX[] = {{"scores", 1, 1, 0}};

static PyObject *attention_softmax(PyObject *self, PyObject *args)
{
    PyObject *scores;
    Py_ssize_t queries;
    int causal;
    if (!PyArg_ParseTuple(args, "Onp:attention_softmax", &scores, &queries, &causal))
        return NULL;
    if (queries < 1) {
        PyErr_Format(PyExc_ValueError, "attention_softmax: expected a positive number of "
                     "queries, got %zd", queries);
        return NULL;
    }
    Operands a;
    if (take_operand_array("attention_softmax", (PyObject *[]){scores}, ATTENTION_SOFTMAX, 1, 0,
                           &a) < 0)
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    chosen.attention_softmax(a.count, a.hidden, a.rows[0], queries, causal);
    Py_END_ALLOW_THREADS
    release(&a, 1);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"lstm_forward", lstm_forward, METH_VARARGS,
     "lstm_forward(x_gates, h_gates, c, h_out, c_out, gates, tanh_c): one LSTM step"},
    {"lstm_backward", lstm_backward, METH_VARARGS,
     "lstm_backward(gates, c, tanh_c, dh, dc_next, da, dc_out): its backward"},
    {"gru_forward", gru_forward, METH_VARARGS,
     "gru_forward(x_gates, h_gates, h, h_out, rz, n): one GRU step"},
    {"gru_backward", gru_backward, METH_VARARGS,
     "gru_backward(rz, n, h_n, h, dh, dx_gates, dh_gates or None, direct): its backward"},
    {"gelu_forward", gelu_forward, METH_VARARGS,
     "gelu_forward(x, y, slope): the exact GELU of 2-D x and its slope"},
    {"layer_norm_forward", layer_norm_forward, METH_VARARGS,
     "layer_norm_forward(x, scale or None, bias or None, eps, y, xhat, invstd[, threads]): "
     "rows of x"},
    {"layer_norm_backward", layer_norm_backward, METH_VARARGS,
     "layer_norm_backward(dy, xhat, invstd, scale, dx, dscale, dbias[, threads]), None where "
     "not wanted"},
    {"attention_softmax", attention_softmax, METH_VARARGS,
     "attention_softmax(scores, queries, causal): softmax of each row in place, causal or not"},
    {"attention_forward", attention_forward, METH_VARARGS,
     "attention_forward(q, k, v, p, y, scale, causal, start, stop): heads [start, stop) of "
     "p = softmax(q k^T scale), y = p v"},
    {"attention_backward", attention_backward, METH_VARARGS,
     "attention_backward(q, k, v, p, y, dy, dq, dk, dv, scale, causal, start, stop): their "
     "gradients"},
    {"product", product, METH_VARARGS,
     "product(a, b, c, threads[, min_work_per_thread]): c = a @ b for float32 matrices, on up "
     "to `threads` threads"},
    {"lstm_sequence_forward", lstm_sequence_forward, METH_VARARGS,
     "lstm_sequence_forward(x_gates, hs, cs, gates, tanh_cs, h_gates, W_hh, threads): an LSTM "
     "layer's steps"},
    {"lstm_sequence_backward", lstm_sequence_backward, METH_VARARGS,
     "lstm_sequence_backward(gates, cs, tanh_cs, dhs, dh_last, dc_last, da, dh0, dc0, W_hh_T, "
     "threads): their backward through time"},
    {"columns", columns, METH_VARARGS,
     "columns(x, cols, kernel_h, kernel_w, stride_h, stride_w, dilation_h, dilation_w, top, "
     "left, out_h, out_w, groups, threads): im2col from the unpadded input"},
    {"col2im", col2im, METH_VARARGS,
     "col2im(dcols, dx, kernel_h, kernel_w, stride_h, stride_w, dilation_h, dilation_w, top, "
     "left, out_h, out_w, threads): the columns' adjoint, a convolution's input gradient"},
    {"max_pool_forward", max_pool_forward, METH_VARARGS,
     "max_pool_forward(x, y, winner or None, kernel_h, kernel_w, stride_h, stride_w, top, "
     "left, threads): 2-D max pooling of (N, C, H, W) float32"},
    {"max_pool_backward", max_pool_backward, METH_VARARGS,
     "max_pool_backward(dy, winner, dx, kernel_h, kernel_w, stride_h, stride_w, top, left, "
     "threads): dx from each dy at its winner"},
    {"axpy", axpy, METH_VARARGS,
     "axpy(alpha, x, y, threads): y += alpha x for float32 arrays, in place"},
    {"scale", scale, METH_VARARGS, "scale(alpha, x, y, threads): y = alpha x (float32)"},
    {"sum_of_squares", sum_of_squares, METH_VARARGS, "sum_of_squares(x, threads): sum(x^2)"},
    {"row_means", row_means, METH_VARARGS,
     "row_means(x, out, scale, threads): out = scale * the sums of x's rows"},
    {"adam", adam, METH_VARARGS,
     "adam(data, grad, m, v, settings, threads): one Adam step in place"},
    {"epilogue", epilogue, METH_VARARGS,
     "epilogue(y, bias or None, residual or None, relu[, threads]): y = max(y + bias + "
     "residual, 0)"},
    {"relu_forward", relu_forward, METH_VARARGS,
     "relu_forward(x, y, threads): y = max(x, 0) for C-contiguous float32 arrays"},
    {"relu_backward", relu_backward, METH_VARARGS,
     "relu_backward(dy, y, dx, threads): dx = dy where y > 0, else 0"},
    {"scatter_rows_add", scatter_rows_add, METH_VARARGS,
     "scatter_rows_add(target, index, values): target[index[r]] += values[r], row by row"},
    {"softmax_cross_entropy", softmax_cross_entropy, METH_VARARGS,
     "softmax_cross_entropy(x, probabilities, targets, losses): softmax and loss of each row"},
    {"shifted_convolution", shifted_convolution, METH_VARARGS,
     "shifted_convolution(x, weights, bias or None, y, padded, stride_h, stride_w, top, "
     "left, dilation_h, dilation_w, out_h, out_w, relu, threads, compact[, minimum_work]): "
     "a convolution without a column matrix"},
    {"pool_spin", pool_spin, METH_O,
     "pool_spin(nanoseconds): how long the pool's workers spin before they sleep (set where "
     "not negative); returns the value before"},
    {"set_instruction_set", set_instruction_set, METH_O,
     "set_instruction_set(name): use the kernels built for 'generic', 'avx2' or 'avx512'"},
    {"get_instruction_set", get_instruction_set, METH_NOARGS,
     "get_instruction_set(): the name of the kernels in use"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "autograd.backend._native",
    "Compiled float32 CPU kernels (see autograd/backend/native.py).", -1, methods};

PyMODINIT_FUNC PyInit__native(void)
{
    choose_instruction_set();
    return PyModule_Create(&module);
}
