/* exp, sigmoid, tanh and a row sum, for the kernels.
 * (part of kernels.h: included once per instruction set, with KERNEL naming the functions) */

/* e^x: 2^n e^r with |r| <= ln 2 / 2 and a degree-5 minimax polynomial for e^r (Cephes' expf).
 * The clamp keeps 2^n a normal float; e^x under 2^-126 comes out as that bound's e^x. */
static inline float KERNEL(exp)(float x)
{
    x = x > 88.3762626647949f ? 88.3762626647949f : x;
    x = x < -87.3365447504f ? -87.3365447504f : x;
    float n = floorf(x * 1.44269504088896341f + 0.5f);
    float r = x - n * 0.693359375f;            /* ln 2 in two parts: r exact to float32 */
    r = r + n * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * (r * r) + r + 1.0f;
    int32_t bits = ((int32_t)n + 127) << 23;
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    return p * scale;
}

static inline float KERNEL(sigmoid)(float x)
{
    return 1.0f / (1.0f + KERNEL(exp)(-x));
}

/* tanh x = sign(x) (1 - 2 / (e^{2|x|} + 1)), and its Taylor series below |x| = 0.4, where that
 * difference would cancel (the series' first dropped term, 6404582 x^17 / 10854718875, is
 * under 1e-10 there). Both sides are computed and one is selected, which keeps the loop
 * vectorizable. */
static inline float KERNEL(tanh)(float x)
{
    float magnitude = fabsf(x);
    float far = 1.0f - 2.0f / (KERNEL(exp)(2.0f * magnitude) + 1.0f);
    float x2 = x * x;
    float series = 1.4558344e-3f;                       /* 929569 / 638512875 */
    series = series * x2 - 3.5921280e-3f;               /* 21844 / 6081075 */
    series = series * x2 + 8.8632355e-3f;               /* 1382 / 155925 */
    series = series * x2 - 2.1869489e-2f;               /* 62 / 2835 */
    series = series * x2 + 5.3968254e-2f;               /* 17 / 315 */
    series = series * x2 - 1.3333334e-1f;               /* 2 / 15 */
    series = series * x2 + 3.3333334e-1f;               /* 1 / 3 */
    float near = x - x * x2 * series;
    far = x < 0.0f ? -far : far;
    return magnitude < 0.4f ? near : far;
}

/* The sum and the max of LANES partial results, pairwise: log2(LANES) dependent steps the
 * compiler vectorizes, where a running total was LANES dependent additions (a quarter of a
 * 64-wide attention row's softmax). */
static inline float KERNEL(sum_of_lanes)(float *partial)
{
    for (int step = LANES / 2; step > 0; step /= 2)
        for (int k = 0; k < step; k++)
            partial[k] += partial[k + step];
    return partial[0];
}

static inline float KERNEL(max_of_lanes)(float *partial)
{
    for (int step = LANES / 2; step > 0; step /= 2)
        for (int k = 0; k < step; k++)
            partial[k] = partial[k + step] > partial[k] ? partial[k + step] : partial[k];
    return partial[0];
}

/* The sum of a row in LANES partial sums (vectorizable without reassociation flags). */
static inline float KERNEL(row_sum)(Py_ssize_t width, const float *restrict x)
{
    float partial[LANES] = {0.0f};
    Py_ssize_t j = 0;
    for (; j + LANES <= width; j += LANES)
        for (int k = 0; k < LANES; k++)
            partial[k] += x[j + k];
    float total = KERNEL(sum_of_lanes)(partial);
    for (; j < width; j++)
        total += x[j];
    return total;
}

/* The dot product of two rows, summed as row_sum sums. */
static inline float KERNEL(row_dot)(Py_ssize_t width, const float *restrict x,
                                    const float *restrict y)
{
    float partial[LANES] = {0.0f};
    Py_ssize_t j = 0;
    for (; j + LANES <= width; j += LANES)
        for (int k = 0; k < LANES; k++)
            partial[k] += x[j + k] * y[j + k];
    float total = KERNEL(sum_of_lanes)(partial);
    for (; j < width; j++)
        total += x[j] * y[j];
    return total;
}
