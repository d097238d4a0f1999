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
} fe_k_pool;

/* y [N, C, OH, OW] = pool(x [N, C, H, W]). max: padded positions never win
 * and NaN propagates; a window with no input element gives -inf. avg: the
 * divisor is the window clipped to the padded input (count_include_pad) or
 * the number of input elements in it. */
int fe_k_max_pool2d(const fe_k_tensor *x, const fe_k_pool *p, fe_k_tensor *y, fe_error *err);
int fe_k_avg_pool2d(const fe_k_tensor *x, const fe_k_pool *p, fe_k_tensor *y, fe_error *err);

#endif
