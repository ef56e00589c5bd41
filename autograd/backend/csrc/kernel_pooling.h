/* Max pooling of one (H, W) plane (part of kernels.h: compiled once per instruction set).
 *
 * The outputs are columns [out_first, out_first + out_width) of each output row; y and winner
 * point at the first of them. Each output row keeps a running maximum and the offset it came
 * from for each of those outputs (`best`, `first`: scratch of out_width), and visits the kernel offsets in row-major
 * order, each as one pass along the row: a later offset wins only where strictly greater, a
 * NaN stays, and an offset outside the input (padding, -inf) changes nothing, so that pass
 * skips it. A pass compares and selects without branches, so the compiler vectorizes it. */
/* One kernel offset k of a window: `value` becomes the maximum where strictly greater, or
 * where it is a NaN; the winner becomes k only where strictly greater. The selects are bit
 * masks, because GCC compiled `greater ? value : best` in the scalar remainder of short rows
 * (an 8x8 image's 4 outputs) as branches, mispredicted on half the elements. */
static inline void KERNEL(keep_first_maximum)(float value, int32_t k, float *best,
                                              int32_t *first)
{
    int32_t greater = -(int32_t)(value > *best);
    int32_t take = greater | -(int32_t)(value != value);
    int32_t value_bits, best_bits;
    memcpy(&value_bits, &value, 4);
    memcpy(&best_bits, best, 4);
    best_bits = (value_bits & take) | (best_bits & ~take);
    memcpy(best, &best_bits, 4);
    *first = (k & greater) | (*first & ~greater);
}

/* One kernel offset's pass along a row */
#define MAX_POOL_PASS(step)                                                    \
    for (Py_ssize_t ow = low; ow < high; ow++)                                 \
        KERNEL(keep_first_maximum)(column0[ow * (step)], k, &best[ow], &first[ow]);

/* The outputs [*low, *high) of a row, as offsets from out_first and at most out_width of
 * them, whose kernel column j (input column o * stride - left + j) is inside [0, width) */
static inline void KERNEL(columns_reached)(int j, int left, int stride_width, Py_ssize_t width,
                                           Py_ssize_t out_first, Py_ssize_t out_width,
                                           Py_ssize_t *low, Py_ssize_t *high)
{
    inside_outputs(j - left, stride_width, width, out_first + out_width, low, high);
    *low = *low > out_first ? *low - out_first : 0;
    *high = *high > out_first ? *high - out_first : 0;
}

/* Outputs of a row below which each output is taken whole (its window's offsets in turn):
 * the row passes' vector loops cost more to enter than a few outputs take. */
#define MAX_POOL_ROW_PASS_MIN 16

static void KERNEL(max_pool_direct)(
    const float *x, Py_ssize_t x_row, Py_ssize_t x_column, Py_ssize_t height,
    Py_ssize_t width, float *y, Py_ssize_t y_row, Py_ssize_t y_column, unsigned char *winner,
    Py_ssize_t winner_row, Py_ssize_t winner_column, Py_ssize_t out_height,
    Py_ssize_t out_first, Py_ssize_t out_width, int kernel_height, int kernel_width,
    int stride_height, int stride_width, int top, int left)
{
    for (Py_ssize_t oh = 0; oh < out_height; oh++)
        for (Py_ssize_t ow = 0; ow < out_width; ow++) {
            Py_ssize_t row0 = oh * stride_height - top;
            Py_ssize_t column0 = (out_first + ow) * stride_width - left;
            float best = -INFINITY;
            int32_t first = 0;
            for (int i = 0; i < kernel_height; i++) {
                Py_ssize_t row = row0 + i;
                if (row < 0 || row >= height)
                    continue;                              /* a padding row */
                for (int j = 0; j < kernel_width; j++) {
                    Py_ssize_t column = column0 + j;
                    if (column < 0 || column >= width)
                        continue;                          /* a padding column */
                    KERNEL(keep_first_maximum)(x[row * x_row + column * x_column],
                                               i * kernel_width + j, &best, &first);
                }
            }
            y[oh * y_row + ow * y_column] = best;
            if (winner != NULL)
                winner[oh * winner_row + ow * winner_column] = (unsigned char)first;
        }
}

static void KERNEL(max_pool_plane)(
    const float *x, Py_ssize_t x_row, Py_ssize_t x_column, Py_ssize_t height,
    Py_ssize_t width, float *y, Py_ssize_t y_row, Py_ssize_t y_column, unsigned char *winner,
    Py_ssize_t winner_row, Py_ssize_t winner_column, Py_ssize_t out_height,
    Py_ssize_t out_first, Py_ssize_t out_width, int kernel_height, int kernel_width,
    int stride_height, int stride_width, int top, int left, float *restrict best,
    int32_t *restrict first)
{
    if (out_width < MAX_POOL_ROW_PASS_MIN) {
        KERNEL(max_pool_direct)(x, x_row, x_column, height, width, y, y_row, y_column, winner,
                                winner_row, winner_column, out_height, out_first, out_width,
                                kernel_height, kernel_width, stride_height, stride_width, top,
                                left);
        return;
    }
    /* for each kernel column j, the outputs it reaches: the same on every row */
    Py_ssize_t lows[256], highs[256];
    for (int j = 0; j < kernel_width; j++)
        KERNEL(columns_reached)(j, left, stride_width, width, out_first, out_width, &lows[j],
                                &highs[j]);
    Py_ssize_t step = stride_width * x_column;
    for (Py_ssize_t oh = 0; oh < out_height; oh++) {
        for (Py_ssize_t ow = 0; ow < out_width; ow++) {
            best[ow] = -INFINITY;
            first[ow] = 0;
        }
        for (int i = 0; i < kernel_height; i++) {
            Py_ssize_t row = oh * stride_height - top + i;
            if (row < 0 || row >= height)
                continue;                                  /* a padding row */
            const float *row_start = x + row * x_row + (out_first * stride_width - left)
                                                       * x_column;
            for (int j = 0; j < kernel_width; j++) {
                int k = i * kernel_width + j;
                const float *restrict column0 = row_start + j * x_column;
                Py_ssize_t low = lows[j], high = highs[j];
                /* the common strides as constants, which the compiler vectorizes */
                if (step == 1) {
                    MAX_POOL_PASS(1)
                } else if (step == 2) {
                    MAX_POOL_PASS(2)
                } else {
                    MAX_POOL_PASS(step)
                }
            }
        }
        float *y_out = y + oh * y_row;
        for (Py_ssize_t ow = 0; ow < out_width; ow++)
            y_out[ow * y_column] = best[ow];
        if (winner != NULL) {
            unsigned char *w_out = winner + oh * winner_row;
            for (Py_ssize_t ow = 0; ow < out_width; ow++)
                w_out[ow * winner_column] = (unsigned char)first[ow];
        }
    }
}

/* The maxima alone (no winners: inference), separably: each output row takes the maximum
 * over the kernel's rows along the whole input row first (a contiguous pass the compiler
 * vectorizes), then each output the maximum of its kernel columns in that row (`row_max`:
 * scratch of width, `best`: of out_width). A NaN propagates; padding is skipped (it is -inf,
 * never the maximum). */
#define MAX_ONLY_PASS(step)                                                    \
    for (Py_ssize_t ow = low; ow < high; ow++) {                               \
        float value = column0[ow * (step)];                                    \
        int32_t take = -(int32_t)((value > best[ow]) | (value != value));      \
        int32_t value_bits, best_bits;                                         \
        memcpy(&value_bits, &value, 4);                                        \
        memcpy(&best_bits, &best[ow], 4);                                      \
        best_bits = (value_bits & take) | (best_bits & ~take);                 \
        memcpy(&best[ow], &best_bits, 4);                                      \
    }

static void KERNEL(max_pool_plane_separable)(
    const float *x, Py_ssize_t x_row, Py_ssize_t x_column, Py_ssize_t height,
    Py_ssize_t width, float *y, Py_ssize_t y_row, Py_ssize_t y_column, Py_ssize_t out_height,
    Py_ssize_t out_width, int kernel_height, int kernel_width, int stride_height,
    int stride_width, int top, int left, float *restrict row_max, float *restrict best)
{
    for (Py_ssize_t oh = 0; oh < out_height; oh++) {
        for (Py_ssize_t w = 0; w < width; w++)
            row_max[w] = -INFINITY;
        for (int i = 0; i < kernel_height; i++) {
            Py_ssize_t row = oh * stride_height - top + i;
            if (row < 0 || row >= height)
                continue;                                  /* a padding row */
            const float *restrict source = x + row * x_row;
            if (x_column == 1) {
                for (Py_ssize_t w = 0; w < width; w++) {
                    float value = source[w];
                    row_max[w] = value > row_max[w] || value != value ? value : row_max[w];
                }
            } else {
                for (Py_ssize_t w = 0; w < width; w++) {
                    float value = source[w * x_column];
                    row_max[w] = value > row_max[w] || value != value ? value : row_max[w];
                }
            }
        }
        /* then along the row: one pass per kernel column over the outputs it reaches,
         * branch-free (the maximum's branches were mispredicted on half the elements) */
        for (Py_ssize_t ow = 0; ow < out_width; ow++)
            best[ow] = -INFINITY;
        for (int j = 0; j < kernel_width; j++) {
            Py_ssize_t low, high;
            KERNEL(columns_reached)(j, left, stride_width, width, 0, out_width, &low, &high);
            const float *restrict column0 = row_max + j - left;
            if (stride_width == 2) {
                MAX_ONLY_PASS(2)
            } else {
                MAX_ONLY_PASS(stride_width)
            }
        }
        float *y_out = y + oh * y_row;
        for (Py_ssize_t ow = 0; ow < out_width; ow++)
            y_out[ow * y_column] = best[ow];
    }
}

/* 2x2 windows of stride 2 that tile a dense batch exactly, as rows: output row r (out_width
 * pixels of `depth` values each) pools input rows 2r and 2r + 1 (2 out_width pixels), whichever
 * plane they are in: a C-contiguous batch has depth 1, a batch-last one (C, H, W, N) depth N,
 * each pixel's N values side by side. The same maxima and winners as max_pool_plane (offsets
 * in row-major order, a later one wins only where strictly greater, a NaN stays); a digits
 * CNN's 8x8 planes cost the per-plane kernels more to set up than to pool. */
static inline void KERNEL(max_pool_pair)(const float *top, const float *bottom, Py_ssize_t a,
                                         Py_ssize_t b, float *y, unsigned char *winner)
{
    /* the first offset sets the maximum (a -inf or a NaN there too) */
    float best = top[a];
    int32_t first = 0;
    KERNEL(keep_first_maximum)(top[b], 1, &best, &first);
    KERNEL(keep_first_maximum)(bottom[a], 2, &best, &first);
    KERNEL(keep_first_maximum)(bottom[b], 3, &best, &first);
    *y = best;
    if (winner != NULL)
        *winner = (unsigned char)first;
}

#ifndef POOL_PAIR
/* Windows in a run below which the winners are narrowed to uint8 in a loop of their own */
#define POOL_PAIR_SHORT_RUN 16
/* One 2x2 window's maximum and winner, the four offsets given (keep_first_maximum's rule) */
#define POOL_PAIR(best, first, a, b, c, d)                             \
    float best = (a);            /* the first offset sets it (-inf, NaN too) */ \
    int32_t first = 0;                                                 \
    KERNEL(keep_first_maximum)((b), 1, &best, &first);                 \
    KERNEL(keep_first_maximum)((c), 2, &best, &first);                 \
    KERNEL(keep_first_maximum)((d), 3, &best, &first)
#endif

/* `count` windows whose offsets are top[k * STEP], top[k * STEP + gap] and bottom's likewise
 * (STEP a constant, so that the loads are plain vector loads): maxima into y and winners
 * (where wanted) into winner. Each loop decides the winners' presence outside it, so that the
 * compiler vectorizes it; fewer windows than a vector keep their winners as int32 and narrow
 * them in a loop of their own, since uint8 stores in the same loop left them scalar (a batch
 * of 8 values side by side: 7x slower). */
#define MAX_POOL_PAIR_RUN(name, STEP)                                                   \
static inline void KERNEL(name)(Py_ssize_t count, Py_ssize_t gap, const float *top,     \
                                const float *bottom, float *y, unsigned char *winner)   \
{                                                                                       \
    if (winner == NULL) {                                                               \
        IVDEP                                                                           \
        for (Py_ssize_t k = 0; k < count; k++) {                                        \
            POOL_PAIR(best, first, top[k * STEP], top[k * STEP + gap], bottom[k * STEP],\
                      bottom[k * STEP + gap]);                                          \
            (void)first;                                                                \
            y[k] = best;                                                                \
        }                                                                               \
    } else if (count >= POOL_PAIR_SHORT_RUN) {                                          \
        IVDEP                                                                           \
        for (Py_ssize_t k = 0; k < count; k++) {                                        \
            POOL_PAIR(best, first, top[k * STEP], top[k * STEP + gap], bottom[k * STEP],\
                      bottom[k * STEP + gap]);                                          \
            y[k] = best;                                                                \
            winner[k] = (unsigned char)first;                                           \
        }                                                                               \
    } else {                                                                            \
        int32_t firsts[POOL_PAIR_SHORT_RUN];                                            \
        IVDEP                                                                           \
        for (Py_ssize_t k = 0; k < count; k++) {                                        \
            POOL_PAIR(best, first, top[k * STEP], top[k * STEP + gap], bottom[k * STEP],\
                      bottom[k * STEP + gap]);                                          \
            y[k] = best;                                                                \
            firsts[k] = first;                                                          \
        }                                                                               \
        for (Py_ssize_t k = 0; k < count; k++)                                          \
            winner[k] = (unsigned char)firsts[k];                                       \
    }                                                                                   \
}
MAX_POOL_PAIR_RUN(max_pool_pairs_along_row, 2)
MAX_POOL_PAIR_RUN(max_pool_pairs_side_by_side, 1)

static void KERNEL(max_pool_pairs)(Py_ssize_t rows, Py_ssize_t out_width, Py_ssize_t depth,
                                   const float *x, float *y, unsigned char *winner)
{
    /* A plane's row (depth 1): out_width windows, two inputs an output apart; a batch-last
     * row: each pixel's `depth` values side by side, a window's two columns `depth` apart */
    Py_ssize_t out_row = out_width * depth, in_row = 2 * out_row;
    for (Py_ssize_t r = 0; r < rows; r++) {
        const float *top = x + 2 * r * in_row, *bottom = top + in_row;
        float *y_row = y + r * out_row;
        unsigned char *winner_row = winner != NULL ? winner + r * out_row : NULL;
        if (depth == 1) {
            /* runs of POOL_PAIR_SHORT_RUN windows: one run of a whole long row took twice
             * as long ((8, 64, 112, 112) with winners: 1.9 against 0.9-1.3 ms) */
            for (Py_ssize_t ow = 0; ow < out_width; ow += POOL_PAIR_SHORT_RUN) {
                Py_ssize_t count = out_width - ow < POOL_PAIR_SHORT_RUN ? out_width - ow
                                                                          : POOL_PAIR_SHORT_RUN;
                KERNEL(max_pool_pairs_along_row)(count, 1, top + 2 * ow, bottom + 2 * ow,
                                                 y_row + ow, winner_row != NULL
                                                 ? winner_row + ow : NULL);
            }
            continue;
        }
        for (Py_ssize_t ow = 0; ow < out_width; ow++)   /* a pixel's `depth` windows a run */
            KERNEL(max_pool_pairs_side_by_side)(depth, depth, top + 2 * ow * depth,
                                                bottom + 2 * ow * depth, y_row + ow * depth,
                                                winner_row != NULL ? winner_row + ow * depth
                                                                   : NULL);
    }
}

/* Its backward: each of dx's elements belongs to one window, so each is written once, dy's
 * gradient at the window's winner and 0 at the other three offsets (a bit mask, not a
 * branch: -0 and NaN kept as they are; STEP a constant, as in the forward, so that the loop
 * vectorizes: written with `k == 0 ? gradient : 0` it ran scalar) */
static inline float KERNEL(gradient_where)(float gradient, int take)
{
    int32_t bits;
    memcpy(&bits, &gradient, 4);
    bits &= -(int32_t)take;
    memcpy(&gradient, &bits, 4);
    return gradient;
}

#define MAX_POOL_PAIR_BACKWARD_RUN(name, STEP)                                         \
static inline void KERNEL(name)(Py_ssize_t count, Py_ssize_t gap, const float *dy,     \
                                const unsigned char *winner, float *top, float *bottom) \
{                                                                                      \
    IVDEP                                                                              \
    for (Py_ssize_t k = 0; k < count; k++) {                                           \
        float gradient = dy[k];                                                        \
        int w = winner[k];                                                             \
        top[k * STEP] = KERNEL(gradient_where)(gradient, w == 0);                      \
        top[k * STEP + gap] = KERNEL(gradient_where)(gradient, w == 1);                \
        bottom[k * STEP] = KERNEL(gradient_where)(gradient, w == 2);                   \
        bottom[k * STEP + gap] = KERNEL(gradient_where)(gradient, w == 3);             \
    }                                                                                  \
}
MAX_POOL_PAIR_BACKWARD_RUN(max_pool_pairs_backward_along_row, 2)
MAX_POOL_PAIR_BACKWARD_RUN(max_pool_pairs_backward_side_by_side, 1)

static void KERNEL(max_pool_pairs_backward)(Py_ssize_t rows, Py_ssize_t out_width,
                                            Py_ssize_t depth, const float *dy,
                                            const unsigned char *winner, float *dx)
{
    Py_ssize_t out_row = out_width * depth, in_row = 2 * out_row;
    for (Py_ssize_t r = 0; r < rows; r++) {
        float *top = dx + 2 * r * in_row, *bottom = top + in_row;
        const float *dy_row = dy + r * out_row;
        const unsigned char *winner_row = winner + r * out_row;
        if (depth == 1) {
            KERNEL(max_pool_pairs_backward_along_row)(out_width, 1, dy_row, winner_row, top,
                                                      bottom);
            continue;
        }
        for (Py_ssize_t ow = 0; ow < out_width; ow++)
            KERNEL(max_pool_pairs_backward_side_by_side)(
                depth, depth, dy_row + ow * depth, winner_row + ow * depth,
                top + 2 * ow * depth, bottom + 2 * ow * depth);
    }
}
