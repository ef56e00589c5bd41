/* The LSTM and GRU cells, forward and backward.
 * (part of kernels.h: included once per instruction set, with KERNEL naming the functions) */

/* The kernels below take each 2-D operand as Rows and run a row function per row; the row
 * functions take `restrict` pointers as parameters, which is where GCC relies on them to
 * vectorize (it does not for restrict locals). */

/* One LSTM step (see operations/recurrent.py, LSTMCell): a = x_gates + h_gates in blocks
 * i, f, g, o; gates = [s(a_i), s(a_f), tanh(a_g), s(a_o)]; c' = f c + i g; tanh_c = tanh(c');
 * h' = o tanh_c. */
static inline void KERNEL(lstm_forward_row)(
    Py_ssize_t count, Py_ssize_t hidden, const float *restrict x, const float *restrict h,
    const float *restrict c_old, float *restrict h_new, float *restrict c_new,
    float *restrict g, float *restrict t)
{
    for (Py_ssize_t j = 0; j < count; j++) {
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

/* The step for hidden units [first, first + count) of every row (all of them: 0, hidden; a
 * thread's share of a step of sequence_bindings.h's loop: a block), each unit's four gates
 * `hidden` apart. */
static void KERNEL(lstm_forward)(
    Py_ssize_t rows, Py_ssize_t hidden, Py_ssize_t first, Py_ssize_t count, Rows x_gates,
    Rows h_gates, Rows c, Rows h_out, Rows c_out, Rows gates, Rows tanh_c)
{
    for (Py_ssize_t r = 0; r < rows; r++)
        KERNEL(lstm_forward_row)(count, hidden, ROW(x_gates, r) + first,
                                 ROW(h_gates, r) + first, ROW(c, r) + first,
                                 ROW(h_out, r) + first, ROW(c_out, r) + first,
                                 ROW(gates, r) + first, ROW(tanh_c, r) + first);
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
