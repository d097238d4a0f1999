/* boundary.c: a group's external inputs and outputs (boundary.h). */
#include <stdlib.h>

#include "boundary.h"
#include "node.h"

static int leaves(const fe_graph *g, const int32_t *nodes, int n, int32_t t)
{
    const fe_tensor *tt = fe_graph_tensor(g, t);
    if (tt->flags & FE_T_OUTPUT)
        return 1;
    for (int k = 0; k < tt->ncons; k++)
        if (fe_k_node_index(nodes, n, fe_tensor_consumer(g, tt, k)) < 0)
            return 1;
    return 0;
}

int fe_k_boundary(const fe_graph *g, const int32_t *nodes, int n, int32_t **ins, int *nins,
                  int32_t **outs, int *nouts, fe_error *err)
{
    int cap = 0;
    for (int i = 0; i < n; i++) {
        const fe_node *nd = fe_graph_node(g, nodes[i]);
        cap += nd->nin + nd->nout;
    }
    *nins = *nouts = 0;
    *ins = fe_malloc((size_t)(cap + 1) * sizeof(int32_t), err);
    *outs = fe_malloc((size_t)(cap + 1) * sizeof(int32_t), err);
    if (!*ins || !*outs) {
        free(*ins);
        free(*outs);
        *ins = *outs = NULL;
        return FE_ENOMEM;
    }
    for (int i = 0; i < n; i++) {
        const fe_node *nd = fe_graph_node(g, nodes[i]);
        for (int k = 0; k < nd->nin; k++) {
            int32_t t = fe_node_input(g, nd, k);
            int32_t pr = fe_graph_tensor(g, t)->producer;
            if ((pr < 0 || fe_k_node_index(nodes, n, pr) < 0) && !fe_k_ids_has(*ins, *nins, t))
                (*ins)[(*nins)++] = t;
        }
        for (int k = 0; k < nd->nout; k++) {
            int32_t t = fe_node_output(g, nd, k);
            if (leaves(g, nodes, n, t))
                (*outs)[(*nouts)++] = t;
        }
    }
    return FE_OK;
}
