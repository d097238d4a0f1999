/* conv.h: NCHW conv2d, as GEMMs on the blocked engine (im2col rows are
 * produced while B is packed, never materialised) or as a direct loop for
 * grouped convolutions too thin for a GEMM (depthwise). Takes the same
 * epilogue hook as matmul: the block rows are output rows (n, o), the
 * columns output pixels (oy, ox); and an input supplier for a prologue,
 * which runs one image ahead of its convolution so that the image is still
 * in cache when it is read.
 */
#ifndef FE_CONV_H
#define FE_CONV_H

#include <stdint.h>

#include "error.h"
#include "gemm.h"
#include "ktensor.h"

typedef struct fe_k_conv {
    const fe_k_tensor *x, *w, *bias;   /* bias may be NULL */
    fe_k_tensor *y;                     /* [N, O, OH, OW]; data may be NULL with epi */
    int64_t stride[2], pad[2], dil[2];
    int64_t groups;
    /* Output rows (n * O + o) to compute: [r0, r1), r1 = 0 for all. */
    int64_t r0, r1;
    fe_k_epifn epi;                     /* runs after the bias is added */
    void *ectx;
    int epi_full_rows;                  /* epi needs whole rows: all OH*OW columns at once */
    /* A supplier of the input (a fused prologue): when set, the convolution
     * runs image by image, and ximg(xctx, n, dst) writes image n of the
     * operand as float32 [C, H, W] to dst before that image is convolved
     * (x then gives only the shape; its data is not read). Nonzero on failure. */
    int (*ximg)(void *xctx, int64_t n, float *dst);
    void *xctx;
    int direct;                         /* force the direct loop (tests) */
} fe_k_conv;

/* Run it. Returns FE_OK, FE_EINPUT (shapes), FE_ENOMEM or FE_ERUNTIME. */
int fe_k_conv2d(const fe_k_conv *cv, fe_error *err);

#endif
