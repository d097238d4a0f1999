/* node.h: run one graph node with the reference kernels: reads the node's
 * attributes through graph.h, dispatches on its op id (ops.h) and calls the
 * kernel. The per-op fallback of the plan executor and the whole-graph
 * reference both go through here.
 */
#ifndef FE_NODE_H
#define FE_NODE_H

#include "conv.h"
#include "error.h"
#include "graph.h"
#include "ktensor.h"
#include "pool.h"

/* Run node n. in[k] / out[k] are the buffers of the node's k-th input and
 * output tensor (preallocated, shapes and dtypes as in the graph). Returns
 * FE_OK or an error naming the node: FE_EINPUT for what cannot run (custom
 * ops, bad attributes, out-of-range indices), FE_ENOMEM. */
int fe_k_node_run(const fe_graph *g, const fe_node *n, const fe_k_tensor *in,
                  fe_k_tensor *out, fe_error *err);
/* fe_k_node_run with the node's tensors taken from bufs, indexed by tensor
 * id: any number of inputs and outputs (a concat may have FE_MAX_IO). */
int fe_k_node_run_bufs(const fe_graph *g, const fe_node *n, const fe_k_tensor *bufs,
                       fe_error *err);

/* The pooling parameters of a max_pool2d / avg_pool2d node (no epilogue)
 * into *p; FE_EINPUT naming the node for bad attributes. */
int fe_k_node_pool(const fe_graph *g, const fe_node *n, fe_k_pool *p, fe_error *err);

/* The attributes of a conv2d node (stride, padding, dilation, groups) into
 * *cv, its tensors and epilogue left empty; FE_EINPUT naming the node for
 * bad attributes. */
int fe_k_node_conv(const fe_graph *g, const fe_node *n, fe_k_conv *cv, fe_error *err);

/* Is n a constant pad of the last two axes alone (H and W of NCHW), by
 * sizes of at least 0? Then its sizes before and after each ([0] H, [1]
 * W) and its value; the kernels that read such a pad (a conv2d, a max
 * pool) can take its padding as theirs. */
int fe_k_node_pad_hw(const fe_graph *g, const fe_node *n, int64_t lo[2], int64_t hi[2],
                     double *value);

/* The scalar operand of a binary / where node as a rank-0 tensor of the
 * compute type (i64 for integer outputs, else f32) in *storage, and its
 * operand position; returns 0 if the node has no scalar. */
typedef union fe_k_scalar { float f; int64_t i; } fe_k_scalar;
int fe_k_node_scalar(const fe_graph *g, const fe_node *n, int out_dtype,
                     fe_k_scalar *storage, fe_k_tensor *t, int *index);

/* Normalised reduction axes of a sum/mean/amax/amin node over an input of
 * rank `rank`, as a bit mask (bit i = axis i); -1 if an axis is invalid. */
long fe_k_node_axes(const fe_graph *g, const fe_node *n, int rank);

/* How a sum/mean/amax/amin node reduces its input: FE_K_RED_ROWS when
 * its axes are the trailing ones (*lo: the first of them), FE_K_RED_COLS
 * when they are the leading ones (*lo: the first axis kept), else
 * FE_K_RED_OTHER (or with no valid axes, -1). An axis of size 1 counts as
 * reduced or kept, whichever makes the reduction rows, then columns: a
 * sum over [0, 1] of [7, 127, 1] is a row reduction. */
enum { FE_K_RED_ROWS, FE_K_RED_COLS, FE_K_RED_OTHER };
int fe_k_node_reduce_kind(const fe_graph *g, const fe_node *n, int *lo);

/* The position of node id among ids[0..n), sorted ascending as a group's
 * members are, or -1 (binary search). */
int fe_k_node_index(const int32_t *ids, int n, int32_t id);
/* Sort ids[0..n) ascending, the order fe_k_node_index searches. */
void fe_k_ids_sort(int32_t *ids, int n);
/* Whether id is among ids[0..n), in any order (a linear scan: the lists of
 * a group's inputs and outputs are short and unsorted). */
int fe_k_ids_has(const int32_t *ids, int n, int32_t id);

/* Elements normalised by an rms_norm / layer_norm node over input x
 * (the product of normalized_shape, default the last axis); -1 if invalid. */
int64_t fe_k_node_norm_size(const fe_graph *g, const fe_node *n, const fe_k_tensor *x);

#endif
