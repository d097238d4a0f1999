/* attention.c: scaled dot-product attention (see attention.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "attention.h"
#include "convert.h"
#include "gemm.h"
#include "iter.h"
#include "reduce.h"
#include "scratch.h"

typedef struct actx {
    const fe_k_sdpa *a;
    int64_t L, S;
    float scale;
    int64_t mrank;                  /* rank of the broadcast score shape */
    int64_t mshape[FE_MAX_RANK], mst[FE_MAX_RANK];
    int64_t bi;                     /* current batch (flattened) */
    float *scratch;                 /* nthreads x S */
} actx;

/* scores block -> probabilities, row by row */
static int scores_epi(void *ctx, int64_t i0, int64_t mc, int64_t j0, int64_t nc, float *blk,
                      int64_t ld, int tid)
{
    const actx *c = ctx;
    const fe_k_sdpa *a = c->a;
    float *mrow = c->scratch + (int64_t)tid * c->S;
    (void)j0;
    for (int64_t r = 0; r < mc; r++) {
        int64_t i = i0 + r;
        float *s = blk + r * ld;
        for (int64_t j = 0; j < nc; j++)
            s[j] *= c->scale;
        if (a->mask) {
            int64_t off = fe_k_offset((int)c->mrank - 1, c->mshape, c->mst, c->bi * c->L + i);
            int64_t cs = c->mst[c->mrank - 1];
            if (cs)
                fe_k_load_f32(a->mask->data, a->mask->dtype, off, mrow, nc);
            else {
                fe_k_load_f32(a->mask->data, a->mask->dtype, off, mrow, 1);
                for (int64_t j = 1; j < nc; j++)
                    mrow[j] = mrow[0];
            }
            if (a->mask->dtype == FE_BOOL) {
                for (int64_t j = 0; j < nc; j++)
                    if (mrow[j] == 0.0f)
                        s[j] = -INFINITY;
            } else {
                for (int64_t j = 0; j < nc; j++)
                    s[j] += mrow[j];
            }
        }
        if (a->causal)
            for (int64_t j = i + 1; j < nc; j++)
                s[j] = -INFINITY;
        fe_k_row_softmax(s, s, nc, 0);
    }
    return 0;
}

typedef struct octx {
    fe_k_tensor *y;
    int64_t row0, Ev;
} octx;

static int out_epi(void *ctx, int64_t i0, int64_t mc, int64_t j0, int64_t nc, float *blk,
                   int64_t ld, int tid)
{
    const octx *o = ctx;
    (void)tid;
    for (int64_t r = 0; r < mc; r++)
        fe_k_store_f32(o->y->data, o->y->dtype, (o->row0 + i0 + r) * o->Ev + j0, blk + r * ld, nc);
    return 0;
}

int fe_k_sdpa_run(const fe_k_sdpa *a, fe_error *err)
{
    const fe_k_tensor *q = a->q, *k = a->k, *v = a->v;
    if (q->rank < 2 || k->rank < 2 || v->rank < 2)
        return fe_error_set(err, FE_EINPUT, "sdpa: q, k, v need rank >= 2");
    int qr = q->rank;
    int64_t L = q->shape[qr - 2], E = q->shape[qr - 1];
    int64_t S = k->shape[k->rank - 2], Ev = v->shape[v->rank - 1];
    if (k->shape[k->rank - 1] != E || v->shape[v->rank - 2] != S)
        return fe_error_set(err, FE_EINPUT, "sdpa: k must be [.., S, %lld] and v [.., S, Ev] with "
                            "the same S", (long long)E);
    /* batch axes are q's; k and v broadcast to them */
    int brank = qr - 2;
    int64_t bshape[FE_MAX_RANK], kst[FE_MAX_RANK + 2], vst[FE_MAX_RANK + 2], nb = 1;
    for (int i = 0; i < brank; i++) {
        bshape[i] = q->shape[i];
        nb *= bshape[i];
    }
    {
        int64_t ks[FE_MAX_RANK + 2], vs[FE_MAX_RANK + 2];
        bshape[brank] = S;
        bshape[brank + 1] = E;
        if (fe_k_bcast_strides(k, brank + 2, bshape, ks) < 0)
            return fe_error_set(err, FE_EINPUT, "sdpa: k's batch axes do not broadcast to q's");
        bshape[brank + 1] = Ev;
        if (fe_k_bcast_strides(v, brank + 2, bshape, vs) < 0)
            return fe_error_set(err, FE_EINPUT, "sdpa: v's batch axes do not broadcast to q's");
        memcpy(kst, ks, sizeof ks);
        memcpy(vst, vs, sizeof vs);
    }
    actx c;
    memset(&c, 0, sizeof c);
    c.a = a;
    c.L = L;
    c.S = S;
    c.scale = a->scale > 0 ? (float)a->scale : (float)(1.0 / sqrt((double)(E ? E : 1)));
    if (a->mask) {
        c.mrank = brank + 2;
        for (int i = 0; i < brank; i++)
            c.mshape[i] = bshape[i];
        c.mshape[brank] = L;
        c.mshape[brank + 1] = S;
        if (fe_k_bcast_strides(a->mask, (int)c.mrank, c.mshape, c.mst) < 0)
            return fe_error_set(err, FE_EINPUT, "sdpa: the mask does not broadcast to [.., L, S]");
    }
    int nth = 1;
#ifdef _OPENMP
    nth = omp_get_max_threads();
#endif
    float *P = fe_k_scratch_get((size_t)(L * S + 1) * sizeof(float));
    c.scratch = fe_k_scratch_get((size_t)(nth * S + 1) * sizeof(float));
    int rc = FE_OK;
    if (!P || !c.scratch) {
        rc = fe_error_set(err, FE_ENOMEM, "sdpa: out of memory for the [%lld, %lld] scores",
                          (long long)L, (long long)S);
        goto out;
    }
    int eq = fe_dtype_size(q->dtype), ek = fe_dtype_size(k->dtype), ev = fe_dtype_size(v->dtype);
    for (int64_t bi = 0; bi < nb && rc == FE_OK; bi++) {
        fe_k_gemm g;
        c.bi = bi;
        memset(&g, 0, sizeof g);
        g.M = L;
        g.N = S;
        g.K = E;
        g.a = (const char *)q->data + bi * L * E * eq;
        g.adt = q->dtype;
        g.a_rs = E;
        g.a_cs = 1;
        g.b = (const char *)k->data + fe_k_offset(brank, bshape, kst, bi) * ek;
        g.bdt = k->dtype;
        g.b_rs = 1;          /* B = k^T: element (e, j) at j * E + e */
        g.b_cs = E;
        g.c = P;
        g.ldc = S;
        g.epi = scores_epi;
        g.ectx = &c;
        g.full_rows = 1;
        rc = fe_k_gemm_run(&g, err);
        if (rc)
            break;
        octx o = {a->y, bi * L, Ev};
        memset(&g, 0, sizeof g);
        g.M = L;
        g.N = Ev;
        g.K = S;
        g.a = P;
        g.adt = FE_F32;
        g.a_rs = S;
        g.a_cs = 1;
        g.b = (const char *)v->data + fe_k_offset(brank, bshape, vst, bi) * ev;
        g.bdt = v->dtype;
        g.b_rs = Ev;
        g.b_cs = 1;
        if (a->y->dtype == FE_F32) {
            g.c = (float *)a->y->data + bi * L * Ev;
            g.ldc = Ev;
        } else {
            g.epi = out_epi;
            g.ectx = &o;
        }
        rc = fe_k_gemm_run(&g, err);
    }
out:
    fe_k_scratch_put(P);
    fe_k_scratch_put(c.scratch);
    return rc;
}
