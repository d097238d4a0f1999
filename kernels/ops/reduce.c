/* reduce.c: reductions and softmax (see reduce.h).
 *
 * Reductions over the trailing axes of float data use the float32 row
 * primitives (as the fused executor does, so the two agree bit for bit).
 * Other reductions over an arbitrary set of axes run as passes: the
 * input's axes are coalesced into alternating kept / reduced blocks, and each
 * pass reduces one reduced block of a [A, R, B] view, innermost block first,
 * into a double buffer. Sums and means accumulate in double there, so the
 * reference is more accurate than the float32 row primitives the fused
 * executor uses.
 */
#include <math.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "convert.h"
#include "iter.h"
#include "ops.h"
#include "reduce.h"
#include "vmath.h"

#define PAR_MIN 32768

/* ---- row primitives ---- */

float fe_k_row_sum(const float *x, int64_t n)
{
    int64_t i = 0;
#ifdef FE_K_AVX2
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (; i + 32 <= n; i += 32) {
        a0 = _mm256_add_ps(a0, _mm256_loadu_ps(x + i));
        a1 = _mm256_add_ps(a1, _mm256_loadu_ps(x + i + 8));
        a2 = _mm256_add_ps(a2, _mm256_loadu_ps(x + i + 16));
        a3 = _mm256_add_ps(a3, _mm256_loadu_ps(x + i + 24));
    }
    for (; i + 8 <= n; i += 8)
        a0 = _mm256_add_ps(a0, _mm256_loadu_ps(x + i));
    if (i < n)
        a1 = _mm256_add_ps(a1, fe_k_v8_load_part(x + i, (long)(n - i), 0.0f));
    return fe_k_v8_hsum(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
#else
    float s[8] = {0};
    for (; i < n; i++)
        s[i & 7] += x[i];
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
#endif
}

float fe_k_row_sumsq(const float *x, int64_t n)
{
    int64_t i = 0;
#ifdef FE_K_AVX2
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (; i + 32 <= n; i += 32) {
        __m256 v0 = _mm256_loadu_ps(x + i), v1 = _mm256_loadu_ps(x + i + 8);
        __m256 v2 = _mm256_loadu_ps(x + i + 16), v3 = _mm256_loadu_ps(x + i + 24);
        a0 = _mm256_fmadd_ps(v0, v0, a0);
        a1 = _mm256_fmadd_ps(v1, v1, a1);
        a2 = _mm256_fmadd_ps(v2, v2, a2);
        a3 = _mm256_fmadd_ps(v3, v3, a3);
    }
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        a0 = _mm256_fmadd_ps(v, v, a0);
    }
    if (i < n) {
        __m256 v = fe_k_v8_load_part(x + i, (long)(n - i), 0.0f);
        a1 = _mm256_fmadd_ps(v, v, a1);
    }
    return fe_k_v8_hsum(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
#else
    float s[8] = {0};
    for (; i < n; i++)
        s[i & 7] += x[i] * x[i];
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
#endif
}

static float row_ext(const float *x, int64_t n, int want_max)
{
    int64_t i = 0;
    float m = want_max ? -INFINITY : INFINITY;
#ifdef FE_K_AVX2
    __m256 a = _mm256_set1_ps(m), nan = _mm256_setzero_ps();
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
        a = want_max ? _mm256_max_ps(a, v) : _mm256_min_ps(a, v);
    }
    if (i < n) {
        __m256 v = fe_k_v8_load_part(x + i, (long)(n - i), m);
        nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
        a = want_max ? _mm256_max_ps(a, v) : _mm256_min_ps(a, v);
    }
    if (_mm256_movemask_ps(nan))
        return NAN;
    return want_max ? fe_k_v8_hmax(a) : fe_k_v8_hmin(a);
#else
    for (; i < n; i++) {
        if (x[i] != x[i])
            return NAN;
        if (want_max ? x[i] > m : x[i] < m)
            m = x[i];
    }
    return m;
#endif
}

float fe_k_row_max(const float *x, int64_t n) { return row_ext(x, n, 1); }
float fe_k_row_min(const float *x, int64_t n) { return row_ext(x, n, 0); }

float fe_k_row_reduce(int op, const float *x, int64_t n)
{
    switch (op) {
    case FE_OP_SUM: return fe_k_row_sum(x, n);
    case FE_OP_MEAN: return fe_k_row_sum(x, n) / (float)n;
    case FE_OP_AMAX: return fe_k_row_max(x, n);
    case FE_OP_AMIN: return fe_k_row_min(x, n);
    default: return 0.0f;
    }
}

/* y = exp(x - m) for the row, returning the sum of y; y may be NULL to only
 * sum. pf (may be NULL): memory to pull into cache meanwhile, one line per
 * stream per 16 elements. */
static float exp_sum(const float *x, float *y, int64_t n, float m, const fe_k_pf *pf)
{
    int64_t i = 0;
#if defined FE_K_AVX512
    /* 16 lanes where the core has them: exp is latency-bound, and a wider
     * vector is twice the work per dependency chain */
    __m512 vm = _mm512_set1_ps(m), a0 = _mm512_setzero_ps(), a1 = a0;
    int npf = pf ? pf->n : 0;
    for (; i + 32 <= n; i += 32) {
        for (int k = 0; k < npf; k++) {
            _mm_prefetch(fe_k_pf_at(pf, k, i), _MM_HINT_T0);
            _mm_prefetch(fe_k_pf_at(pf, k, i + 16), _MM_HINT_T0);
        }
        __m512 e0 = fe_k_v16_exp_nonpos(_mm512_sub_ps(_mm512_loadu_ps(x + i), vm));
        __m512 e1 = fe_k_v16_exp_nonpos(_mm512_sub_ps(_mm512_loadu_ps(x + i + 16), vm));
        if (y) {
            _mm512_storeu_ps(y + i, e0);
            _mm512_storeu_ps(y + i + 16, e1);
        }
        a0 = _mm512_add_ps(a0, e0);
        a1 = _mm512_add_ps(a1, e1);
    }
    for (; i < n; i += 16) {   /* the tail: lanes past n read -inf, giving 0 */
        __mmask16 k = n - i < 16 ? (__mmask16)((1u << (n - i)) - 1u) : (__mmask16)0xFFFF;
        __m512 e = fe_k_v16_exp_nonpos(
            _mm512_sub_ps(_mm512_mask_loadu_ps(_mm512_set1_ps(-INFINITY), k, x + i), vm));
        if (y)
            _mm512_mask_storeu_ps(y + i, k, e);
        a0 = _mm512_add_ps(a0, e);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(a0, a1));
#elif defined FE_K_AVX2
    __m256 vm = _mm256_set1_ps(m), a0 = _mm256_setzero_ps(), a1 = a0;
    int npf = pf ? pf->n : 0;
    for (; i + 16 <= n; i += 16) {
        for (int k = 0; k < npf; k++)
            _mm_prefetch(fe_k_pf_at(pf, k, i), _MM_HINT_T0);
        __m256 e0 = fe_k_v8_exp_nonpos(_mm256_sub_ps(_mm256_loadu_ps(x + i), vm));
        __m256 e1 = fe_k_v8_exp_nonpos(_mm256_sub_ps(_mm256_loadu_ps(x + i + 8), vm));
        if (y) {
            _mm256_storeu_ps(y + i, e0);
            _mm256_storeu_ps(y + i + 8, e1);
        }
        a0 = _mm256_add_ps(a0, e0);
        a1 = _mm256_add_ps(a1, e1);
    }
    for (; i < n; i += 8) {
        long k = n - i < 8 ? (long)(n - i) : 8;
        __m256 e = fe_k_v8_exp_nonpos(_mm256_sub_ps(fe_k_v8_load_part(x + i, k, -INFINITY), vm));
        if (y)
            fe_k_v8_store_part(y + i, e, k);
        a0 = _mm256_add_ps(a0, e);
    }
    return fe_k_v8_hsum(_mm256_add_ps(a0, a1));
#else
    float s = 0.0f;
    (void)pf;
    for (; i < n; i++) {
        float e = expf(x[i] - m);
        if (y)
            y[i] = e;
        s += e;
    }
    return s;
#endif
}

void fe_k_row_softmax(const float *x, float *y, int64_t n, int log)
{
    float m = fe_k_row_max(x, n);
    if (m != m || m == -INFINITY) {
        for (int64_t i = 0; i < n; i++)
            y[i] = NAN;
        return;
    }
    if (log) {
        float ls = logf(exp_sum(x, NULL, n, m, NULL));
        #pragma omp simd
        for (int64_t i = 0; i < n; i++)
            y[i] = (x[i] - m) - ls;
        return;
    }
    float inv = 1.0f / exp_sum(x, y, n, m, NULL);
    #pragma omp simd
    for (int64_t i = 0; i < n; i++)
        y[i] *= inv;
}

void fe_k_row_softmax_nt_max(const float *x, float *tmp, float *y, int64_t n, int log, float m,
                             const fe_k_pf *pf)
{
    if (m != m || m == -INFINITY) {
        for (int64_t i = 0; i < n; i++)
            tmp[i] = NAN;
        fe_k_store_f32_nt(y, FE_F32, 0, tmp, n);
        return;
    }
    if (log) {
        float ls = logf(exp_sum(x, NULL, n, m, NULL));
        #pragma omp simd
        for (int64_t i = 0; i < n; i++)
            tmp[i] = (x[i] - m) - ls;
        fe_k_store_f32_nt(y, FE_F32, 0, tmp, n);
        return;
    }
    float inv = 1.0f / exp_sum(x, tmp, n, m, pf);
    int64_t i = 0;
#if defined FE_K_AVX512
    __m512 vi = _mm512_set1_ps(inv);
    for (; i < n && ((uintptr_t)(y + i) & 63u); i++)
        y[i] = tmp[i] * inv;
    for (; i + 16 <= n; i += 16)
        _mm512_stream_ps(y + i, _mm512_mul_ps(_mm512_loadu_ps(tmp + i), vi));
#elif defined FE_K_AVX2
    __m256 vi = _mm256_set1_ps(inv);
    for (; i < n && ((uintptr_t)(y + i) & 31u); i++)
        y[i] = tmp[i] * inv;
    for (; i + 8 <= n; i += 8)
        _mm256_stream_ps(y + i, _mm256_mul_ps(_mm256_loadu_ps(tmp + i), vi));
#endif
    for (; i < n; i++)
        y[i] = tmp[i] * inv;
}

/* ---- reference reductions ---- */

static double red_init(int op)
{
    return op == FE_OP_AMAX ? -INFINITY : op == FE_OP_AMIN ? INFINITY : 0.0;
}

static inline double red_step(int op, double acc, double v)
{
    switch (op) {
    case FE_OP_AMAX: return v != v || v > acc ? v : acc;
    case FE_OP_AMIN: return v != v || v < acc ? v : acc;
    default: return acc + v;
    }
}

/* acc[j] = red_step(op, acc[j], x[j]) for j < n, written so that the
 * compiler vectorises it (one loop per op, no switch inside). */
static void acc_row(int op, double *restrict acc, const float *restrict x, int64_t n)
{
    switch (op) {
    case FE_OP_AMAX:
        #pragma omp simd
        for (int64_t j = 0; j < n; j++)
            acc[j] = x[j] != x[j] || x[j] > acc[j] ? (double)x[j] : acc[j];
        break;
    case FE_OP_AMIN:
        #pragma omp simd
        for (int64_t j = 0; j < n; j++)
            acc[j] = x[j] != x[j] || x[j] < acc[j] ? (double)x[j] : acc[j];
        break;
    default:
        #pragma omp simd
        for (int64_t j = 0; j < n; j++)
            acc[j] += (double)x[j];
        break;
    }
}

double fe_k_reduce_identity(int op) { return red_init(op); }

void fe_k_col_accumulate(int op, double *acc, const float *x, int64_t n) { acc_row(op, acc, x, n); }

void fe_k_col_combine(int op, double *acc, const double *x, int64_t n)
{
    for (int64_t j = 0; j < n; j++)
        acc[j] = red_step(op, acc[j], x[j]);
}

/* count elements of a typed tensor or a double buffer into double */
static void load_d(const fe_k_tensor *xt, const double *xd, int64_t off, double *dst, int64_t n)
{
    if (xd) {
        memcpy(dst, xd + off, (size_t)n * sizeof(double));
    } else if (fe_k_dtype_is_int(xt->dtype)) {
        int64_t t[256];
        for (int64_t i = 0; i < n; i += 256) {
            int64_t m = n - i < 256 ? n - i : 256;
            fe_k_load_i64(xt->data, xt->dtype, off + i, t, m);
            for (int64_t j = 0; j < m; j++)
                dst[i + j] = (double)t[j];
        }
    } else {
        float t[256];
        for (int64_t i = 0; i < n; i += 256) {
            int64_t m = n - i < 256 ? n - i : 256;
            fe_k_load_f32(xt->data, xt->dtype, off + i, t, m);
            for (int64_t j = 0; j < m; j++)
                dst[i + j] = (double)t[j];
        }
    }
}

/* out[a, b] = reduce_r src[a, r, b] */
static void reduce_pass(int op, const fe_k_tensor *xt, const double *xd,
                        int64_t A, int64_t R, int64_t B, double *out)
{
    enum { BC = 512 };
    int64_t nbc = (B + BC - 1) / BC, ntask = A * nbc;
    #pragma omp parallel for schedule(static) if (A * R * B >= PAR_MIN)
    for (int64_t t = 0; t < ntask; t++) {
        int64_t a = t / nbc, b0 = (t % nbc) * BC;
        int64_t nb = B - b0 < BC ? B - b0 : BC;
        double row[BC], acc[BC];
        if (B == 1) {
            /* contiguous reduction: stream the row in chunks */
            double s = red_init(op);
            for (int64_t r = 0; r < R; r += BC) {
                int64_t m = R - r < BC ? R - r : BC;
                load_d(xt, xd, a * R + r, row, m);
                for (int64_t j = 0; j < m; j++)
                    s = red_step(op, s, row[j]);
            }
            out[a] = s;
            continue;
        }
        for (int64_t j = 0; j < nb; j++)
            acc[j] = red_init(op);
        if (!xd && !fe_k_dtype_is_int(xt->dtype)) {
            /* float rows straight into the accumulators, in vectors (the
             * double-buffer path ran column sums at 2 GB/s) */
            float rowf[BC];
            for (int64_t r = 0; r < R; r++) {
                fe_k_load_f32(xt->data, xt->dtype, (a * R + r) * B + b0, rowf, nb);
                acc_row(op, acc, rowf, nb);
            }
            memcpy(out + a * B + b0, acc, (size_t)nb * sizeof(double));
            continue;
        }
        for (int64_t r = 0; r < R; r++) {
            load_d(xt, xd, (a * R + r) * B + b0, row, nb);
            for (int64_t j = 0; j < nb; j++)
                acc[j] = red_step(op, acc[j], row[j]);
        }
        memcpy(out + a * B + b0, acc, (size_t)nb * sizeof(double));
    }
}

/* fe_k_reduce's rows: x's row i of R floats reduced into y's element i */
typedef struct reduce_rows {
    int op;
    int64_t R;
    const fe_k_tensor *x;
    fe_k_tensor *y;
} reduce_rows;

static void reduce_row(float *row, int64_t i, void *ctx)
{
    const reduce_rows *c = ctx;
    fe_k_load_f32(c->x->data, c->x->dtype, i * c->R, row, c->R);
    float v = fe_k_row_reduce(c->op, row, c->R);
    fe_k_store_f32(c->y->data, c->y->dtype, i, &v, 1);
}

int fe_k_reduce(int op, const fe_k_tensor *x, unsigned axes_mask, fe_k_tensor *y,
                fe_error *err)
{
    int64_t shape[FE_MAX_RANK];
    int red[FE_MAX_RANK];
    int nb = 0;
    int64_t count = 1, total = fe_k_numel(x);

    /* blocks of adjacent axes with the same reduced / kept status */
    for (int i = 0; i < x->rank; i++) {
        int r = (axes_mask >> i) & 1u;
        if (r)
            count *= x->shape[i];
        if (x->shape[i] == 1)
            continue;
        if (nb > 0 && red[nb - 1] == r) {
            shape[nb - 1] *= x->shape[i];
        } else {
            shape[nb] = x->shape[i];
            red[nb] = r;
            nb++;
        }
    }

    int64_t ny = fe_k_numel(y);
    /* float data reduced over its trailing axes only: the row primitives, the
     * same arithmetic the fused executor uses, so fused and unfused agree */
    int nred = 0;
    for (int k = 0; k < nb; k++)
        nred += red[k];
    if (nb > 0 && nred == 1 && red[nb - 1] && !fe_k_dtype_is_int(x->dtype) && ny * shape[nb - 1] == total) {
        int64_t R = shape[nb - 1];
        reduce_rows c = {op, R, x, y};
        if (fe_k_each_row(ny, R, total >= PAR_MIN, reduce_row, &c))
            return fe_error_set(err, FE_ENOMEM, "reduction: out of memory for a row of %lld", (long long)R);
        return FE_OK;
    }
    double *cur = NULL;
    int64_t cursize = total;
    for (int k = nb - 1; k >= 0; k--) {
        if (!red[k])
            continue;
        int64_t B = 1, A = 1;
        for (int j = k + 1; j < nb; j++)
            B *= shape[j];
        for (int j = 0; j < k; j++)
            A *= shape[j];
        double *nxt = fe_malloc((size_t)(A * B) * sizeof(double), err);
        if (!nxt) {
            free(cur);
            return FE_ENOMEM;
        }
        reduce_pass(op, x, cur, A, shape[k], B, nxt);
        free(cur);
        cur = nxt;
        cursize = A * B;
        /* drop the reduced block from the view */
        for (int j = k; j < nb - 1; j++) {
            shape[j] = shape[j + 1];
            red[j] = red[j + 1];
        }
        nb--;
    }
    if (!cur) {  /* nothing to reduce (only size-1 axes): a copy */
        cur = fe_malloc((size_t)(total ? total : 1) * sizeof(double), err);
        if (!cur)
            return FE_ENOMEM;
        load_d(x, NULL, 0, cur, total);
        cursize = total;
    }
    if (count == 0) {   /* empty reduction */
        for (int64_t i = 0; i < cursize; i++)
            cur[i] = red_init(op);
    }
    if (ny != cursize) {
        free(cur);
        return fe_error_set(err, FE_EINPUT, "reduction: output has %lld elements, expected %lld",
                            (long long)ny, (long long)cursize);
    }
    if (op == FE_OP_MEAN)
        for (int64_t i = 0; i < ny; i++)
            cur[i] /= (double)count;
    if (fe_k_dtype_is_int(y->dtype) && y->dtype != FE_BOOL) {   /* bool: as elemwise.c */
        for (int64_t i = 0; i < ny; i++) {
            int64_t v = fe_k_f64_to_i64(cur[i]);
            fe_k_store_i64(y->data, y->dtype, i, &v, 1);
        }
    } else {
        #pragma omp parallel for schedule(static) if (ny >= PAR_MIN)
        for (int64_t i = 0; i < ny; i += 256) {
            float t[256];
            int64_t m = ny - i < 256 ? ny - i : 256;
            for (int64_t j = 0; j < m; j++)
                t[j] = (float)cur[i + j];
            fe_k_store_f32(y->data, y->dtype, i, t, m);
        }
    }
    free(cur);
    return FE_OK;
}

/* fe_k_softmax's rows over the last axis: the softmax of x's row t of R
 * values into y's */
typedef struct softmax_rows {
    int log;
    int64_t R;
    const fe_k_tensor *x;
    fe_k_tensor *y;
} softmax_rows;

static void softmax_row(float *row, int64_t t, void *ctx)
{
    const softmax_rows *c = ctx;
    fe_k_load_f32(c->x->data, c->x->dtype, t * c->R, row, c->R);
    fe_k_row_softmax(row, row, c->R, c->log);
    fe_k_store_f32(c->y->data, c->y->dtype, t * c->R, row, c->R);
}

/* e^(x - m) for n lanes, m per lane; the tail through the same vector code. */
static void exp_shift(const float *x, const float *m, float *e, int64_t n)
{
    int64_t j = 0;
#ifdef FE_K_AVX2
    for (; j + 8 <= n; j += 8)
        _mm256_storeu_ps(e + j, fe_k_v8_exp(_mm256_sub_ps(_mm256_loadu_ps(x + j), _mm256_loadu_ps(m + j))));
#endif
    for (; j < n; j++)
        e[j] = fe_k_expf(x[j] - m[j]);
}

/* Softmax of the [R, B] slab at outer index a over its R axis, for the
 * columns [b0, b0 + nb): three passes over rows of nb contiguous values
 * (the column max, the sum of exponentials, the result), each a vector
 * loop across columns. Element by element, strided, this ran at 1 GB/s.
 * The arithmetic is the row softmax's (fe_k_row_softmax): a column whose
 * max is NaN or -inf gives NaN. */
enum { SM_BC = 256 };

static void softmax_cols(const fe_k_tensor *x, fe_k_tensor *y, int log, int64_t a, int64_t R,
                         int64_t B, int64_t b0, int64_t nb)
{
    float m[SM_BC], s[SM_BC], v[SM_BC], e[SM_BC];
    int64_t base = a * R * B + b0;
    for (int64_t j = 0; j < nb; j++)
        m[j] = -INFINITY, s[j] = 0.0f;
    for (int64_t r = 0; r < R; r++) {
        fe_k_load_f32(x->data, x->dtype, base + r * B, v, nb);
        #pragma omp simd
        for (int64_t j = 0; j < nb; j++)
            m[j] = (v[j] > m[j] || v[j] != v[j]) && m[j] == m[j] ? v[j] : m[j];   /* NaN sticks */
    }
    for (int64_t r = 0; r < R; r++) {
        fe_k_load_f32(x->data, x->dtype, base + r * B, v, nb);
        exp_shift(v, m, e, nb);
        #pragma omp simd
        for (int64_t j = 0; j < nb; j++)
            s[j] += e[j];
    }
    for (int64_t j = 0; j < nb; j++)     /* log-sum, or the reciprocal of the sum */
        s[j] = log ? logf(s[j]) : 1.0f / s[j];
    for (int64_t r = 0; r < R; r++) {
        fe_k_load_f32(x->data, x->dtype, base + r * B, v, nb);
        if (log) {
            #pragma omp simd
            for (int64_t j = 0; j < nb; j++)
                e[j] = (v[j] - m[j]) - s[j];
        } else {
            exp_shift(v, m, e, nb);
            #pragma omp simd
            for (int64_t j = 0; j < nb; j++)
                e[j] *= s[j];
        }
        for (int64_t j = 0; j < nb; j++)
            if (m[j] != m[j] || m[j] == -INFINITY)
                e[j] = NAN;
        fe_k_store_f32(y->data, y->dtype, base + r * B, e, nb);
    }
}

int fe_k_softmax(const fe_k_tensor *x, int axis, int log, fe_k_tensor *y, fe_error *err)
{
    int64_t A = 1, R = x->shape[axis], B = 1;
    for (int i = 0; i < axis; i++)
        A *= x->shape[i];
    for (int i = axis + 1; i < x->rank; i++)
        B *= x->shape[i];
    if (R == 0 || A * B == 0)
        return FE_OK;
    if (B > 1) {
        int64_t nbc = (B + SM_BC - 1) / SM_BC;
        #pragma omp parallel for schedule(static) if (A * R * B >= PAR_MIN)
        for (int64_t t = 0; t < A * nbc; t++) {
            int64_t b0 = (t % nbc) * SM_BC;
            softmax_cols(x, y, log, t / nbc, R, B, b0, B - b0 < SM_BC ? B - b0 : SM_BC);
        }
        return FE_OK;
    }
    softmax_rows c = {log, R, x, y};
    if (fe_k_each_row(A * B, R, 1, softmax_row, &c))
        return fe_error_set(err, FE_ENOMEM, "softmax: out of memory for a row of %lld", (long long)R);
    return FE_OK;
}
