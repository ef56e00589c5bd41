/* Softmax over rows: the token loss and attention.
 * (part of kernels.h: included once per instruction set, with KERNEL naming the functions) */

/* The first two passes of a row's softmax: p = e^(x - max x) and its sum, the max and the sum
 * in LANES partial results. x and p may be the same row (the attention softmax works in
 * place): each element is read before it is written, which `ivdep` tells the compiler instead
 * of `restrict`. */
static inline void KERNEL(softmax_exponentials)(
    Py_ssize_t width, const float *x, float *p, float *max_out, float *sum_out)
{
    float partial[LANES];
    Py_ssize_t j = 0;
    for (int k = 0; k < LANES; k++)
        partial[k] = -INFINITY;
    for (; j + LANES <= width; j += LANES)
        for (int k = 0; k < LANES; k++)
            partial[k] = x[j + k] > partial[k] ? x[j + k] : partial[k];
    float largest = KERNEL(max_of_lanes)(partial);
    for (; j < width; j++)
        largest = x[j] > largest ? x[j] : largest;

    for (int k = 0; k < LANES; k++)
        partial[k] = 0.0f;
    for (j = 0; j + LANES <= width; j += LANES)
        IVDEP
        for (int k = 0; k < LANES; k++) {
            float e = KERNEL(exp)(x[j + k] - largest);
            p[j + k] = e;
            partial[k] += e;
        }
    float total = KERNEL(sum_of_lanes)(partial);
    for (; j < width; j++) {
        p[j] = KERNEL(exp)(x[j] - largest);
        total += p[j];
    }
    *max_out = largest;
    *sum_out = total;
}

/* p *= 1 / total over a row. */
static inline void KERNEL(scale_row)(Py_ssize_t width, float *restrict p, float total)
{
    float scale = 1.0f / total;
    for (Py_ssize_t j = 0; j < width; j++)
        p[j] *= scale;
}

/* The softmax of one row, p = e^(x - max x) / sum e^(x - max x), in three passes over the row
 * (max; exponentials and their sum; scale). */
static inline void KERNEL(softmax_row)(
    Py_ssize_t width, const float *x, float *p, float *max_out, float *sum_out)
{
    KERNEL(softmax_exponentials)(width, x, p, max_out, sum_out);
    KERNEL(scale_row)(width, p, *sum_out);
}

/* Softmax cross-entropy of rows of logits (see backend/cross_entropy.py, softmax_rows): the
 * probabilities, and loss = log(sum) - (x[target] - max x). Returns the first row whose target
 * is outside [0, width), or -1. */
static Py_ssize_t KERNEL(softmax_cross_entropy)(
    Py_ssize_t rows, Py_ssize_t width, Rows x, Rows p, const int64_t *targets, float *losses)
{
    for (Py_ssize_t r = 0; r < rows; r++) {
        int64_t target = targets[r];
        if (target < 0 || target >= width)
            return r;
        const float *row = ROW(x, r);
        float largest, total;
        KERNEL(softmax_row)(width, row, ROW(p, r), &largest, &total);
        losses[r] = logf(total) - (row[target] - largest);
    }
    return -1;
}

/* The attention softmax in place (see backend/attention.py, masked_softmax) over rows of
 * scores (R, Tk), R = B * Tq: with `causal`, row r is query i = r mod Tq and keeps the keys
 * j <= i (numpy.tri(Tq, Tk)), the others set to 0.
 * A causal row's exponentials are computed over its kept keys rounded up to whole LANES
 * (within the row), the keys past them first set to -inf: the vector loops then cover the row,
 * where the scalar remainder took as long as the rest for short rows. Those exponentials
 * (e^-87, the clamp's) are below half an ulp of a sum that is at least 1, and they are set to 0
 * before the scaling (scaled, they would be subnormal: slow, and not 0). */
static void KERNEL(attention_softmax)(
    Py_ssize_t rows, Py_ssize_t width, Rows scores, Py_ssize_t queries, int causal)
{
    Py_ssize_t query = 0;
    for (Py_ssize_t r = 0; r < rows; r++) {
        float *row = ROW(scores, r);
        Py_ssize_t kept = causal && query + 1 < width ? query + 1 : width;
        Py_ssize_t covered = (kept + LANES - 1) / LANES * LANES;
        covered = covered < width ? covered : width;
        for (Py_ssize_t j = kept; j < covered; j++)
            row[j] = -INFINITY;
        float largest, total;
        KERNEL(softmax_exponentials)(covered, row, row, &largest, &total);
        for (Py_ssize_t j = kept; j < width; j++)
            row[j] = 0.0f;
        KERNEL(scale_row)(kept, row, total);
        query = query + 1 < queries ? query + 1 : 0;
    }
}
