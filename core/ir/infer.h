/* infer.h: shape and dtype inference functions, one per op family; the op
 * registry (ops.c) points at them. Each fills in->out from in->in and the
 * node's attributes, or sets in->err and returns FE_EINPUT. Messages say what
 * was found and what was expected; the caller prefixes file, line and node. */
#ifndef FE_INFER_H
#define FE_INFER_H

#include "graph.h"

/* A shape being inferred for one node output. */
typedef struct fe_shape {
    int rank;
    int dtype;
    int64_t dim[FE_MAX_RANK];
} fe_shape;

/* What inference sees: the node, its inputs (already inferred, since nodes
 * are visited in topological order) and room for its outputs. */
typedef struct fe_infer {
    const fe_graph *g;
    const fe_node *node;
    fe_shape in[FE_MAX_IO];   /* filled from the input tensors */
    fe_shape *out;            /* nout entries to fill */
    fe_error *err;
} fe_infer;

int fe_infer_unary(fe_infer *in);
int fe_infer_cast(fe_infer *in);
int fe_infer_binary(fe_infer *in);
int fe_infer_where(fe_infer *in);
int fe_infer_compare(fe_infer *in);
int fe_infer_arange(fe_infer *in);
int fe_infer_trilu(fe_infer *in);
int fe_infer_reduce(fe_infer *in);
int fe_infer_softmax(fe_infer *in);
int fe_infer_norm(fe_infer *in);
int fe_infer_reshape(fe_infer *in);
int fe_infer_transpose(fe_infer *in);
int fe_infer_slice(fe_infer *in);
int fe_infer_concat(fe_infer *in);
int fe_infer_pad(fe_infer *in);
int fe_infer_expand(fe_infer *in);
int fe_infer_gather(fe_infer *in);
int fe_infer_embedding(fe_infer *in);
int fe_infer_matmul(fe_infer *in);
int fe_infer_conv2d(fe_infer *in);
int fe_infer_sdpa(fe_infer *in);
int fe_infer_max_pool2d(fe_infer *in);
int fe_infer_avg_pool2d(fe_infer *in);
int fe_infer_batch_norm(fe_infer *in);
int fe_infer_all_reduce(fe_infer *in);

/* Shapes in inference: */
/* Numpy broadcasting of a and b into out; 0 on success, -1 if they do not
 * broadcast (then *bad_axis is the first output axis that disagrees). */
int fe_broadcast(const fe_shape *a, const fe_shape *b, fe_shape *out, int *bad_axis);

/* Normalise a possibly negative axis for rank; -1 if out of range. */
int fe_axis(int64_t axis, int rank);

/* Promote two dtypes as PyTorch does for binary ops. */
int fe_dtype_promote(int a, int b);

/* Pool and conv output size along one axis; -1 if the window does not fit. */
int64_t fe_window_out(int64_t size, int64_t kernel, int64_t stride, int64_t pad,
                      int64_t dilation, int ceil_mode);

#endif
