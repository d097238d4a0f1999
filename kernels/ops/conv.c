/* conv.c: conv2d (see conv.h).
 *
 * Per image n and group g the convolution is the GEMM
 *   Y[g] (Og x OH*OW) = W[g] (Og x Cg*kh*kw) * im2col(X[n, g]) (Cg*kh*kw x OH*OW)
 * and row k = (c, ky, kx) of im2col over output pixels j = (oy, ox) is
 * X[n, g*Cg + c, oy*sh - ph + ky*dh, ox*sw - pw + kx*dw] (0 outside): the
 * B row supplier computes it while packing.
 */
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "conv.h"
#include "convert.h"

typedef struct cgeo {
    int64_t N, C, H, W, O, kh, kw, OH, OW, Cg, Og, K;
} cgeo;

typedef struct cctx {
    const fe_k_conv *cv;
    const cgeo *g;
    const float *x;       /* float32 input: image n's [C, H, W] */
    const float *bias;    /* float32 bias of GEMM row 0, or NULL */
    int64_t n, grp;       /* current image and group */
    int64_t orow0;        /* output row of GEMM row 0 */
} cctx;

static const float *im2col_row(void *ctx, int64_t k, int64_t j0, int64_t n, float *tmp)
{
    const cctx *c = ctx;
    const cgeo *g = c->g;
    const fe_k_conv *cv = c->cv;
    int64_t ch = k / (g->kh * g->kw), r = k % (g->kh * g->kw);
    int64_t ky = r / g->kw, kx = r % g->kw;
    const float *plane = c->x + (c->grp * g->Cg + ch) * g->H * g->W;
    int64_t oy = j0 / g->OW, ox = j0 % g->OW;
    for (int64_t j = 0; j < n; j++) {
        int64_t iy = oy * cv->stride[0] - cv->pad[0] + ky * cv->dil[0];
        int64_t ix = ox * cv->stride[1] - cv->pad[1] + kx * cv->dil[1];
        tmp[j] = iy >= 0 && iy < g->H && ix >= 0 && ix < g->W ? plane[iy * g->W + ix] : 0.0f;
        if (++ox == g->OW) {
            ox = 0;
            oy++;
        }
    }
    return tmp;
}

/* Bias, then the user's epilogue or a store into y. Rows are GEMM rows. */
static int conv_epi(void *ctx, int64_t i0, int64_t mc, int64_t j0, int64_t nc, float *blk,
                    int64_t ld, int tid)
{
    const cctx *c = ctx;
    const fe_k_conv *cv = c->cv;
    int64_t P = c->g->OH * c->g->OW;
    if (c->bias)
        for (int64_t i = 0; i < mc; i++) {
            float b = c->bias[i0 + i];
            for (int64_t j = 0; j < nc; j++)
                blk[i * ld + j] += b;
        }
    if (cv->epi)
        return cv->epi(cv->ectx, c->orow0 + i0, mc, j0, nc, blk, ld, tid);
    for (int64_t i = 0; i < mc; i++)
        fe_k_store_f32(cv->y->data, cv->y->dtype, (c->orow0 + i0 + i) * P + j0, blk + i * ld, nc);
    return 0;
}

/* Direct convolution of output rows [r0, r1) (row = n * O + o), all of
 * image n, whose input x is ([C, H, W]). */
static int conv_direct(const fe_k_conv *cv, const cgeo *g, const float *x, const float *w,
                       const float *bias, int64_t r0, int64_t r1, fe_error *err)
{
    int64_t P = g->OH * g->OW;
    int fail = 0, efail = 0;
    #pragma omp parallel
    {
        int tid = 0;
#ifdef _OPENMP
        tid = omp_get_thread_num();
#endif
        float *acc = malloc((size_t)(P ? P : 1) * sizeof(float));
        if (!acc) {
            #pragma omp atomic write
            fail = 1;
        }
        #pragma omp for schedule(dynamic, 4)
        for (int64_t r = r0; r < r1; r++) {
            if (!acc)
                continue;
            int64_t o = r % g->O, grp = o / g->Og;
            for (int64_t p = 0; p < P; p++)
                acc[p] = 0.0f;
            for (int64_t c = 0; c < g->Cg; c++) {
                const float *plane = x + (grp * g->Cg + c) * g->H * g->W;
                for (int64_t ky = 0; ky < g->kh; ky++)
                    for (int64_t kx = 0; kx < g->kw; kx++) {
                        float wv = w[((o * g->Cg + c) * g->kh + ky) * g->kw + kx];
                        for (int64_t oy = 0; oy < g->OH; oy++) {
                            int64_t iy = oy * cv->stride[0] - cv->pad[0] + ky * cv->dil[0];
                            if (iy < 0 || iy >= g->H)
                                continue;
                            const float *in = plane + iy * g->W;
                            float *out = acc + oy * g->OW;
                            for (int64_t ox = 0; ox < g->OW; ox++) {
                                int64_t ix = ox * cv->stride[1] - cv->pad[1] + kx * cv->dil[1];
                                if (ix >= 0 && ix < g->W)
                                    out[ox] += wv * in[ix];
                            }
                        }
                    }
            }
            if (bias)
                for (int64_t p = 0; p < P; p++)
                    acc[p] += bias[o];
            if (cv->epi) {
                if (cv->epi(cv->ectx, r, 1, 0, P, acc, P, tid)) {
                    #pragma omp atomic write
                    efail = 1;
                }
            } else {
                fe_k_store_f32(cv->y->data, cv->y->dtype, r * P, acc, P);
            }
        }
        free(acc);
    }
    if (fail)
        return fe_error_set(err, FE_ENOMEM, "conv2d: out of memory");
    if (efail)
        return fe_error_set(err, FE_ERUNTIME, "conv2d: epilogue failed");
    return FE_OK;
}

static float *to_f32(const fe_k_tensor *t, fe_error *err, int *fail)
{
    if (!t || t->dtype == FE_F32)
        return NULL;
    int64_t n = fe_k_numel(t);
    float *p = fe_malloc((size_t)(n ? n : 1) * sizeof(float), err);
    if (!p)
        *fail = 1;
    else
        fe_k_load_f32(t->data, t->dtype, 0, p, n);
    return p;
}

/* Output rows [lo, hi) of image n, whose input is X ([C, H, W], float32). */
static int conv_image(const fe_k_conv *cv, const cgeo *g, const float *X, const float *Wt,
                      const float *B, int64_t n, int64_t lo, int64_t hi, fe_error *err)
{
    /* thin GEMMs (depthwise and friends) lose to the direct loop */
    if (cv->direct || g->Og < 8 || g->K < 8)
        return conv_direct(cv, g, X, Wt, B, lo, hi, err);
    int rc = FE_OK;
    for (int64_t grp = 0; grp < cv->groups && rc == FE_OK; grp++) {
        int64_t base = n * g->O + grp * g->Og;            /* output row of o = 0 */
        int64_t glo = base > lo ? base : lo, ghi = base + g->Og < hi ? base + g->Og : hi;
        if (glo >= ghi)
            continue;
        cctx c = {cv, g, X, B, n, grp, glo};
        fe_k_gemm gm;
        memset(&gm, 0, sizeof gm);
        gm.M = ghi - glo;
        gm.N = g->OH * g->OW;
        gm.K = g->K;
        gm.a = Wt + (glo - n * g->O) * g->K;
        gm.adt = FE_F32;
        gm.a_rs = g->K;
        gm.a_cs = 1;
        gm.brow = im2col_row;
        gm.bctx = &c;
        gm.epi = conv_epi;
        gm.ectx = &c;
        gm.full_rows = cv->epi_full_rows;   /* the direct loop always hands whole rows */
        /* conv_epi reads the bias by GEMM row: point it at channel glo */
        c.bias = B ? B + (glo - n * g->O) : NULL;
        rc = fe_k_gemm_run(&gm, err);
    }
    return rc;
}

int fe_k_conv2d(const fe_k_conv *cv, fe_error *err)
{
    cgeo g;
    const fe_k_tensor *x = cv->x, *w = cv->w;
    if (x->rank != 4 || w->rank != 4)
        return fe_error_set(err, FE_EINPUT, "conv2d: x and w must be rank 4 (NCHW, OIHW)");
    g.N = x->shape[0];
    g.C = x->shape[1];
    g.H = x->shape[2];
    g.W = x->shape[3];
    g.O = w->shape[0];
    g.kh = w->shape[2];
    g.kw = w->shape[3];
    if (cv->groups < 1 || g.C % cv->groups || g.O % cv->groups || w->shape[1] != g.C / cv->groups)
        return fe_error_set(err, FE_EINPUT, "conv2d: channels %lld / weight %lld do not match groups %lld",
                            (long long)g.C, (long long)w->shape[1], (long long)cv->groups);
    g.Cg = g.C / cv->groups;
    g.Og = g.O / cv->groups;
    g.K = g.Cg * g.kh * g.kw;
    g.OH = cv->y->shape[2];
    g.OW = cv->y->shape[3];
    if (cv->y->rank != 4 || cv->y->shape[0] != g.N || cv->y->shape[1] != g.O)
        return fe_error_set(err, FE_EINPUT, "conv2d: output must be [N, O, OH, OW]");
    if (cv->bias && fe_k_numel(cv->bias) != g.O)
        return fe_error_set(err, FE_EINPUT, "conv2d: bias must have %lld elements", (long long)g.O);
    int64_t rows = g.N * g.O, r0 = cv->r0, r1 = cv->r1 ? cv->r1 : rows;
    if (r0 < 0 || r1 > rows || r0 > r1)
        return fe_error_set(err, FE_EINPUT, "conv2d: row range outside the output");

    int fail = 0, rc = FE_OK;
    float *xf = cv->ximg ? NULL : to_f32(x, err, &fail), *wf = to_f32(w, err, &fail);
    float *bf = to_f32(cv->bias, err, &fail), *img = NULL;
    const float *X = xf ? xf : x->data, *Wt = wf ? wf : w->data;
    const float *B = cv->bias ? (bf ? bf : cv->bias->data) : NULL;
    int64_t CHW = g.C * g.H * g.W;
    if (cv->ximg && !fail && !(img = fe_malloc((size_t)(CHW ? CHW : 1) * sizeof(float), err)))
        fail = 1;
    if (fail) {
        rc = FE_ENOMEM;
        goto out;
    }
    for (int64_t n = r0 / g.O; n < g.N && n * g.O < r1 && rc == FE_OK; n++) {
        if (cv->ximg && cv->ximg(cv->xctx, n, img)) {
            rc = fe_error_set(err, FE_ERUNTIME, "conv2d: the input prologue failed");
            break;
        }
        const float *Xn = cv->ximg ? img : X + n * CHW;
        int64_t lo = n * g.O > r0 ? n * g.O : r0, hi = (n + 1) * g.O < r1 ? (n + 1) * g.O : r1;
        rc = conv_image(cv, &g, Xn, Wt, B, n, lo, hi, err);
    }
out:
    free(img);
    free(xf);
    free(wf);
    free(bf);
    return rc;
}
