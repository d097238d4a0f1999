/* cuda_softmax.h: softmax kernels outside the fused analysis, both with
 * the CPU's rule that a row whose maximum is NaN or -inf (everything
 * masked) is all NaN (kernels/ops/reduce.c, fe_k_row_softmax).
 *
 *   axis     softmax / log_softmax over an axis that is not the last
 *            (the analysis fuses only the last): a thread per (outer,
 *            inner) pair walking the axis three times;
 *   scores   attention's softmax(scores * scale + mask) with the causal
 *            rule, over f32 scores that cuBLAS wrote (cuda_attn.c): a
 *            warp per row up to 1024 keys, else a block; the row's values
 *            in registers up to 32 a thread, else read again each pass.
 */
#ifndef FE_CUDA_SOFTMAX_H
#define FE_CUDA_SOFTMAX_H

#include <stdint.h>

#include "cuda_src.h"
#include "graph.h"

/* The kernel of softmax / log_softmax node n over its attribute's axis,
 * as cuda_ops.h's (input, output, fault flag unused). */
char *fe_cuda_softmax_axis_src(const fe_graph *g, const fe_node *n, int sms, fe_cuda_shape *shape,
                               fe_error *why);

/* The softmax of rows of attention scores. Row r of the chunk is query
 * r % L of batch b0 + r / L; the mask, when there is one, is read at
 * (batch, query) offset by mshape / mst over the brank + 1 leading axes
 * and at key j times mcs, as the CPU reads it (fe_k_offset). */
typedef struct fe_cuda_scores {
    int64_t rows, L, S, b0;
    float scale;
    int causal;
    int mask_dt;               /* -1: no mask; FE_BOOL keeps where true, else added */
    int mrank;                 /* axes of mshape / mst: the batch axes and L */
    int64_t mshape[FE_MAX_RANK], mst[FE_MAX_RANK], mcs;
    int p_dt;                  /* dtype the probabilities are written in */
} fe_cuda_scores;

/* Its parameters: the scores (const float *), the mask (with one), the
 * probabilities [rows, S] and the fault flag (unused). */
char *fe_cuda_scores_src(const fe_cuda_scores *sc, const char *who, int sms, fe_cuda_shape *shape,
                         fe_error *why);

#endif
