/* elemwise.c: elementwise and broadcast kernels (see elemwise.h). */
#include <math.h>
#include <string.h>

#include "convert.h"
#include "elemwise.h"
#include "iter.h"
#include "ops.h"
#include "vmath.h"

#define CH 2048          /* elements per tile: three float tiles fit in L1 */
#define PAR_MIN 32768    /* below this many elements one thread is faster */

/* ---- float32 arrays ---- */

static float gelu_erf1(float x)
{
    return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
}

/* min(max(x + 3, 0), 6), NaN kept: vmath_fn.h's hard6, one value */
static float hard6(float v)
{
    float t = v + 3.0f;
    t = t < 0.0f ? 0.0f : t;
    return t > 6.0f ? 6.0f : t;
}

static float unary1(int op, int approx_tanh, float v)
{
    switch (op) {
    case FE_OP_RELU: return v > 0.0f || v != v ? v : 0.0f;
    case FE_OP_GELU:
        if (approx_tanh) {
            float z = 1.5957691216057308f * v * (1.0f + 0.044715f * v * v);
            return v / (1.0f + expf(-z));
        }
        return gelu_erf1(v);
    case FE_OP_SILU: return v / (1.0f + expf(-v));
    case FE_OP_SIGMOID: return 1.0f / (1.0f + expf(-v));
    case FE_OP_TANH: return tanhf(v);
    case FE_OP_EXP: return expf(v);
    case FE_OP_LOG: return logf(v);
    case FE_OP_NEG: return -v;
    case FE_OP_ABS: return fabsf(v);
    case FE_OP_SQRT: return sqrtf(v);
    case FE_OP_RSQRT: return 1.0f / sqrtf(v);
    case FE_OP_RECIPROCAL: return 1.0f / v;
    case FE_OP_SIN: return fe_k_sinf(v);
    case FE_OP_COS: return fe_k_cosf(v);
    case FE_OP_ERF: return erff(v);
    case FE_OP_HARDSIGMOID: return hard6(v) / 6.0f;
    case FE_OP_HARDSWISH: return v * hard6(v) / 6.0f;
    default: return v;
    }
}

#ifdef FE_K_AVX2
/* Four independent vectors per iteration: the math is a long dependency
 * chain, and unrolling lets the out-of-order core overlap them. */
#define VLOOP(EXPR)                                                      \
    do {                                                                 \
        for (; i + 32 <= n; i += 32) {                                   \
            __m256 v0 = _mm256_loadu_ps(x + i), v1 = _mm256_loadu_ps(x + i + 8); \
            __m256 v2 = _mm256_loadu_ps(x + i + 16), v3 = _mm256_loadu_ps(x + i + 24); \
            { __m256 v = v0; v0 = (EXPR); }                              \
            { __m256 v = v1; v1 = (EXPR); }                              \
            { __m256 v = v2; v2 = (EXPR); }                              \
            { __m256 v = v3; v3 = (EXPR); }                              \
            _mm256_storeu_ps(y + i, v0);                                 \
            _mm256_storeu_ps(y + i + 8, v1);                             \
            _mm256_storeu_ps(y + i + 16, v2);                            \
            _mm256_storeu_ps(y + i + 24, v3);                            \
        }                                                                \
        for (; i + 8 <= n; i += 8) {                                     \
            __m256 v = _mm256_loadu_ps(x + i);                           \
            _mm256_storeu_ps(y + i, (EXPR));                             \
        }                                                                \
        if (i < n) {                                                     \
            __m256 v = fe_k_v8_load_part(x + i, (long)(n - i), 0.0f);    \
            fe_k_v8_store_part(y + i, (EXPR), (long)(n - i));            \
        }                                                                \
        return;                                                          \
    } while (0)
#endif

void fe_k_unary_f32(int op, int approx_tanh, const float *x, float *y, int64_t n)
{
    int64_t i = 0;
#ifdef FE_K_AVX2
    const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1.0f);
    const __m256 sign = _mm256_set1_ps(-0.0f);
    switch (op) {
    case FE_OP_RELU: VLOOP(_mm256_max_ps(zero, v));
    case FE_OP_SILU: VLOOP(fe_k_v8_silu(v));
    case FE_OP_SIGMOID: VLOOP(fe_k_v8_sigmoid(v));
    case FE_OP_TANH: VLOOP(fe_k_v8_tanh(v));
    case FE_OP_EXP: VLOOP(fe_k_v8_exp(v));
    case FE_OP_NEG: VLOOP(_mm256_xor_ps(v, sign));
    case FE_OP_ABS: VLOOP(_mm256_andnot_ps(sign, v));
    case FE_OP_SQRT: VLOOP(_mm256_sqrt_ps(v));
    case FE_OP_RSQRT: VLOOP(_mm256_div_ps(one, _mm256_sqrt_ps(v)));
    case FE_OP_RECIPROCAL: VLOOP(_mm256_div_ps(one, v));
    case FE_OP_HARDSIGMOID: VLOOP(fe_k_v8_hardsigmoid(v));
    case FE_OP_HARDSWISH: VLOOP(fe_k_v8_hardswish(v));
    case FE_OP_SIN: VLOOP(fe_k_v8_sin(v));
    case FE_OP_COS: VLOOP(fe_k_v8_cos(v));
    case FE_OP_GELU:
        if (approx_tanh)
            VLOOP(fe_k_v8_gelu_tanh(v));
        break;
    default:
        break;
    }
#endif
    if (op == FE_OP_CAST || op < 0 || op > FE_OP_HARDSWISH) {
        if (y != x)
            memmove(y, x, (size_t)n * sizeof(float));
        return;
    }
    for (; i < n; i++)
        y[i] = unary1(op, approx_tanh, x[i]);
}

static float binary1(int op, float a, float b)
{
    switch (op) {
    case FE_OP_ADD: return a + b;
    case FE_OP_SUB: return a - b;
    case FE_OP_MUL: return a * b;
    case FE_OP_DIV: return a / b;
    case FE_OP_MAXIMUM: return a != a || a > b ? a : b;
    case FE_OP_MINIMUM: return a != a || a < b ? a : b;
    case FE_OP_POW: return b == 2.0f ? a * a : powf(a, b);
    default: return a;
    }
}

#ifdef FE_K_AVX2
static inline __m256 vbin(int op, __m256 a, __m256 b)
{
    switch (op) {
    case FE_OP_ADD: return _mm256_add_ps(a, b);
    case FE_OP_SUB: return _mm256_sub_ps(a, b);
    case FE_OP_MUL: return _mm256_mul_ps(a, b);
    case FE_OP_DIV: return _mm256_div_ps(a, b);
    case FE_OP_MAXIMUM: return fe_k_v8_maxnan(a, b);
    case FE_OP_MINIMUM: return fe_k_v8_minnan(a, b);
    default: return a;
    }
}

/* The loop is instantiated per op and stride pair so that the switch and
 * the stride tests fold away. */
#define BLOOP(OP, SA, SB)                                                        \
    do {                                                                         \
        __m256 a0 = _mm256_set1_ps(a[0]), b0 = _mm256_set1_ps(b[0]);             \
        for (; i + 8 <= n; i += 8) {                                             \
            __m256 va = (SA) ? _mm256_loadu_ps(a + i) : a0;                      \
            __m256 vb = (SB) ? _mm256_loadu_ps(b + i) : b0;                      \
            _mm256_storeu_ps(y + i, vbin((OP), va, vb));                         \
        }                                                                        \
        if (i < n) {                                                             \
            __m256 va = (SA) ? fe_k_v8_load_part(a + i, (long)(n - i), 0.0f) : a0; \
            __m256 vb = (SB) ? fe_k_v8_load_part(b + i, (long)(n - i), 1.0f) : b0; \
            fe_k_v8_store_part(y + i, vbin((OP), va, vb), (long)(n - i));        \
        }                                                                        \
    } while (0)

#define BOP(OP)                                       \
    case OP:                                          \
        if (sa && sb) BLOOP(OP, 1, 1);                \
        else if (sa) BLOOP(OP, 1, 0);                 \
        else if (sb) BLOOP(OP, 0, 1);                 \
        else BLOOP(OP, 0, 0);                         \
        return;
#endif

void fe_k_binary_f32(int op, const float *a, int sa, const float *b, int sb,
                     float *y, int64_t n)
{
    int64_t i = 0;
    if (n <= 0)
        return;
#ifdef FE_K_AVX2
    switch (op) {
    BOP(FE_OP_ADD)
    BOP(FE_OP_SUB)
    BOP(FE_OP_MUL)
    BOP(FE_OP_DIV)
    BOP(FE_OP_MAXIMUM)
    BOP(FE_OP_MINIMUM)
    default:
        break;
    }
#endif
    if (op == FE_OP_POW && !sb && b[0] == 2.0f) {
        for (; i < n; i++)
            y[i] = a[i * sa] * a[i * sa];
        return;
    }
    for (; i < n; i++)
        y[i] = binary1(op, a[i * sa], b[i * sb]);
}

void fe_k_where_f32(const float *c, int sc, const float *a, int sa,
                    const float *b, int sb, float *y, int64_t n)
{
    int64_t i = 0;
#ifdef FE_K_AVX2
    if (sc && sa + sb >= 1) {
        const __m256 zero = _mm256_setzero_ps();
        __m256 a0 = _mm256_set1_ps(a[0]), b0 = _mm256_set1_ps(b[0]);
        for (; i + 8 <= n; i += 8) {
            __m256 vc = _mm256_loadu_ps(c + i);
            __m256 va = sa ? _mm256_loadu_ps(a + i) : a0;
            __m256 vb = sb ? _mm256_loadu_ps(b + i) : b0;
            /* c == 0 picks b; NaN compares unequal to 0, so it picks a */
            __m256 isz = _mm256_cmp_ps(vc, zero, _CMP_EQ_OQ);
            _mm256_storeu_ps(y + i, _mm256_blendv_ps(va, vb, isz));
        }
    }
#endif
    for (; i < n; i++)
        y[i] = c[i * sc] != 0.0f ? a[i * sa] : b[i * sb];
}

void fe_k_fma_f32(const float *a, int sa, const float *b, int sb, const float *c, int sc,
                  float *y, int64_t n)
{
    int64_t i = 0;
#ifdef FE_K_AVX2
    __m256 a0 = _mm256_set1_ps(a[0]), b0 = _mm256_set1_ps(b[0]), c0 = _mm256_set1_ps(c[0]);
    for (; i + 8 <= n; i += 8) {
        __m256 va = sa ? _mm256_loadu_ps(a + i) : a0;
        __m256 vb = sb ? _mm256_loadu_ps(b + i) : b0;
        __m256 vc = sc ? _mm256_loadu_ps(c + i) : c0;
        _mm256_storeu_ps(y + i, _mm256_fmadd_ps(va, vb, vc));
    }
#endif
    for (; i < n; i++)
        y[i] = fmaf(a[i * sa], b[i * sb], c[i * sc]);
}

float fe_k_fma_f32_max(const float *a, int sa, const float *b, int sb, const float *c, int sc,
                       float *y, int64_t n)
{
    int64_t i = 0;
    float m = -INFINITY;
    int nan = 0;
#if defined FE_K_AVX512
    /* the values are fmaf's at any width, and the max does not depend on
     * the order: 16 lanes where the core has them */
    __m512 a0 = _mm512_set1_ps(a[0]), b0 = _mm512_set1_ps(b[0]), c0 = _mm512_set1_ps(c[0]);
    __m512 vm = _mm512_set1_ps(-INFINITY);
    __mmask16 vn = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 va = sa ? _mm512_loadu_ps(a + i) : a0;
        __m512 vb = sb ? _mm512_loadu_ps(b + i) : b0;
        __m512 vc = sc ? _mm512_loadu_ps(c + i) : c0;
        __m512 v = _mm512_fmadd_ps(va, vb, vc);
        _mm512_storeu_ps(y + i, v);
        vm = _mm512_max_ps(vm, v);
        vn |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    }
    m = _mm512_reduce_max_ps(vm);
    nan = vn != 0;
#elif defined FE_K_AVX2
    __m256 a0 = _mm256_set1_ps(a[0]), b0 = _mm256_set1_ps(b[0]), c0 = _mm256_set1_ps(c[0]);
    __m256 vm = _mm256_set1_ps(-INFINITY), vn = _mm256_setzero_ps();
    for (; i + 8 <= n; i += 8) {
        __m256 va = sa ? _mm256_loadu_ps(a + i) : a0;
        __m256 vb = sb ? _mm256_loadu_ps(b + i) : b0;
        __m256 vc = sc ? _mm256_loadu_ps(c + i) : c0;
        __m256 v = _mm256_fmadd_ps(va, vb, vc);
        _mm256_storeu_ps(y + i, v);
        vm = _mm256_max_ps(vm, v);
        vn = _mm256_or_ps(vn, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    }
    m = fe_k_v8_hmax(vm);
    nan = _mm256_movemask_ps(vn) != 0;
#endif
    for (; i < n; i++) {
        y[i] = fmaf(a[i * sa], b[i * sb], c[i * sc]);
        nan |= y[i] != y[i];
        m = y[i] > m ? y[i] : m;
    }
    return nan ? NAN : m;
}

/* ---- int64 arrays ---- */

static int64_t ipow(int64_t b, int64_t e)
{
    uint64_t r = 1, x = (uint64_t)b;
    if (e < 0)
        return b == 1 ? 1 : b == -1 ? (e & 1 ? -1 : 1) : 0;
    while (e) {
        if (e & 1)
            r *= x;
        x *= x;
        e >>= 1;
    }
    return (int64_t)r;
}

static int64_t ibin(int op, int64_t a, int64_t b)
{
    switch (op) {
    case FE_OP_ADD: return (int64_t)((uint64_t)a + (uint64_t)b);
    case FE_OP_SUB: return (int64_t)((uint64_t)a - (uint64_t)b);
    case FE_OP_MUL: return (int64_t)((uint64_t)a * (uint64_t)b);
    case FE_OP_DIV:
        if (b == 0)
            return 0;
        if (b == -1)
            return (int64_t)(0 - (uint64_t)a);   /* INT64_MIN / -1 wraps */
        return a / b;
    case FE_OP_MAXIMUM: return a > b ? a : b;
    case FE_OP_MINIMUM: return a < b ? a : b;
    case FE_OP_POW: return ipow(a, b);
    default: return a;
    }
}

void fe_k_binary_i64(int op, const int64_t *a, int sa, const int64_t *b, int sb,
                     int64_t *y, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = ibin(op, a[i * sa], b[i * sb]);
}

void fe_k_unary_i64(int op, const int64_t *x, int64_t *y, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        int64_t v = x[i];
        switch (op) {
        case FE_OP_RELU: y[i] = v > 0 ? v : 0; break;
        case FE_OP_NEG: y[i] = (int64_t)(0 - (uint64_t)v); break;
        case FE_OP_ABS: y[i] = v < 0 ? (int64_t)(0 - (uint64_t)v) : v; break;
        case FE_OP_CAST: y[i] = v; break;
        default:
            /* transcendental ops on integer outputs: compute, then truncate */
            y[i] = fe_k_f64_to_i64((double)unary1(op, 0, (float)v));
        }
    }
}

/* ---- whole tensors ---- */

/* Pointer to n float32 values of operand t at element off with stride s:
 * the data itself when it is float32, else a converted copy in tmp. */
static const float *fview(const fe_k_tensor *t, int64_t off, int s, int64_t n, float *tmp)
{
    if (t->dtype == FE_F32)
        return (const float *)t->data + off;
    fe_k_load_f32(t->data, t->dtype, off, tmp, s ? n : 1);
    return tmp;
}

static const int64_t *iview(const fe_k_tensor *t, int64_t off, int s, int64_t n, int64_t *tmp)
{
    fe_k_load_i64(t->data, t->dtype, off, tmp, s ? n : 1);
    return tmp;
}

/* Run one elementwise tensor op over an iterator: nin inputs (1 to 3). */
typedef struct ewjob {
    int kind;               /* 1 unary, 2 binary, 3 where */
    int op, approx;
    const fe_k_tensor *in[3];
    fe_k_tensor *out;
} ewjob;

static void ew_tile(const ewjob *j, const fe_k_iter *it, int64_t row, int64_t c0, int64_t n)
{
    int64_t off[FE_K_ITER_OPS];
    int s[4];
    int nin = j->kind;
    fe_k_iter_row(it, row, off);
    for (int k = 0; k <= nin; k++) {
        s[k] = (int)it->st[k][it->rank - 1];
        off[k] += c0 * s[k];
    }
    /* Integer outputs compute in int64; a bool output is a float result
     * converted as cast converts (nonzero and NaN are true), which is what
     * the fused executor computes too. */
    if (fe_k_dtype_is_int(j->out->dtype) && j->out->dtype != FE_BOOL) {
        int64_t t[3][CH], yb[CH];
        const int64_t *p[3];
        for (int k = 0; k < nin; k++)
            p[k] = iview(j->in[k], off[k + 1], s[k + 1], n, t[k]);
        if (j->kind == 1)
            fe_k_unary_i64(j->op, p[0], yb, n);
        else if (j->kind == 2)
            fe_k_binary_i64(j->op, p[0], s[1], p[1], s[2], yb, n);
        else
            for (int64_t i = 0; i < n; i++)
                yb[i] = p[0][i * s[1]] ? p[1][i * s[2]] : p[2][i * s[3]];
        fe_k_store_i64(j->out->data, j->out->dtype, off[0], yb, n);
        return;
    }
    {
        float t[3][CH], yb[CH];
        const float *p[3];
        float *y = j->out->dtype == FE_F32 ? (float *)j->out->data + off[0] : yb;
        for (int k = 0; k < nin; k++)
            p[k] = fview(j->in[k], off[k + 1], s[k + 1], n, t[k]);
        if (j->kind == 1) {
            if (s[1])
                fe_k_unary_f32(j->op, j->approx, p[0], y, n);
            else {   /* a broadcast unary input: compute once, repeat */
                float v;
                fe_k_unary_f32(j->op, j->approx, p[0], &v, 1);
                for (int64_t i = 0; i < n; i++)
                    y[i] = v;
            }
        } else if (j->kind == 2) {
            fe_k_binary_f32(j->op, p[0], s[1], p[1], s[2], y, n);
        } else {
            fe_k_where_f32(p[0], s[1], p[1], s[2], p[2], s[3], y, n);
        }
        if (y == yb)
            fe_k_store_f32(j->out->data, j->out->dtype, off[0], yb, n);
    }
}

static int ew_run(const ewjob *j, fe_error *err)
{
    fe_k_iter it;
    if (fe_k_iter_init(&it, j->out, j->in, j->kind) < 0)
        return fe_error_set(err, FE_EINPUT, "elementwise operands do not broadcast to the output shape");
    int64_t nch = (it.inner + CH - 1) / CH;
    int64_t ntiles = it.rows * nch;
    int64_t total = it.rows * it.inner;
    if (total == 0)
        return FE_OK;
    #pragma omp parallel for schedule(static) if (total >= PAR_MIN)
    for (int64_t t = 0; t < ntiles; t++) {
        int64_t row = t / nch, c0 = (t % nch) * CH;
        int64_t n = it.inner - c0 < CH ? it.inner - c0 : CH;
        ew_tile(j, &it, row, c0, n);
    }
    return FE_OK;
}

int fe_k_unary(int op, int approx_tanh, const fe_k_tensor *x, fe_k_tensor *y, fe_error *err)
{
    ewjob j = {1, op, approx_tanh, {x, NULL, NULL}, y};
    if (op == FE_OP_CAST) {
        int64_t n = fe_k_numel(y);
        if (fe_k_numel(x) != n)
            return fe_error_set(err, FE_EINPUT, "cast: input and output sizes differ");
        enum { PC = 1 << 16 };
        int64_t nb = (n + PC - 1) / PC;
        int ds = fe_dtype_size(y->dtype), ss = fe_dtype_size(x->dtype);
        #pragma omp parallel for schedule(static) if (n >= PAR_MIN)
        for (int64_t b = 0; b < nb; b++) {
            int64_t o = b * PC, m = n - o < PC ? n - o : PC;
            fe_k_convert((char *)y->data + o * ds, y->dtype,
                         (const char *)x->data + o * ss, x->dtype, m);
        }
        return FE_OK;
    }
    return ew_run(&j, err);
}

int fe_k_binary(int op, const fe_k_tensor *a, const fe_k_tensor *b, fe_k_tensor *y,
                fe_error *err)
{
    ewjob j = {2, op, 0, {a, b, NULL}, y};
    return ew_run(&j, err);
}

int fe_k_where(const fe_k_tensor *c, const fe_k_tensor *a, const fe_k_tensor *b,
               fe_k_tensor *y, fe_error *err)
{
    ewjob j = {3, FE_OP_WHERE, 0, {c, a, b}, y};
    return ew_run(&j, err);
}

int fe_k_scale(const fe_k_tensor *x, double s, fe_k_tensor *y, fe_error *err)
{
    int sdt = fe_k_dtype_is_int(y->dtype) ? FE_I64 : FE_F32;
    union { float f; int64_t i; } sv;
    fe_k_tensor st;
    if (sdt == FE_I64)
        sv.i = fe_k_f64_to_i64(s);
    else
        sv.f = (float)s;
    st = fe_k_view(&sv, sdt, 0, NULL);
    return fe_k_binary(FE_OP_MUL, x, &st, y, err);
}
