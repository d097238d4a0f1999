/* aten_bounds.h: the values an exported aten op's integer inputs must hold
 * to be valid, so that measuring code can make random inputs that run
 * (aten_bounds.c). */
#ifndef FE_ATEN_BOUNDS_H
#define FE_ATEN_BOUNDS_H

#include <stdint.h>

#include "graph.h"

/* The exclusive upper bound of the values input `input` of custom node n
 * may hold because n indexes with it (aten index.Tensor: the size of the
 * dim it indexes, args.indices placing None entries; torch.gather's index:
 * the size of args.dim), or -1 if n does not index with that input. */
int64_t fe_k_aten_index_bound(const fe_graph *g, const fe_node *n, int input);

/* How the values of custom node n's outputs follow from those of its input
 * `input`, for following an index range backwards through it (core/exec's
 * ranges.c): the same values rearranged or copied (clone, contiguous,
 * index.Tensor's and gather's data), none of them (what indexes, what is
 * compared, what a fill only takes the shape of), or a computation fuseeng
 * cannot invert (cumsum, diff, bitwise ops, an aten op it does not know). */
enum { FE_K_FLOW_UNKNOWN, FE_K_FLOW_SAME, FE_K_FLOW_NONE };
int fe_k_aten_value_flow(const fe_graph *g, const fe_node *n, int input);

#endif
