/* matmul.c: torch.matmul over the GEMM engine or OpenBLAS (see matmul.h).
 *
 * The operands are viewed as batch x [M, K] and batch x [K, N] (1-D
 * operands become [1, K] and [K, 1]); batches broadcast. When b has no batch
 * and a is not transposed, a's batch folds into M, giving one large GEMM:
 * the common case of a linear layer.
 */
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "blas.h"
#include "convert.h"
#include "iter.h"
#include "matmul.h"

typedef struct mmdims {
    int64_t M, N, K;
    int brank;                       /* output batch rank */
    int64_t bshape[FE_MAX_RANK];
    int64_t ast[FE_MAX_RANK], bst[FE_MAX_RANK];   /* batch strides, elements */
    int64_t nbatch;
    int64_t a_rs, a_cs, b_rs, b_cs;
    int fold;                        /* a's batch folded into M */
} mmdims;

/* A row-major [r, c] matrix read as itself, or as its transpose when t:
 * the rows and columns read, and the strides along them in elements. */
static void mat_view(int64_t r, int64_t c, int t, int64_t *rows, int64_t *cols, int64_t *rs,
                     int64_t *cs)
{
    *rows = t ? c : r;
    *cols = t ? r : c;
    *rs = t ? 1 : c;
    *cs = t ? c : 1;
}

static int dims(const fe_k_tensor *a, const fe_k_tensor *b, int ta, int tb, mmdims *d,
                fe_error *err)
{
    int64_t Ka, Kb;
    int ar = a->rank, br = b->rank;
    if (ar < 1 || br < 1)
        return fe_error_set(err, FE_EINPUT, "matmul: operands must have rank >= 1");
    if (ar == 1) {   /* a row vector whose one row has no stride */
        d->M = 1;
        Ka = a->shape[0];
        d->a_rs = 0;
        d->a_cs = 1;
    } else {
        mat_view(a->shape[ar - 2], a->shape[ar - 1], ta, &d->M, &Ka, &d->a_rs, &d->a_cs);
    }
    if (br == 1)     /* a column vector [K, 1] */
        mat_view(b->shape[0], 1, 0, &Kb, &d->N, &d->b_rs, &d->b_cs);
    else
        mat_view(b->shape[br - 2], b->shape[br - 1], tb, &Kb, &d->N, &d->b_rs, &d->b_cs);
    if (Ka != Kb)
        return fe_error_set(err, FE_EINPUT, "matmul: inner dimensions differ (%lld vs %lld)",
                            (long long)Ka, (long long)Kb);
    d->K = Ka;
    /* batch axes: a[:-2], b[:-2], broadcast */
    int an = ar > 2 ? ar - 2 : 0, bn = br > 2 ? br - 2 : 0;
    d->brank = an > bn ? an : bn;
    int64_t ash[FE_MAX_RANK], bsh[FE_MAX_RANK], as[FE_MAX_RANK], bs[FE_MAX_RANK];
    int64_t amat = d->M * d->K, bmat = d->K * d->N;
    /* strides of the batch axes in elements */
    {
        int64_t s = amat;
        for (int i = an - 1; i >= 0; i--) {
            as[i] = s;
            s *= a->shape[i];
        }
        s = bmat;
        for (int i = bn - 1; i >= 0; i--) {
            bs[i] = s;
            s *= b->shape[i];
        }
    }
    d->nbatch = 1;
    for (int i = 0; i < d->brank; i++) {
        int ja = i - (d->brank - an), jb = i - (d->brank - bn);
        ash[i] = ja >= 0 ? a->shape[ja] : 1;
        bsh[i] = jb >= 0 ? b->shape[jb] : 1;
        if (ash[i] != bsh[i] && ash[i] != 1 && bsh[i] != 1)
            return fe_error_set(err, FE_EINPUT, "matmul: batch axes do not broadcast (%lld vs %lld)",
                                (long long)ash[i], (long long)bsh[i]);
        d->bshape[i] = ash[i] > bsh[i] ? ash[i] : bsh[i];
        d->ast[i] = ash[i] == 1 ? 0 : as[ja];
        d->bst[i] = bsh[i] == 1 ? 0 : bs[jb];
        d->nbatch *= d->bshape[i];
    }
    int bflat = 1;
    for (int i = 0; i < d->brank; i++)
        if (d->bst[i] != 0)
            bflat = 0;
    int afull = 1;   /* a covers every batch index (no broadcast of a) */
    for (int i = 0; i < d->brank; i++)
        if (d->ast[i] == 0 && d->bshape[i] != 1)
            afull = 0;
    d->fold = bflat && afull && !(ta && ar > 1);
    return FE_OK;
}

int fe_k_matmul_shape(const fe_k_tensor *a, const fe_k_tensor *b, int ta, int tb,
                      int *rank, int64_t *shape, fe_error *err)
{
    mmdims d;
    if (dims(a, b, ta, tb, &d, err))
        return -1;
    int r = 0;
    for (int i = 0; i < d.brank; i++)
        shape[r++] = d.bshape[i];
    if (a->rank > 1)
        shape[r++] = d.M;
    if (b->rank > 1)
        shape[r++] = d.N;
    *rank = r;
    return 0;
}

/* ---- adapters between GEMM coordinates and output / A-row coordinates ---- */

typedef struct wrap {
    const fe_k_mm *mm;
    int64_t arow0;      /* A row (flattened over a's leading axes) of GEMM row 0 */
    int64_t brow0;      /* B row of GEMM row 0 of B */
    int64_t orow0;      /* output row of GEMM row 0 */
    int64_t N;
} wrap;

static const float *wrap_arow(void *ctx, int64_t r, int64_t c0, int64_t n, float *tmp)
{
    const wrap *w = ctx;
    return w->mm->arow(w->mm->actx, w->arow0 + r, c0, n, tmp);
}

static const float *wrap_brow(void *ctx, int64_t r, int64_t c0, int64_t n, float *tmp)
{
    const wrap *w = ctx;
    return w->mm->brow(w->mm->bctx, w->brow0 + r, c0, n, tmp);
}

static int wrap_epi(void *ctx, int64_t i0, int64_t mc, int64_t j0, int64_t nc, float *blk,
                    int64_t ld, int tid)
{
    const wrap *w = ctx;
    return w->mm->epi(w->mm->ectx, w->orow0 + i0, mc, j0, nc, blk, ld, tid);
}

/* No user epilogue but a non-f32 output: convert each block on store. */
static int store_epi(void *ctx, int64_t i0, int64_t mc, int64_t j0, int64_t nc, float *blk,
                     int64_t ld, int tid)
{
    const wrap *w = ctx;
    (void)tid;
    for (int64_t i = 0; i < mc; i++)
        fe_k_store_f32(w->mm->y->data, w->mm->y->dtype, (w->orow0 + i0 + i) * w->N + j0,
                       blk + i * ld, nc);
    return 0;
}

/* Contiguous float32 copy of a whole operand for BLAS (NULL: use as is). */
static float *as_f32(const fe_k_tensor *t, fe_error *err, int *fail)
{
    if (t->dtype == FE_F32)
        return NULL;
    int64_t n = fe_k_numel(t);
    float *p = fe_malloc((size_t)(n ? n : 1) * sizeof(float), err);
    if (!p) {
        *fail = 1;
        return NULL;
    }
    fe_k_load_f32(t->data, t->dtype, 0, p, n);
    return p;
}

static int run_blas(const fe_k_mm *mm, const mmdims *d, int64_t r0, int64_t r1, fe_error *err)
{
    fe_k_sgemm_fn sgemm = fe_k_blas_sgemm(err);   /* opens OpenBLAS the first time */
    if (!sgemm)
        return FE_ERUNTIME;
    int fail = 0, rc = FE_OK;
    float *af = as_f32(mm->a, err, &fail), *bf = as_f32(mm->b, err, &fail);
    float *cbuf = NULL;
    const float *A = af ? af : mm->a->data, *B = bf ? bf : mm->b->data;
    int direct = !mm->epi && mm->y->dtype == FE_F32;
    if (fail)
        goto out;
    if (!direct) {
        cbuf = fe_malloc((size_t)((r1 - r0) * d->N) * sizeof(float) + 4, err);
        if (!cbuf) {
            rc = FE_ENOMEM;
            goto out;
        }
    }
    {
        int64_t M = d->fold ? d->M * d->nbatch : d->M;
        int64_t nb = d->fold ? 1 : d->nbatch;
        CBLAS_TRANSPOSE ta = d->a_rs == 1 && d->a_cs != 1 ? CblasTrans : CblasNoTrans;
        CBLAS_TRANSPOSE tb = d->b_rs == 1 && d->b_cs != 1 ? CblasTrans : CblasNoTrans;
        int lda = (int)(ta == CblasTrans ? d->a_cs : d->a_rs);
        int ldb = (int)(tb == CblasTrans ? d->b_cs : d->b_rs);
        if (mm->a->rank == 1)
            lda = (int)d->K;
        if (mm->b->rank == 1)
            ldb = 1;
        /* A stored matrix of one column has both strides 1, so it reads as
         * untransposed with a row stride of 1; its one row (M or K is 1)
         * never uses the stride, but BLAS still wants at least a row's
         * length (without this sgemm refused and left the output unset) */
        if (lda < (ta == CblasTrans ? d->M : d->K))
            lda = (int)(ta == CblasTrans ? d->M : d->K);
        if (ldb < (tb == CblasTrans ? d->K : d->N))
            ldb = (int)(tb == CblasTrans ? d->K : d->N);
        for (int64_t bi = 0; bi < nb; bi++) {
            int64_t lo = bi * M > r0 ? bi * M : r0, hi = (bi + 1) * M < r1 ? (bi + 1) * M : r1;
            if (lo >= hi)
                continue;
            int64_t aoff = fe_k_offset(d->brank, d->bshape, d->ast, bi);
            int64_t boff = fe_k_offset(d->brank, d->bshape, d->bst, bi);
            if (d->fold)
                aoff = 0, boff = 0;
            int64_t i = lo - bi * M;      /* first row inside this batch */
            const float *Ab = A + aoff + (ta == CblasTrans ? i : i * lda);
            float *C = direct ? (float *)mm->y->data + lo * d->N : cbuf + (lo - r0) * d->N;
            sgemm(CblasRowMajor, ta, tb, (int)(hi - lo), (int)d->N, (int)d->K, 1.0f,
                        Ab, lda ? lda : 1, B + boff, ldb ? ldb : 1, 0.0f, C, (int)d->N);
        }
    }
    if (!direct) {
        /* the separate pass: epilogue (or conversion) over the finished rows */
        wrap w = {mm, 0, 0, r0, d->N};
        int64_t rows = r1 - r0;
        int efail = 0;
        #pragma omp parallel for schedule(static) if (rows * d->N >= 32768)
        for (int64_t i = 0; i < rows; i += 64) {
            int tid = 0;
#ifdef _OPENMP
            tid = omp_get_thread_num();
#endif
            int64_t m = rows - i < 64 ? rows - i : 64;
            int e = mm->epi ? mm->epi(mm->ectx, r0 + i, m, 0, d->N, cbuf + i * d->N, d->N, tid)
                            : store_epi(&w, i, m, 0, d->N, cbuf + i * d->N, d->N, tid);
            if (e) {
                #pragma omp atomic write
                efail = 1;
            }
        }
        if (efail)
            rc = fe_error_set(err, FE_ERUNTIME, "matmul: epilogue failed");
    }
out:
    free(af);
    free(bf);
    free(cbuf);
    return fail ? FE_ENOMEM : rc;
}

int fe_k_matmul(const fe_k_mm *mm, fe_error *err)
{
    mmdims d;
    int rc = dims(mm->a, mm->b, mm->ta, mm->tb, &d, err);
    if (rc)
        return rc;
    int64_t rows = d.nbatch * d.M;
    int64_t r0 = mm->r0, r1 = mm->r1 ? mm->r1 : rows;
    if (r0 < 0 || r1 > rows || r0 > r1)
        return fe_error_set(err, FE_EINPUT, "matmul: row range [%lld, %lld) outside %lld rows",
                            (long long)r0, (long long)r1, (long long)rows);
    if (r0 == r1 || d.N == 0)
        return FE_OK;
    if (mm->arow && mm->ta && mm->a->rank > 1)
        return fe_error_set(err, FE_EINPUT, "matmul: an A prologue needs transpose_a = false");
    if ((mm->brow && mm->tb && mm->b->rank > 1))
        return fe_error_set(err, FE_EINPUT, "matmul: a B prologue needs transpose_b = false");
    if (mm->impl == FE_K_MM_BLAS) {
        if (mm->arow || mm->brow)
            return fe_error_set(err, FE_EINPUT, "matmul: the BLAS kernel takes no prologue");
        return run_blas(mm, &d, r0, r1, err);
    }

    int es_a = fe_dtype_size(mm->a->dtype), es_b = fe_dtype_size(mm->b->dtype);
    int64_t M = d.fold ? rows : d.M;
    int64_t nb = d.fold ? 1 : d.nbatch;
    for (int64_t bi = 0; bi < nb; bi++) {
        int64_t lo = bi * M > r0 ? bi * M : r0, hi = (bi + 1) * M < r1 ? (bi + 1) * M : r1;
        if (lo >= hi)
            continue;
        int64_t aoff = d.fold ? 0 : fe_k_offset(d.brank, d.bshape, d.ast, bi);
        int64_t boff = d.fold ? 0 : fe_k_offset(d.brank, d.bshape, d.bst, bi);
        int64_t i = lo - bi * M;
        int64_t amat = d.M * d.K > 0 ? d.M * d.K : 1;
        int64_t bmat = d.K * d.N > 0 ? d.K * d.N : 1;
        wrap w = {mm, aoff / amat * d.M + i, boff / bmat * d.K, lo, d.N};
        fe_k_gemm g;
        memset(&g, 0, sizeof g);
        g.M = hi - lo;
        g.N = d.N;
        g.K = d.K;
        if (mm->arow) {
            g.arow = wrap_arow;
            g.actx = &w;
        } else {
            g.a = (const char *)mm->a->data + (aoff + i * d.a_rs) * es_a;
            g.adt = mm->a->dtype;
            g.a_rs = d.a_rs;
            g.a_cs = d.a_cs;
        }
        if (mm->brow) {
            g.brow = wrap_brow;
            g.bctx = &w;
        } else {
            g.b = (const char *)mm->b->data + boff * es_b;
            g.bdt = mm->b->dtype;
            g.b_rs = d.b_rs;
            g.b_cs = d.b_cs;
        }
        if (mm->epi) {
            g.epi = wrap_epi;
            g.ectx = &w;
            g.full_rows = mm->epi_full_rows;
        } else if (mm->y->dtype == FE_F32) {
            g.c = (float *)mm->y->data + lo * d.N;
            g.ldc = d.N;
        } else {
            g.epi = store_epi;
            g.ectx = &w;
        }
        rc = fe_k_gemm_run(&g, err);
        if (rc)
            return rc;
    }
    return FE_OK;
}
