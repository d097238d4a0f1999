/* aten_bounds.c: the values an exported aten op's integer inputs must hold
 * (see aten_bounds.h). index.Tensor's inputs after the first index the
 * first's leading dims in order; args.indices, when present, lists one
 * entry per leading dim, null for a dim taken whole (aten.c's k_index
 * reads them the same way). */
#include <jansson.h>
#include <string.h>

#include "aten_bounds.h"
#include "ops.h"

int64_t fe_k_aten_index_bound(const fe_graph *g, const fe_node *n, int input)
{
    if (n->op != FE_OP_CUSTOM || input < 1 || input >= n->nin)
        return -1;
    const char *aten = fe_node_attr_str(g, n, "aten", NULL);
    if (!aten || strcmp(aten, "index.Tensor") != 0)
        return -1;
    const fe_tensor *x = fe_graph_tensor(g, fe_node_input(g, n, 0));
    int dim = input - 1;
    const fe_attr *a = fe_node_attr(g, n, "args");
    if (a && a->type == FE_ATTR_JSON) {
        json_error_t je;
        json_t *args = json_loadb(g->blob + a->v.off, (size_t)a->n, 0, &je);
        json_t *ij = json_is_object(args) ? json_object_get(args, "indices") : NULL;
        if (json_is_array(ij)) {
            dim = -1;
            for (size_t d = 0, next = 1; d < json_array_size(ij) && dim < 0; d++)
                if (!json_is_null(json_array_get(ij, d)) && (int)next++ == input)
                    dim = (int)d;
        }
        json_decref(args);
    }
    if (dim < 0 || dim >= x->rank)
        return -1;
    return fe_tensor_shape(g, x)[dim];
}
