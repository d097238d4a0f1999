/* gemm.h: the packed, blocked float32 GEMM engine behind matmul_blocked and
 * conv2d: C[M, N] = A[M, K] B[K, N], with operand rows supplied by callbacks
 * (so prologues and im2col happen while packing) and an epilogue callback
 * that sees every finished output block while it is in cache.
 */
#ifndef FE_GEMM_H
#define FE_GEMM_H

#include <stdint.h>

#include "error.h"

/* Row supplier: return a pointer to n float32 values of row r starting at
 * column c0 of the operand: either into the operand itself or into tmp
 * (room for n floats), which it may fill. Called from several threads. */
typedef const float *(*fe_k_rowfn)(void *ctx, int64_t r, int64_t c0, int64_t n, float *tmp);

/* Epilogue: the block of C rows [i0, i0+mc) x columns [j0, j0+nc) is final;
 * blk points at C(i0, j0) with row stride ld. The callback may modify it.
 * tid is the OpenMP thread number (for per-thread scratch). Returns 0, or
 * nonzero to report failure (the GEMM then returns FE_ERUNTIME). */
typedef int (*fe_k_epifn)(void *ctx, int64_t i0, int64_t mc, int64_t j0, int64_t nc,
                          float *blk, int64_t ld, int tid);

typedef struct fe_k_gemm {
    int64_t M, N, K;
    /* A: either arow (rows of A, K long) or a plain strided operand:
     * element (i, k) at a + i*a_rs + k*a_cs of dtype adt. */
    fe_k_rowfn arow;
    void *actx;
    const void *a;
    int adt;
    int64_t a_rs, a_cs;
    /* B: either brow (rows of B, N long) or strided like A. */
    fe_k_rowfn brow;
    void *bctx;
    const void *b;
    int bdt;
    int64_t b_rs, b_cs;
    /* Output: with no epilogue, C is written to c (row stride ldc). With an
     * epilogue, c may be NULL (blocks then live in per-thread scratch and
     * are never stored by the engine). */
    float *c;
    int64_t ldc;
    fe_k_epifn epi;
    void *ectx;
    int full_rows;   /* the epilogue needs whole rows: nc is always N */
} fe_k_gemm;

/* Run the GEMM with OpenMP threads. Returns FE_OK, FE_ENOMEM or FE_ERUNTIME
 * (an epilogue failed), with err set. */
int fe_k_gemm_run(const fe_k_gemm *g, fe_error *err);

/* Blocking parameters (for reports and tests). */
void fe_k_gemm_blocking(int *mr, int *nr, int *mc, int *kc, int *nc);

#endif
