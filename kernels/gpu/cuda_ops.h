/* cuda_ops.h: CUDA kernels for single ops that the fused-group analysis
 * does not take, moving data by its bytes: concat and gather / embedding.
 */
#ifndef FE_CUDA_OPS_H
#define FE_CUDA_OPS_H

#include "cuda_src.h"
#include "graph.h"

/* The kernel of node n (named fe_kernel), or NULL with FE_EINPUT saying
 * that n's op has none (or its dtypes do not fit). Its parameters: the
 * node's inputs in order, its output, and an int flag set to 1 when an
 * index is out of range (the output element is then 0). Caller frees. */
char *fe_cuda_src_node(const fe_graph *g, const fe_node *n, int sms, fe_cuda_shape *shape,
                       fe_error *err);

#endif
