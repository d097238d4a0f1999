/* postorder.c: TVM's post-DFS order (see postorder.h). An explicit stack of
 * (node, next input) pairs stands for TVM's recursion; each node is pushed
 * once (it is marked seen first), so 2 n slots hold the deepest walk. */
#include <stdlib.h>

#include "postorder.h"

int fe_graph_post_dfs(const fe_graph *g, int32_t *order, fe_error *err)
{
    int32_t n = g->nnodes, k = 0;
    size_t cap = n > 0 ? (size_t)n : 1u;
    uint8_t *seen = calloc(cap, 1);
    int32_t *stack = malloc(cap * 2 * sizeof *stack);
    if (!seen || !stack) {
        free(seen);
        free(stack);
        return fe_error_set(err, FE_ENOMEM, "out of memory ordering the graph's nodes");
    }
    for (int32_t i = 0; i < g->noutputs + n; i++) {
        int32_t root = i < g->noutputs ? fe_graph_tensor(g, g->outputs[i])->producer
                                       : i - g->noutputs;
        if (root < 0 || seen[root])
            continue;
        int32_t sp = 0;
        stack[sp++] = root;
        stack[sp++] = 0;
        seen[root] = 1;
        while (sp > 0) {
            int32_t u = stack[sp - 2], next = stack[sp - 1];
            const fe_node *nd = fe_graph_node(g, u);
            if (next < nd->nin) {
                stack[sp - 1]++;
                int32_t p = fe_graph_tensor(g, fe_node_input(g, nd, next))->producer;
                if (p >= 0 && !seen[p]) {
                    seen[p] = 1;
                    stack[sp++] = p;
                    stack[sp++] = 0;
                }
                continue;
            }
            order[k++] = u;
            sp -= 2;
        }
    }
    free(seen);
    free(stack);
    return FE_OK;
}
