/* The compiled CPU kernels, written once and compiled once per instruction set: _native.c
 * includes this file several times, each time under a different `#pragma GCC target` and with
 * KERNEL(name) giving the names that instruction set's suffix. Everything here is plain C loops
 * over float32 rows that the compiler vectorizes: no intrinsics, so a new instruction set is one
 * more #include.
 *
 * A 2-D operand is a pointer to its first element and the distance between its rows in
 * elements (its elements within a row are contiguous), so gate blocks and slices of larger
 * arrays are read in place.
 *
 * Accuracy: exp within 1 ulp (Cephes' expf), sigmoid and tanh within 2.5 ulp of float32,
 * tested against float64 NumPy in tests/backend/test_native.py. */

#ifndef KERNEL
#error "kernels.h is included by _native.c with KERNEL defined"
#endif

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

/* The kernels below take each 2-D operand as Rows and run a row function per row; the row
 * functions take `restrict` pointers as parameters, which is where GCC relies on them to
 * vectorize (it does not for restrict locals). */

/* One LSTM step (see operations/recurrent.py, LSTMCell): a = x_gates + h_gates in blocks
 * i, f, g, o; gates = [s(a_i), s(a_f), tanh(a_g), s(a_o)]; c' = f c + i g; tanh_c = tanh(c');
 * h' = o tanh_c. */
static inline void KERNEL(lstm_forward_row)(
    Py_ssize_t hidden, const float *restrict x, const float *restrict h,
    const float *restrict c_old, float *restrict h_new, float *restrict c_new,
    float *restrict g, float *restrict t)
{
    for (Py_ssize_t j = 0; j < hidden; j++) {
        float i_gate = KERNEL(sigmoid)(x[j] + h[j]);
        float f_gate = KERNEL(sigmoid)(x[hidden + j] + h[hidden + j]);
        float g_gate = KERNEL(tanh)(x[2 * hidden + j] + h[2 * hidden + j]);
        float o_gate = KERNEL(sigmoid)(x[3 * hidden + j] + h[3 * hidden + j]);
        float cell = f_gate * c_old[j] + i_gate * g_gate;
        float tanh_cell = KERNEL(tanh)(cell);
        g[j] = i_gate;
        g[hidden + j] = f_gate;
        g[2 * hidden + j] = g_gate;
        g[3 * hidden + j] = o_gate;
        c_new[j] = cell;
        t[j] = tanh_cell;
        h_new[j] = o_gate * tanh_cell;
    }
}

static void KERNEL(lstm_forward)(
    Py_ssize_t rows, Py_ssize_t hidden, Rows x_gates, Rows h_gates, Rows c,
    Rows h_out, Rows c_out, Rows gates, Rows tanh_c)
{
    for (Py_ssize_t r = 0; r < rows; r++)
        KERNEL(lstm_forward_row)(hidden, ROW(x_gates, r), ROW(h_gates, r), ROW(c, r),
                                 ROW(h_out, r), ROW(c_out, r), ROW(gates, r), ROW(tanh_c, r));
}

/* Its backward: dc~ = dc' + dh' o (1 - tanh_c^2); da = [dc~ g i(1-i), dc~ c f(1-f),
 * dc~ i (1-g^2), dh' tanh_c o(1-o)]; dc = dc~ f. */
static inline void KERNEL(lstm_backward_row)(
    Py_ssize_t hidden, const float *restrict g, const float *restrict c_old,
    const float *restrict t, const float *restrict dh, const float *restrict dc_next,
    float *restrict d, float *restrict dc)
{
    for (Py_ssize_t j = 0; j < hidden; j++) {
        float i_gate = g[j], f_gate = g[hidden + j], g_gate = g[2 * hidden + j];
        float o_gate = g[3 * hidden + j];
        float tanh_cell = t[j];
        float dcell = dc_next[j] + dh[j] * o_gate * (1.0f - tanh_cell * tanh_cell);
        d[j] = dcell * g_gate * (i_gate - i_gate * i_gate);
        d[hidden + j] = dcell * c_old[j] * (f_gate - f_gate * f_gate);
        d[2 * hidden + j] = dcell * i_gate * (1.0f - g_gate * g_gate);
        d[3 * hidden + j] = dh[j] * tanh_cell * (o_gate - o_gate * o_gate);
        dc[j] = dcell * f_gate;
    }
}

static void KERNEL(lstm_backward)(
    Py_ssize_t rows, Py_ssize_t hidden, Rows gates, Rows c, Rows tanh_c, Rows dh, Rows dc_next,
    Rows da, Rows dc_out)
{
    for (Py_ssize_t r = 0; r < rows; r++)
        KERNEL(lstm_backward_row)(hidden, ROW(gates, r), ROW(c, r), ROW(tanh_c, r), ROW(dh, r),
                                  ROW(dc_next, r), ROW(da, r), ROW(dc_out, r));
}

/* One GRU step (see operations/recurrent.py, GRUCell): r, z = s(x_rz + h_rz),
 * n = tanh(x_n + r h_n), h' = n + z (h - n); rz and n are kept for the backward. */
static inline void KERNEL(gru_forward_row)(
    Py_ssize_t hidden, const float *restrict x, const float *restrict hg,
    const float *restrict h_old, float *restrict h_new, float *restrict s, float *restrict n)
{
    for (Py_ssize_t j = 0; j < hidden; j++) {
        float reset = KERNEL(sigmoid)(x[j] + hg[j]);
        float update = KERNEL(sigmoid)(x[hidden + j] + hg[hidden + j]);
        float candidate = KERNEL(tanh)(x[2 * hidden + j] + reset * hg[2 * hidden + j]);
        s[j] = reset;
        s[hidden + j] = update;
        n[j] = candidate;
        h_new[j] = candidate + update * (h_old[j] - candidate);
    }
}

static void KERNEL(gru_forward)(
    Py_ssize_t rows, Py_ssize_t hidden, Rows x_gates, Rows h_gates, Rows h,
    Rows h_out, Rows rz, Rows n_out)
{
    for (Py_ssize_t r = 0; r < rows; r++)
        KERNEL(gru_forward_row)(hidden, ROW(x_gates, r), ROW(h_gates, r), ROW(h, r),
                                ROW(h_out, r), ROW(rz, r), ROW(n_out, r));
}

/* Its backward: dn~ = dh' (1-z)(1-n^2); dx_gates = [dn~ h_n r(1-r), dh' (h-n) z(1-z), dn~];
 * dh_gates (when wanted) = dx_gates with the n block times r; direct = dh' z. */
static inline void KERNEL(gru_backward_row)(
    Py_ssize_t hidden, const float *restrict s, const float *restrict n,
    const float *restrict h_n, const float *restrict h_old, const float *restrict dh,
    float *restrict dx, float *restrict out)
{
    for (Py_ssize_t j = 0; j < hidden; j++) {
        float reset = s[j], update = s[hidden + j], candidate = n[j];
        float dn = dh[j] * (1.0f - update) * (1.0f - candidate * candidate);
        dx[j] = dn * h_n[j] * (reset - reset * reset);
        dx[hidden + j] = dh[j] * (h_old[j] - candidate) * (update - update * update);
        dx[2 * hidden + j] = dn;
        out[j] = dh[j] * update;
    }
}

static inline void KERNEL(gru_hidden_share_row)(
    Py_ssize_t hidden, const float *restrict dx, const float *restrict s, float *restrict dg)
{
    for (Py_ssize_t j = 0; j < 2 * hidden; j++)
        dg[j] = dx[j];
    for (Py_ssize_t j = 0; j < hidden; j++)
        dg[2 * hidden + j] = dx[2 * hidden + j] * s[j];
}

static void KERNEL(gru_backward)(
    Py_ssize_t rows, Py_ssize_t hidden, Rows rz, Rows n_saved, Rows h_n, Rows h, Rows dh,
    Rows dx_gates, Rows dh_gates, Rows direct)
{
    for (Py_ssize_t r = 0; r < rows; r++) {
        KERNEL(gru_backward_row)(hidden, ROW(rz, r), ROW(n_saved, r), ROW(h_n, r),
                                 ROW(h, r), ROW(dh, r), ROW(dx_gates, r), ROW(direct, r));
        if (dh_gates.data != NULL)
            KERNEL(gru_hidden_share_row)(hidden, ROW(dx_gates, r), ROW(rz, r),
                                         ROW(dh_gates, r));
    }
}

/* Softmax cross-entropy of rows of logits (see backend/cross_entropy.py, softmax_rows):
 * p = e^(x - max x) / sum e^(x - max x) in three passes over the row (max; exponentials and
 * their sum; scale), loss = log(sum) - (x[target] - max x). The max and the sum run in LANES
 * independent partial results, so the compiler vectorizes them without reassociating float
 * additions on its own (which it may not do for a plain loop). Returns the first row whose
 * target is outside [0, width), or -1. */
#define LANES 16

/* x and p may be the same row (the attention softmax works in place): each element is read
 * before it is written, which `ivdep` tells the compiler instead of `restrict`. */
static inline void KERNEL(softmax_row)(
    Py_ssize_t width, const float *x, float *p, float *max_out, float *sum_out)
{
    float partial[LANES];
    Py_ssize_t j = 0;
    for (int k = 0; k < LANES; k++)
        partial[k] = -INFINITY;
    for (; j + LANES <= width; j += LANES)
        for (int k = 0; k < LANES; k++)
            partial[k] = x[j + k] > partial[k] ? x[j + k] : partial[k];
    float largest = -INFINITY;
    for (int k = 0; k < LANES; k++)
        largest = partial[k] > largest ? partial[k] : largest;
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
    float total = 0.0f;
    for (int k = 0; k < LANES; k++)
        total += partial[k];
    for (; j < width; j++) {
        p[j] = KERNEL(exp)(x[j] - largest);
        total += p[j];
    }
    float scale = 1.0f / total;
    IVDEP
    for (j = 0; j < width; j++)
        p[j] *= scale;
    *max_out = largest;
    *sum_out = total;
}

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

/* The sum of a row in LANES partial sums (vectorizable without reassociation flags). */
static inline float KERNEL(row_sum)(Py_ssize_t width, const float *restrict x)
{
    float partial[LANES] = {0.0f};
    Py_ssize_t j = 0;
    for (; j + LANES <= width; j += LANES)
        for (int k = 0; k < LANES; k++)
            partial[k] += x[j + k];
    float total = 0.0f;
    for (int k = 0; k < LANES; k++)
        total += partial[k];
    for (; j < width; j++)
        total += x[j];
    return total;
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
    float partial[LANES] = {0.0f};
    Py_ssize_t j = 0;
    for (; j + LANES <= width; j += LANES)
        for (int k = 0; k < LANES; k++)
            partial[k] += xhat[j + k] * xhat[j + k];
    float squares = 0.0f;
    for (int k = 0; k < LANES; k++)
        squares += partial[k];
    for (; j < width; j++)
        squares += xhat[j] * xhat[j];
    float inverse = 1.0f / sqrtf(squares / (float)width + eps);
    *invstd = inverse;
    for (j = 0; j < width; j++) {
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
    float mean_g = 0.0f, mean_gh = 0.0f;
    for (int k = 0; k < LANES; k++) {
        mean_g += sum_g[k];
        mean_gh += sum_gh[k];
    }
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

/* The attention softmax in place (see backend/attention.py, masked_softmax) over rows of
 * scores (R, Tk), R = B * Tq: with `causal`, row r is query i = r mod Tq and keeps the keys
 * j <= i (numpy.tri(Tq, Tk)), the others set to 0. */
static void KERNEL(attention_softmax)(
    Py_ssize_t rows, Py_ssize_t width, Rows scores, Py_ssize_t queries, int causal)
{
    for (Py_ssize_t r = 0; r < rows; r++) {
        float *row = ROW(scores, r);
        Py_ssize_t kept = causal ? r % queries + 1 : width;
        kept = kept < width ? kept : width;
        float largest, total;
        KERNEL(softmax_row)(kept, row, row, &largest, &total);
        for (Py_ssize_t j = kept; j < width; j++)
            row[j] = 0.0f;
    }
}
