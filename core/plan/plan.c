/* plan.c: plan objects (plan.h); what makes one legal is legality.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "plan.h"

_Static_assert(FE_PLAN_MAX_SPLIT == 16777216, "FE_PLAN_SPLIT_RULE spells the limit out");

static const char *const class_names[FE_NCLASS] = {"single", "pointwise", "gemm", "collective",
                                                            "pool"};

const char *fe_class_name(int c)
{
    return c >= 0 && c < FE_NCLASS ? class_names[c] : "illegal";
}

/* ---- plan objects ---- */

fe_plan *fe_plan_new(const fe_graph *g, int32_t ngroups, fe_error *err)
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
    fe_plan *p = fe_plan_new(g, g->nnodes, err);
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
    free(p->copies);
    free(p->solves);
    free(p->solve_nodes);
    free(p->solve_group);
    free(p);
}

/* A plan's text comes from scripts and plan files and ends up in reports:
 * control characters are stored escaped, so a reason is one line. */
/* s escaped (one line, no control characters) into p's table by add. */
static int32_t store(fe_plan *p, const char *s, int32_t (*add)(fe_strtab *, const char *, size_t))
{
    if (!s)
        return -1;
    if (fe_control_at(s, 0) < 0)
        return add(p->strs, s, strlen(s));
    char *shown = fe_escape_dup(s, 0);
    int32_t id = shown ? add(p->strs, shown, strlen(shown)) : -1;
    free(shown);
    return id;
}

int32_t fe_plan_str(fe_plan *p, const char *s)
{
    return store(p, s, fe_strtab_intern);
}

int32_t fe_plan_note_str(fe_plan *p, const char *s)
{
    return store(p, s, fe_strtab_append);
}

void fe_plan_set_reason(fe_plan *p, int32_t group, const char *reason)
{
    p->groups[group].reason = fe_plan_str(p, reason);
}

int fe_plan_log(fe_plan *p, const int32_t *nodes, int n, int verdict, const char *by,
                const char *reason)
{
    return fe_plan_log_ids(p, nodes, n, verdict, fe_plan_str(p, by), fe_plan_str(p, reason));
}

int fe_plan_log_ids(fe_plan *p, const int32_t *nodes, int n, int verdict, int32_t by,
                    int32_t reason)
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
        .off = (int32_t)p->ndnodes, .n = n, .verdict = (int8_t)verdict, .by = by, .reason = reason};
    p->ndnodes += n;
    return FE_OK;
}

const char *fe_verdict_name(int verdict)
{
    switch (verdict) {
    case 1: return "fuse";
    case 0: return "no";
    case -1: return "none";
    case -2: return "rejected";
    default: return "note";
    }
}

/* ---- layout copies ---- */

const char *fe_plan_copy_refusal(const fe_plan *p, int32_t t)
{
    if (t < 0 || t >= p->g->ntensors)
        return "is no tensor of the model";
    const fe_tensor *x = fe_graph_tensor(p->g, t);
    if (x->producer >= 0)
        return "is produced by a node (only graph inputs and weights are copied: a kernel "
               "writes its output in the layout its readers want)";
    if (x->ncons == 0)
        return "is read by no node";
    for (int32_t i = 0; i < p->ncopies; i++)
        if (p->copies[i].tensor == t)
            return "is copied twice";
    return NULL;
}

int fe_plan_add_copy(fe_plan *p, int32_t t, const char *reason)
{
    fe_copy *c = realloc(p->copies, ((size_t)p->ncopies + 1) * sizeof *c);
    if (!c)
        return FE_ENOMEM;
    p->copies = c;
    c[p->ncopies++] = (fe_copy){.tensor = t, .reason = fe_plan_str(p, reason)};
    return FE_OK;
}

int32_t fe_plan_copy_group(const fe_plan *p, int32_t t)
{
    const fe_tensor *x = fe_graph_tensor(p->g, t);
    int32_t first = p->ngroups;
    for (int32_t j = 0; j < x->ncons; j++) {
        int32_t gr = p->group_of[fe_tensor_consumer(p->g, x, j)];
        if (gr < first)
            first = gr;
    }
    return first;
}

/* ---- solve records ---- */

int fe_plan_add_solve(fe_plan *p, const fe_solve *s, const int32_t *nodes, const int32_t *group)
{
    int32_t at = p->nsolves ? p->solves[p->nsolves - 1].off + p->solves[p->nsolves - 1].n : 0;
    fe_solve *ss = realloc(p->solves, ((size_t)p->nsolves + 1) * sizeof *ss);
    if (!ss)
        return FE_ENOMEM;
    p->solves = ss;
    int32_t *sn = realloc(p->solve_nodes, ((size_t)at + (size_t)s->n) * sizeof *sn);
    if (sn)
        p->solve_nodes = sn;
    int32_t *sg = sn ? realloc(p->solve_group, ((size_t)at + (size_t)s->n) * sizeof *sg) : NULL;
    if (!sg)
        return FE_ENOMEM;
    p->solve_group = sg;
    memcpy(sn + at, nodes, (size_t)s->n * sizeof *sn);
    memcpy(sg + at, group, (size_t)s->n * sizeof *sg);
    ss[p->nsolves] = *s;
    ss[p->nsolves++].off = at;
    return FE_OK;
}

int fe_plan_solve_applied(const fe_plan *p, int32_t i)
{
    const fe_solve *s = &p->solves[i];
    const int32_t *nodes = p->solve_nodes + s->off, *grp = p->solve_group + s->off;
    if (!p->group_of)
        return 0;
    /* Equal partitions of the window: the plan's group of a node has the
     * size of its solution group, and the nodes of a solution group share
     * one plan group, so each plan group is exactly a solution group. */
    int32_t ng = 0;
    for (int32_t k = 0; k < s->n; k++)
        ng = grp[k] + 1 > ng ? grp[k] + 1 : ng;
    int32_t *first = malloc((size_t)(ng > 0 ? ng : 1) * sizeof *first);
    int32_t *size = calloc((size_t)(ng > 0 ? ng : 1), sizeof *size);
    int ok = first && size;
    for (int32_t k = 0; ok && k < ng; k++)
        first[k] = -1;
    for (int32_t k = 0; ok && k < s->n; k++) {
        int32_t pg = p->group_of[nodes[k]];
        size[grp[k]]++;
        if (first[grp[k]] < 0)
            first[grp[k]] = pg;
        else if (first[grp[k]] != pg)
            ok = 0;
    }
    for (int32_t k = 0; ok && k < ng; k++)
        ok = first[k] < 0 || p->groups[first[k]].n == size[k];
    free(first);
    free(size);
    return ok;
}
