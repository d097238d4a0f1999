/* lua_graph_flat.h: whole-graph views as plain Lua arrays, for policies
 * whose plan() walks every node (graph:postdom(), graph:post_dfs(),
 * graph:arrays(), graph:nodes_of()). All
 * indices are 1-based; node indices are topological. */
#ifndef FE_LUA_GRAPH_FLAT_H
#define FE_LUA_GRAPH_FLAT_H

#include <lua.h>

#include "graph.h"

/* Push ipdom and depth, two arrays by node index: the immediate
 * post-dominator (0: the virtual sink every output feeds) and the depth in
 * the post-dominator tree (postdom.h). Returns 2; raises on out-of-memory. */
int fe_lg_postdom(lua_State *L, const fe_graph *g);

/* Push the nodes' indices in TVM's post-DFS order (postorder.h): from the
 * graph outputs, each node after its producers. Returns 1; raises on
 * out-of-memory. */
int fe_lg_post_dfs(lua_State *L, const fe_graph *g);

/* Push one table of arrays: by node, op and pattern (names), inputs and
 * outputs (lists of tensor indices); by tensor, producer (node index, 0 for
 * graph inputs and weights), consumers (lists of node indices, one per
 * reading input slot), numel, rank and is_output (1 or 0). With the
 * optional argument 2 "flat" the lists are flat instead: input, output and
 * consumer hold every node's (tensor's) entries one after another, and
 * input_at, output_at (n + 1 entries) and consumer_at (ntensors + 1) where
 * each one's start, so v's inputs are input[input_at[v] .. input_at[v+1]-1].
 * Returns 1; raises on any other argument. */
int fe_lg_arrays(lua_State *L, const fe_graph *g);

/* Push the indices of the nodes whose op is named by argument 2, in
 * topological order: a policy after a few ops makes no object for the
 * others. Returns 1; raises on a name that is no op. */
int fe_lg_nodes_of(lua_State *L, const fe_graph *g);

#endif
