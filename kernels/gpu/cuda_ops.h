/* cuda_ops.h: CUDA kernels for single ops that the fused-group analysis
 * does not take, moving data by its bytes: concat, gather / embedding and
 * pad (constant, reflect, replicate; negative pads crop); and all_reduce,
 * which on one host is its input times world_size (a sum) or itself.
 */
#ifndef FE_CUDA_OPS_H
#define FE_CUDA_OPS_H

#include "cuda_src.h"
#include "graph.h"

/* The kernel of node n (named fe_kernel), or NULL with FE_EINPUT saying
 * that n's op has none (or its dtypes or attributes do not fit: what the
 * CPU kernel refuses too runs on the host, which says why). Its
 * parameters: the node's inputs in order, its output, and an int flag set
 * to 1 when an index is out of range (the output element is then 0).
 * Caller frees. */
char *fe_cuda_src_node(const fe_graph *g, const fe_node *n, int sms, fe_cuda_shape *shape,
                       fe_error *err);

#endif
