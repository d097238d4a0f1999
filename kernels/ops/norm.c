/* norm.c: rms_norm, layer_norm and batch_norm (see norm.h). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "injective.h"
#include "iter.h"
#include "norm.h"
#include "reduce.h"
#include "vmath.h"

#define PAR_MIN 32768

void fe_k_row_rmsnorm(const float *x, const float *w, float *y, int64_t n, float eps,
                      const float *ss)
{
    float r = 1.0f / sqrtf((ss ? *ss : fe_k_row_sumsq(x, n)) / (float)n + eps);
    int64_t i = 0;
#ifdef FE_K_AVX2
    __m256 vr = _mm256_set1_ps(r);
    if (w)
        for (; i + 8 <= n; i += 8)
            _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(x + i), vr),
                                                  _mm256_loadu_ps(w + i)));
    else
        for (; i + 8 <= n; i += 8)
            _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), vr));
#endif
    for (; i < n; i++)
        y[i] = w ? x[i] * r * w[i] : x[i] * r;
}

void fe_k_row_rmsnorm_nt(const float *x, const float *w, float *y, int64_t n, float eps,
                         const float *ss, const fe_k_pf *pf)
{
    float r = 1.0f / sqrtf((ss ? *ss : fe_k_row_sumsq(x, n)) / (float)n + eps);
    int64_t i = 0;
#ifdef FE_K_AVX2
    /* the next row is fetched here, not while summing: its reads then
     * overlap this pass's streaming writes (measured, add+rmsnorm: 2.48 ->
     * 2.05 ms; prefetching during the sum gained 4%) */
    __m256 vr = _mm256_set1_ps(r), one = _mm256_set1_ps(1.0f);
    int npf = pf ? pf->n : 0;
    for (; i < n && ((uintptr_t)(y + i) & 31u); i++)
        y[i] = w ? x[i] * r * w[i] : x[i] * r;
    for (; i + 8 <= n; i += 8) {
        if (!(i & 15))   /* one line per stream per 16 elements */
            for (int k = 0; k < npf; k++)
                _mm_prefetch(fe_k_pf_at(pf, k, i), _MM_HINT_T0);
        _mm256_stream_ps(y + i, _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(x + i), vr),
                                              w ? _mm256_loadu_ps(w + i) : one));
    }
#else
    (void)pf;   /* plain stores: nothing overlaps the next row's reads */
#endif
    for (; i < n; i++)
        y[i] = w ? x[i] * r * w[i] : x[i] * r;
}

void fe_k_row_layernorm(const float *x, const float *w, const float *b, float *y,
                        int64_t n, float eps)
{
    float mean = fe_k_row_sum(x, n) / (float)n, var = 0.0f;
    int64_t i = 0;
#ifdef FE_K_AVX2
    __m256 vm = _mm256_set1_ps(mean), acc = _mm256_setzero_ps();
    for (; i + 8 <= n; i += 8) {
        __m256 d = _mm256_sub_ps(_mm256_loadu_ps(x + i), vm);
        acc = _mm256_fmadd_ps(d, d, acc);
    }
    if (i < n) {
        __m256 d = _mm256_sub_ps(fe_k_v8_load_part(x + i, (long)(n - i), mean), vm);
        acc = _mm256_fmadd_ps(d, d, acc);
    }
    var = fe_k_v8_hsum(acc);
    i = 0;
#else
    for (i = 0; i < n; i++)
        var += (x[i] - mean) * (x[i] - mean);
    i = 0;
#endif
    float r = 1.0f / sqrtf(var / (float)n + eps);
    (void)i;
    if (w && b) {
        #pragma omp simd
        for (int64_t j = 0; j < n; j++)
            y[j] = (x[j] - mean) * r * w[j] + b[j];
    } else if (w) {
        #pragma omp simd
        for (int64_t j = 0; j < n; j++)
            y[j] = (x[j] - mean) * r * w[j];
    } else if (b) {
        #pragma omp simd
        for (int64_t j = 0; j < n; j++)
            y[j] = (x[j] - mean) * r + b[j];
    } else {
        #pragma omp simd
        for (int64_t j = 0; j < n; j++)
            y[j] = (x[j] - mean) * r;
    }
}

/* float32 copy of a small parameter tensor (NULL stays NULL) */
static float *param_f32(const fe_k_tensor *t, int64_t n, fe_error *err, int *fail)
{
    if (!t)
        return NULL;
    float *p = fe_malloc((size_t)n * sizeof(float), err);
    if (!p) {
        *fail = 1;
        return NULL;
    }
    fe_k_load_f32(t->data, t->dtype, 0, p, n);
    return p;
}

/* Weight or bias t as n floats over x's normalized dims (x's trailing dims
 * whose product is n): shape inference lets t broadcast over them, numpy
 * style (fewer dims, or dims of 1), as the fused executor reads it; the
 * expand kernel lays it out. NULL with *fail set (an FE_E* code) when t
 * does not broadcast or memory runs out. */
static float *norm_param_f32(const fe_k_tensor *t, const fe_k_tensor *x, int64_t n,
                             fe_error *err, int *fail)
{
    int64_t st[FE_MAX_RANK], cover = 1, numel;
    int k = 0;
    if (!t)
        return NULL;
    while (k < x->rank && cover < n)
        cover *= x->shape[x->rank - 1 - k++];
    while (k < x->rank && x->shape[x->rank - 1 - k] == 1 && k < t->rank)
        k++;   /* leading dims of 1 in t: let them line up with x's */
    if (cover != n || fe_k_bcast_strides(t, k, x->shape + x->rank - k, st) < 0) {
        *fail = fe_error_set(err, FE_EINPUT, "norm: weight/bias does not broadcast to the %lld "
                             "normalized elements", (long long)n);
        return NULL;
    }
    numel = fe_k_numel(t);
    float *own = param_f32(t, numel, err, fail), *p = own;
    if (own && numel != n) {
        fe_k_tensor from = *t, to = {.dtype = FE_F32, .rank = k};
        from.data = own;
        from.dtype = FE_F32;
        memcpy(to.shape, x->shape + x->rank - k, (size_t)k * sizeof *to.shape);
        if ((p = to.data = fe_malloc((size_t)n * sizeof(float), err)))
            fe_k_expand(&from, &to, err);   /* checked above: it broadcasts */
        free(own);
    }
    if (!p)
        *fail = FE_ENOMEM;
    return p;
}

/* fe_k_norm's rows: x's row r normalised into y's */
typedef struct norm_rows {
    int layer;
    const float *w, *b;
    float eps;
    int64_t n;
    const fe_k_tensor *x;
    fe_k_tensor *y;
} norm_rows;

static void norm_row(float *row, int64_t r, void *ctx)
{
    const norm_rows *c = ctx;
    int64_t n = c->n;
    fe_k_load_f32(c->x->data, c->x->dtype, r * n, row, n);
    if (c->layer)
        fe_k_row_layernorm(row, c->w, c->b, row, n, c->eps);
    else
        fe_k_row_rmsnorm(row, c->w, row, n, c->eps, NULL);
    fe_k_store_f32(c->y->data, c->y->dtype, r * n, row, n);
}

int fe_k_norm(int layer, const fe_k_tensor *x, const fe_k_tensor *w, const fe_k_tensor *b,
              int64_t n, double eps, fe_k_tensor *y, fe_error *err)
{
    int fail = 0;
    int64_t total = fe_k_numel(x);
    if (n <= 0 || total % n)
        return fe_error_set(err, FE_EINPUT, "norm: %lld elements do not split into rows of %lld",
                            (long long)total, (long long)n);
    float *wf = norm_param_f32(w, x, n, err, &fail);
    float *bf = fail ? NULL : norm_param_f32(b, x, n, err, &fail);
    if (fail) {
        free(wf);
        free(bf);
        return fail;
    }
    norm_rows c = {layer, wf, bf, (float)eps, n, x, y};
    fail = fe_k_each_row(total / n, n, total >= PAR_MIN, norm_row, &c);
    free(wf);
    free(bf);
    if (fail)
        return fe_error_set(err, FE_ENOMEM, "norm: out of memory for a row of %lld", (long long)n);
    return FE_OK;
}

/* fe_k_batch_norm's rows: row t of x, the S values of one channel of one
 * image, normalised into y's */
typedef struct bn_rows {
    const float *w, *b, *mean, *var;
    float eps;
    int64_t C, S;
    const fe_k_tensor *x;
    fe_k_tensor *y;
} bn_rows;

static void bn_row(float *row, int64_t t, void *ctx)
{
    const bn_rows *p = ctx;
    int64_t c = t % p->C, S = p->S;
    float m = p->mean ? p->mean[c] : 0.0f, k = 1.0f / sqrtf((p->var ? p->var[c] : 1.0f) + p->eps);
    float sc = k * (p->w ? p->w[c] : 1.0f), sh = p->b ? p->b[c] : 0.0f;
    fe_k_load_f32(p->x->data, p->x->dtype, t * S, row, S);
    /* one rounding in the multiply-add, as the fused executor does */
    #pragma omp simd
    for (int64_t i = 0; i < S; i++)
        row[i] = fmaf(row[i] - m, sc, sh);
    fe_k_store_f32(p->y->data, p->y->dtype, t * S, row, S);
}

int fe_k_batch_norm(const fe_k_tensor *x, const fe_k_tensor *w, const fe_k_tensor *b,
                    const fe_k_tensor *mean, const fe_k_tensor *var, double eps,
                    fe_k_tensor *y, fe_error *err)
{
    int fail = 0;
    if (x->rank < 2)
        return fe_error_set(err, FE_EINPUT, "batch_norm: input needs rank >= 2, got %d", x->rank);
    int64_t N = x->shape[0], C = x->shape[1], S = 1;
    for (int i = 2; i < x->rank; i++)
        S *= x->shape[i];
    const fe_k_tensor *ps[4] = {w, b, mean, var};
    for (int k = 0; k < 4; k++)
        if (ps[k] && fe_k_numel(ps[k]) != C)
            return fe_error_set(err, FE_EINPUT, "batch_norm: parameter %d has %lld elements, expected %lld",
                                k + 1, (long long)fe_k_numel(ps[k]), (long long)C);
    float *wf = param_f32(w, C, err, &fail), *bf = param_f32(b, C, err, &fail);
    float *mf = param_f32(mean, C, err, &fail), *vf = param_f32(var, C, err, &fail);
    if (fail)
        goto out;
    bn_rows c = {wf, bf, mf, vf, (float)eps, C, S, x, y};
    fail = fe_k_each_row(N * C, S, N * C * S >= PAR_MIN, bn_row, &c);
    if (fail)
        fe_error_set(err, FE_ENOMEM, "batch_norm: out of memory");
out:
    free(wf);
    free(bf);
    free(mf);
    free(vf);
    return fail ? FE_ENOMEM : FE_OK;
}
