/* sharedbytes.c: bytes two disjoint node sets share (sharedbytes.h).
 *
 * Two passes over the sets' inputs, no consumer lists: a tensor that a
 * reads from outside both sets is marked stamp; one written in b and read
 * in a counts in the first pass; in the second, one written in a and read
 * in b counts, and so does one marked stamp (both read it). A counted
 * tensor is marked stamp + 1 so a second reader does not count it again.
 * Consumer lists are avoided because a rope table or a weight read by every
 * layer has thousands of them. */
#include "sharedbytes.h"

/* Count t once (mark stamp + 1); 0 if it was counted already. */
static int64_t once(const fe_graph *g, const fe_setpair *s, int32_t t)
{
    if (s->tensor[t] == s->stamp + 1)
        return 0;
    s->tensor[t] = s->stamp + 1;
    return fe_graph_tensor(g, t)->bytes;
}

int64_t fe_shared_bytes(const fe_graph *g, const fe_setpair *s, const int32_t *a, int32_t na,
                        const int32_t *b, int32_t nb)
{
    int32_t in_a = s->stamp, in_b = s->stamp + 1;
    int64_t sum = 0;
    for (int32_t i = 0; i < na; i++) {
        const fe_node *n = fe_graph_node(g, a[i]);
        for (int q = 0; q < n->nin; q++) {
            int32_t t = fe_node_input(g, n, q);
            int32_t p = fe_graph_tensor(g, t)->producer, set = p >= 0 ? s->node[p] : -1;
            if (set == in_b)
                sum += once(g, s, t);
            else if (set != in_a && s->tensor[t] != in_b)
                s->tensor[t] = in_a;
        }
    }
    for (int32_t i = 0; i < nb; i++) {
        const fe_node *n = fe_graph_node(g, b[i]);
        for (int q = 0; q < n->nin; q++) {
            int32_t t = fe_node_input(g, n, q);
            int32_t p = fe_graph_tensor(g, t)->producer, set = p >= 0 ? s->node[p] : -1;
            if (set == in_a || (set != in_b && s->tensor[t] == in_a))
                sum += once(g, s, t);
        }
    }
    return sum;
}

int fe_set_feeds(const fe_graph *g, const fe_setpair *s, const int32_t *b, int32_t nb)
{
    for (int32_t i = 0; i < nb; i++) {
        const fe_node *n = fe_graph_node(g, b[i]);
        for (int q = 0; q < n->nin; q++) {
            int32_t p = fe_graph_tensor(g, fe_node_input(g, n, q))->producer;
            if (p >= 0 && s->node[p] == s->stamp)
                return 1;
        }
    }
    return 0;
}
