/* Scaled dot-product attention, forward and backward, one (batch, head) at a time: the small
 * products, the softmax and its backward for one head stay in the core's caches, where NumPy
 * made one pass over every head per step (nine in all, six of them batched GEMMs of a few
 * hundred microseconds each, on one thread).
 * (part of kernels.h: included once per instruction set, with KERNEL naming the functions) */

/* t (columns, rows) = x (rows, columns) transposed; t is contiguous. */
static void KERNEL(transpose)(Py_ssize_t rows, Py_ssize_t columns, const float *x,
                              Py_ssize_t ldx, float *restrict t)
{
    for (Py_ssize_t i = 0; i < rows; i++)
        for (Py_ssize_t j = 0; j < columns; j++)
            t[j * rows + i] = x[i * ldx + j];
}

/* One head of the forward (see backend/attention.py, fused_forward): p (Tq, Tk) = softmax(q
 * k^T scale) over the keys (with `causal` the keys after each query masked), y (Tq, Dv) = p v.
 * scratch holds D * Tk floats. */
static void KERNEL(attention_head_forward)(
    Py_ssize_t queries, Py_ssize_t keys, Py_ssize_t depth, Py_ssize_t value_depth,
    Rows q, Rows k, Rows v, float *p, Rows y, float scale, int causal, float *scratch)
{
    KERNEL(transpose)(keys, depth, k.data, k.stride, scratch);
    KERNEL(small_product)(queries, keys, depth, (Left){q.data, q.stride, 1}, scratch, keys, p,
                          keys, scale, causal ? C_LOWER : FULL);
    KERNEL(attention_softmax)(queries, keys, (Rows){p, keys}, queries, causal);
    KERNEL(small_product)(queries, value_depth, keys, (Left){p, keys, 1}, v.data, v.stride,
                          y.data, y.stride, 1.0f, causal ? A_LOWER : FULL);
}

/* One head of the backward: dv = p^T dy; dS = p * (dy v^T - rowsum(dy * y)); dq = dS k scale;
 * dk = dS^T q scale (with `causal`, p and dS are 0 past each query's keys, and the products
 * skip those). p^T and dS^T are read in place; scratch holds Tq Tk + Dv Tk floats. */
static void KERNEL(attention_head_backward)(
    Py_ssize_t queries, Py_ssize_t keys, Py_ssize_t depth, Py_ssize_t value_depth,
    Rows q, Rows k, Rows v, const float *p, Rows y, Rows dy, Rows dq, Rows dk, Rows dv,
    float scale, int causal, float *scratch)
{
    float *ds = scratch;                                  /* (Tq, Tk) */
    float *v_transposed = ds + queries * keys;            /* (Dv, Tk) */
    KERNEL(small_product)(keys, value_depth, queries, (Left){p, 1, keys}, dy.data, dy.stride,
                          dv.data, dv.stride, 1.0f, causal ? A_UPPER : FULL);
    KERNEL(transpose)(keys, value_depth, v.data, v.stride, v_transposed);
    KERNEL(small_product)(queries, keys, value_depth, (Left){dy.data, dy.stride, 1},
                          v_transposed, keys, ds, keys, 1.0f, causal ? C_LOWER : FULL);
    for (Py_ssize_t i = 0; i < queries; i++) {
        float total = KERNEL(row_dot)(value_depth, ROW(dy, i), ROW(y, i));
        float *restrict ds_row = ds + i * keys;
        const float *restrict p_row = p + i * keys;
        Py_ssize_t kept = causal && i + 1 < keys ? i + 1 : keys;
        Py_ssize_t j = 0;
        for (; j < kept; j++)
            ds_row[j] = p_row[j] * (ds_row[j] - total);
        for (; j < keys; j++)
            ds_row[j] = 0.0f;
    }
    KERNEL(small_product)(queries, depth, keys, (Left){ds, keys, 1}, k.data, k.stride, dq.data,
                          dq.stride, scale, causal ? A_LOWER : FULL);
    KERNEL(small_product)(keys, depth, queries, (Left){ds, 1, keys}, q.data, q.stride, dk.data,
                          dk.stride, scale, causal ? A_UPPER : FULL);
}

/* Heads [start, stop) of (batch, heads) arrays: head h of operand x begins at
 * HEAD(x, h) and its rows are x.row_stride apart. */
static void KERNEL(attention_forward)(
    Py_ssize_t start, Py_ssize_t stop, Py_ssize_t queries, Py_ssize_t keys, Py_ssize_t depth,
    Py_ssize_t value_depth, Heads q, Heads k, Heads v, Heads p, Heads y, float scale,
    int causal, float *scratch)
{
    for (Py_ssize_t h = start; h < stop; h++)
        KERNEL(attention_head_forward)(queries, keys, depth, value_depth, HEAD_ROWS(q, h),
                                       HEAD_ROWS(k, h), HEAD_ROWS(v, h), HEAD(p, h),
                                       HEAD_ROWS(y, h), scale, causal, scratch);
}

static void KERNEL(attention_backward)(
    Py_ssize_t start, Py_ssize_t stop, Py_ssize_t queries, Py_ssize_t keys, Py_ssize_t depth,
    Py_ssize_t value_depth, Heads q, Heads k, Heads v, Heads p, Heads y, Heads dy, Heads dq,
    Heads dk, Heads dv, float scale, int causal, float *scratch)
{
    for (Py_ssize_t h = start; h < stop; h++)
        KERNEL(attention_head_backward)(queries, keys, depth, value_depth, HEAD_ROWS(q, h),
                                        HEAD_ROWS(k, h), HEAD_ROWS(v, h), HEAD(p, h),
                                        HEAD_ROWS(y, h), HEAD_ROWS(dy, h), HEAD_ROWS(dq, h),
                                        HEAD_ROWS(dk, h), HEAD_ROWS(dv, h), scale, causal,
                                        scratch);
}
