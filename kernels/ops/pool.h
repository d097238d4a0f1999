/* pool.h: max_pool2d and avg_pool2d over NCHW input, with PyTorch's
 * padding, dilation (max only), ceil_mode and count_include_pad rules. The
 * output shape comes from the caller (the op registry inferred it).
 */
#ifndef FE_POOL_H
#define FE_POOL_H

#include <stdint.h>

#include "error.h"
#include "ktensor.h"

typedef struct fe_k_pool {
    int64_t kernel[2], stride[2], pad[2], dil[2];
    int count_include_pad;   /* avg only */
    /* Optional epilogue: called with each pooled plane (row n*C + c of the
     * output as [N*C, OH*OW]) in cache, from OpenMP thread tid, instead of
     * storing it into y (y->data may then be NULL); non-zero = failure.
     * The signature is conv2d's (conv.h), so one fused program serves both. */
    int (*epi)(void *ctx, int64_t i0, int64_t mc, int64_t j0, int64_t nc, float *blk,
               int64_t ld, int tid);
    void *ectx;
} fe_k_pool;

/* y [N, C, OH, OW] = pool(x [N, C, H, W]), or each plane handed to p->epi. max: padded positions never win
 * and NaN propagates; a window with no input element gives -inf. avg: the
 * divisor is the window clipped to the padded input (count_include_pad) or
 * the number of input elements in it. */
int fe_k_max_pool2d(const fe_k_tensor *x, const fe_k_pool *p, fe_k_tensor *y, fe_error *err);
int fe_k_avg_pool2d(const fe_k_tensor *x, const fe_k_pool *p, fe_k_tensor *y, fe_error *err);

#endif
