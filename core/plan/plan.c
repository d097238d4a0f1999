/* plan.c: legality of fusion plans, and plan objects.
 *
 * Note on legality. A plan is legal when
 *
 *   1. every node is in exactly one group;
 *   2. each group is convex: no path leaves the group and comes back
 *      (otherwise its kernel would need its own output as an input);
 *   3. the group DAG is acyclic (two convex groups can still each need the
 *      other's output: A1 -> B1, B2 -> A2 with A = {A1, A2}, B = {B1, B2});
 *   4. a kernel class takes the group's mix of ops (plan.h).
 *
 * 2 follows from 3 (a path out of G and back is a cycle G -> H -> G), so
 * fe_plan_check sorts the group DAG and reports a cycle, naming the group
 * and a node on the way out and back. Drivers never build an illegal plan:
 * they grow groups with partition.c, which checks each merge.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "partition.h"
#include "plan.h"

static const char *const class_names[FE_NCLASS] = {"single", "pointwise", "gemm", "collective"};

const char *fe_class_name(int c)
{
    return c >= 0 && c < FE_NCLASS ? class_names[c] : "illegal";
}

void fe_kinds_add(fe_kinds *k, const fe_graph *g, int32_t node)
{
    const fe_node *n = fe_graph_node(g, node);
    k->n++;
    if (n->op == FE_OP_ALL_REDUCE)
        k->collective++;
    else if (n->op == FE_OP_BATCH_NORM)
        k->affine++;
    else if (n->pattern == FE_OUT_FUSABLE)
        k->gemm++;
    else if (n->pattern == FE_OPAQUE)
        k->opaque++;
    else if (n->pattern == FE_INJECTIVE)
        k->injective++;
    else if (n->pattern == FE_REDUCTION)
        k->reduction++;
}

void fe_kinds_merge(fe_kinds *into, const fe_kinds *from)
{
    into->n += from->n;
    into->gemm += from->gemm;
    into->collective += from->collective;
    into->opaque += from->opaque;
    into->injective += from->injective;
    into->reduction += from->reduction;
    into->affine += from->affine;
}

int fe_kinds_class(const fe_kinds *k, const char **why)
{
    const char *w = NULL;
    int c = -1;
    if (k->n == 1)
        c = FE_CLASS_SINGLE;
    else if (k->opaque > 0)
        w = "an opaque op (sdpa, pooling, opaque custom) runs alone";
    else if (k->gemm + k->collective > 1)
        w = "one kernel holds at most one matmul, conv2d or all_reduce";
    else if (k->gemm == 1 && k->injective > 0)
        w = "a matmul/conv kernel takes only elementwise, broadcast and reduction ops around it, "
            "no data movement (reshape, transpose, slice, ...)";
    else if (k->gemm == 1)
        c = FE_CLASS_GEMM;
    else if (k->collective == 1 && (k->injective || k->reduction || k->affine))
        w = "an all_reduce kernel takes only an elementwise/broadcast epilogue";
    else if (k->collective == 1)
        c = FE_CLASS_COLLECTIVE;
    else
        c = FE_CLASS_POINTWISE;
    if (why)
        *why = w;
    return c;
}

/* ---- plan objects ---- */

static fe_plan *plan_alloc(const fe_graph *g, int32_t ngroups, fe_error *err)
{
    fe_plan *p = calloc(1, sizeof *p);
    if (!p)
        goto oom;
    p->g = g;
    p->policy = p->machine = -1;
    p->strs = fe_strtab_new();
    p->ngroups = ngroups;
    p->groups = calloc(ngroups > 0 ? (size_t)ngroups : 1u, sizeof *p->groups);
    p->members = malloc((g->nnodes > 0 ? (size_t)g->nnodes : 1u) * sizeof *p->members);
    p->group_of = malloc((g->nnodes > 0 ? (size_t)g->nnodes : 1u) * sizeof *p->group_of);
    if (p->strs && p->groups && p->members && p->group_of)
        return p;
    fe_plan_free(p);
oom:
    fe_error_set(err, FE_ENOMEM, "out of memory building a plan");
    return NULL;
}

fe_plan *fe_plan_unfused(const fe_graph *g, fe_error *err)
{
    fe_plan *p = plan_alloc(g, g->nnodes, err);
    if (!p)
        return NULL;
    for (int32_t v = 0; v < g->nnodes; v++) {
        p->groups[v] = (fe_group){.off = v, .n = 1, .split = 0, .reason = -1,
                                  .klass = FE_CLASS_SINGLE};
        p->members[v] = v;
        p->group_of[v] = v;
    }
    return p;
}

void fe_plan_free(fe_plan *p)
{
    if (!p)
        return;
    fe_strtab_free(p->strs);
    free(p->groups);
    free(p->members);
    free(p->group_of);
    free(p->decisions);
    free(p->dnodes);
    free(p);
}

int32_t fe_plan_str(fe_plan *p, const char *s)
{
    return s ? fe_strtab_intern(p->strs, s, strlen(s)) : -1;
}

void fe_plan_set_reason(fe_plan *p, int32_t group, const char *reason)
{
    p->groups[group].reason = fe_plan_str(p, reason);
}

int fe_plan_log(fe_plan *p, const int32_t *nodes, int n, int verdict, const char *by,
                const char *reason)
{
    if (p->ndecisions == p->cap_decisions) {
        int32_t cap = p->cap_decisions ? 2 * p->cap_decisions : 64;
        fe_decision *d = realloc(p->decisions, (size_t)cap * sizeof *d);
        if (!d)
            return FE_ENOMEM;
        p->decisions = d;
        p->cap_decisions = cap;
    }
    if (p->ndnodes + n > p->cap_dnodes) {
        int64_t cap = p->cap_dnodes ? 2 * p->cap_dnodes : 256;
        while (cap < p->ndnodes + n)
            cap *= 2;
        int32_t *d = realloc(p->dnodes, (size_t)cap * sizeof *d);
        if (!d)
            return FE_ENOMEM;
        p->dnodes = d;
        p->cap_dnodes = cap;
    }
    if (n > 0)
        memcpy(p->dnodes + p->ndnodes, nodes, (size_t)n * sizeof *nodes);
    p->decisions[p->ndecisions++] = (fe_decision){
        .off = (int32_t)p->ndnodes, .n = n, .verdict = (int8_t)verdict,
        .by = fe_plan_str(p, by), .reason = fe_plan_str(p, reason)};
    p->ndnodes += n;
    return FE_OK;
}

fe_plan *fe_plan_from_labels(const fe_graph *g, const int32_t *labels, fe_error *err)
{
    fe_part *part = fe_part_new(g, err);
    if (!part)
        return NULL;
    /* The first node seen with each label stands for the label's group. */
    int32_t maxl = -1;
    for (int32_t v = 0; v < g->nnodes; v++) {
        if (labels[v] < 0) {
            fe_error_set(err, FE_EINPUT, "node '%s' has no group", fe_node_name(g, fe_graph_node(g, v)));
            fe_part_free(part);
            return NULL;
        }
        if (labels[v] > maxl)
            maxl = labels[v];
    }
    int32_t *first = malloc(((size_t)maxl + 1) * sizeof *first);
    int32_t *gids = malloc((g->nnodes > 0 ? (size_t)g->nnodes : 1u) * sizeof *gids);
    int32_t *cnt = calloc((size_t)maxl + 2, sizeof *cnt);
    int32_t *order = malloc((g->nnodes > 0 ? (size_t)g->nnodes : 1u) * sizeof *order);
    fe_plan *plan = NULL;
    if (!first || !gids || !cnt || !order) {
        fe_error_set(err, FE_ENOMEM, "out of memory building a plan");
        goto out;
    }
    /* Bucket nodes by label, then merge each bucket in one step. */
    for (int32_t v = 0; v < g->nnodes; v++)
        cnt[labels[v] + 1]++;
    for (int32_t l = 0; l <= maxl; l++)
        cnt[l + 1] += cnt[l];
    for (int32_t v = 0; v < g->nnodes; v++)
        order[cnt[labels[v]]++] = v;
    int32_t at = 0;
    for (int32_t l = 0; l <= maxl; l++) {
        int32_t n = 0;
        while (at < g->nnodes && labels[order[at]] == l)
            gids[n++] = part->gid[order[at++]];
        if (n < 2)
            continue;
        char why[512];
        if (!fe_part_can_merge(part, gids, n, why, sizeof why)) {
            fe_error_set(err, FE_EINPUT, "group with node '%s' is illegal: %s",
                         fe_node_name(g, fe_graph_node(g, gids[0])), why);
            goto out;
        }
        fe_part_merge(part, gids, n);
    }
    plan = fe_part_to_plan(part, err);
out:
    free(first);
    free(gids);
    free(cnt);
    free(order);
    fe_part_free(part);
    return plan;
}

/* Find a node of group a with a consumer in group b (for messages). */
static int32_t edge_node(const fe_plan *p, int32_t a, int32_t b)
{
    const fe_graph *g = p->g;
    const fe_group *ga = &p->groups[a];
    for (int32_t i = 0; i < ga->n; i++) {
        const fe_node *n = fe_graph_node(g, p->members[ga->off + i]);
        for (int k = 0; k < n->nout; k++) {
            const fe_tensor *t = fe_graph_tensor(g, fe_node_output(g, n, k));
            for (int32_t c = 0; c < t->ncons; c++)
                if (p->group_of[fe_tensor_consumer(g, t, c)] == b)
                    return fe_tensor_consumer(g, t, c);
        }
    }
    return -1;
}

int fe_plan_check(const fe_plan *p, fe_error *err)
{
    const fe_graph *g = p->g;
    int32_t *seen = calloc(g->nnodes > 0 ? (size_t)g->nnodes : 1u, sizeof *seen);
    int rc = FE_OK;
    if (!seen)
        return fe_error_set(err, FE_ENOMEM, "out of memory checking a plan");
    int64_t total = 0;
    for (int32_t gi = 0; gi < p->ngroups && rc == FE_OK; gi++) {
        const fe_group *gr = &p->groups[gi];
        fe_kinds k = {0};
        const char *why;
        if (gr->n < 1) {
            rc = fe_error_set(err, FE_EINPUT, "group %d is empty", gi);
            break;
        }
        total += gr->n;
        for (int32_t i = 0; i < gr->n; i++) {
            int32_t v = p->members[gr->off + i];
            if (v < 0 || v >= g->nnodes || seen[v]++ || p->group_of[v] != gi ||
                (i > 0 && v <= p->members[gr->off + i - 1])) {
                rc = fe_error_set(err, FE_EINPUT, "group %d: members are not distinct sorted "
                                  "nodes of this graph, each in one group", gi);
                break;
            }
            fe_kinds_add(&k, g, v);
        }
        if (rc == FE_OK && fe_kinds_class(&k, &why) != gr->klass)
            rc = fe_error_set(err, FE_EINPUT, "group %d (node '%s'): %s", gi,
                              fe_node_name(g, fe_graph_node(g, p->members[gr->off])),
                              why ? why : "its kernel class is wrong");
    }
    if (rc == FE_OK && total != g->nnodes)
        rc = fe_error_set(err, FE_EINPUT, "the plan's groups hold %lld of %d nodes",
                          (long long)total, g->nnodes);
    /* Dependency order: every producer's group comes no later than its
     * consumer's. With groups listed in order this also rules out cycles
     * (a cycle has a back edge in any order) and thus non-convex groups. */
    for (int32_t v = 0; v < g->nnodes && rc == FE_OK; v++) {
        const fe_node *n = fe_graph_node(g, v);
        for (int k = 0; k < n->nin && rc == FE_OK; k++) {
            int32_t prod = fe_graph_tensor(g, fe_node_input(g, n, k))->producer;
            if (prod < 0 || p->group_of[prod] <= p->group_of[v])
                continue;
            int32_t a = p->group_of[v], b = p->group_of[prod];
            int32_t via = edge_node(p, a, b);
            rc = fe_error_set(err, FE_EINPUT,
                              "groups %d and %d depend on each other (node '%s' needs '%s' from "
                              "group %d%s%s): a group is not convex or the groups form a cycle",
                              a, b, fe_node_name(g, n), fe_node_name(g, fe_graph_node(g, prod)), b,
                              via >= 0 ? ", which needs node " : "",
                              via >= 0 ? fe_node_name(g, fe_graph_node(g, via)) : "");
        }
    }
    free(seen);
    return rc;
}
