/* Parameter updates in one pass over memory (see backend/update.py and native_update.py).
 * (part of kernels.h: included once per instruction set, with KERNEL naming the functions) */

#ifndef ADAM_SETTINGS_DEFINED
#define ADAM_SETTINGS_DEFINED
/* An Adam step's numbers, as float32 (what NumPy casts Python floats to against float32
 * arrays): keep_1 = 1 - beta_1, keep_2 = 1 - beta_2, l2 the coupled weight decay (0: none),
 * decay = 1 - lr * weight_decay (AdamW; 1: none), inverse_correction = 1 / (1 - beta_2^t),
 * step = -lr / (1 - beta_1^t). */
typedef struct {
    float beta_1, beta_2, keep_1, keep_2, epsilon, l2, decay, inverse_correction, step;
} AdamSettings;
#endif

/* y += alpha x (BLAS's saxpy; where the instruction set has FMA, one rounding, as BLAS's) */
static void KERNEL(axpy)(Py_ssize_t count, float alpha, const float *restrict x,
                         float *restrict y)
{
    for (Py_ssize_t i = 0; i < count; i++)
        y[i] = y[i] + alpha * x[i];
}

/* One Adam step (update.py's adam_update, the same float32 arithmetic in the same order, for
 * each element): g = grad (+ l2 data), m = beta_1 m + (1 - beta_1) g, v = beta_2 v +
 * (1 - beta_2) g^2, data = data decay + step m / (sqrt(v inverse_correction) + epsilon). */
static void KERNEL(adam)(Py_ssize_t count, float *restrict data, const float *restrict grad,
                         float *restrict m, float *restrict v, const AdamSettings *settings)
{
    const float beta_1 = settings->beta_1, beta_2 = settings->beta_2;
    const float keep_1 = settings->keep_1, keep_2 = settings->keep_2;
    const float epsilon = settings->epsilon, l2 = settings->l2, decay = settings->decay;
    const float inverse_correction = settings->inverse_correction, step = settings->step;
    for (Py_ssize_t i = 0; i < count; i++) {
        float g = l2 != 0.0f ? l2 * data[i] + grad[i] : grad[i];
        float first = m[i] * beta_1;
        first = first + keep_1 * g;
        float second = v[i] * beta_2;
        second = second + keep_2 * (g * g);
        m[i] = first;
        v[i] = second;
        float denominator = sqrtf(second * inverse_correction) + epsilon;
        float value = decay != 1.0f ? data[i] * decay : data[i];
        data[i] = value + step * (first / denominator);
    }
}

/* sum(x^2) of `count` float32 values, in double: element i goes to partial sum i % 16, and
 * the 16 partial sums are added in order at the end. A float32 square is exact in double, so
 * every build (FMA or not, any vector width) gives the same bits. */
static double KERNEL(sum_of_squares)(Py_ssize_t count, const float *restrict x)
{
    double partial[16] = {0.0};
    Py_ssize_t i = 0;
    for (; i + 16 <= count; i += 16)
        for (int lane = 0; lane < 16; lane++) {
            double value = x[i + lane];
            partial[lane] += value * value;
        }
    for (int lane = 0; i + lane < count; lane++) {
        double value = x[i + lane];
        partial[lane] += value * value;
    }
    double total = 0.0;
    for (int lane = 0; lane < 16; lane++)
        total += partial[lane];
    return total;
}

/* y = alpha x (a clipped gradient: one rounding per element, as NumPy's x * alpha) */
static void KERNEL(scale)(Py_ssize_t count, float alpha, const float *restrict x,
                          float *restrict y)
{
    for (Py_ssize_t i = 0; i < count; i++)
        y[i] = alpha * x[i];
}
