/* cuda_attn.h: scaled dot-product attention on the GPU, as the CPU's
 * (kernels/ops/attention.c): softmax(q k^T * scale + mask) v over q's
 * batch axes, k, v and the mask broadcast to them.
 *
 * Note on the pieces. Per chunk of batches (the scratch for one chunk at
 * most 256 MiB, at least one batch):
 *
 *   scores = q k^T            cuBLAS, f32 out (f32 accumulation) into scratch
 *   P = softmax(scores ...)   a kernel in place (cuda_softmax.h): scale,
 *                             then the mask (bool: -inf where false; else
 *                             added), then causal (key j > query i: -inf),
 *                             a row of max NaN or -inf all NaN; P in f32
 *   v32 = v in f32            a kernel into scratch, unless v is f32
 *   y = P v32                 cuBLAS, f32, into the output, rounded once
 *
 * P stays f32 and v is widened, as the CPU multiplies them: cuBLAS takes
 * one dtype for both operands, and P rounded to f16 or bf16 moved a
 * reciprocal of a near-zero output far past bf16's tolerance (seed 840 of
 * the differential tester). The second product therefore runs in f32 on
 * the card's CUDA cores, not its tensor cores.
 *
 * k and v whose batch offsets are not one stride apart (a broadcast of
 * some batch axes only) get a GEMM per batch.
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
