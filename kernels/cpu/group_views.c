/* group_views.c: a group of views only, one program per output (see
 * group_views.h).
 *
 * A fused program has one iteration domain, so a group whose outputs have
 * different shapes cannot be one: GPT-2's attention splits its qkv
 * projection with a reshape, three slices, three reshapes and transposes
 * into q, k^T and v. Run op by op, that group copied every intermediate.
 * But each output is a chain of views of one input, and a chain of views
 * compiles to a strided copy of that input (fused_compile.c's copy_only):
 * so each output gets a program of its own, from the members its chain
 * passes through (a member two chains share is in both: a view is index
 * arithmetic, so repeating it costs nothing), and no intermediate is
 * written.
 */
#include <stdlib.h>

#include "fused_views.h"
#include "group_views.h"
#include "ops.h"

fe_k_prog **fe_k_views_new(const fe_graph *g, const int32_t *nodes, int n, const int32_t *outs,
                           int nouts, fe_error *why)
{
    for (int i = 0; i < n; i++) {
        const fe_node *nd = fe_graph_node(g, nodes[i]);
        if (!fe_k_fused_view_op(nd->op))
            return fe_error_set(why, FE_EINPUT, "node '%s' (%s) is not a view", fe_node_name(g, nd),
                                fe_node_op_name(nd)), NULL;
    }
    int32_t *chain = malloc((size_t)n * sizeof *chain);
    fe_k_prog **views = calloc(nouts > 0 ? (size_t)nouts : 1u, sizeof *views);
    if (!chain || !views) {
        free(chain);
        free(views);
        return fe_error_set(why, FE_ENOMEM, "out of memory"), NULL;
    }
    int k = 0;
    for (; k < nouts; k++) {
        int nc = fe_k_view_chain(g, nodes, n, outs[k], chain);
        if (!(views[k] = fe_k_prog_compile_nodes(g, chain, nc, &outs[k], 1, why)))
            break;
    }
    free(chain);
    if (k < nouts) {
        fe_k_views_free(views, k);
        return NULL;
    }
    return views;
}

int fe_k_views_run(fe_k_prog **views, int nouts, fe_k_tensor *bufs, fe_error *err)
{
    for (int k = 0; k < nouts; k++) {
        int rc = fe_k_prog_run_all(views[k], bufs, 1, err);
        if (rc)
            return rc;
    }
    return FE_OK;
}

void fe_k_views_show(fe_k_prog **views, int nouts, const fe_graph *g, const int32_t *outs,
                     const char *indent, FILE *f)
{
    for (int k = 0; k < nouts; k++) {
        fprintf(f, "%soutput %s:\n", indent, fe_tensor_name(g, fe_graph_tensor(g, outs[k])));
        fe_k_prog_show(views[k], g, indent, f);
    }
}

void fe_k_views_free(fe_k_prog **views, int nouts)
{
    for (int k = 0; views && k < nouts; k++)
        fe_k_prog_free(views[k]);
    free(views);
}
