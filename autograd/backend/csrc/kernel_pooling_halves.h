/* Max pooling without winners at stride 2 along contiguous rows of pixels of several values
 * (part of kernels.h: compiled once per instruction set; pooling_bindings.h picks it for a
 * batch-last batch's inference, kernel_pooling_shuffled.h for one image's planes). */

#ifndef POOL_CHUNK
/* max_or_nan's rule (the maximum; a NaN propagates, a later value wins only where strictly
 * greater) on whole vectors: the passes below are fixed chunks of POOL_CHUNK values, the last
 * one moved back to end where the row ends (it recomputes a few of the same values), so that
 * no pass has a scalar remainder: on a 111-pixel row the remainders' 15 values took longer
 * than the 96 before them. */
#define POOL_CHUNK 16
#define CHUNK_AT(start, length) ((start) + POOL_CHUNK <= (length) ? (start) : (length) - POOL_CHUNK)
/* a chunk's loop stays a loop for the vectorizer: unrolled first into 16 statements, GCC did
 * not vectorize them (with a NaN test in each select) */
#if defined(__GNUC__) && !defined(__clang__)
#define CHUNK_LOOP _Pragma("GCC unroll 1")
#else
#define CHUNK_LOOP
#endif
#define MAX_OR_NAN(value, best) (((value) > (best)) | ((value) != (value)) ? (value) : (best))
#endif

/* The input rows [*first, *last) of output row oh's windows, clipped to the image; where
 * every kernel row is padding, 0 and the output row's `length` values set to -inf */
static inline int KERNEL(pool_window_rows)(Py_ssize_t oh, int stride_height, int top,
                                           int kernel_height, Py_ssize_t height,
                                           float *y_out, Py_ssize_t length,
                                           Py_ssize_t *first, Py_ssize_t *last)
{
    *first = oh * stride_height - top;
    *last = *first + kernel_height;
    if (*first < 0)
        *first = 0;
    if (*last > height)
        *last = height;
    if (*first < *last)
        return 1;
    for (Py_ssize_t q = 0; q < length; q++)
        y_out[q] = -INFINITY;
    return 0;
}

/* One plane's maxima at stride 2 along the rows, each pixel `depth` values side by side (a
 * channel of a batch-last batch of N, its N images' values together): x's and y's rows
 * contiguous, at least POOL_CHUNK values of output in a row and 2 POOL_CHUNK of input.
 * Each output row takes the maximum over its kernel rows along the input row (`row`:
 * scratch of (width + 1) depth), splits it into its even and odd pixels (`halves`: 2
 * POOL_HALVES_SPAN depth, -inf around them for the padding), and then each output the
 * maximum of its kernel columns, which are contiguous runs of the halves. The same maxima,
 * in the same order, as max_pool_plane_separable (kernel_pooling.h), which reads its
 * columns at stride 2 in a pass per kernel column; a batch-last batch of 8 took NumPy's
 * passes, 4.2 ms for (8, 64, 111, 111) at 2 threads. */
static void KERNEL(max_pool_plane_halves)(
    const float *x, Py_ssize_t x_row, Py_ssize_t height, Py_ssize_t width, Py_ssize_t depth,
    float *y, Py_ssize_t y_row, Py_ssize_t out_height, Py_ssize_t out_width,
    int kernel_height, int kernel_width, int stride_height, int top, int left,
    float *restrict row, float *restrict halves)
{
    Py_ssize_t guard = ((left + 1) / 2 + 1) * depth, half = (width + 1) / 2;
    Py_ssize_t span = POOL_HALVES_SPAN(width, out_width, kernel_width, left) * depth;
    Py_ssize_t length = width * depth, out_length = out_width * depth;
    float *restrict even = halves, *restrict odd = halves + span;
    for (Py_ssize_t t = 0; t < 2 * span; t++)
        halves[t] = -INFINITY;
    for (Py_ssize_t k = 0; k < depth; k++)
        row[length + k] = -INFINITY;    /* the odd half's last pixel where width is odd */
    for (Py_ssize_t oh = 0; oh < out_height; oh++) {
        float *restrict y_out = y + oh * y_row;
        Py_ssize_t first, last;
        if (!KERNEL(pool_window_rows)(oh, stride_height, top, kernel_height, height, y_out,
                                      out_length, &first, &last))
            continue;
        /* every pass a select (the first against -inf, the last into the row): as plain
         * copies, GCC made the first and last library calls (memcpy), whose stores were not
         * forwarded to the next pass's loads */
        for (Py_ssize_t start = 0; start < length; start += POOL_CHUNK) {
            Py_ssize_t w = CHUNK_AT(start, length);
            float best[POOL_CHUNK];
            CHUNK_LOOP
            for (int l = 0; l < POOL_CHUNK; l++)
                best[l] = -INFINITY;
            for (Py_ssize_t r = first; r < last - 1; r++) {
                CHUNK_LOOP
                for (int l = 0; l < POOL_CHUNK; l++)
                    best[l] = MAX_OR_NAN(x[r * x_row + w + l], best[l]);
            }
            CHUNK_LOOP
            for (int l = 0; l < POOL_CHUNK; l++)
                row[w + l] = MAX_OR_NAN(x[(last - 1) * x_row + w + l], best[l]);
        }
        if (depth == 8) {                 /* a batch of 8: each pixel one 8-wide vector */
            for (Py_ssize_t t = 0; t < half; t++)
                for (int k = 0; k < 8; k++) {
                    even[guard + t * 8 + k] = row[16 * t + k];
                    odd[guard + t * 8 + k] = row[16 * t + 8 + k];
                }
        } else {
            for (Py_ssize_t t = 0; t < half; t++)
                for (Py_ssize_t k = 0; k < depth; k++) {
                    even[guard + t * depth + k] = row[2 * t * depth + k];
                    odd[guard + t * depth + k] = row[(2 * t + 1) * depth + k];
                }
        }
        for (Py_ssize_t start = 0; start < out_length; start += POOL_CHUNK) {
            Py_ssize_t o = CHUNK_AT(start, out_length);
            float best[POOL_CHUNK];
            CHUNK_LOOP
            for (int l = 0; l < POOL_CHUNK; l++)
                best[l] = -INFINITY;
            for (int j = 0; j < kernel_width; j++) {
                int column = j - left;                    /* input column 2 ow + column */
                const float *restrict source = (column & 1 ? odd : even) + guard
                                               + (column >> 1) * depth + o;
                if (j + 1 < kernel_width) {
                    CHUNK_LOOP
                    for (int l = 0; l < POOL_CHUNK; l++)
                        best[l] = MAX_OR_NAN(source[l], best[l]);
                } else {
                    CHUNK_LOOP
                    for (int l = 0; l < POOL_CHUNK; l++)
                        y_out[o + l] = MAX_OR_NAN(source[l], best[l]);
                }
            }
        }
    }
}
