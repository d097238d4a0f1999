/* aten_bounds.c: the values an exported aten op's integer inputs must hold
 * (see aten_bounds.h). index.Tensor's inputs after the first index the
 * first's leading dims in order; args.indices, when present, lists one
 * entry per leading dim, null for a dim taken whole (aten.c's k_index
 * reads them the same way). torch.gather's index (input 1) picks along
 * args.dim of input 0 (aten_copy.c). fe_k_aten_value_flow names, for each
 * aten kernel of aten.c's table, whether its outputs carry an input's
 * values. */
#include <jansson.h>
#include <string.h>

#include "aten_bounds.h"
#include "aten_call.h"
#include "ops.h"
#include "user_kernel.h"

/* args as parsed JSON (caller decrefs), or NULL. */
static json_t *args_of(const fe_graph *g, const fe_node *n)
{
    const fe_attr *a = fe_node_attr(g, n, "args");
    json_error_t je;
    if (!a || a->type != FE_ATTR_JSON)
        return NULL;
    return json_loadb(g->blob + a->v.off, (size_t)a->n, 0, &je);
}

/* The dim of x that index.Tensor's input `input` indexes, or -1. */
static int index_dim(const fe_graph *g, const fe_node *n, int input)
{
    int dim = input - 1;
    json_t *args = args_of(g, n);
    json_t *ij = json_is_object(args) ? json_object_get(args, "indices") : NULL;
    if (json_is_array(ij)) {
        dim = -1;
        for (size_t d = 0, next = 1; d < json_array_size(ij) && dim < 0; d++)
            if (!json_is_null(json_array_get(ij, d)) && (int)next++ == input)
                dim = (int)d;
    }
    json_decref(args);
    return dim;
}

/* The dim of x that gather's index picks along, or -1 (no or a bad dim). */
static int gather_dim(const fe_graph *g, const fe_node *n, int input, int rank)
{
    json_t *args = args_of(g, n);
    json_t *dj = json_is_object(args) ? json_object_get(args, "dim") : NULL;
    int r = rank ? rank : 1;
    int64_t dim = json_is_integer(dj) ? (int64_t)json_integer_value(dj) : -r - 1;
    json_decref(args);
    if (input != 1 || dim < -r || dim >= r)
        return -1;
    return (int)(dim < 0 ? dim + r : dim);
}

int64_t fe_k_aten_index_bound(const fe_graph *g, const fe_node *n, int input)
{
    if (n->op != FE_OP_CUSTOM || input < 1 || input >= n->nin)
        return -1;
    const char *aten = fe_node_attr_str(g, n, "aten", NULL);
    if (!aten || fe_k_user_kernel(g, n))   /* a registered kernel: nothing known of it */
        return -1;
    aten = fe_k_acall_bare(aten);
    const fe_tensor *x = fe_graph_tensor(g, fe_node_input(g, n, 0));
    int dim = -1;
    if (!strcmp(aten, "index.Tensor") || !strcmp(aten, "index"))
        dim = index_dim(g, n, input);
    else if (!strcmp(aten, "gather.default") || !strcmp(aten, "gather"))
        dim = gather_dim(g, n, input, x->rank);
    if (dim < 0 || dim >= (x->rank ? x->rank : 1))
        return -1;
    return x->rank ? fe_tensor_shape(g, x)[dim] : 1;
}

/* name without its overload (".Tensor", ".default") */
static int base_is(const char *aten, const char *const *names)
{
    size_t n = strcspn(aten, ".");
    for (; *names; names++)
        if (strlen(*names) == n && !strncmp(aten, *names, n))
            return 1;
    return 0;
}

int fe_k_aten_value_flow(const fe_graph *g, const fe_node *n, int input)
{
    static const char *const copies[] = {"clone", "contiguous", NULL};
    static const char *const indexers[] = {"index", "gather", NULL};
    static const char *const no_values[] = {
        "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor",
        "new_ones", "new_zeros", "new_full", "ones", "zeros", "full", "ones_like",
        "zeros_like", "full_like", "scalar_tensor", "arange", NULL};
    const char *aten = n->op == FE_OP_CUSTOM ? fe_node_attr_str(g, n, "aten", NULL) : NULL;
    if (!aten || input < 0 || input >= n->nin || fe_k_user_kernel(g, n))
        return FE_K_FLOW_UNKNOWN;
    aten = fe_k_acall_bare(aten);
    if (base_is(aten, copies))
        return FE_K_FLOW_SAME;
    if (base_is(aten, indexers))   /* the data's values; the indices only pick */
        return input == 0 ? FE_K_FLOW_SAME : FE_K_FLOW_NONE;
    if (base_is(aten, no_values))
        return FE_K_FLOW_NONE;
    return FE_K_FLOW_UNKNOWN;
}
