/* cuda_attn.h: scaled dot-product attention on the GPU, as the CPU's
 * (kernels/ops/attention.c): softmax(q k^T * scale + mask) v over q's
 * batch axes, k, v and the mask broadcast to them.
 *
 * Note on the pieces. Per chunk of batches (the scratch for one chunk's
 * scores and probabilities at most 256 MiB, at least one batch):
 *
 *   scores = q k^T            cuBLAS, f32 out (f32 accumulation) into scratch
 *   P = softmax(scores ...)   a kernel (cuda_softmax.h): scale, then the
 *                             mask (bool: -inf where false; else added),
 *                             then causal (key j > query i: -inf), a row
 *                             of max NaN or -inf all NaN; P in v's dtype
 *   y = P v                   cuBLAS into the output
 *
 * k and v whose batch offsets are not one stride apart (a broadcast of
 * some batch axes only) get a GEMM per batch. The one departure from the
 * CPU: P is rounded to v's dtype before the second product (cuBLAS takes
 * one dtype for both operands), as PyTorch's fused kernels do; within
 * the tolerance of f16 and bf16 outputs.
 */
#ifndef FE_CUDA_ATTN_H
#define FE_CUDA_ATTN_H

#include "cuda_lower.h"
#include "graph.h"

/* Node n (sdpa) as pieces appended to lw, grids sized for sms
 * multiprocessors; FE_EINPUT in why when its dtypes or shapes have no
 * cuBLAS call (it then runs on the host and says why). */
int fe_cuda_sdpa_lower(const fe_graph *g, const fe_node *n, int sms, fe_cuda_lowering *lw,
                       fe_error *why);

#endif
