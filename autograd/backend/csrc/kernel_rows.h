/* Row passes: GELU, layer normalization, an embedding's gradient, a convolution's epilogue,
 * ReLU.
 * (part of kernels.h: included once per instruction set, with KERNEL naming the functions) */

/* The exact GELU and its slope (see backend/elementwise.py, gelu_forward): y = x Phi(x),
 * slope = Phi(x) + x phi(x), Phi(x) = (1 + erf(x / sqrt 2)) / 2, with erf by Abramowitz &
 * Stegun 7.1.26 (the approximation the portable float32 code uses: |error| <= 1.5e-7), whose
 * e^(-u^2) is e^(-x^2 / 2), phi's exponential, too. */
static inline void KERNEL(gelu_forward_row)(
    Py_ssize_t count, const float *restrict x, float *restrict y, float *restrict slope)
{
    for (Py_ssize_t j = 0; j < count; j++) {
        float u = fabsf(x[j]) * 0.70710678118654752f;
        float t = 1.0f / (1.0f + 0.3275911f * u);
        float gaussian = KERNEL(exp)(-u * u);
        float polynomial = t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f
                           + t * (-1.453152027f + t * 1.061405429f))));
        float erf_magnitude = 1.0f - polynomial * gaussian;
        float erf_value = x[j] < 0.0f ? -erf_magnitude : erf_magnitude;
        float cdf = 0.5f * (1.0f + erf_value);
        y[j] = x[j] * cdf;
        slope[j] = cdf + x[j] * gaussian * 0.39894228040143268f;     /* 1 / sqrt(2 pi) */
    }
}

static void KERNEL(gelu_forward)(
    Py_ssize_t rows, Py_ssize_t width, Rows x, Rows y, Rows slope)
{
    for (Py_ssize_t r = 0; r < rows; r++)
        KERNEL(gelu_forward_row)(width, ROW(x, r), ROW(y, r), ROW(slope, r));
}

/* Layer normalization of one row (see backend/normalization.py, layer_norm_forward):
 * xhat = (x - mean) invstd, invstd = 1 / sqrt(var + eps) with the biased variance (two
 * passes: the mean first), y = scale xhat + bias (scale, bias NULL for none). */
static inline void KERNEL(layer_norm_row)(
    Py_ssize_t width, const float *restrict x, const float *restrict scale,
    const float *restrict bias, float eps, float *restrict y, float *restrict xhat,
    float *restrict invstd)
{
    float mean = KERNEL(row_sum)(width, x) / (float)width;
    for (Py_ssize_t j = 0; j < width; j++)
        xhat[j] = x[j] - mean;
    float squares = KERNEL(row_dot)(width, xhat, xhat);
    float inverse = 1.0f / sqrtf(squares / (float)width + eps);
    *invstd = inverse;
    for (Py_ssize_t j = 0; j < width; j++) {
        float h = xhat[j] * inverse;
        xhat[j] = h;
        y[j] = (scale != NULL ? h * scale[j] : h) + (bias != NULL ? bias[j] : 0.0f);
    }
}

static void KERNEL(layer_norm_forward)(
    Py_ssize_t rows, Py_ssize_t width, Rows x, const float *scale, const float *bias, float eps,
    Rows y, Rows xhat, float *invstd)
{
    for (Py_ssize_t r = 0; r < rows; r++)
        KERNEL(layer_norm_row)(width, ROW(x, r), scale, bias, eps, ROW(y, r), ROW(xhat, r),
                               invstd + r);
}

/* Its backward for one row, with g = dy scale (dy without scale): dx = invstd (g - mean(g)
 * - xhat mean(g xhat)); dscale += dy xhat and dbias += dy (either NULL when not wanted). */
static inline void KERNEL(layer_norm_backward_row)(
    Py_ssize_t width, const float *restrict dy, const float *restrict xhat, float invstd,
    const float *restrict scale, float *restrict dx, float *restrict dscale,
    float *restrict dbias)
{
    if (dscale != NULL)
        for (Py_ssize_t j = 0; j < width; j++)
            dscale[j] += dy[j] * xhat[j];
    if (dbias != NULL)
        for (Py_ssize_t j = 0; j < width; j++)
            dbias[j] += dy[j];
    if (dx == NULL)
        return;
    float sum_g[LANES] = {0.0f}, sum_gh[LANES] = {0.0f};
    Py_ssize_t j = 0;
    for (; j + LANES <= width; j += LANES)
        for (int k = 0; k < LANES; k++) {
            float g = scale != NULL ? dy[j + k] * scale[j + k] : dy[j + k];
            sum_g[k] += g;
            sum_gh[k] += g * xhat[j + k];
        }
    float mean_g = KERNEL(sum_of_lanes)(sum_g), mean_gh = KERNEL(sum_of_lanes)(sum_gh);
    for (; j < width; j++) {
        float g = scale != NULL ? dy[j] * scale[j] : dy[j];
        mean_g += g;
        mean_gh += g * xhat[j];
    }
    mean_g /= (float)width;
    mean_gh /= (float)width;
    for (j = 0; j < width; j++) {
        float g = scale != NULL ? dy[j] * scale[j] : dy[j];
        dx[j] = invstd * (g - mean_g - xhat[j] * mean_gh);
    }
}

static void KERNEL(layer_norm_backward)(
    Py_ssize_t rows, Py_ssize_t width, Rows dy, Rows xhat, const float *invstd,
    const float *scale, Rows dx, float *dscale, float *dbias)
{
    for (Py_ssize_t r = 0; r < rows; r++)
        KERNEL(layer_norm_backward_row)(width, ROW(dy, r), ROW(xhat, r), invstd[r], scale,
                                        dx.data != NULL ? ROW(dx, r) : NULL, dscale, dbias);
}

/* target[index[r]] += values[r] for each row r (an embedding's gradient): rows whose index
 * repeats add up; a negative index counts from the end, as in NumPy. Returns the first row
 * whose index is outside [-target rows, target rows), having added nothing, or -1. */
static inline void KERNEL(add_row)(Py_ssize_t width, float *restrict target,
                                   const float *restrict values)
{
    for (Py_ssize_t j = 0; j < width; j++)
        target[j] += values[j];
}

static Py_ssize_t KERNEL(scatter_rows_add)(
    Py_ssize_t rows, Py_ssize_t width, Rows target, Py_ssize_t target_rows,
    const int64_t *index, Rows values)
{
    for (Py_ssize_t r = 0; r < rows; r++)         /* all checked first: nothing half-added */
        if (index[r] < -target_rows || index[r] >= target_rows)
            return r;
    for (Py_ssize_t r = 0; r < rows; r++) {
        int64_t row = index[r] < 0 ? index[r] + target_rows : index[r];
        KERNEL(add_row)(width, ROW(target, row), ROW(values, r));
    }
    return -1;
}

/* A convolution's epilogue on its output rows (see backend/convolution.py, _epilogue), in
 * place and in one pass: y = max(y + bias[row] + residual, 0), the bias (one value per row),
 * the residual rows and the ReLU each optional (NULL, 0). */
static inline void KERNEL(epilogue_row)(
    Py_ssize_t width, float *restrict y, float bias, const float *restrict residual, int relu)
{
    if (residual != NULL)
        for (Py_ssize_t j = 0; j < width; j++)
            y[j] = y[j] + bias + residual[j];
    else
        for (Py_ssize_t j = 0; j < width; j++)
            y[j] = y[j] + bias;
    if (relu)
        for (Py_ssize_t j = 0; j < width; j++)
            y[j] = y[j] > 0.0f ? y[j] : 0.0f;
}

static void KERNEL(epilogue)(
    Py_ssize_t rows, Py_ssize_t width, Rows y, const float *bias, Rows residual, int relu)
{
    for (Py_ssize_t r = 0; r < rows; r++)
        KERNEL(epilogue_row)(width, ROW(y, r), bias != NULL ? bias[r] : 0.0f,
                             residual.data != NULL ? ROW(residual, r) : NULL, relu);
}

/* ReLU over a contiguous run (see backend/native_elementwise.py): y = max(x, 0) with NumPy's
 * NaN and zero (a NaN stays a NaN, -0 gives +0), and its gradient dx = dy (y > 0), the product NumPy's
 * multiply(dy, y > 0) forms (dy * 0 where y <= 0, so an infinite dy gives a NaN there too). */
static void KERNEL(relu_forward)(Py_ssize_t count, const float *restrict x, float *restrict y)
{
    for (Py_ssize_t j = 0; j < count; j++)
        y[j] = x[j] <= 0.0f ? 0.0f : x[j];
}

static void KERNEL(relu_backward)(Py_ssize_t count, const float *restrict dy,
                                  const float *restrict y, float *restrict dx)
{
    for (Py_ssize_t j = 0; j < count; j++)
        dx[j] = dy[j] * (float)(y[j] > 0.0f);
}

/* out[r] = scale * the sum of row r's `count` values (rows one after another from x): 16
 * partial sums in float32, value j in partial j % 16, then added pairwise (lane k + 8 into k,
 * then k + 4, k + 2, k + 1): the plane means of a global average pool, the same bits on
 * every build and any split of the rows (the pairwise tail is 4 vector steps; 16 adds in a
 * row took as long as the row's loads) */
static void KERNEL(row_means)(Py_ssize_t rows, Py_ssize_t count, const float *restrict x,
                              float scale, float *restrict out)
{
    for (Py_ssize_t r = 0; r < rows; r++, x += count) {
        float partial[16] = {0.0f};
        Py_ssize_t j = 0;
        for (; j + 16 <= count; j += 16)
            for (int lane = 0; lane < 16; lane++)
                partial[lane] += x[j + lane];
        for (int lane = 0; j + lane < count; lane++)
            partial[lane] += x[j + lane];
        for (int lane = 0; lane < 8; lane++)
            partial[lane] += partial[lane + 8];
        for (int lane = 0; lane < 4; lane++)
            partial[lane] += partial[lane + 4];
        for (int lane = 0; lane < 2; lane++)
            partial[lane] += partial[lane + 2];
        out[r] = (partial[0] + partial[1]) * scale;
    }
}
