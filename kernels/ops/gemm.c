/* gemm.c: packed, blocked float32 GEMM with prologue / epilogue hooks.
 *
 * Note on the blocking (after Goto and van de Geijn's layered GEMM):
 *
 *   A is packed once, in full, into MR-row panels (k-major inside a panel),
 *   running the A row supplier (prologue, dtype conversion, transposition)
 *   exactly once per element. B is packed per NC-column block into NR-column
 *   panels covering all of K. An output block (MC x NC) is then computed with
 *   the whole K loop inside it:
 *
 *     for each (ic, jc) block          -- tasks, spread over threads
 *       for pc in K step KC            -- A sub-block MC x KC stays in L2
 *         for jr in NC step NR         -- B micro-panel KC x NR stays in L1
 *           for ir in MC step MR       -- 6x16 micro-kernel, 12 ymm accumulators
 *       epilogue(block)                -- the block is final and still in L2
 *
 *   so each block is finished before the next starts, and the epilogue (bias,
 *   activation, residual, cast, a whole fused program) runs on it in cache.
 *   When every block is one column block wide (N <= NC, or an epilogue that
 *   needs whole rows), B is packed once and shared by all threads; otherwise
 *   each thread packs the column blocks it works on.
 */
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "convert.h"
#include "gemm.h"
#include "graph.h"
#include "scratch.h"
#include "vmath.h"

#define MR 6
#define NR 16
#define MC 96
#define KC 256
#define NC 512

void fe_k_gemm_blocking(int *mr, int *nr, int *mc, int *kc, int *nc)
{
    *mr = MR;
    *nr = NR;
    *mc = MC;
    *kc = KC;
    *nc = NC;
}

static void *amalloc(size_t n)
{
    return fe_k_scratch_get(n ? n : 64);
}

/* ---- micro-kernel: C[6x16] (+)= A panel (kc x 6) * B panel (kc x 16) ---- */

static void ukernel(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                    int acc, int mr, int nr)
{
#ifdef FE_K_AVX2
    __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
    __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
    for (int64_t k = 0; k < kc; k++) {
        __m256 b0 = _mm256_load_ps(b), b1 = _mm256_load_ps(b + 8), av;
        av = _mm256_broadcast_ss(a + 0); c00 = _mm256_fmadd_ps(av, b0, c00); c01 = _mm256_fmadd_ps(av, b1, c01);
        av = _mm256_broadcast_ss(a + 1); c10 = _mm256_fmadd_ps(av, b0, c10); c11 = _mm256_fmadd_ps(av, b1, c11);
        av = _mm256_broadcast_ss(a + 2); c20 = _mm256_fmadd_ps(av, b0, c20); c21 = _mm256_fmadd_ps(av, b1, c21);
        av = _mm256_broadcast_ss(a + 3); c30 = _mm256_fmadd_ps(av, b0, c30); c31 = _mm256_fmadd_ps(av, b1, c31);
        av = _mm256_broadcast_ss(a + 4); c40 = _mm256_fmadd_ps(av, b0, c40); c41 = _mm256_fmadd_ps(av, b1, c41);
        av = _mm256_broadcast_ss(a + 5); c50 = _mm256_fmadd_ps(av, b0, c50); c51 = _mm256_fmadd_ps(av, b1, c51);
        a += MR;
        b += NR;
    }
    __m256 r[MR][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}};
    if (mr == MR && nr == NR) {
        for (int i = 0; i < MR; i++) {
            float *ci = c + i * ldc;
            if (acc) {
                r[i][0] = _mm256_add_ps(r[i][0], _mm256_loadu_ps(ci));
                r[i][1] = _mm256_add_ps(r[i][1], _mm256_loadu_ps(ci + 8));
            }
            _mm256_storeu_ps(ci, r[i][0]);
            _mm256_storeu_ps(ci + 8, r[i][1]);
        }
        return;
    }
    float t[MR][NR];
    for (int i = 0; i < MR; i++) {
        _mm256_storeu_ps(t[i], r[i][0]);
        _mm256_storeu_ps(t[i] + 8, r[i][1]);
    }
#else
    float t[MR][NR] = {{0}};
    for (int64_t k = 0; k < kc; k++, a += MR, b += NR)
        for (int i = 0; i < MR; i++)
            for (int j = 0; j < NR; j++)
                t[i][j] += a[i] * b[j];
#endif
    for (int i = 0; i < mr; i++)
        for (int j = 0; j < nr; j++)
            c[i * ldc + j] = acc ? c[i * ldc + j] + t[i][j] : t[i][j];
}

/* ---- operand rows ---- */

/* Row r, columns [c0, c0+n) of a strided operand as float32. */
static const float *strided_row(const void *base, int dt, int64_t rs, int64_t cs,
                                int64_t r, int64_t c0, int64_t n, float *tmp)
{
    int64_t off = r * rs + c0 * cs;
    if (cs == 1) {
        if (dt == FE_F32)
            return (const float *)base + off;
        fe_k_load_f32(base, dt, off, tmp, n);
        return tmp;
    }
    for (int64_t j = 0; j < n; j++)
        fe_k_load_f32(base, dt, off + j * cs, tmp + j, 1);
    return tmp;
}

/* ---- packing ---- */

/* Pack A panels [p0, p1) (MR rows each, all of K): dst panel p at p*MR*K. */
static void pack_a(const fe_k_gemm *g, float *ap, int64_t p, float *tmp)
{
    int64_t K = g->K, i0 = p * MR;
    int mr = g->M - i0 < MR ? (int)(g->M - i0) : MR;
    float *dst = ap + p * MR * K;
    if (!g->arow && g->a_rs == 1 && g->a_cs != 1 && g->adt == FE_F32) {
        /* column-major A (transpose_a): read MR contiguous values per k */
        const float *a = g->a;
        for (int64_t k = 0; k < K; k++)
            for (int i = 0; i < MR; i++)
                dst[k * MR + i] = i < mr ? a[(i0 + i) + k * g->a_cs] : 0.0f;
        return;
    }
    for (int i = 0; i < MR; i++) {
        if (i >= mr) {
            for (int64_t k = 0; k < K; k++)
                dst[k * MR + i] = 0.0f;
            continue;
        }
        for (int64_t k0 = 0; k0 < K; k0 += KC) {
            int64_t kc = K - k0 < KC ? K - k0 : KC;
            const float *row = g->arow ? g->arow(g->actx, i0 + i, k0, kc, tmp)
                                       : strided_row(g->a, g->adt, g->a_rs, g->a_cs, i0 + i, k0, kc, tmp);
            for (int64_t k = 0; k < kc; k++)
                dst[(k0 + k) * MR + i] = row[k];
        }
    }
}

/* Row k of B, columns [j0, j0+nc), into its place in the np NR-column
 * panels at bp (K deep), the last panel padded with zeros. */
static inline void pack_b_row(const fe_k_gemm *g, float *bp, int64_t k, int64_t j0,
                              int64_t nc, int64_t np, float *tmp)
{
    int64_t K = g->K;
    const float *row = g->brow ? g->brow(g->bctx, k, j0, nc, tmp)
                               : strided_row(g->b, g->bdt, g->b_rs, g->b_cs, k, j0, nc, tmp);
    for (int64_t q = 0; q < np; q++) {
        float *dst = bp + q * NR * K + k * NR;
        int64_t jn = nc - q * NR < NR ? nc - q * NR : NR;
        memcpy(dst, row + q * NR, (size_t)jn * sizeof(float));
        for (int64_t j = jn; j < NR; j++)
            dst[j] = 0.0f;
    }
}

/* B given transposed (B^T row-major, any dtype): each column is contiguous
 * in k, so NR columns are read a KC slice at a time (converted once, in
 * runs) and interleaved into panels [q0, q1) of the column block at j0.
 * Reading one element per call instead made f16 weights pack at a fraction
 * of the GEMM's speed. */
static int b_transposed(const fe_k_gemm *g)
{
    return !g->brow && g->b_cs != 1 && g->b_rs == 1;
}

static void pack_b_cols(const fe_k_gemm *g, float *bp, int64_t j0, int64_t nc, int64_t q0,
                        int64_t q1)
{
    int64_t K = g->K;
    float buf[NR][KC];
    const float *col[NR];
    for (int64_t q = q0; q < q1; q++) {
        float *dst = bp + q * NR * K;
        int jn = nc - q * NR < NR ? (int)(nc - q * NR) : NR;
        for (int64_t k0 = 0; k0 < K; k0 += KC) {
            int64_t kc = K - k0 < KC ? K - k0 : KC;
            for (int j = 0; j < jn; j++)
                col[j] = strided_row(g->b, g->bdt, g->b_cs, 1, j0 + q * NR + j, k0, kc, buf[j]);
            for (int64_t k = 0; k < kc; k++) {
                float *d = dst + (k0 + k) * NR;
                for (int j = 0; j < jn; j++)
                    d[j] = col[j][k];
                for (int j = jn; j < NR; j++)
                    d[j] = 0.0f;
            }
        }
    }
}

/* Pack the B column block [j0, j0+nc) for all of K into NR-column panels. */
static void pack_b(const fe_k_gemm *g, float *bp, int64_t j0, int64_t nc, float *tmp)
{
    int64_t K = g->K, np = (nc + NR - 1) / NR;
    if (b_transposed(g)) {
        pack_b_cols(g, bp, j0, nc, 0, np);
        return;
    }
    for (int64_t k = 0; k < K; k++)
        pack_b_row(g, bp, k, j0, nc, np, tmp);
}

/* One output block: rows [i0, i0+mc), the packed column block bp covering
 * columns [j0, j0+nc). A block wider than NC (whole rows) is computed NC
 * columns at a time, each with the whole K loop inside, so that its
 * accumulators stay in L2 as a block of NC columns does. */
static void block(const fe_k_gemm *g, const float *ap, const float *bp, int64_t i0, int64_t mc,
                  int64_t nc, float *c, int64_t ldc)
{
    int64_t K = g->K;
    if (nc > NC) {
        for (int64_t j = 0; j < nc; j += NC)
            block(g, ap, bp + j * K, i0, mc, nc - j < NC ? nc - j : NC, c + j, ldc);
        return;
    }
    for (int64_t pc = 0; pc < K; pc += KC) {
        int64_t kc = K - pc < KC ? K - pc : KC;
        for (int64_t jr = 0; jr < nc; jr += NR) {
            const float *bq = bp + (jr / NR) * NR * K + pc * NR;
            int nr = nc - jr < NR ? (int)(nc - jr) : NR;
            for (int64_t ir = 0; ir < mc; ir += MR) {
                const float *apn = ap + ((i0 + ir) / MR) * MR * K + pc * MR;
                int mr = mc - ir < MR ? (int)(mc - ir) : MR;
                ukernel(kc, apn, bq, c + ir * ldc + jr, ldc, pc > 0, mr, nr);
            }
        }
    }
    if (K == 0)
        for (int64_t i = 0; i < mc; i++)
            memset(c + i * ldc, 0, (size_t)nc * sizeof(float));
}

int fe_k_gemm_run(const fe_k_gemm *g, fe_error *err)
{
    int64_t M = g->M, N = g->N, K = g->K;
    int64_t npa = (M + MR - 1) / MR;
    int64_t nc_blk = g->full_rows || N <= NC ? N : NC;
    int64_t nj = nc_blk ? (N + nc_blk - 1) / nc_blk : 0;
    int64_t nbp = (nc_blk + NR - 1) / NR * NR;      /* padded block width */
    /* scratch blocks' row stride: a multiple of 4 KiB would put the rows
     * of a micro-tile in one L1 set */
    int64_t ldcs = nbp % 1024 == 0 ? nbp + NR : nbp;
    int fail = 0, efail = 0;
    float *ap = NULL, *bshared = NULL;

    if (M == 0 || N == 0)
        return FE_OK;
    ap = amalloc((size_t)(npa * MR) * (size_t)(K ? K : 1) * sizeof(float));
    if (!ap)
        return fe_error_set(err, FE_ENOMEM, "matmul: out of memory packing A (%lld x %lld)",
                            (long long)M, (long long)K);
    #pragma omp parallel
    {
        float *tmp = amalloc((size_t)(KC > N ? KC : N) * sizeof(float) + 64);
        if (!tmp) {
            #pragma omp atomic write
            fail = 1;
        }
        #pragma omp for schedule(static)
        for (int64_t p = 0; p < npa; p++)
            if (tmp)
                pack_a(g, ap, p, tmp);
        fe_k_scratch_put(tmp);
    }
    if (fail)
        goto oom;

    /* a single column block is packed once and shared */
    if (nj == 1) {
        bshared = amalloc((size_t)nbp * (size_t)(K ? K : 1) * sizeof(float));
        if (!bshared)
            goto oom;
        int64_t np = nbp / NR;
        #pragma omp parallel
        {
            float *tmp = amalloc((size_t)N * sizeof(float) + 64);
            if (!tmp) {
                #pragma omp atomic write
                fail = 1;
            }
            /* transposed B: threads split the panels; else the K rows of
             * B, each packing all panels for its k range */
            if (b_transposed(g)) {
                #pragma omp for schedule(static)
                for (int64_t q = 0; q < np; q++)
                    pack_b_cols(g, bshared, 0, N, q, q + 1);
            } else {
                #pragma omp for schedule(static)
                for (int64_t kb = 0; kb < (K + KC - 1) / KC; kb++) {
                    if (!tmp)
                        continue;
                    int64_t k0 = kb * KC, kc = K - k0 < KC ? K - k0 : KC;
                    for (int64_t k = k0; k < k0 + kc; k++)
                        pack_b_row(g, bshared, k, 0, N, np, tmp);
                }
            }
            fe_k_scratch_put(tmp);
        }
        if (fail)
            goto oom;
    }

    {
        int nth = 1;
#ifdef _OPENMP
        nth = omp_get_max_threads();
#endif
        /* Tasks: column blocks x row shares, enough for every thread; a
         * share is a run of MR-row panels, computed MC rows at a time.
         * Shared B (one column block) cuts the rows into a share per MC
         * rows or more, rounded up to a multiple of the threads so that
         * each thread gets as many rows: 512 rows as 6 blocks of 96 gave
         * one of two threads 288 rows and the other 224 (a 7B layer's
         * matmul with a whole-row epilogue ran 12% slower than alone). */
        int64_t nmc = (M + MC - 1) / MC;
        int64_t mi = nj >= nth ? 1 : (nth + nj - 1) / nj;
        if (nj == 1)
            mi = (nmc + nth - 1) / nth * nth;
        if (mi > npa)
            mi = npa;
        int64_t ntask = nj * mi;
        #pragma omp parallel
        {
            int tid = 0;
#ifdef _OPENMP
            tid = omp_get_thread_num();
#endif
            float *bp = bshared, *tmp = NULL, *cs = NULL;
            int64_t have_j = -1;
            if (!bshared)
                bp = amalloc((size_t)nbp * (size_t)(K ? K : 1) * sizeof(float));
            tmp = amalloc((size_t)(nc_blk > KC ? nc_blk : KC) * sizeof(float) + 64);
            if (!g->c)
                cs = amalloc((size_t)MC * (size_t)ldcs * sizeof(float));
            if (!bp || !tmp || (!g->c && !cs)) {
                #pragma omp atomic write
                fail = 1;
            }
            #pragma omp for schedule(dynamic, 1)
            for (int64_t t = 0; t < ntask; t++) {
                if (fail || efail)
                    continue;
                int64_t jb = t / mi, mb = t % mi;
                int64_t j0 = jb * nc_blk, nc = N - j0 < nc_blk ? N - j0 : nc_blk;
                /* this task's rows: a contiguous share of the panels */
                int64_t r1 = npa * (mb + 1) / mi * MR;
                if (r1 > M)
                    r1 = M;
                if (!bshared && have_j != jb) {
                    pack_b(g, bp, j0, nc, tmp);
                    have_j = jb;
                }
                for (int64_t i0 = npa * mb / mi * MR; i0 < r1; i0 += MC) {
                    int64_t mc = r1 - i0 < MC ? r1 - i0 : MC;
                    float *c = g->c ? g->c + i0 * g->ldc + j0 : cs;
                    int64_t ldc = g->c ? g->ldc : ldcs;
                    block(g, ap, bp, i0, mc, nc, c, ldc);
                    if (g->epi && g->epi(g->ectx, i0, mc, j0, nc, c, ldc, tid)) {
                        #pragma omp atomic write
                        efail = 1;
                    }
                }
            }
            if (!bshared)
                fe_k_scratch_put(bp);
            fe_k_scratch_put(tmp);
            fe_k_scratch_put(cs);
        }
    }
    fe_k_scratch_put(ap);
    fe_k_scratch_put(bshared);
    if (fail)
        return fe_error_set(err, FE_ENOMEM, "matmul: out of memory for packing buffers");
    if (efail)
        return fe_error_set(err, FE_ERUNTIME, "matmul: epilogue failed");
    return FE_OK;
oom:
    fe_k_scratch_put(ap);
    fe_k_scratch_put(bshared);
    return fe_error_set(err, FE_ENOMEM, "matmul: out of memory packing operands");
}
