/* pool.c: max_pool2d and avg_pool2d (see pool.h). */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#ifdef __AVX2__
#include <immintrin.h>
#endif

#include "convert.h"
#include "pool.h"

static int check(const fe_k_tensor *x, const fe_k_tensor *y, const char *op, fe_error *err)
{
    if (x->rank != 4 || y->rank != 4 || x->shape[0] != y->shape[0] || x->shape[1] != y->shape[1])
        return fe_error_set(err, FE_EINPUT, "%s: input and output must be [N, C, H, W] with equal N, C", op);
    return FE_OK;
}

/* Floats of max_plane's workspace. */
static int64_t max_ws(int64_t OW, int64_t H, const fe_k_pool *p)
{
    int64_t span = (OW - 1) * p->stride[1] + 1;
    return span + (p->kernel[1] - 1) * p->dil[1] + span + H * OW;
}

/* acc[i] = max(acc[i], src[i]) for i < n, NaN-sticky: a NaN in src
 * replaces acc, and a NaN in acc is never replaced (NaN > x is false), so
 * a window holding a NaN gives NaN, as PyTorch's max pool does. */
static void max_acc(float *acc, const float *src, int64_t n)
{
    int64_t i = 0;
#ifdef __AVX2__
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(acc + i), e = _mm256_loadu_ps(src + i);
        __m256 take = _mm256_or_ps(_mm256_cmp_ps(e, v, _CMP_GT_OQ), _mm256_cmp_ps(e, e, _CMP_UNORD_Q));
        _mm256_storeu_ps(acc + i, _mm256_blendv_ps(v, e, take));
    }
#endif
    for (; i < n; i++)
        acc[i] = src[i] > acc[i] || src[i] != src[i] ? src[i] : acc[i];
}

/* One plane's max pool, separably: each input row's window maxima along x
 * (on a copy of the row padded with -inf, so that every tap is a
 * contiguous vector max, then taken every stride), then each output row
 * the max of its window's rows. Padding as -inf and skipping a tap are the
 * same under max, so a window with no tap inside the input stays -inf.
 * ws holds max_ws() floats: the padded row, its window maxima at every
 * start, and the H rows of OW horizontal maxima. */
static void max_plane(const float *in, int64_t H, int64_t W, const fe_k_pool *p, float *out,
                      int64_t OH, int64_t OW, float *ws)
{
    int64_t s0 = p->stride[0], s1 = p->stride[1], d0 = p->dil[0], d1 = p->dil[1];
    int64_t K1 = p->kernel[1], span = (OW - 1) * s1 + 1;    /* window starts, every one */
    int64_t plen = span + (K1 - 1) * d1;
    float *prow = ws, *full = ws + plen, *hrows = full + span;
    for (int64_t iy = 0; iy < H; iy++) {
        /* prow[j] is input column j - pad: -inf left of the row, the row, -inf after */
        int64_t lo = p->pad[1] < plen ? p->pad[1] : plen, hi = p->pad[1] + W < plen ? p->pad[1] + W : plen;
        for (int64_t j = 0; j < lo; j++)
            prow[j] = -INFINITY;
        if (hi > lo)
            memcpy(prow + lo, in + iy * W + (lo - p->pad[1]), (size_t)(hi - lo) * sizeof(float));
        for (int64_t j = hi > lo ? hi : lo; j < plen; j++)
            prow[j] = -INFINITY;
        memcpy(full, prow, (size_t)span * sizeof(float));
        for (int64_t kx = 1; kx < K1; kx++)
            max_acc(full, prow + kx * d1, span);
        float *h = hrows + iy * OW;
        for (int64_t ox = 0; ox < OW; ox++)
            h[ox] = full[ox * s1];
    }
    for (int64_t oy = 0; oy < OH; oy++) {
        float *o = out + oy * OW;
        for (int64_t ox = 0; ox < OW; ox++)
            o[ox] = -INFINITY;
        for (int64_t ky = 0; ky < p->kernel[0]; ky++) {
            int64_t iy = oy * s0 - p->pad[0] + ky * d0;
            if (iy >= 0 && iy < H)
                max_acc(o, hrows + iy * OW, OW);
        }
    }
}

static int pool(const fe_k_tensor *x, const fe_k_pool *p, fe_k_tensor *y, int is_max,
                fe_error *err)
{
    int64_t H = x->shape[2], W = x->shape[3], OH = y->shape[2], OW = y->shape[3];
    int64_t planes = x->shape[0] * x->shape[1];
    int fail = 0, efail = 0;
    if (planes <= 0 || OH <= 0 || OW <= 0)
        return FE_OK;               /* nothing to compute (nor to hand an epilogue) */
    #pragma omp parallel
    {
        int tid = omp_get_thread_num();
        float *in = malloc((size_t)(H * W + 1) * sizeof(float));
        float *out = malloc((size_t)(OH * OW + 1) * sizeof(float));
        float *ws = is_max ? malloc((size_t)(max_ws(OW, H, p) + 1) * sizeof(float)) : NULL;
        if (!in || !out || (is_max && !ws)) {
            #pragma omp atomic write
            fail = 1;
        }
        #pragma omp for schedule(static)
        for (int64_t pl = 0; pl < planes; pl++) {
            if (!in || !out || (is_max && !ws))
                continue;
            if (is_max) {
                /* f32 planes are read in place; others converted first */
                const float *src = (const float *)x->data + pl * H * W;
                if (x->dtype != FE_F32) {
                    fe_k_load_f32(x->data, x->dtype, pl * H * W, in, H * W);
                    src = in;
                }
                max_plane(src, H, W, p, out, OH, OW, ws);
                goto plane_done;
            }
            fe_k_load_f32(x->data, x->dtype, pl * H * W, in, H * W);
            for (int64_t oy = 0; oy < OH; oy++)
                for (int64_t ox = 0; ox < OW; ox++) {
                    int64_t y0 = oy * p->stride[0] - p->pad[0], x0 = ox * p->stride[1] - p->pad[1];
                    float v;
                    if (is_max) {
                        v = -INFINITY;
                        for (int64_t ky = 0; ky < p->kernel[0]; ky++) {
                            int64_t iy = y0 + ky * p->dil[0];
                            if (iy < 0 || iy >= H)
                                continue;
                            for (int64_t kx = 0; kx < p->kernel[1]; kx++) {
                                int64_t ix = x0 + kx * p->dil[1];
                                if (ix < 0 || ix >= W)
                                    continue;
                                float e = in[iy * W + ix];
                                if (e > v || e != e)
                                    v = e;
                                if (v != v)
                                    goto done;
                            }
                        }
                    } else {
                        /* PyTorch: the window clipped to the padded input
                         * sets count_include_pad's divisor, the window
                         * clipped to the input the other one */
                        int64_t y1 = y0 + p->kernel[0], x1 = x0 + p->kernel[1];
                        if (y1 > H + p->pad[0])
                            y1 = H + p->pad[0];
                        if (x1 > W + p->pad[1])
                            x1 = W + p->pad[1];
                        int64_t padded = (y1 - y0) * (x1 - x0);
                        int64_t ya = y0 < 0 ? 0 : y0, xa = x0 < 0 ? 0 : x0;
                        int64_t yb = y1 > H ? H : y1, xb = x1 > W ? W : x1;
                        float s = 0.0f;
                        for (int64_t iy = ya; iy < yb; iy++)
                            for (int64_t ix = xa; ix < xb; ix++)
                                s += in[iy * W + ix];
                        int64_t cnt = p->count_include_pad ? padded : (yb - ya) * (xb - xa);
                        v = s / (float)cnt;
                    }
                done:
                    out[oy * OW + ox] = v;
                }
        plane_done:
            if (!p->epi)
                fe_k_store_f32(y->data, y->dtype, pl * OH * OW, out, OH * OW);
            else if (p->epi(p->ectx, pl, 1, 0, OH * OW, out, OH * OW, tid)) {
                #pragma omp atomic write
                efail = 1;
            }
        }
        free(in);
        free(out);
        free(ws);
    }
    if (fail)
        return fe_error_set(err, FE_ENOMEM, "pool2d: out of memory");
    if (efail)
        return fe_error_set(err, FE_ERUNTIME, "pool2d: epilogue failed");
    return FE_OK;
}

int fe_k_max_pool2d(const fe_k_tensor *x, const fe_k_pool *p, fe_k_tensor *y, fe_error *err)
{
    int rc = check(x, y, "max_pool2d", err);
    return rc ? rc : pool(x, p, y, 1, err);
}

int fe_k_avg_pool2d(const fe_k_tensor *x, const fe_k_pool *p, fe_k_tensor *y, fe_error *err)
{
    int rc = check(x, y, "avg_pool2d", err);
    return rc ? rc : pool(x, p, y, 0, err);
}
