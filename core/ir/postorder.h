/* postorder.h: TVM's post-DFS order of a graph's nodes (the order in which
 * Relay's FuseOps and our dataflow driver visit them). */
#ifndef FE_POSTORDER_H
#define FE_POSTORDER_H

#include "error.h"
#include "graph.h"

/* Fill order[0 .. g->nnodes) with node ids: a depth-first walk from each
 * graph output's producer in output order, producers in input order, each
 * node after its producers; nodes no output depends on follow in
 * topological order. The caller owns order. FE_OK, or FE_ENOMEM with err
 * set. O(nodes + edges), iterative (deep graphs cannot overflow the stack). */
int fe_graph_post_dfs(const fe_graph *g, int32_t *order, fe_error *err);

#endif
