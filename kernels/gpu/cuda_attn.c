/* cuda_attn.c: sdpa on the GPU (cuda_attn.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_attn.h"
#include "cuda_softmax.h"
#include "iter.h"
#include "ktensor.h"
#include "ops.h"

#define SCORES_CAP ((int64_t)256 << 20)   /* scratch bytes of one chunk */

static int float_dt(int dt)
{
    return dt == FE_F32 || dt == FE_F16 || dt == FE_BF16;
}

/* Broadcast strides of tensor t read as oshape (orank axes), or -1. */
static int bstrides(const fe_graph *g, int32_t t, int orank, const int64_t *oshape, int64_t *st)
{
    fe_k_tensor v = fe_k_graph_view(g, t, NULL);
    return fe_k_bcast_strides(&v, orank, oshape, st);
}

/* A GEMM operand over the batches: batch b's matrix at element offset
 * base + (st ? its broadcast offset : (b - origin) * mat). */
typedef struct gop {
    int32_t t;                 /* tensor, or FE_CUDA_SCRATCH */
    const int64_t *st;         /* batch strides of a broadcast operand, or NULL */
    int64_t base, origin, mat, es;   /* es: bytes of an element */
} gop;

static int64_t gop_off(const gop *o, int brank, const int64_t *bshape, int64_t b)
{
    return o->base + (o->st ? fe_k_offset(brank, bshape, o->st, b) : (b - o->origin) * o->mat);
}

/* The stride between batches [b0, b0 + nb) of o, or -1 when they are not
 * evenly apart (a broadcast of some batch axes only). */
static int64_t gop_step(const gop *o, int brank, const int64_t *bshape, int64_t b0, int64_t nb)
{
    int64_t o0 = gop_off(o, brank, bshape, b0);
    int64_t d = nb > 1 ? gop_off(o, brank, bshape, b0 + 1) - o0 : 0;
    for (int64_t i = 2; i < nb; i++)
        if (gop_off(o, brank, bshape, b0 + i) - o0 != i * d)
            return -1;
    return d < 0 ? -1 : d;
}

/* C = A B over batches [b0, b0 + nb): one strided-batched call when every
 * operand steps evenly, else a call per batch. */
static int gemms(fe_cuda_lowering *lw, fe_cuda_gemm gm, const gop *a, const gop *b,
                 const gop *c, int brank, const int64_t *bshape, int64_t b0, int64_t nb,
                 fe_error *err)
{
    int64_t sa = gop_step(a, brank, bshape, b0, nb), sb = gop_step(b, brank, bshape, b0, nb);
    int64_t sc = gop_step(c, brank, bshape, b0, nb);
    int each = sa < 0 || sb < 0 || sc < 0, rc = FE_OK;
    gm.batch = each ? 1 : nb;
    gm.sa = each ? 0 : sa, gm.sb = each ? 0 : sb, gm.sc = each ? 0 : sc;
    for (int64_t i = b0; i < b0 + (each ? nb : 1) && rc == FE_OK; i++)
        rc = fe_cuda_lower_gemm(lw, &gm, fe_cuda_tbuf(a->t, gop_off(a, brank, bshape, i) * a->es),
                                fe_cuda_tbuf(b->t, gop_off(b, brank, bshape, i) * b->es),
                                fe_cuda_tbuf(c->t, gop_off(c, brank, bshape, i) * c->es), err);
    return rc;
}

/* v of batches [b0, b0 + nb) as contiguous f32 [nb, S, Ev] (x points at
 * v, its batch offsets over bshape by st): the second GEMM multiplies
 * f32 probabilities by v in f32, as the CPU does. */
static char *v_f32_src(const fe_graph *g, const fe_node *n, int brank, const int64_t *bshape,
                       const int64_t *st, int64_t b0, int64_t nb, int64_t mat, int sms,
                       fe_cuda_shape *sh, fe_error *why)
{
    const fe_tensor *v = fe_graph_tensor(g, fe_node_input(g, n, 2));
    char *s = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&s, &len);
    if (!f)
        return fe_error_set(why, FE_ENOMEM, "cuda: out of memory"), NULL;
    fprintf(f, "// fuseeng: sdpa '%s': v of batches %lld..%lld as f32\n", fe_node_name(g, n),
            (long long)b0, (long long)(b0 + nb - 1));
    fputs(fe_cuda_prelude, f);
    fe_cuda_index_type(f, (v->numel > nb * mat ? v->numel : nb * mat) + (b0 + nb) * mat);
    fprintf(f, "extern \"C\" __global__ void __launch_bounds__(256) fe_kernel(const %s *__restrict__ x, "
               "float *__restrict__ y, int *fault)\n{\n", fe_cuda_ctype(v->dtype));
    fe_cuda_loop(f, nb * mat);
    /* the batch's offset as fe_k_offset computes it, over the batch axes */
    fprintf(f, "    const IX b = (IX)%lld + e / %lld, r = e %% %lld;\n    const IX o = 0", (long long)b0,
            (long long)mat, (long long)mat);
    int64_t inner = 1;
    for (int a = brank - 1; a >= 0; a--) {
        if (st[a] && bshape[a] != 1)
            fprintf(f, " + (b / %lld %% %lld) * %lld", (long long)inner, (long long)bshape[a],
                    (long long)st[a]);
        inner *= bshape[a];
    }
    fprintf(f, ";\n    y[e] = ");
    fe_cuda_load_expr(f, v->dtype, "x", "o + r");
    fprintf(f, ";\n  }\n  (void)fault;\n}\n");
    fe_cuda_grid(nb * mat, sms, sh);
    if (fclose(f)) {
        free(s);
        return fe_error_set(why, FE_ENOMEM, "cuda: out of memory"), NULL;
    }
    return s;
}

/* The f32 P v of batches b0 .. b0 + nb - 1 (mat elements each, in
 * scratch) written to y, an f16 or bf16 output: cuBLAS has no f32 x f32
 * product into a 16-bit C (CUBLAS_STATUS_NOT_SUPPORTED on the H200). */
static char *y_narrow_src(const fe_graph *g, const fe_node *n, int64_t b0, int64_t nb, int64_t mat,
                          int sms, fe_cuda_shape *sh, fe_error *why)
{
    const fe_tensor *y = fe_graph_tensor(g, fe_node_output(g, n, 0));
    char *s = NULL, off[64];
    size_t len = 0;
    FILE *f = open_memstream(&s, &len);
    if (!f)
        return fe_error_set(why, FE_ENOMEM, "cuda: out of memory"), NULL;
    fprintf(f, "// fuseeng: sdpa '%s': P v of batches %lld..%lld to %s\n", fe_node_name(g, n),
            (long long)b0, (long long)(b0 + nb - 1), fe_dtype_name(y->dtype));
    fputs(fe_cuda_prelude, f);
    fe_cuda_index_type(f, y->numel + nb * mat);
    fprintf(f, "extern \"C\" __global__ void __launch_bounds__(256) fe_kernel(const float *__restrict__ x, "
               "%s *__restrict__ y, int *fault)\n{\n", fe_cuda_ctype(y->dtype));
    fe_cuda_loop(f, nb * mat);
    snprintf(off, sizeof off, "(IX)%lld + e", (long long)(b0 * mat));
    fprintf(f, "    ");
    fe_cuda_store_stmt(f, y->dtype, "y", off, "x[e]");
    fprintf(f, "\n  }\n  (void)fault;\n}\n");
    fe_cuda_grid(nb * mat, sms, sh);
    if (fclose(f)) {
        free(s);
        return fe_error_set(why, FE_ENOMEM, "cuda: out of memory"), NULL;
    }
    return s;
}

int fe_cuda_sdpa_lower(const fe_graph *g, const fe_node *n, int sms, fe_cuda_lowering *lw,
                       fe_error *why)
{
    int32_t tq = fe_node_input(g, n, 0), tk = fe_node_input(g, n, 1), tv = fe_node_input(g, n, 2);
    int32_t tm = n->nin > 3 ? fe_node_input(g, n, 3) : -1, ty = fe_node_output(g, n, 0);
    const fe_tensor *q = fe_graph_tensor(g, tq), *k = fe_graph_tensor(g, tk);
    const fe_tensor *v = fe_graph_tensor(g, tv), *y = fe_graph_tensor(g, ty);
    const fe_tensor *m = tm >= 0 ? fe_graph_tensor(g, tm) : NULL;
    if (q->rank < 2 || k->rank < 2 || v->rank < 2)
        return fe_error_set(why, FE_EINPUT, "sdpa: q, k, v need rank >= 2");
    if (!float_dt(q->dtype) || k->dtype != q->dtype || !float_dt(v->dtype) || !float_dt(y->dtype))
        return fe_error_set(why, FE_EINPUT, "sdpa of q %s, k %s, v %s into %s has no cuBLAS call",
                            fe_dtype_name(q->dtype), fe_dtype_name(k->dtype), fe_dtype_name(v->dtype),
                            fe_dtype_name(y->dtype));
    const int64_t *qs = fe_tensor_shape(g, q), *ks = fe_tensor_shape(g, k), *vs = fe_tensor_shape(g, v);
    int brank = q->rank - 2;
    int64_t L = qs[brank], E = qs[brank + 1], S = ks[k->rank - 2], Ev = vs[v->rank - 1];
    int64_t bshape[FE_MAX_RANK + 2], kst[FE_MAX_RANK + 2], vst[FE_MAX_RANK + 2], nb = 1;
    if (ks[k->rank - 1] != E || vs[v->rank - 2] != S)
        return fe_error_set(why, FE_EINPUT, "sdpa: shapes the CPU kernel refuses too");
    for (int i = 0; i < brank; i++)
        nb *= (bshape[i] = qs[i]);
    if (y->numel != nb * L * Ev)
        return fe_error_set(why, FE_EINPUT, "sdpa: an output of another shape than [.., L, Ev]");
    if (nb * L * Ev == 0)
        return FE_OK;   /* nothing to write */
    if (S == 0 || E == 0)
        return fe_error_set(why, FE_EINPUT, "sdpa with no keys or an empty head: no cuBLAS call");
    bshape[brank] = S, bshape[brank + 1] = E;
    if (bstrides(g, tk, brank + 2, bshape, kst))
        return fe_error_set(why, FE_EINPUT, "sdpa: k's batch axes do not broadcast to q's");
    bshape[brank + 1] = Ev;
    if (bstrides(g, tv, brank + 2, bshape, vst))
        return fe_error_set(why, FE_EINPUT, "sdpa: v's batch axes do not broadcast to q's");
    fe_cuda_scores sc;
    memset(&sc, 0, sizeof sc);
    sc.L = L, sc.S = S;
    sc.causal = fe_node_attr_bool(g, n, "causal", 0);
    double scale = fe_node_attr_float(g, n, "scale", 0.0);
    sc.scale = scale > 0 ? (float)scale : (float)(1.0 / sqrt((double)E));   /* the CPU's rule */
    sc.mask_dt = m ? m->dtype : -1;
    if (m) {
        int64_t mshape[FE_MAX_RANK + 2], mst[FE_MAX_RANK + 2];
        memcpy(mshape, bshape, sizeof mshape);
        mshape[brank] = L, mshape[brank + 1] = S;
        if (bstrides(g, tm, brank + 2, mshape, mst))
            return fe_error_set(why, FE_EINPUT, "sdpa: the mask does not broadcast to [.., L, S]");
        sc.mrank = brank + 1;
        memcpy(sc.mshape, mshape, (size_t)(brank + 1) * sizeof *mshape);
        memcpy(sc.mst, mst, (size_t)(brank + 1) * sizeof *mst);
        sc.mcs = mst[brank + 1];
    }
    /* per batch: scores (then P) in f32, and v as f32 unless it is */
    int cv = v->dtype != FE_F32;
    int64_t per = (L * S + (cv ? S * Ev : 0) + (y->dtype != FE_F32 ? L * Ev : 0)) * 4;
    int64_t cap = fe_cuda_scratch_cap(SCORES_CAP);
    int64_t nbc = per > 0 && cap / per > 1 ? cap / per : 1;
    nbc = nbc < nb ? nbc : nb;
    int64_t so = fe_cuda_lower_scratch(lw, nbc * L * S * 4);
    int64_t vo = cv ? fe_cuda_lower_scratch(lw, nbc * S * Ev * 4) : 0;
    int ny = y->dtype != FE_F32;   /* P v to f32 scratch, then narrowed */
    int64_t yo = ny ? fe_cuda_lower_scratch(lw, nbc * L * Ev * 4) : 0;
    /* scratch bases in elements: the offsets are multiples of 256 bytes */
    gop oq = {tq, NULL, 0, 0, L * E, fe_dtype_size(q->dtype)}, ok = {tk, kst, 0, 0, S * E, fe_dtype_size(k->dtype)};
    gop ov = {tv, vst, 0, 0, S * Ev, 4}, oy = {ty, NULL, 0, 0, L * Ev, fe_dtype_size(y->dtype)};
    gop os = {FE_CUDA_SCRATCH, NULL, so / 4, 0, L * S, 4};
    if (cv)
        ov = (gop){FE_CUDA_SCRATCH, NULL, vo / 4, 0, S * Ev, 4};
    gop oys = {FE_CUDA_SCRATCH, NULL, yo / 4, 0, L * Ev, 4};
    int rc = FE_OK;
    for (int64_t b0 = 0; b0 < nb && rc == FE_OK; b0 += nbc) {
        int64_t c = nb - b0 < nbc ? nb - b0 : nbc;
        fe_cuda_gemm gm;
        fe_cuda_shape sh;
        char *src;
        memset(&gm, 0, sizeof gm);
        os.origin = b0;
        gm.dtype_ab = q->dtype, gm.dtype_c = FE_F32;
        gm.m = L, gm.n = S, gm.k = E, gm.tb = 1;   /* k is [S, E]: B = k^T */
        if ((rc = gemms(lw, gm, &oq, &ok, &os, brank, bshape, b0, c, why)))
            break;
        sc.rows = c * L;
        sc.b0 = b0;
        if (!(src = fe_cuda_scores_src(&sc, fe_node_name(g, n), sms, &sh, why)))
            return why->code;
        fe_cuda_buf a[2] = {fe_cuda_sbuf(so), fe_cuda_tbuf(tm, 0)};
        if ((rc = fe_cuda_lower_kernel(lw, src, &sh, a, m ? 2 : 1, 1, why)))
            break;
        if (cv) {
            ov.origin = b0;
            if (!(src = v_f32_src(g, n, brank, bshape, vst, b0, c, S * Ev, sms, &sh, why)))
                return why->code;
            fe_cuda_buf b[2] = {fe_cuda_tbuf(tv, 0), fe_cuda_sbuf(vo)};
            if ((rc = fe_cuda_lower_kernel(lw, src, &sh, b, 2, 1, why)))
                break;
        }
        gm.dtype_ab = FE_F32, gm.dtype_c = ny ? FE_F32 : y->dtype;
        gm.m = L, gm.n = Ev, gm.k = S, gm.tb = 0;
        oys.origin = b0;
        if ((rc = gemms(lw, gm, &os, &ov, ny ? &oys : &oy, brank, bshape, b0, c, why)) || !ny)
            continue;
        if (!(src = y_narrow_src(g, n, b0, c, L * Ev, sms, &sh, why)))
            return why->code;
        fe_cuda_buf d[2] = {fe_cuda_sbuf(yo), fe_cuda_tbuf(ty, 0)};
        rc = fe_cuda_lower_kernel(lw, src, &sh, d, 2, 1, why);
    }
    return rc;
}
