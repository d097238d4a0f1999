/* api_ab_diff.c: fuseeng ab --diff A B MODEL: where two policies' plans of
 * one model differ, why, and what each difference costs.
 *
 * Note on regions. Two partitions of the same nodes differ in places; a
 * place is a region: the smallest set of nodes that is a union of A's
 * groups and also a union of B's groups (a connected component of "same
 * group in A or in B"). A region holding one group in each plan is where
 * the two agree; every other region is a difference:
 *
 *     A: [a b c] [d]        regions: {a b c d}  A 2 groups, B 2 groups
 *     B: [a b] [c d]                 (c moved from A's first group)
 *
 * Each region is priced by simulating its groups on the engine's machine
 * as the whole plan's report prices them (so A's and B's region times add
 * up to the plans' times, minus the regions where they agree), and comes
 * with the decisions of each plan's log that name one of its nodes (each
 * once): the verdicts and reasons that led each policy there. Regions print by cost,
 * largest first.
 */
#include <stdlib.h>
#include <string.h>

#include "api_ab.h"
#include "strtab.h"

typedef struct region {
    int root;
    int na, nb;                  /* groups of A and of B in it */
    double a_s, b_s;             /* their simulated times */
} region;

static int find(int *up, int x)
{
    while (up[x] != x)
        x = up[x] = up[up[x]];
    return x;
}

static void unite_groups(const fe_plan *p, int *up)
{
    for (int gi = 0; gi < p->ngroups; gi++) {
        const fe_group *gr = &p->groups[gi];
        const int32_t *nodes = fe_group_nodes(p, gr);
        for (int k = 1; k < gr->n; k++) {
            int a = find(up, nodes[0]), b = find(up, nodes[k]);
            if (a != b)
                up[a] = b;
        }
    }
}

static const char *pstr(const fe_plan *p, int32_t id)
{
    return id >= 0 ? fe_strtab_str(p->strs, id) : "";
}

static void node_list(const fe_graph *g, const int32_t *nodes, int n, FILE *f, fe_jw *w)
{
    if (w)
        fe_jw_arr_flat(w);
    else
        fputc('[', f);
    for (int k = 0; k < n; k++)
        if (w)
            fe_jw_str(w, fe_node_name(g, fe_graph_node(g, nodes[k])));
        else
            fprintf(f, "%s%s", k ? " " : "", fe_node_name(g, fe_graph_node(g, nodes[k])));
    if (w)
        fe_jw_end(w);
    else
        fputc(']', f);
}

/* Equal reasons: a reason naming its parts is stored once per decision
 * (run.c), so equal text can have two ids. */
static int same_reason(const fe_plan *p, const fe_decision *x, const fe_decision *y)
{
    if (x->reason == y->reason)
        return 1;
    return x->reason >= 0 && y->reason >= 0 &&
           strcmp(fe_strtab_str(p->strs, x->reason), fe_strtab_str(p->strs, y->reason)) == 0;
}

/* Decision d repeats an earlier one (greedy drivers ask again each round). */
static int repeated(const fe_plan *p, int d)
{
    const fe_decision *x = &p->decisions[d];
    for (int e = 0; e < d; e++) {
        const fe_decision *y = &p->decisions[e];
        if (y->n == x->n && y->verdict == x->verdict && y->by == x->by && same_reason(p, x, y) &&
            memcmp(&p->dnodes[y->off], &p->dnodes[x->off], (size_t)x->n * sizeof *p->dnodes) == 0)
            return 1;
    }
    return 0;
}

/* One plan's side of a region: its groups with their times and reasons,
 * then the decisions naming a node of the region. */
static void side(const fe_plan *p, const fe_sim_report *rep, const int *up, int root,
                 const char *name, FILE *f, fe_jw *w)
{
    const fe_graph *g = p->g;
    if (w) {
        fe_jw_key(w, name);
        fe_jw_obj(w);
        fe_jw_key(w, "groups");
        fe_jw_arr(w);
    } else {
        fprintf(f, "  %s:\n", name);
    }
    for (int gi = 0; gi < p->ngroups; gi++) {
        const fe_group *gr = &p->groups[gi];
        const int32_t *nodes = fe_group_nodes(p, gr);
        if (find((int *)up, nodes[0]) != root)
            continue;
        double t = rep->groups[gi].time_s * 1e3;
        if (w) {
            fe_jw_obj_flat(w);
            fe_jw_key(w, "nodes");
            node_list(g, nodes, gr->n, f, w);
            fe_ab_jnum(w, "sim_ms", t);
            fe_ab_jstr(w, "reason", pstr(p, gr->reason));
            fe_jw_end(w);
        } else {
            fprintf(f, "    group ");
            node_list(g, nodes, gr->n, f, NULL);
            fprintf(f, " %.4f ms%s%s\n", t, gr->reason >= 0 ? ": " : "", pstr(p, gr->reason));
        }
    }
    if (w) {
        fe_jw_end(w);
        fe_jw_key(w, "decisions");
        fe_jw_arr(w);
    }
    for (int d = 0; d < p->ndecisions; d++) {
        const fe_decision *dc = &p->decisions[d];
        int in = 0;
        for (int k = 0; k < dc->n && !in; k++)
            in = find((int *)up, p->dnodes[dc->off + k]) == root;
        if (!in || repeated(p, d))
            continue;
        if (w) {
            fe_jw_obj_flat(w);
            fe_jw_key(w, "nodes");
            node_list(g, &p->dnodes[dc->off], dc->n, f, w);
            fe_ab_jstr(w, "verdict", fe_verdict_name(dc->verdict));
            fe_ab_jstr(w, "by", pstr(p, dc->by));
            fe_ab_jstr(w, "reason", pstr(p, dc->reason));
            fe_jw_end(w);
        } else {
            fprintf(f, "    decision %-8s ", fe_verdict_name(dc->verdict));
            node_list(g, &p->dnodes[dc->off], dc->n, f, NULL);
            fprintf(f, " by %s: %s\n", pstr(p, dc->by), pstr(p, dc->reason));
        }
    }
    if (w) {
        fe_jw_end(w);
        fe_jw_end(w);
    }
}

static int cmp_cost(const void *x, const void *y)
{
    const region *a = x, *b = y;
    double da = a->a_s - a->b_s, db = b->a_s - b->b_s;
    da = da < 0 ? -da : da;
    db = db < 0 ? -db : db;
    return (da < db) - (da > db);
}

typedef struct diff_in {
    const fe_plan *a, *b;
    const fe_sim_report *ra, *rb;
    const char *an, *bn;
    const int *up;
    region *regs;
    int nregs;
} diff_in;

static int write_diff(const void *obj, const void *arg, int format, FILE *f, fe_error *err)
{
    const diff_in *d = obj;
    (void)arg, (void)err;
    const fe_graph *g = d->a->g;
    double ta = d->ra->total.time_s * 1e3, tb = d->rb->total.time_s * 1e3;
    fe_jw jw, *w = NULL;
    if (format == FE_FORMAT_JSON) {
        w = &jw;
        fe_jw_init(w, f, 2);
        fe_jw_obj(w);
        fe_ab_jstr(w, "model", g->name);
        fe_ab_jstr(w, "a", d->an);
        fe_ab_jstr(w, "b", d->bn);
        fe_ab_jnum(w, "a_ms", ta);
        fe_ab_jnum(w, "b_ms", tb);
        fe_jw_key(w, "regions");
        fe_jw_arr(w);
    } else {
        fprintf(f, "%s: A = %s (%d groups, %.4f ms simulated), B = %s (%d groups, %.4f ms)\n",
                g->name, d->an, d->a->ngroups, ta, d->bn, d->b->ngroups, tb);
        fprintf(f, "%d region%s differ%s", d->nregs, d->nregs == 1 ? "" : "s",
                d->nregs == 1 ? "s" : "");
        fprintf(f, d->nregs ? ", largest difference first (B - A: above 0, B is slower there)\n" : "\n");
    }
    for (int i = 0; i < d->nregs; i++) {
        const region *rg = &d->regs[i];
        if (w) {
            fe_jw_obj(w);
            fe_ab_jnum(w, "a_ms", rg->a_s * 1e3);
            fe_ab_jnum(w, "b_ms", rg->b_s * 1e3);
            fe_ab_jnum(w, "b_minus_a_ms", (rg->b_s - rg->a_s) * 1e3);
        } else {
            fprintf(f, "\nregion %d: A %d group%s %.4f ms, B %d group%s %.4f ms, B - A %+.4f ms\n",
                    i + 1, rg->na, rg->na == 1 ? "" : "s", rg->a_s * 1e3, rg->nb,
                    rg->nb == 1 ? "" : "s", rg->b_s * 1e3, (rg->b_s - rg->a_s) * 1e3);
        }
        char an[300], bn[300];
        snprintf(an, sizeof an, w ? "a_side" : "A %s", d->an);
        snprintf(bn, sizeof bn, w ? "b_side" : "B %s", d->bn);
        side(d->a, d->ra, d->up, rg->root, an, f, w);
        side(d->b, d->rb, d->up, rg->root, bn, f, w);
        if (w)
            fe_jw_end(w);
    }
    if (w) {
        fe_jw_end(w);
        fe_jw_end(w);
        fputc('\n', f);
    }
    return FE_OK;
}

/* Regions where a and b differ, with their costs, into *out. */
static int regions(const fe_plan *a, const fe_plan *b, const fe_sim_report *ra,
                   const fe_sim_report *rb, int *up, region **out, int *nout, fe_error *err)
{
    int n = a->g->nnodes;
    for (int i = 0; i < n; i++)
        up[i] = i;
    unite_groups(a, up);
    unite_groups(b, up);
    region *all = calloc(n > 0 ? (size_t)n : 1, sizeof *all);
    if (!all)
        return fe_error_set(err, FE_ENOMEM, "out of memory");
    for (int i = 0; i < n; i++)
        all[i].root = -1;
    for (int gi = 0; gi < a->ngroups; gi++) {
        int r = find(up, fe_group_nodes(a, &a->groups[gi])[0]);
        all[r].root = r;
        all[r].na++;
        all[r].a_s += ra->groups[gi].time_s;
    }
    for (int gi = 0; gi < b->ngroups; gi++) {
        int r = find(up, fe_group_nodes(b, &b->groups[gi])[0]);
        all[r].nb++;
        all[r].b_s += rb->groups[gi].time_s;
    }
    int k = 0;
    for (int i = 0; i < n; i++)
        if (all[i].root >= 0 && !(all[i].na == 1 && all[i].nb == 1 &&
                                  all[i].a_s == all[i].b_s))
            all[k++] = all[i];
    qsort(all, (size_t)k, sizeof *all, cmp_cost);
    *out = all;
    *nout = k;
    return FE_OK;
}

/* The plans' diff on machine m (both simulated, regions found) into f. */
static int diff_plans(const fe_machine *m, const fe_plan *pa, const fe_plan *pb, const char *an,
                      const char *bn, int format, FILE *f, fe_error *err)
{
    fe_sim_report ra = {0}, rb = {0};
    int have_a = 0, have_b = 0, *up = NULL, nregs = 0, rc;
    region *regs = NULL;
    if ((rc = fe_sim_plan(pa, m, &ra, err)) != FE_OK)
        goto out;
    have_a = 1;
    if ((rc = fe_sim_plan(pb, m, &rb, err)) != FE_OK)
        goto out;
    have_b = 1;
    if (!(up = malloc((size_t)(pa->g->nnodes ? pa->g->nnodes : 1) * sizeof *up))) {
        rc = fe_error_set(err, FE_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = regions(pa, pb, &ra, &rb, up, &regs, &nregs, err)) != FE_OK)
        goto out;
    diff_in d = {pa, pb, &ra, &rb, an, bn, up, regs, nregs};
    rc = write_diff(&d, NULL, format, f, err);
out:
    free(regs);
    free(up);
    if (have_a)
        fe_sim_report_free(&ra);
    if (have_b)
        fe_sim_report_free(&rb);
    return rc;
}

typedef struct diff_req {
    const fe_machine *m;
    const fe_plan *a, *b;
    const char *an, *bn;
} diff_req;

static int write_req(const void *obj, const void *arg, int format, FILE *f, fe_error *err)
{
    const diff_req *q = obj;
    (void)arg;
    return diff_plans(q->m, q->a, q->b, q->an, q->bn, format, f, err);
}

char *fe_ab_diff_text(const fe_machine *m, const fe_plan *a, const fe_plan *b, const char *an,
                      const char *bn, fe_error *err)
{
    diff_req q = {m, a, b, an, bn};
    return fe_api_text(write_req, &q, NULL, FE_FORMAT_TEXT, err);
}

char *fe_engine_ab_diff(fe_engine *e, const char *model, const char *dims, fe_policy *a,
                        fe_policy *b, int format, fe_error *err)
{
    if (fe_api_null(e, "fe_engine_ab_diff", "the engine", err) ||
        fe_api_null(model, "fe_engine_ab_diff", "the model path", err) ||
        fe_api_null(a, "fe_engine_ab_diff", "policy a", err) ||
        fe_api_null(b, "fe_engine_ab_diff", "policy b", err))
        return NULL;
    if (format != FE_FORMAT_TEXT && format != FE_FORMAT_JSON) {
        fe_error_set(err, FE_EINPUT, "fe_engine_ab_diff: format %d is not text or JSON", format);
        return NULL;
    }
    fe_model *m = fe_model_load_file(model, dims, err);
    fe_plan *pa = NULL, *pb = NULL;
    char *text = NULL;
    if (!m)
        goto out;
    if (!(pa = fe_policy_plan(a, m, NULL, err))) {
        fe_error_prefix(err, "%s with %s: ", model, fe_policy_name(a));
        goto out;
    }
    if (!(pb = fe_policy_plan(b, m, NULL, err))) {
        fe_error_prefix(err, "%s with %s: ", model, fe_policy_name(b));
        goto out;
    }
    diff_req q = {fe_api_machine(e), pa, pb, fe_policy_name(a), fe_policy_name(b)};
    text = fe_api_text(write_req, &q, NULL, format, err);
out:
    fe_plan_free(pa);
    fe_plan_free(pb);
    fe_model_free(m);
    return text;
}
