/* optimal.c: the optimal plan of a window (see optimal.h).
 *
 * Note on the formulation. With a binary x_j per candidate group j of
 * cost c_j (seconds: a plan's simulated time is the sum of its groups'),
 *
 *   minimise    sum_j c_j x_j
 *   subject to  sum_{j holds v} x_j = 1      for every node v of the window
 *               no cycle among the chosen groups
 *
 * Each candidate is legal alone (convex, one kernel class), but two
 * convex groups can still need each other (legality.c's rule 2: A1 -> B1
 * and B2 -> A2). There are too many possible cycles to write down, and
 * few solutions ever have one, so they are lazy constraints: whenever the
 * solver is about to accept an integral solution, its groups are sorted
 * (Kahn); groups left over lie on or after a cycle, and walking back from
 * one along edges between left-over groups finds a cycle C, cut off by
 *
 *               sum_{j in C} x_j <= |C| - 1
 *
 * (one cut per cycle found, several per solution when there are several).
 * No acyclic plan violates a cut, so the optimum under the cuts is the
 * optimum, and the solver's bound stays a bound.
 *
 * Dominated candidates. A group that costs at least as much as its nodes
 * run alone is never needed: replacing it by them costs no more and makes
 * no cycle (a cycle through some of its nodes, with them merged again,
 * would be a path out of the group and back, which a convex group has
 * not). Likewise a group C that costs at least as much as C - {v}, itself
 * a candidate, plus v alone: the two parts cannot need each other (a path
 * C - {v} -> v -> C - {v} would leave a convex group and come back), and
 * C - {v} may be split further the same way, so
 *
 *     best(C) = min(c_C, min over v of best(C - {v}) + c_{v})
 *
 * and C is dropped when a split reaches c_C. These columns go before
 * solving, which leaves the solver the groups that pay. The nodes alone
 * are the start solution, legal and acyclic, so a solve stopped early
 * always has a plan.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "optimal.h"
#include "u64map.h"

typedef struct cover {
    const fe_opt_problem *p;
    int64_t *cand;            /* solver column -> candidate */
    int32_t *efrom, *eto;     /* the window's edges, local indices */
    int64_t nedges;
    int32_t *label;           /* local -> group of the solution at hand */
    int32_t *indeg, *outdeg, *order, *mark;     /* per group, for the sort and the walks */
    int32_t *ioff, *in, *ooff, *out;            /* group graph: producers, consumers */
    int64_t *cyc;             /* a cycle's columns */
    int64_t *cols;            /* group -> solver column */
    fe_error *err;
} cover;

static int32_t local_of(const fe_opt_problem *p, int32_t v)
{
    int32_t lo = 0, hi = p->nw;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (p->win[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < p->nw && p->win[lo] == v ? lo : -1;
}

/* The edges between the window's nodes. */
static int window_edges(cover *c)
{
    const fe_opt_problem *p = c->p;
    const fe_graph *g = p->g;
    int64_t n = 0, cap = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (int32_t i = 0; i < p->nw; i++) {
            const fe_node *nd = fe_graph_node(g, p->win[i]);
            for (int k = 0; k < nd->nout; k++) {
                const fe_tensor *t = fe_graph_tensor(g, fe_node_output(g, nd, k));
                for (int32_t r = 0; r < t->ncons; r++) {
                    int32_t j = local_of(p, fe_tensor_consumer(g, t, r));
                    if (j < 0)
                        continue;
                    if (pass == 1) {
                        c->efrom[n] = i;
                        c->eto[n] = j;
                    }
                    n++;
                }
            }
        }
        if (pass == 0) {
            cap = n;
            c->efrom = malloc((size_t)(cap > 0 ? cap : 1) * sizeof *c->efrom);
            c->eto = malloc((size_t)(cap > 0 ? cap : 1) * sizeof *c->eto);
            if (!c->efrom || !c->eto)
                return FE_ENOMEM;
            n = 0;
        }
    }
    c->nedges = n;
    return FE_OK;
}

/* Sort the groups of the solution chosen[0..m) (solver columns): their
 * topological order into c->order; returns how many were sorted (m when
 * there is no cycle). Leaves each group's producers in c->ioff / c->in. */
static int32_t sort_groups(cover *c, const int64_t *chosen, int32_t m)
{
    const fe_cands *cs = c->p->cands;
    for (int32_t k = 0; k < m; k++) {
        int64_t j = c->cand[chosen[k]];
        c->cols[k] = chosen[k];
        for (int64_t e = cs->off[j]; e < cs->off[j + 1]; e++)
            c->label[local_of(c->p, cs->nodes[e])] = k;
    }
    /* In- and out-lists of the group graph (an edge per node edge). */
    memset(c->indeg, 0, (size_t)m * sizeof *c->indeg);
    memset(c->outdeg, 0, (size_t)m * sizeof *c->outdeg);
    for (int64_t e = 0; e < c->nedges; e++) {
        int32_t a = c->label[c->efrom[e]], b = c->label[c->eto[e]];
        if (a != b) {
            c->indeg[b]++;
            c->outdeg[a]++;
        }
    }
    c->ioff[0] = c->ooff[0] = 0;
    for (int32_t k = 0; k < m; k++) {
        c->ioff[k + 1] = c->ioff[k] + c->indeg[k];
        c->ooff[k + 1] = c->ooff[k] + c->outdeg[k];
        c->indeg[k] = c->outdeg[k] = 0;
    }
    for (int64_t e = 0; e < c->nedges; e++) {
        int32_t a = c->label[c->efrom[e]], b = c->label[c->eto[e]];
        if (a != b) {
            c->in[c->ioff[b] + c->indeg[b]++] = a;
            c->out[c->ooff[a] + c->outdeg[a]++] = b;
        }
    }
    /* Kahn: indeg counts down as producers are placed. */
    int32_t head = 0, tail = 0;
    for (int32_t k = 0; k < m; k++)
        if (c->indeg[k] == 0)
            c->order[tail++] = k;
    while (head < tail) {
        int32_t a = c->order[head++];
        for (int32_t e = c->ooff[a]; e < c->ooff[a + 1]; e++)
            if (--c->indeg[c->out[e]] == 0)
                c->order[tail++] = c->out[e];
    }
    return tail;
}

/* Cut every cycle found by walking back from groups the sort left. */
static int cut_cycles(cover *c, int32_t m, int32_t sorted, fe_milp_cuts *cuts)
{
    for (int32_t k = 0; k < m; k++)
        c->mark[k] = -1;            /* -1: unsorted, not walked */
    for (int32_t i = 0; i < sorted; i++)
        c->mark[c->order[i]] = -2;  /* sorted: on no cycle */
    int32_t walks = 0;
    for (int32_t s = 0; s < m; s++) {
        if (c->mark[s] != -1)
            continue;
        /* Walk back through unsorted groups (each has an unsorted producer)
         * until the walk meets itself; mark holds the walk's id, order
         * its path. */
        int32_t len = 0, cur = s, id = m + walks++;
        for (;;) {
            c->mark[cur] = id;
            c->order[len++] = cur;
            int32_t prev = -1;
            for (int32_t e = c->ioff[cur]; e < c->ioff[cur + 1] && prev < 0; e++)
                if (c->mark[c->in[e]] == -1 || c->mark[c->in[e]] == id)
                    prev = c->in[e];
            if (prev < 0)
                break;   /* into an earlier walk: its cycle is cut already */
            if (c->mark[prev] == id) {
                int32_t at = len - 1;
                while (c->order[at] != prev)
                    at--;
                int32_t n = len - at;
                for (int32_t q = 0; q < n; q++)
                    c->cyc[q] = c->cols[c->order[at + q]];
                int rc = fe_milp_cut(cuts, c->cyc, n);
                if (rc != FE_OK)
                    return fe_error_set(c->err, rc, "adding a cycle cut failed");
                break;
            }
            cur = prev;
        }
    }
    return FE_OK;
}

static int check(void *ctx, const int64_t *chosen, int64_t n, fe_milp_cuts *cuts)
{
    cover *c = ctx;
    int32_t sorted = sort_groups(c, chosen, (int32_t)n);
    return sorted == (int32_t)n ? FE_OK : cut_cycles(c, (int32_t)n, sorted, cuts);
}

/* ---- dominated candidates ---- */

typedef struct peel {
    const fe_opt_problem *p;
    fe_u64map sets;            /* set key -> candidate + 1 */
    double *best, *split;      /* per candidate: best_of's answer (NaN: not yet), its split */
    const double *alone;       /* per window position */
    int32_t *tmp;
} peel;

static uint64_t key_of(const int32_t *nodes, int64_t n, int64_t skip)
{
    uint64_t h = (uint64_t)(n - (skip >= 0));
    for (int64_t i = 0; i < n; i++)
        if (i != skip)
            h = fe_mix64(h ^ (uint64_t)(uint32_t)nodes[i]);
    return h | 1;
}

/* The candidate that is set j without its member at skip, or -1. */
static int64_t find_without(const peel *pl, int64_t j, int64_t skip)
{
    const fe_cands *cs = pl->p->cands;
    const int32_t *nodes = cs->nodes + cs->off[j];
    int64_t n = cs->off[j + 1] - cs->off[j];
    uint64_t *v = fe_u64map_get(&pl->sets, key_of(nodes, n, skip));
    if (!v)
        return -1;
    int64_t a = (int64_t)*v - 1;
    if (cs->off[a + 1] - cs->off[a] != n - 1)
        return -1;
    for (int64_t i = 0, q = cs->off[a]; i < n; i++)
        if (i != skip && cs->nodes[q++] != nodes[i])
            return -1;   /* a key collision */
    return a;
}

/* The cheapest way found to run candidate j's nodes: j itself, or j
 * without one node (split again the same way) and that node alone. Also
 * keeps the cheapest split alone in split[j] (INFINITY: none). Memoised. */
static double best_of(peel *pl, int64_t j)
{
    if (!isnan(pl->best[j]))
        return pl->best[j];
    const fe_cands *cs = pl->p->cands;
    int64_t n = cs->off[j + 1] - cs->off[j];
    double split = INFINITY;
    for (int64_t i = 0; n > 1 && i < n; i++) {
        int64_t a = find_without(pl, j, i);
        if (a >= 0) {
            double x = best_of(pl, a) + pl->alone[local_of(pl->p, cs->nodes[cs->off[j] + i])];
            split = x < split ? x : split;
        }
    }
    pl->split[j] = split;
    return pl->best[j] = split < pl->p->cost[j] ? split : pl->p->cost[j];
}

/* Columns: candidates cheaper than their nodes alone, and the nodes alone
 * (the start). */
static int columns(cover *c, fe_milp_cover *mc, int64_t **offp, int32_t **rowsp, double **costp,
                   uint8_t **startp, fe_opt_result *out)
{
    const fe_opt_problem *p = c->p;
    const fe_cands *cs = p->cands;
    double *alone = malloc((size_t)p->nw * sizeof *alone);
    int64_t *single = malloc((size_t)p->nw * sizeof *single);
    int64_t *off = malloc(((size_t)cs->n + 1) * sizeof *off);
    int32_t *rows = malloc((size_t)(cs->n ? cs->off[cs->n] : 1) * sizeof *rows);
    double *cost = malloc((size_t)(cs->n ? cs->n : 1) * sizeof *cost);
    uint8_t *start = calloc((size_t)(cs->n ? cs->n : 1), 1);
    c->cand = malloc((size_t)(cs->n ? cs->n : 1) * sizeof *c->cand);
    *offp = off;
    *rowsp = rows;
    *costp = cost;
    *startp = start;
    if (!alone || !single || !off || !rows || !cost || !start || !c->cand) {
        free(alone);
        free(single);
        return fe_error_set(c->err, FE_ENOMEM, "out of memory setting up the cover");
    }
    for (int32_t i = 0; i < p->nw; i++)
        single[i] = -1;
    for (int64_t j = 0; j < cs->n; j++)
        if (cs->off[j + 1] - cs->off[j] == 1) {
            int32_t l = local_of(p, cs->nodes[cs->off[j]]);
            if (l >= 0 && (single[l] < 0 || p->cost[j] < alone[l])) {
                single[l] = j;
                alone[l] = p->cost[j];
            }
        }
    int rc = FE_OK;
    for (int32_t i = 0; i < p->nw && rc == FE_OK; i++)
        if (single[i] < 0)
            rc = fe_error_set(c->err, FE_EINPUT, "node '%s' has no candidate of its own: every node "
                              "alone must be a candidate", fe_node_name(p->g, fe_graph_node(p->g, p->win[i])));
    peel pl = {.p = p, .alone = alone};
    pl.best = malloc((size_t)(cs->n ? cs->n : 1) * sizeof *pl.best);
    pl.split = malloc((size_t)(cs->n ? cs->n : 1) * sizeof *pl.split);
    if (rc == FE_OK && (!pl.best || !pl.split))
        rc = fe_error_set(c->err, FE_ENOMEM, "out of memory setting up the cover");
    for (int64_t j = 0; j < cs->n && rc == FE_OK; j++) {
        pl.best[j] = NAN;
        uint64_t key = key_of(cs->nodes + cs->off[j], cs->off[j + 1] - cs->off[j], -1);
        if (!fe_u64map_get(&pl.sets, key) && fe_u64map_put(&pl.sets, key, (uint64_t)j + 1) < 0)
            rc = fe_error_set(c->err, FE_ENOMEM, "out of memory setting up the cover");
    }
    /* The start's groups are kept whatever they cost (start marks them
     * for now: 2 in the start, else 0). */
    for (int64_t i = 0; i < p->nstart && rc == FE_OK; i++)
        start[p->start[i]] = 2;
    int64_t m = 0, k = 0;
    off[0] = 0;
    for (int64_t j = 0; j < cs->n && rc == FE_OK; j++) {
        int64_t len = cs->off[j + 1] - cs->off[j];
        int is_single = len == 1 && single[local_of(p, cs->nodes[cs->off[j]])] == j;
        int in_start = p->start ? start[j] == 2 : is_single;
        if (len == 1 && !is_single && !in_start)
            continue;   /* a dearer or repeated node alone */
        if (len > 1 && !in_start) {
            double sum = 0;
            for (int64_t e = cs->off[j]; e < cs->off[j + 1]; e++)
                sum += alone[local_of(p, cs->nodes[e])];
            if (!(p->cost[j] < sum) || (best_of(&pl, j), pl.split[j] <= p->cost[j])) {
                out->dominated++;
                continue;
            }
        }
        for (int64_t e = cs->off[j]; e < cs->off[j + 1]; e++)
            rows[k++] = local_of(p, cs->nodes[e]);
        c->cand[m] = j;
        cost[m] = p->cost[j];
        start[m] = (uint8_t)in_start;   /* m <= j: the marks ahead are untouched */
        off[++m] = k;
    }
    free(alone);
    free(single);
    free(pl.best);
    free(pl.split);
    fe_u64map_free(&pl.sets);
    *mc = (fe_milp_cover){.nrows = p->nw, .ncols = m, .off = off, .rows = rows, .cost = cost,
                          .start = start, .time_limit = p->time_limit, .check = check, .ctx = c};
    out->columns = m;
    return rc;
}

int fe_opt_solve(const fe_opt_problem *p, fe_opt_result *out, fe_error *err)
{
    memset(out, 0, sizeof *out);
    cover c = {.p = p, .err = err};
    fe_milp_cover mc = {0};
    fe_milp_result mr = {0};
    int64_t *off = NULL;
    int32_t *rows = NULL;
    double *cost = NULL;
    uint8_t *start = NULL;
    size_t nw = (size_t)(p->nw > 0 ? p->nw : 1);
    c.label = malloc(nw * sizeof *c.label);
    c.indeg = malloc(nw * sizeof *c.indeg);
    c.outdeg = malloc(nw * sizeof *c.outdeg);
    c.ooff = malloc((nw + 1) * sizeof *c.ooff);
    c.order = malloc(nw * sizeof *c.order);
    c.ioff = malloc((nw + 1) * sizeof *c.ioff);
    c.mark = malloc(nw * sizeof *c.mark);
    c.cyc = malloc(nw * sizeof *c.cyc);
    c.cols = malloc(nw * sizeof *c.cols);
    int rc = FE_OK;
    if (!c.label || !c.indeg || !c.outdeg || !c.order || !c.ioff || !c.ooff || !c.mark || !c.cyc ||
        !c.cols || window_edges(&c) != FE_OK)
        rc = fe_error_set(err, FE_ENOMEM, "out of memory setting up the cover");
    size_t ne = (size_t)(c.nedges > 0 ? c.nedges : 1);
    if (rc == FE_OK && (!(c.in = malloc(ne * sizeof *c.in)) || !(c.out = malloc(ne * sizeof *c.out))))
        rc = fe_error_set(err, FE_ENOMEM, "out of memory setting up the cover");
    if (rc == FE_OK)
        rc = columns(&c, &mc, &off, &rows, &cost, &start, out);
    if (rc == FE_OK)
        rc = fe_milp_solve(&mc, &mr, err);
    if (rc == FE_OK) {
        int64_t m = 0;
        for (int64_t j = 0; j < mc.ncols; j++)
            if (mr.chosen[j])
                c.cyc[m++] = j;   /* scratch: the chosen columns */
        /* The solution in dependency order; a cycle here would be the
         * solver's fault, never a plan. */
        if (sort_groups(&c, c.cyc, (int32_t)m) != (int32_t)m)
            rc = fe_error_set(err, FE_ERUNTIME, "the solver's plan has a cycle between groups");
        out->chosen = malloc((size_t)(m > 0 ? m : 1) * sizeof *out->chosen);
        if (rc == FE_OK && !out->chosen)
            rc = fe_error_set(err, FE_ENOMEM, "out of memory");
        for (int64_t i = 0; rc == FE_OK && i < m; i++)
            out->chosen[i] = c.cand[c.cols[c.order[i]]];
        out->nchosen = m;
        out->status = mr.status;
        out->value = mr.value;
        out->bound = mr.bound;
        out->cuts = mr.cuts;
        out->nodes = mr.nodes;
        out->seconds = mr.seconds;
    }
    if (rc != FE_OK) {
        free(out->chosen);
        out->chosen = NULL;
    }
    free(mr.chosen);
    free(off);
    free(rows);
    free(cost);
    free(start);
    free(c.cand);
    free(c.efrom);
    free(c.eto);
    free(c.label);
    free(c.indeg);
    free(c.outdeg);
    free(c.order);
    free(c.ioff);
    free(c.ooff);
    free(c.in);
    free(c.out);
    free(c.mark);
    free(c.cyc);
    free(c.cols);
    return rc;
}
