/* cuda_aten.h: CUDA kernels for what PyTorch exports compute on integers:
 * the aten customs of ops/aten.h (comparisons, bitwise and logical ops,
 * arange, the fills, cumsum, diff, index.Tensor, clone) and the registry's
 * elementwise ops with an integer output, which the fused analysis refuses
 * because it computes in float. Integers stay integers (i64 through long
 * long), with the CPU kernels' wrapping, dtypes and NaN rules.
 */
#ifndef FE_CUDA_ATEN_H
#define FE_CUDA_ATEN_H

#include "cuda_src.h"
#include "graph.h"

/* The kernel (named fe_kernel) of custom node n, or NULL with FE_EINPUT
 * saying why it has none (what the CPU kernel refuses, or an aten op not
 * written here). Parameters: n's inputs in order, its output, and an int
 * flag set to 1 when an index is out of range. Caller frees. */
char *fe_cuda_aten_src(const fe_graph *g, const fe_node *n, int sms, fe_cuda_shape *shape,
                       fe_error *err);

/* The kernel of the registry's compare, arange or trilu node n (as
 * ops/positions.c and aten.c's comparisons compute them), or NULL with
 * FE_EINPUT saying why not. Parameters as above. */
char *fe_cuda_position_src(const fe_graph *g, const fe_node *n, int sms, fe_cuda_shape *shape,
                           fe_error *err);

/* The kernel of registry elementwise node n (add, sub, mul, div, maximum,
 * minimum, pow, where; relu, neg, abs, cast) whose output is an integer
 * dtype other than bool, computed in int64 as the CPU's reference does;
 * or NULL with FE_EINPUT saying why not. Parameters as above. */
char *fe_cuda_int_src(const fe_graph *g, const fe_node *n, int sms, fe_cuda_shape *shape,
                      fe_error *err);

#endif
