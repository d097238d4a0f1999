/* partition.c: groups that grow by legal merges.
 *
 * Note on the merge check. Groups S = {G1..Gk} may merge when a kernel
 * class takes their ops together and no path leaves S and comes back:
 *
 *      G1 ---> C ---> G2        merging G1 and G2 would make C both a
 *                               consumer and a producer of the new group
 *
 * The search walks the group DAG forward from S through groups outside S;
 * reaching S again means the merge is illegal. To keep it short the groups
 * carry a topological order (pos): a path back into S must end at a group
 * no later than S's last one, and positions grow along every path, so
 * groups placed after S's last group are never searched. (Node ids do not
 * bound it: a group is not an interval of ids, so a path can enter a group
 * at a late node and leave it from an early one.)
 *
 * After a merge the order is repaired locally, in the spirit of Pearce and
 * Kelly's dynamic topological sort: in the span of positions from S's first
 * group to its last, S's ancestors move first, then the merged group, then
 * everything else, each keeping its relative order. Positions outside the
 * span are untouched; emptied slots stay free (-1). Drivers propose nearby
 * groups (Inductor's +-64 window), so spans and searches stay short.
 *
 * Every group is convex and the group DAG acyclic after each merge, so the
 * partition is legal at every moment and fe_part_to_plan needs no check.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "partition.h"

fe_part *fe_part_new(const fe_graph *g, fe_error *err)
{
    fe_part *p = calloc(1, sizeof *p);
    size_t n = g->nnodes > 0 ? (size_t)g->nnodes : 1u;
    if (p) {
        p->g = g;
        p->n = p->ngroups = g->nnodes;
        p->gid = malloc(n * sizeof *p->gid);
        p->next = malloc(n * sizeof *p->next);
        p->head = malloc(n * sizeof *p->head);
        p->size = malloc(n * sizeof *p->size);
        p->minv = malloc(n * sizeof *p->minv);
        p->maxv = malloc(n * sizeof *p->maxv);
        p->kinds = calloc(n, sizeof *p->kinds);
        p->pos = malloc(n * sizeof *p->pos);
        p->order = malloc(n * sizeof *p->order);
        p->mark = calloc(n, sizeof *p->mark);
        p->stack = malloc(n * sizeof *p->stack);
        p->tmp = malloc(n * sizeof *p->tmp);
    }
    if (!p || !p->gid || !p->next || !p->head || !p->size || !p->minv || !p->maxv ||
        !p->pos || !p->order || !p->kinds || !p->mark || !p->stack || !p->tmp) {
        fe_part_free(p);
        fe_error_set(err, FE_ENOMEM, "out of memory building groups");
        return NULL;
    }
    for (int32_t v = 0; v < g->nnodes; v++) {
        p->gid[v] = p->head[v] = p->minv[v] = p->maxv[v] = p->pos[v] = p->order[v] = v;
        p->next[v] = -1;
        p->size[v] = 1;
        fe_kinds_add(&p->kinds[v], g, v);
    }
    return p;
}

void fe_part_free(fe_part *p)
{
    if (!p)
        return;
    free(p->gid);
    free(p->next);
    free(p->head);
    free(p->size);
    free(p->minv);
    free(p->maxv);
    free(p->kinds);
    free(p->pos);
    free(p->order);
    free(p->mark);
    free(p->stack);
    free(p->tmp);
    free(p);
}

/* Push the groups that consume outputs of group c, are not yet seen and
 * are placed no later than last; returns a node of S reached directly from
 * c (a path back), or -1. */
static int32_t expand(fe_part *p, int32_t c, int32_t in_s, int32_t seen, int32_t last,
                      int from_s, int32_t *sp)
{
    const fe_graph *g = p->g;
    for (int32_t v = p->head[c]; v >= 0; v = p->next[v]) {
        const fe_node *n = fe_graph_node(g, v);
        for (int k = 0; k < n->nout; k++) {
            const fe_tensor *t = fe_graph_tensor(g, fe_node_output(g, n, k));
            for (int32_t i = 0; i < t->ncons; i++) {
                int32_t u = fe_tensor_consumer(g, t, i);
                int32_t d = p->gid[u];
                if (p->mark[d] == in_s) {
                    if (!from_s)
                        return u;
                    continue;   /* an edge inside S */
                }
                if (p->mark[d] == seen || p->pos[d] > last)
                    continue;
                p->mark[d] = seen;
                p->stack[(*sp)++] = d;
            }
        }
    }
    return -1;
}

int fe_part_can_merge(fe_part *p, const int32_t *gids, int n, char *why, size_t size)
{
    const fe_graph *g = p->g;
    fe_kinds k = {0};
    const char *w;
    int32_t last = -1;

    for (int i = 0; i < n; i++) {
        fe_kinds_merge(&k, &p->kinds[gids[i]]);
        if (p->pos[gids[i]] > last)
            last = p->pos[gids[i]];
    }
    if (fe_kinds_class(&k, &w) < 0) {
        snprintf(why, size, "%s", w);
        return 0;
    }
    if (p->stamp > INT32_MAX - 4) {
        memset(p->mark, 0, (size_t)p->n * sizeof *p->mark);
        p->stamp = 0;
    }
    int32_t in_s = ++p->stamp, seen = ++p->stamp, sp = 0;
    for (int i = 0; i < n; i++)
        p->mark[gids[i]] = in_s;
    for (int i = 0; i < n; i++)
        expand(p, gids[i], in_s, seen, last, 1, &sp);
    while (sp > 0) {
        int32_t c = p->stack[--sp];
        int32_t back = expand(p, c, in_s, seen, last, 0, &sp);
        if (back >= 0) {
            snprintf(why, size, "not convex: a path leaves the group through node '%s' and comes "
                     "back into node '%s'", fe_node_name(g, fe_graph_node(g, p->head[c])),
                     fe_node_name(g, fe_graph_node(g, back)));
            return 0;
        }
    }
    return 1;
}

/* Mark S's ancestors placed after first (the span's start) with stamp anc;
 * S itself is marked in_s. */
static void mark_ancestors(fe_part *p, const int32_t *gids, int n, int32_t in_s, int32_t anc,
                           int32_t first)
{
    const fe_graph *g = p->g;
    int32_t sp = 0;
    for (int i = 0; i < n; i++)
        p->stack[sp++] = gids[i];
    while (sp > 0) {
        int32_t c = p->stack[--sp];
        for (int32_t v = p->head[c]; v >= 0; v = p->next[v]) {
            const fe_node *nd = fe_graph_node(g, v);
            for (int k = 0; k < nd->nin; k++) {
                int32_t prod = fe_graph_tensor(g, fe_node_input(g, nd, k))->producer;
                if (prod < 0)
                    continue;
                int32_t d = p->gid[prod];
                if (p->mark[d] == in_s || p->mark[d] == anc || p->pos[d] < first)
                    continue;
                p->mark[d] = anc;
                p->stack[sp++] = d;
            }
        }
    }
}

int32_t fe_part_merge(fe_part *p, const int32_t *gids, int n)
{
    int32_t keep = gids[0], first = p->pos[gids[0]], last = first;
    for (int i = 1; i < n; i++) {
        if (p->size[gids[i]] > p->size[keep])
            keep = gids[i];
        if (p->pos[gids[i]] < first)
            first = p->pos[gids[i]];
        if (p->pos[gids[i]] > last)
            last = p->pos[gids[i]];
    }
    if (p->stamp > INT32_MAX - 4) {
        memset(p->mark, 0, (size_t)p->n * sizeof *p->mark);
        p->stamp = 0;
    }
    int32_t in_s = ++p->stamp, anc = ++p->stamp;
    for (int i = 0; i < n; i++)
        p->mark[gids[i]] = in_s;
    mark_ancestors(p, gids, n, in_s, anc, first);

    /* Re-lay the span [first, last]: ancestors, the merged group, the rest;
     * the slots S gives up become free at the end of the span. */
    int32_t na = 0, nr = 0;
    for (int32_t at = first; at <= last; at++) {
        int32_t d = p->order[at];
        if (d < 0 || p->mark[d] == in_s)
            continue;
        if (p->mark[d] == anc)
            p->stack[na++] = d;
        else
            p->tmp[nr++] = d;
    }
    int32_t at = first;
    for (int32_t i = 0; i < na; i++) {
        p->order[at] = p->stack[i];
        p->pos[p->stack[i]] = at++;
    }
    p->order[at] = keep;
    p->pos[keep] = at++;
    for (int32_t i = 0; i < nr; i++) {
        p->order[at] = p->tmp[i];
        p->pos[p->tmp[i]] = at++;
    }
    while (at <= last)
        p->order[at++] = -1;

    for (int i = 0; i < n; i++) {
        int32_t o = gids[i];
        if (o == keep)
            continue;
        /* Relabel the smaller list and splice it in front of keep's. */
        int32_t tail = -1;
        for (int32_t v = p->head[o]; v >= 0; v = p->next[v]) {
            p->gid[v] = keep;
            tail = v;
        }
        p->next[tail] = p->head[keep];
        p->head[keep] = p->head[o];
        p->size[keep] += p->size[o];
        if (p->minv[o] < p->minv[keep])
            p->minv[keep] = p->minv[o];
        if (p->maxv[o] > p->maxv[keep])
            p->maxv[keep] = p->maxv[o];
        fe_kinds_merge(&p->kinds[keep], &p->kinds[o]);
        p->size[o] = 0;
        p->head[o] = -1;
        p->pos[o] = -1;
        p->ngroups--;
    }
    return keep;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

int32_t fe_part_members(const fe_part *p, int32_t gid, int32_t *out)
{
    int32_t n = 0;
    for (int32_t v = p->head[gid]; v >= 0; v = p->next[v])
        out[n++] = v;
    if (n < 16) {
        for (int32_t i = 1; i < n; i++) {
            int32_t x = out[i], j = i;
            while (j > 0 && out[j - 1] > x) {
                out[j] = out[j - 1];
                j--;
            }
            out[j] = x;
        }
    } else {
        qsort(out, (size_t)n, sizeof *out, cmp_i32);
    }
    return n;
}

/* Groups in the partition's topological order of groups. */
fe_plan *fe_part_to_plan(const fe_part *p, fe_error *err)
{
    const fe_graph *g = p->g;
    fe_plan *plan = calloc(1, sizeof *plan);
    size_t nn = g->nnodes > 0 ? (size_t)g->nnodes : 1u;
    if (!plan)
        goto oom;
    plan->g = g;
    plan->policy = plan->machine = -1;
    plan->strs = fe_strtab_new();
    plan->groups = calloc(p->ngroups > 0 ? (size_t)p->ngroups : 1u, sizeof *plan->groups);
    plan->members = malloc(nn * sizeof *plan->members);
    plan->group_of = malloc(nn * sizeof *plan->group_of);
    if (!plan->strs || !plan->groups || !plan->members || !plan->group_of)
        goto oom;
    int32_t ng = 0, off = 0;
    for (int32_t at = 0; at < p->n; at++) {
        int32_t gid = p->order[at];
        if (gid < 0)
            continue;
        const char *why;
        int32_t cnt = fe_part_members(p, gid, plan->members + off);
        plan->groups[ng] = (fe_group){.off = off, .n = cnt, .split = 0, .reason = -1,
                                      .klass = (int8_t)fe_kinds_class(&p->kinds[gid], &why)};
        for (int32_t m = 0; m < cnt; m++)
            plan->group_of[plan->members[off + m]] = ng;
        off += cnt;
        ng++;
    }
    plan->ngroups = ng;
    return plan;
oom:
    fe_plan_free(plan);
    fe_error_set(err, FE_ENOMEM, "out of memory building a plan");
    return NULL;
}
