/* postdom.h: the post-dominator tree of a graph's nodes (postdom.c opens
 * with the algorithm). Node u post-dominates v when every path from v to
 * the end of the graph passes through u. The end is a virtual sink fed by
 * every node that writes a graph output or whose outputs nobody reads, so
 * an output node is post-dominated by the sink alone (TVM's extern_ref). */
#ifndef FE_POSTDOM_H
#define FE_POSTDOM_H

#include "error.h"
#include "graph.h"

/* The virtual sink, as an immediate post-dominator. */
#define FE_POSTDOM_SINK (-1)

/* For every node v, its immediate post-dominator ipdom[v] (a node id, or
 * FE_POSTDOM_SINK) and its depth in the tree (depth[v] >= 1; the sink is
 * 0). The caller owns both arrays (room for g->nnodes each). FE_OK, or
 * FE_ENOMEM with err set. O((nodes + edges) log nodes) time. */
int fe_graph_postdom(const fe_graph *g, int32_t *ipdom, int32_t *depth, fe_error *err);

#endif
