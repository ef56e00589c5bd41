/* The kernels of kernels.h compiled once per instruction set, and the choice among them
 * (part of _native.c, included once). GCC on x86-64 compiles them for AVX2 + FMA and for
 * AVX-512 besides the generic build; the module picks the widest the CPU (and the OS)
 * supports when it loads. Other compilers and CPUs get the generic build, the compiler's
 * baseline vectorization. */

#define KERNEL(name) name##_generic
#define TILE_ROWS 1
#include "kernels.h"
#undef TILE_ROWS
#undef KERNEL

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define NATIVE_DISPATCH 1
#pragma GCC push_options
#pragma GCC target("arch=haswell")
#define KERNEL(name) name##_avx2
#define TILE_ROWS 2
#include "kernels.h"
#undef TILE_ROWS
#undef KERNEL
#pragma GCC pop_options
#pragma GCC push_options
#pragma GCC target("arch=skylake-avx512,prefer-vector-width=512")
#define KERNEL(name) name##_avx512
#define TILE_ROWS 8
#include "kernels.h"
#undef TILE_ROWS
#undef KERNEL
#pragma GCC pop_options
#endif

typedef void (*LSTMForward)(Py_ssize_t, Py_ssize_t, Py_ssize_t, Py_ssize_t, Rows, Rows, Rows,
                            Rows, Rows, Rows, Rows);
typedef void (*LSTMBackward)(Py_ssize_t, Py_ssize_t, Rows, Rows, Rows, Rows, Rows, Rows, Rows);
typedef void (*GRUForward)(Py_ssize_t, Py_ssize_t, Rows, Rows, Rows, Rows, Rows, Rows);
typedef void (*GRUBackward)(Py_ssize_t, Py_ssize_t, Rows, Rows, Rows, Rows, Rows, Rows, Rows,
                            Rows);
typedef void (*GELUForward)(Py_ssize_t, Py_ssize_t, Rows, Rows, Rows);
typedef void (*LayerNormForward)(Py_ssize_t, Py_ssize_t, Rows, const float *, const float *,
                                 float, Rows, Rows, float *);
typedef void (*LayerNormBackward)(Py_ssize_t, Py_ssize_t, Rows, Rows, const float *,
                                  const float *, Rows, float *, float *);
typedef Py_ssize_t (*ScatterRowsAdd)(Py_ssize_t, Py_ssize_t, Rows, Py_ssize_t, const int64_t *,
                                     Rows);
typedef void (*Epilogue)(Py_ssize_t, Py_ssize_t, Rows, const float *, Rows, int);
typedef void (*AttentionSoftmax)(Py_ssize_t, Py_ssize_t, Rows, Py_ssize_t, int);
typedef void (*AttentionForward)(Py_ssize_t, Py_ssize_t, Py_ssize_t, Py_ssize_t, Py_ssize_t,
                                 Py_ssize_t, Heads, Heads, Heads, Heads, Heads, float, int,
                                 float *);
typedef void (*AttentionBackward)(Py_ssize_t, Py_ssize_t, Py_ssize_t, Py_ssize_t, Py_ssize_t,
                                  Py_ssize_t, Heads, Heads, Heads, Heads, Heads, Heads, Heads,
                                  Heads, Heads, float, int, float *);
typedef void (*FewRowsProduct)(Py_ssize_t, Py_ssize_t, Py_ssize_t, Left, const float *,
                               Py_ssize_t, float *, Py_ssize_t, const float *);
typedef void (*VectorPanel)(Py_ssize_t, const float *, Py_ssize_t, const float *, Py_ssize_t,
                            float *, const float *);
typedef void (*ProductRow)(Py_ssize_t, Py_ssize_t, const float *, Py_ssize_t, const float *,
                           Py_ssize_t, float *, float, const float *);
typedef void (*ProductTransposed)(Py_ssize_t, Py_ssize_t, Py_ssize_t, const float *, Py_ssize_t,
                                  const float *, Py_ssize_t, float *, Py_ssize_t,
                                  const float *);
typedef void (*MaxPoolPlane)(const float *, Py_ssize_t, Py_ssize_t, Py_ssize_t, Py_ssize_t,
                             float *, Py_ssize_t, Py_ssize_t, unsigned char *, Py_ssize_t,
                             Py_ssize_t, Py_ssize_t, Py_ssize_t, Py_ssize_t, int, int, int,
                             int, int, int, float *, int32_t *);
typedef void (*MaxPoolSeparable)(const float *, Py_ssize_t, Py_ssize_t, Py_ssize_t,
                                 Py_ssize_t, float *, Py_ssize_t, Py_ssize_t, Py_ssize_t,
                                 Py_ssize_t, int, int, int, int, int, int, float *,
                                 float *);
typedef void (*MaxPoolHalves)(const float *, Py_ssize_t, Py_ssize_t, Py_ssize_t, Py_ssize_t,
                              float *, Py_ssize_t, Py_ssize_t, Py_ssize_t, int, int, int, int,
                              int, float *, float *);
typedef void (*MaxPoolShuffled)(const float *, Py_ssize_t, Py_ssize_t, Py_ssize_t, float *,
                                Py_ssize_t, Py_ssize_t, Py_ssize_t, int, int, int, int, int,
                                float *);
typedef void (*MaxPoolPairs)(Py_ssize_t, Py_ssize_t, Py_ssize_t, const float *, float *,
                             unsigned char *);
typedef void (*MaxPoolPairsBackward)(Py_ssize_t, Py_ssize_t, Py_ssize_t, const float *,
                                     const unsigned char *, float *);
typedef void (*ShiftedProducts)(const ShiftedProduct *, Py_ssize_t, Py_ssize_t);
typedef void (*Axpy)(Py_ssize_t, float, const float *, float *);
typedef void (*ReluForward)(Py_ssize_t, const float *, float *);
typedef void (*ReluBackward)(Py_ssize_t, const float *, const float *, float *);
typedef void (*Adam)(Py_ssize_t, float *, const float *, float *, float *, const AdamSettings *);
typedef double (*SumOfSquares)(Py_ssize_t, const float *);
typedef void (*Scale)(Py_ssize_t, float, const float *, float *);
typedef void (*RowMeans)(Py_ssize_t, Py_ssize_t, const float *, float, float *);
typedef Py_ssize_t (*SoftmaxCrossEntropy)(Py_ssize_t, Py_ssize_t, Rows, Rows, const int64_t *,
                                          float *);

static struct {
    const char *instruction_set;
    LSTMForward lstm_forward;
    LSTMBackward lstm_backward;
    GRUForward gru_forward;
    GRUBackward gru_backward;
    SoftmaxCrossEntropy softmax_cross_entropy;
    GELUForward gelu_forward;
    LayerNormForward layer_norm_forward;
    LayerNormBackward layer_norm_backward;
    ScatterRowsAdd scatter_rows_add;
    Epilogue epilogue;
    AttentionSoftmax attention_softmax;
    AttentionForward attention_forward;
    AttentionBackward attention_backward;
    FewRowsProduct few_rows_product;
    VectorPanel vector_panel;
    ProductRow product_row;
    ProductTransposed product_transposed;
    MaxPoolPlane max_pool_plane;
    MaxPoolSeparable max_pool_plane_separable;
    MaxPoolHalves max_pool_plane_halves;
    MaxPoolShuffled max_pool_plane_shuffled;
    MaxPoolPairs max_pool_pairs;
    MaxPoolPairsBackward max_pool_pairs_backward;
    ShiftedProducts shifted_products;
    Axpy axpy;
    Adam adam;
    SumOfSquares sum_of_squares;
    Scale scale;
    RowMeans row_means;
    ReluForward relu_forward;
    ReluBackward relu_backward;
} chosen;

#define CHOOSE(suffix, name)                          \
    do {                                              \
        chosen.instruction_set = name;                \
        chosen.lstm_forward = lstm_forward_##suffix;  \
        chosen.lstm_backward = lstm_backward_##suffix; \
        chosen.gru_forward = gru_forward_##suffix;    \
        chosen.gru_backward = gru_backward_##suffix;  \
        chosen.softmax_cross_entropy = softmax_cross_entropy_##suffix; \
        chosen.gelu_forward = gelu_forward_##suffix;  \
        chosen.layer_norm_forward = layer_norm_forward_##suffix; \
        chosen.layer_norm_backward = layer_norm_backward_##suffix; \
        chosen.scatter_rows_add = scatter_rows_add_##suffix; \
        chosen.epilogue = epilogue_##suffix;          \
        chosen.attention_softmax = attention_softmax_##suffix; \
        chosen.attention_forward = attention_forward_##suffix; \
        chosen.attention_backward = attention_backward_##suffix; \
        chosen.few_rows_product = few_rows_product_##suffix; \
        chosen.vector_panel = vector_panel_##suffix; \
        chosen.product_row = product_row_##suffix; \
        chosen.product_transposed = product_transposed_##suffix; \
        chosen.max_pool_plane = max_pool_plane_##suffix; \
        chosen.max_pool_plane_separable = max_pool_plane_separable_##suffix; \
        chosen.max_pool_plane_halves = max_pool_plane_halves_##suffix; \
        chosen.max_pool_plane_shuffled = max_pool_plane_shuffled_##suffix; \
        chosen.max_pool_pairs = max_pool_pairs_##suffix; \
        chosen.max_pool_pairs_backward = max_pool_pairs_backward_##suffix; \
        chosen.shifted_products = shifted_products_##suffix; \
        chosen.axpy = axpy_##suffix;                  \
        chosen.adam = adam_##suffix;                  \
        chosen.sum_of_squares = sum_of_squares_##suffix; \
        chosen.scale = scale_##suffix;                \
        chosen.row_means = row_means_##suffix;        \
        chosen.relu_forward = relu_forward_##suffix;  \
        chosen.relu_backward = relu_backward_##suffix; \
    } while (0)

static void choose_instruction_set(void)
{
    CHOOSE(generic, "generic");
#ifdef NATIVE_DISPATCH
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")
            && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq"))
        CHOOSE(avx512, "avx512");
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        CHOOSE(avx2, "avx2");
#endif
}

/* set_instruction_set(name): run the kernels compiled for `name` ("generic", "avx2",
 * "avx512"), so the tests can check every build this CPU can run against the portable code. */
static PyObject *set_instruction_set(PyObject *self, PyObject *name_object)
{
    const char *name = PyUnicode_AsUTF8(name_object);
    if (name == NULL)
        return NULL;
    if (strcmp(name, "generic") == 0) {
        CHOOSE(generic, "generic");
        Py_RETURN_NONE;
    }
#ifdef NATIVE_DISPATCH
    __builtin_cpu_init();
    if (strcmp(name, "avx2") == 0 && __builtin_cpu_supports("avx2")
            && __builtin_cpu_supports("fma")) {
        CHOOSE(avx2, "avx2");
        Py_RETURN_NONE;
    }
    if (strcmp(name, "avx512") == 0 && __builtin_cpu_supports("avx512f")
            && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw")
            && __builtin_cpu_supports("avx512dq")) {
        CHOOSE(avx512, "avx512");
        Py_RETURN_NONE;
    }
#endif
    PyErr_Format(PyExc_ValueError, "set_instruction_set: %R is not built or not supported by "
                 "this CPU", name_object);
    return NULL;
}

static PyObject *get_instruction_set(PyObject *self, PyObject *unused)
{
    return PyUnicode_FromString(chosen.instruction_set);
}
