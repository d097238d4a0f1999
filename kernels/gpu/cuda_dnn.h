/* cuda_dnn.h: conv2d, max_pool2d and avg_pool2d on the GPU, NCHW as on
 * the CPU (kernels/ops/conv.c, pool.c), with its rules for every
 * attribute.
 *
 * Note on conv2d. Per image n and group g the convolution is the GEMM
 *
 *   Y[n, g] (Og x P) = W[g] (Og x K) * col(X[n, g]) (K x P),
 *   K = Cg * kh * kw, P = OH * OW,
 *
 * col's row k = (c, ky, kx) over output pixels p = (oy, ox) holding
 * X[n, g*Cg + c, oy*sh - ph + ky*dh, ox*sw - pw + kx*dw] (0 outside):
 *
 *   bias?   a kernel writes bias[o] into all of Y, and every GEMM adds
 *           onto it (beta 1): Y is rounded once, after the bias, as the
 *           CPU's epilogue does;
 *   chunk   per chunk of images, an im2col kernel writes col of all of
 *           the chunk's groups into the group's scratch (at most 64 MiB,
 *           at least one image), then cuBLAS: one strided-batched call
 *           when groups == 1 (the images are the batch, W broadcast),
 *           else a call per image (batch: the groups) or per group
 *           (batch: the images), whichever is fewer;
 *   1x1     a 1x1 convolution of stride 1 and no padding has col = X:
 *           no im2col, no scratch.
 *
 * Where the CPU takes its direct loop (Og < 8 or K < 8: depthwise and
 * other GEMMs too thin to pay), and where cuBLAS has no call (x and w of
 * different dtypes, integers), the GPU runs a direct kernel: a thread per
 * output element, summing in the CPU's order (c, ky, kx) in f32.
 *
 * Pools: a thread per output element. max: padded positions never win,
 * NaN propagates, a window with no input element gives -inf; avg: the
 * divisor is the window clipped to the padded input (count_include_pad)
 * or the number of input elements in it, summed in the CPU's order.
 * ceil_mode only sizes the output, which the kernels take from the graph.
 */
#ifndef FE_CUDA_DNN_H
#define FE_CUDA_DNN_H

#include "cuda_lower.h"
#include "graph.h"

/* Node n (conv2d) as pieces appended to lw, grids sized for sms
 * multiprocessors. FE_EINPUT in why when its attributes or shapes are ones
 * the CPU kernel refuses too (it then runs on the host and says so). */
int fe_cuda_conv_lower(const fe_graph *g, const fe_node *n, int sms, fe_cuda_lowering *lw,
                       fe_error *why);

/* The kernel of node n (max_pool2d or avg_pool2d), as cuda_ops.h's: its
 * parameters the input, the output and the fault flag (unused). */
char *fe_cuda_pool_src(const fe_graph *g, const fe_node *n, int sms, fe_cuda_shape *shape,
                       fe_error *why);

#endif
