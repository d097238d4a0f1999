/* plan_build.c: plans built from partitions, and from labels through the
 * partition's legal merges (plan_build.h). Legality is legality.c's: a
 * label's group becomes one only through fe_part_can_merge. */
#include <stdlib.h>
#include <string.h>

#include "legality.h"
#include "plan_build.h"

/* Groups in the partition's topological order of groups. */
fe_plan *fe_part_to_plan(const fe_part *p, fe_error *err)
{
    fe_plan *plan = fe_plan_new(p->g, p->ngroups, err);
    if (!plan)
        return NULL;
    int32_t ng = 0, off = 0;
    for (int32_t at = 0; at < p->n; at++) {
        int32_t gid = p->order[at];
        if (gid < 0)
            continue;
        int32_t cnt = fe_part_members(p, gid, plan->members + off);
        plan->groups[ng] = (fe_group){.off = off, .n = cnt, .split = 0, .reason = -1,
                                      .klass = (int8_t)fe_kinds_class(&p->kinds[gid], NULL)};
        for (int32_t m = 0; m < cnt; m++)
            plan->group_of[plan->members[off + m]] = ng;
        off += cnt;
        ng++;
    }
    return plan;
}

typedef struct {
    int32_t label, group;
} labelled;

static int cmp_labelled(const void *a, const void *b)
{
    const labelled *x = a, *y = b;
    return (x->label > y->label) - (x->label < y->label);
}

/* Put plan's groups in the order of their labels when that order is a
 * dependency order, as a plan file's is: the partition's own order follows
 * the order of the merges, and a plan read back must run as written.
 * FE_OK (plan unchanged if the labels' order is no dependency order) or
 * FE_ENOMEM. */
static int label_order(fe_plan *plan, const int32_t *labels, fe_error *err)
{
    const fe_graph *g = plan->g;
    int32_t ng = plan->ngroups;
    for (int32_t v = 0; v < g->nnodes; v++) {
        const fe_node *n = fe_graph_node(g, v);
        for (int k = 0; k < n->nout; k++) {
            const fe_tensor *t = fe_graph_tensor(g, fe_node_output(g, n, k));
            for (int32_t c = 0; c < t->ncons; c++)
                if (labels[fe_tensor_consumer(g, t, c)] < labels[v])
                    return FE_OK;
        }
    }
    labelled *order = malloc((size_t)ng * sizeof *order);
    fe_group *groups = malloc((size_t)ng * sizeof *groups);
    int32_t *members = malloc((size_t)g->nnodes * sizeof *members);
    if (!order || !groups || !members) {
        free(order);
        free(groups);
        free(members);
        return fe_error_set(err, FE_ENOMEM, "out of memory building a plan");
    }
    for (int32_t gi = 0; gi < ng; gi++)
        order[gi] = (labelled){labels[plan->members[plan->groups[gi].off]], gi};
    qsort(order, (size_t)ng, sizeof *order, cmp_labelled);
    for (int32_t k = 0, off = 0; k < ng; k++) {
        fe_group gr = plan->groups[order[k].group];
        memcpy(members + off, plan->members + gr.off, (size_t)gr.n * sizeof *members);
        gr.off = off;
        groups[k] = gr;
        for (int32_t m = 0; m < gr.n; m++)
            plan->group_of[members[off + m]] = k;
        off += gr.n;
    }
    memcpy(plan->groups, groups, (size_t)ng * sizeof *groups);
    memcpy(plan->members, members, (size_t)g->nnodes * sizeof *members);
    free(order);
    free(groups);
    free(members);
    return FE_OK;
}

fe_plan *fe_plan_from_labels(const fe_graph *g, const int32_t *labels, fe_error *err)
{
    fe_part *part = fe_part_new(g, err);
    if (!part)
        return NULL;
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
    size_t nn = g->nnodes > 0 ? (size_t)g->nnodes : 1u;
    int32_t *gids = malloc(nn * sizeof *gids);
    int32_t *cnt = calloc((size_t)maxl + 2, sizeof *cnt);
    int32_t *order = malloc(nn * sizeof *order);
    fe_plan *plan = NULL;
    if (!gids || !cnt || !order) {
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
    if (plan && label_order(plan, labels, err) != FE_OK) {
        fe_plan_free(plan);
        plan = NULL;
    }
out:
    free(gids);
    free(cnt);
    free(order);
    fe_part_free(part);
    return plan;
}
