/* matmul.h: torch.matmul on tensors (batch broadcasting, 1-D operands,
 * transpose flags) through two kernels: the blocked GEMM engine (gemm.h),
 * which takes a prologue on A and an epilogue on every output block, and
 * OpenBLAS sgemm, which takes neither (an epilogue then runs as a separate
 * pass over the finished output).
 */
#ifndef FE_MATMUL_H
#define FE_MATMUL_H

#include <stdint.h>

#include "error.h"
#include "gemm.h"
#include "ktensor.h"

enum { FE_K_MM_BLOCKED = 0, FE_K_MM_BLAS = 1 };

typedef struct fe_k_mm {
    const fe_k_tensor *a, *b;
    int ta, tb;              /* swap the last two axes of a / b (not for 1-D) */
    fe_k_tensor *y;          /* output; NULL data is allowed with an epilogue */
    int impl;                /* FE_K_MM_BLOCKED or FE_K_MM_BLAS */
    /* Output rows to compute: the output viewed as rows of N (rows =
     * numel / N, i.e. batch x M); [r0, r1) with r1 = 0 meaning all. */
    int64_t r0, r1;
    /* Optional prologue: supplies rows of A (the row index is over a's
     * leading axes flattened, i.e. a viewed as [rows, K]); only without ta.
     * a's data is then not read. */
    fe_k_rowfn arow;
    void *actx;
    /* Optional prologue on B likewise (b viewed as [rows, N]; only without
     * tb). Neither prologue is accepted by the BLAS kernel. */
    fe_k_rowfn brow;
    void *bctx;
    /* Optional epilogue over output blocks; i0 is the output row (over the
     * flattened output), j0 the column. With an epilogue the kernel never
     * stores the raw product itself. */
    fe_k_epifn epi;
    void *ectx;
    int epi_full_rows;       /* the epilogue needs whole rows */
} fe_k_mm;

/* Output shape of matmul(a, b) with the transpose flags; -1 if they do not
 * fit (then err says why). */
int fe_k_matmul_shape(const fe_k_tensor *a, const fe_k_tensor *b, int ta, int tb,
                      int *rank, int64_t *shape, fe_error *err);

/* Run it. Returns FE_OK, FE_EINPUT (shapes), FE_ENOMEM or FE_ERUNTIME. */
int fe_k_matmul(const fe_k_mm *mm, fe_error *err);

#endif
