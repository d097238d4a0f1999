/* postdom.c: immediate post-dominators (see postdom.h).
 *
 * Note on the algorithm. Nodes are in topological order, so walking them
 * backwards meets every consumer before its producer. A node that feeds
 * the sink directly (it writes a graph output, or nobody reads it) hangs
 * under the sink. Any other node's immediate post-dominator is the lowest
 * common ancestor, in the tree built so far, of all its consumers: every
 * path out of the node goes through one of them, and the first node all
 * of their tree paths share is the first node every path must cross. TVM's
 * DominatorTree (fuse_ops) computes the same with a parent walk per LCA;
 * here the tree keeps binary-lifting jump tables (up[k][v] = the 2^k-th
 * ancestor), so each LCA costs O(log n) however far apart its consumers
 * sit, and a graph of n nodes and e edges costs O((n + e) log n):
 *
 *        a                 a's consumers b and c meet first at d:
 *       / \                ipdom(a) = d, ipdom(b) = ipdom(c) = d,
 *      b   c               ipdom(d) = sink (d writes the output)
 *       \ /
 *        d --> output
 */
#include <stdlib.h>

#include "postdom.h"

typedef struct lift {
    int32_t n, levels;
    int32_t *up;     /* up[k * (n + 1) + v]; the sink is v = n, its own ancestor */
    int32_t *depth;  /* depth[v], the sink 0 */
} lift;

static int32_t lca(const lift *t, int32_t a, int32_t b)
{
    int32_t w = t->n + 1;
    if (t->depth[a] < t->depth[b]) {
        int32_t s = a;
        a = b;
        b = s;
    }
    for (int k = t->levels - 1; k >= 0; k--)
        if (t->depth[a] - (1 << k) >= t->depth[b])
            a = t->up[k * w + a];
    if (a == b)
        return a;
    for (int k = t->levels - 1; k >= 0; k--)
        if (t->up[k * w + a] != t->up[k * w + b]) {
            a = t->up[k * w + a];
            b = t->up[k * w + b];
        }
    return t->up[a];
}

/* Does v feed the sink directly? */
static int to_sink(const fe_graph *g, const fe_node *nd)
{
    int32_t readers = 0;
    for (int k = 0; k < nd->nout; k++) {
        const fe_tensor *t = fe_graph_tensor(g, fe_node_output(g, nd, k));
        if (t->flags & FE_T_OUTPUT)
            return 1;
        readers += t->ncons;
    }
    return readers == 0;
}

int fe_graph_postdom(const fe_graph *g, int32_t *ipdom, int32_t *depth, fe_error *err)
{
    lift t = {.n = g->nnodes, .levels = 1};
    while ((1 << t.levels) <= g->nnodes + 1)
        t.levels++;
    size_t w = (size_t)g->nnodes + 1;
    t.up = malloc((size_t)t.levels * w * sizeof *t.up);
    t.depth = malloc(w * sizeof *t.depth);
    if (!t.up || !t.depth) {
        free(t.up);
        free(t.depth);
        return fe_error_set(err, FE_ENOMEM, "out of memory building the post-dominator tree");
    }
    int32_t sink = t.n;
    for (int k = 0; k < t.levels; k++)
        t.up[(size_t)k * w + (size_t)sink] = sink;
    t.depth[sink] = 0;
    for (int32_t v = g->nnodes - 1; v >= 0; v--) {
        const fe_node *nd = fe_graph_node(g, v);
        int32_t p = -2;   /* no consumer seen yet */
        if (to_sink(g, nd))
            p = sink;
        for (int k = 0; k < nd->nout && p != sink; k++) {
            const fe_tensor *te = fe_graph_tensor(g, fe_node_output(g, nd, k));
            for (int32_t c = 0; c < te->ncons && p != sink; c++) {
                int32_t u = fe_tensor_consumer(g, te, c);
                p = p == -2 ? u : lca(&t, p, u);
            }
        }
        t.up[v] = p;
        t.depth[v] = t.depth[p] + 1;
        for (int k = 1; k < t.levels; k++)
            t.up[(size_t)k * w + (size_t)v] = t.up[(size_t)(k - 1) * w + (size_t)t.up[(size_t)(k - 1) * w + (size_t)v]];
        ipdom[v] = p == sink ? FE_POSTDOM_SINK : p;
        depth[v] = t.depth[v];
    }
    free(t.up);
    free(t.depth);
    return FE_OK;
}
