/* Max pooling without winners of one image's plane at stride 2 along its contiguous rows,
 * the stride's even and odd columns taken from vectors by shuffles (part of kernels.h:
 * compiled once per instruction set; pooling_bindings.h picks it for a plane of one image,
 * kernel_pooling_halves.h's pixels of several values for a batch-last batch). */

#ifndef POOL_SHUFFLE_GUARD
/* -inf values before a row's values in the scratch (a left pad reads them) and, past them,
 * room for the reads of the last chunk of outputs and of a row narrower than a chunk */
#define POOL_SHUFFLE_GUARD 16
#define POOL_SHUFFLE_SCRATCH(width, out_width, kernel_width) \
    (POOL_SHUFFLE_GUARD + (width) + 2 * (out_width) + (kernel_width) + 4 * POOL_CHUNK)
#if defined(__GNUC__)
typedef float PoolVector __attribute__((vector_size(POOL_CHUNK * sizeof(float))));
typedef int32_t PoolMask __attribute__((vector_size(POOL_CHUNK * sizeof(float))));
#if defined(__clang__)
#define POOL_LANES(a, b, odd)                                                                 \
    ((odd) ? __builtin_shufflevector(a, b, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, \
                                     29, 31)                                                  \
           : __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, \
                                     28, 30))
#else
#define POOL_LANES(a, b, odd)                                                                 \
    __builtin_shuffle(a, b, (odd) ? (PoolMask){1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, \
                                               27, 29, 31}                                    \
                                  : (PoolMask){0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, \
                                               26, 28, 30})
#endif
#endif
#endif

#if defined(__GNUC__)
/* *best = MAX_OR_NAN(value, *best) on whole vectors, as a select GCC makes a compare and a
 * blend (through pointers: a vector returned by value is an ABI the generic build lacks) */
static inline void KERNEL(pool_max_or_nan)(PoolVector *best, PoolVector value)
{
    PoolMask take = (value > *best) | (value != value);
    *best = (PoolVector)(((PoolMask)value & take) | ((PoolMask)*best & ~take));
}
#endif

/* One plane's maxima at stride 2 along its rows (x's and y's rows contiguous, 16 values or
 * more in a row of x): each output row takes the maximum over its kernel rows along the
 * input row into `scratch` (POOL_SHUFFLE_SCRATCH values, -inf but where this writes them),
 * and then each chunk of 16 outputs the maximum over its kernel columns, each column the
 * even or odd lanes of two vectors of that row. The same maxima in the same order as
 * max_pool_plane_halves, whose scalar loops GCC kept spilling to the stack: SqueezeNet's
 * 3x3 windows on (64, 111, 111) took 227 us on one thread there; its (256, 27, 27) ones,
 * narrower than the halves take, 255 us in max_pool_plane_separable. */
static ALWAYS_INLINE void KERNEL(max_pool_shuffled_rows)(
    const float *x, Py_ssize_t x_row, Py_ssize_t height, Py_ssize_t width, float *y,
    Py_ssize_t y_row, Py_ssize_t out_height, Py_ssize_t out_width, int kernel_height,
    int kernel_width, int stride_height, int top, int left, float *restrict scratch)
{
    float *restrict row = scratch + POOL_SHUFFLE_GUARD;
    for (Py_ssize_t oh = 0; oh < out_height; oh++) {
        float *restrict y_out = y + oh * y_row;
        Py_ssize_t first, last;
        if (!KERNEL(pool_window_rows)(oh, stride_height, top, kernel_height, height, y_out,
                                      out_width, &first, &last))
            continue;
#if defined(__GNUC__)
        for (Py_ssize_t start = 0; start < width; start += POOL_CHUNK) {
            Py_ssize_t w = CHUNK_AT(start, width);
            PoolVector best, value;
            memcpy(&best, x + first * x_row + w, sizeof best);
            for (Py_ssize_t r = first + 1; r < last; r++) {
                memcpy(&value, x + r * x_row + w, sizeof value);
                KERNEL(pool_max_or_nan)(&best, value);
            }
            memcpy(row + w, &best, sizeof best);
        }
        for (Py_ssize_t start = 0; start < out_width; start += POOL_CHUNK) {
            /* a row of fewer outputs than a chunk: one chunk, its first out_width kept */
            Py_ssize_t o = out_width < POOL_CHUNK ? 0 : CHUNK_AT(start, out_width);
            const float *restrict base = row + 2 * o - left;
            PoolVector low, high;
            memcpy(&low, base, sizeof low);
            memcpy(&high, base + POOL_CHUNK, sizeof high);
            PoolVector best = POOL_LANES(low, high, 0);
            for (int j = 1; j < kernel_width; j++) {
                memcpy(&low, base + (j & ~1), sizeof low);
                memcpy(&high, base + (j & ~1) + POOL_CHUNK, sizeof high);
                KERNEL(pool_max_or_nan)(&best, POOL_LANES(low, high, j & 1));
            }
            if (out_width < POOL_CHUNK)
                for (Py_ssize_t q = 0; q < out_width; q++)
                    y_out[q] = best[q];
            else
                memcpy(y_out + o, &best, sizeof best);
        }
#else
        for (Py_ssize_t w = 0; w < width; w++) {
            float best = x[first * x_row + w];
            for (Py_ssize_t r = first + 1; r < last; r++)
                best = MAX_OR_NAN(x[r * x_row + w], best);
            row[w] = best;
        }
        for (Py_ssize_t o = 0; o < out_width; o++) {
            float best = row[2 * o - left];
            for (int j = 1; j < kernel_width; j++)
                best = MAX_OR_NAN(row[2 * o - left + j], best);
            y_out[o] = best;
        }
#endif
    }
}

static void KERNEL(max_pool_plane_shuffled)(
    const float *x, Py_ssize_t x_row, Py_ssize_t height, Py_ssize_t width, float *y,
    Py_ssize_t y_row, Py_ssize_t out_height, Py_ssize_t out_width, int kernel_height,
    int kernel_width, int stride_height, int top, int left, float *restrict scratch)
{
    if (kernel_height == 3 && kernel_width == 3)
        KERNEL(max_pool_shuffled_rows)(x, x_row, height, width, y, y_row, out_height,
                                       out_width, 3, 3, stride_height, top, left, scratch);
    else
        KERNEL(max_pool_shuffled_rows)(x, x_row, height, width, y, y_row, out_height,
                                       out_width, kernel_height, kernel_width, stride_height,
                                       top, left, scratch);
}
