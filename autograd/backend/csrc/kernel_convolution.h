/* A convolution as shifted products, without an im2col column matrix (see
 * convolution_bindings.h for the layouts, backend/native_convolution.py for where it runs).
 * The input is padded once, batch-last, into (C, Hp, Wp, N) (at a stride, into its phases);
 * in its flat order an output pixel's window offset (i, j) reads the same run as its
 * neighbours', shifted by (i * dh * Wp + j * dw) * N. So row (c, i, j) of the columns a GEMM
 * would build is a run of the padded input starting at offsets[(c, i, j)], and the product
 * of the weights (O, K) with those rows is a register tile whose rows of b are read in
 * place. The flat order runs over the padded width: Wp - OW columns of each output row are
 * computed and dropped where the tile is stored (4% more products on 55x55 images, 15% on
 * 13x13, against no columns to write and read); where that would cost an eighth of the
 * tiles, the binding builds the columns instead and the same tile reads them as runs.
 * (part of kernels.h: included once per instruction set, with KERNEL naming the functions) */

/* One tile: sums[r][j] = sum over p of w[r * ldw + p] * padded[offsets[p] + j], `rows` (at
 * most TILE_ROWS, a constant where it is inlined, so that the sums stay in registers) by
 * SHIFT_COLUMNS. */
static inline void KERNEL(shifted_tile_of)(
    const int rows, Py_ssize_t k, const float *restrict w, Py_ssize_t ldw,
    const float *restrict padded, const Py_ssize_t *restrict offsets,
    float sums[][SHIFT_COLUMNS])
{
    float sum[TILE_ROWS][SHIFT_COLUMNS];
    for (int r = 0; r < rows; r++)
        for (int j = 0; j < SHIFT_COLUMNS; j++)
            sum[r][j] = 0.0f;
    for (Py_ssize_t p = 0; p < k; p++) {
        const float *restrict row = padded + offsets[p];
        for (int r = 0; r < rows; r++) {
            float x = w[r * ldw + p];
            for (int j = 0; j < SHIFT_COLUMNS; j++)
                sum[r][j] += x * row[j];
        }
    }
    for (int r = 0; r < rows; r++)
        for (int j = 0; j < SHIFT_COLUMNS; j++)
            sums[r][j] = sum[r][j];
}

/* The same over the first half of the columns, for a last tile that keeps no more (a 4x4
 * output's 16 values took a whole tile's time). In GCC's vector type: the loops above at half
 * the width were vectorized across the rows, transposing the weights (5x slower than the
 * whole tile). */
static inline void KERNEL(shifted_half_tile_of)(
    const int rows, Py_ssize_t k, const float *restrict w, Py_ssize_t ldw,
    const float *restrict padded, const Py_ssize_t *restrict offsets,
    float sums[][SHIFT_COLUMNS])
{
#if defined(__GNUC__)
    typedef float Half __attribute__((vector_size(SHIFT_COLUMNS / 2 * sizeof(float))));
    Half sum[TILE_ROWS];
    for (int r = 0; r < rows; r++)
        sum[r] = (Half){0.0f};
    for (Py_ssize_t p = 0; p < k; p++) {
        Half row;
        memcpy(&row, padded + offsets[p], sizeof row);
        for (int r = 0; r < rows; r++)
            sum[r] += w[r * ldw + p] * row;
    }
    for (int r = 0; r < rows; r++)
        memcpy(sums[r], &sum[r], sizeof sum[r]);
#else
    KERNEL(shifted_tile_of)(rows, k, w, ldw, padded, offsets, sums);
#endif
}

/* A channel tile's `rows` output channels (at most SHIFT_ROWS), TILE_ROWS at a time, by
 * `tile` (one of the two above). */
#define SHIFTED_CHANNELS(tile, rows, k, w, padded, offsets, sums)                           \
    do {                                                                                    \
        Py_ssize_t r_ = 0;                                                                  \
        for (; r_ + TILE_ROWS <= (rows); r_ += TILE_ROWS)                                   \
            tile(TILE_ROWS, k, (w) + r_ * (k), k, padded, offsets, (sums) + r_);            \
        for (; r_ < (rows); r_++)                                                           \
            tile(1, k, (w) + r_ * (k), k, padded, offsets, (sums) + r_);                    \
    } while (0)

/* The tile's row for output channel `channel`, flat positions [f, f + SHIFT_COLUMNS) of the
 * padded width, stored in y's row without the dropped columns: + bias, then the ReLU (NumPy's
 * maximum(y, 0): a NaN stays a NaN). */
static inline void KERNEL(shifted_store)(const ShiftedProduct *p, Py_ssize_t channel,
                                         Py_ssize_t f, const float *restrict sum)
{
    float bias = p->bias != NULL ? p->bias[channel] : 0.0f;
    float *restrict y = p->y + channel * p->y_stride;
    Py_ssize_t oh = f / p->row_length, column = f - oh * p->row_length;
    Py_ssize_t total = p->out_height * p->row_length;
    if (column + SHIFT_COLUMNS <= p->valid_length
            || (p->row_length == p->valid_length && f + SHIFT_COLUMNS <= total)) {
        /* the whole tile inside one row's kept columns (most tiles of a wide image), or in
         * rows that keep every column (a 1x1 kernel's): whole vectors, where the runs' loops
         * below have remainders */
        float *restrict target = y + oh * p->valid_length + column;
        if (p->relu)
            for (int q = 0; q < SHIFT_COLUMNS; q++) {
                float v = sum[q] + bias;
                target[q] = v <= 0.0f ? 0.0f : v;
            }
        else
            for (int q = 0; q < SHIFT_COLUMNS; q++)
                target[q] = sum[q] + bias;
        return;
    }
    Py_ssize_t end = f + SHIFT_COLUMNS;
    if (end > total)
        end = total;
    for (Py_ssize_t oh = f / p->row_length, start = f; start < end; oh++) {
        Py_ssize_t base = oh * p->row_length, stop = base + p->valid_length;
        if (stop > end)
            stop = end;
        float *restrict target = y + oh * p->valid_length - base;
        const float *restrict source = sum - f;
        if (p->relu)
            for (Py_ssize_t q = start; q < stop; q++) {
                float v = source[q] + bias;
                target[q] = v <= 0.0f ? 0.0f : v;
            }
        else
            for (Py_ssize_t q = start; q < stop; q++)
                target[q] = source[q] + bias;
        start = base + p->row_length;
    }
}

/* Whether the tile at flat position f is stored whole: inside one output row's kept
 * columns (most tiles of a wide image), or in rows that keep every column (a 1x1 kernel's,
 * the built columns'), its target then y's row from oh * valid_length + column on */
static inline int KERNEL(shifted_whole)(const ShiftedProduct *p, Py_ssize_t f,
                                        Py_ssize_t *at)
{
    Py_ssize_t oh = f / p->row_length, column = f - oh * p->row_length;
    *at = oh * p->valid_length + column;
    return column + SHIFT_COLUMNS <= p->valid_length
           || (p->row_length == p->valid_length
               && f + SHIFT_COLUMNS <= p->out_height * p->row_length);
}

/* A whole tile of TILE_ROWS output channels from `first` computed and stored at once, + bias
 * and the ReLU applied from the registers (through a scratch tile read back by shifted_store,
 * a 3-channel stem's 27 products a tile ran at 63% of the FMA peak). In GCC's vector type:
 * as plain loops the sums were kept in memory, zeroed, stored and read back. */
#if defined(__GNUC__)
#define SHIFT_STORED 1
static inline void KERNEL(shifted_tile_stored)(const ShiftedProduct *p, Py_ssize_t first,
                                               Py_ssize_t at, const float *restrict w,
                                               const float *restrict padded,
                                               const Py_ssize_t *restrict offsets)
{
    typedef float Half __attribute__((vector_size(SHIFT_COLUMNS / 2 * sizeof(float))));
    typedef int Mask __attribute__((vector_size(SHIFT_COLUMNS / 2 * sizeof(float))));
    Half sum[TILE_ROWS][2];
    for (int r = 0; r < TILE_ROWS; r++)
        sum[r][0] = sum[r][1] = (Half){0.0f};
    for (Py_ssize_t q = 0; q < p->k; q++) {
        Half left, right;
        memcpy(&left, padded + offsets[q], sizeof left);
        memcpy(&right, padded + offsets[q] + SHIFT_COLUMNS / 2, sizeof right);
        for (int r = 0; r < TILE_ROWS; r++) {
            float x = w[r * p->k + q];
            sum[r][0] += x * left;
            sum[r][1] += x * right;
        }
    }
    for (int r = 0; r < TILE_ROWS; r++) {
        float bias = p->bias != NULL ? p->bias[first + r] : 0.0f;
        float *restrict target = p->y + (first + r) * p->y_stride + at;
        for (int half = 0; half < 2; half++) {
            Half v = sum[r][half] + bias;
            if (p->relu) {          /* NumPy's maximum(v, 0): v <= 0 gives 0, a NaN stays */
                Mask positive = ~(v <= (Half){0.0f});
                v = (Half)((Mask)v & positive);
            }
            memcpy(target + half * (SHIFT_COLUMNS / 2), &v, sizeof v);
        }
    }
}
#else
#define SHIFT_STORED 0
#endif

/* Tiles [start, stop) of the product, in blocks of `block` flat tiles: within a block, each
 * channel tile (channels [8 r, + SHIFT_ROWS), TILE_ROWS at a time) over the block's flat
 * tiles, so that an output row is written a block's width at a time (a 3x3 stem on 3
 * channels, batch 8: each tile stored into 64 rows at once wrote 64 streams, 5.3 ms) and
 * the weights are read once per block; the block's runs of the input stay in the core's
 * cache across its channel tiles. */
static void KERNEL(shifted_products)(const ShiftedProduct *p, Py_ssize_t start,
                                     Py_ssize_t stop)
{
    float sums[SHIFT_ROWS][SHIFT_COLUMNS];
    Py_ssize_t per_block = p->row_tiles * p->block;
    Py_ssize_t whole = p->flat_tiles / p->block * per_block;   /* tiles in whole blocks */
    Py_ssize_t last = p->flat_tiles % p->block;                /* the last block's width */
    for (Py_ssize_t q = start; q < stop; q++) {
        Py_ssize_t tile, channel_tile;
        if (q < whole) {
            tile = q / per_block * p->block + q % p->block;
            channel_tile = q % per_block / p->block;
        } else {
            tile = whole / p->row_tiles + (q - whole) % last;
            channel_tile = (q - whole) / last;
        }
        Py_ssize_t f = tile * SHIFT_COLUMNS, first = channel_tile * SHIFT_ROWS;
        Py_ssize_t rows = p->out_channels - first < SHIFT_ROWS ? p->out_channels - first
                                                               : SHIFT_ROWS;
        const float *w = p->weights + first * p->k, *padded = p->padded + f;
        const Py_ssize_t *offsets = p->offsets;
        if (p->tail != NULL && tile == p->flat_tiles - 1) {
            padded = p->tail;            /* its runs copied: in place they end past x */
            offsets = p->tail_offsets;
        }
#if SHIFT_STORED
        Py_ssize_t at;
        if (TILE_ROWS == SHIFT_ROWS && rows == SHIFT_ROWS && KERNEL(shifted_whole)(p, f, &at)) {
            KERNEL(shifted_tile_stored)(p, first, at, w, padded, offsets);
            continue;
        }
#endif
        /* the store reads no further than the flat positions' end */
        if (f + SHIFT_COLUMNS / 2 >= p->out_height * p->row_length)
            SHIFTED_CHANNELS(KERNEL(shifted_half_tile_of), rows, p->k, w, padded, offsets,
                             sums);
        else
            SHIFTED_CHANNELS(KERNEL(shifted_tile_of), rows, p->k, w, padded, offsets, sums);
        for (Py_ssize_t r = 0; r < rows; r++)
            KERNEL(shifted_store)(p, first + r, f, sums[r]);
    }
}

#undef SHIFTED_CHANNELS
#undef SHIFT_STORED
