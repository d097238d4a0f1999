/* api_ab_miss.c: why the simulator's pick lost (fuseeng ab --measure,
 * fuseeng fidelity). Where a measured row's simulated best is not its
 * measured best, the two plans are timed once more group by group, and the
 * groups one plan has and the other lacks are held against their simulated
 * prices: the group the simulator mispriced most in the direction of the
 * loss (a group of the pick it underpriced, or one of the winner it
 * overpriced) is named, with the term that dominated its price. A column
 * named "optimal" (policies/optimal.lua) that lost is explained the same
 * way, beside the pick when it is not the pick (a policy's group larger
 * than the optimum's candidates can beat it in simulation): the optimum is
 * optimal for the cost model, so every loss of it is a cost-model miss,
 * and this names the miss.
 *
 * Group times come from runs with a timestamp between groups, so they sum
 * to a little more than the plan's time; what lies between kernels (a
 * cache left warm by the previous group, launches overlapping) is in no
 * group's time, and the report says so when the groups' own times do not
 * account for the loss.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "api_ab.h"
#include "paired.h"
#include "sim.h"

/* The group of b holding the same nodes as group i of a, or -1. */
static int shared_group(const fe_plan *a, int i, const fe_plan *b, const int32_t *group_of_b)
{
    const fe_group *ga = &a->groups[i];
    int j = group_of_b[a->members[ga->off]];
    if (j < 0 || b->groups[j].n != ga->n)
        return -1;
    for (int k = 0; k < ga->n; k++)
        if (group_of_b[a->members[ga->off + k]] != j)
            return -1;
    return j;
}

/* Node id -> group of p (-1 for nodes in no group). Caller frees. */
static int32_t *group_map(const fe_plan *p)
{
    int32_t *map = malloc((size_t)(p->g->nnodes > 0 ? p->g->nnodes : 1) * sizeof *map);
    if (!map)
        return NULL;
    for (int v = 0; v < p->g->nnodes; v++)
        map[v] = -1;
    for (int i = 0; i < p->ngroups; i++)
        for (int k = 0; k < p->groups[i].n; k++)
            map[p->members[p->groups[i].off + k]] = i;
    return map;
}

/* The largest term of a group's price, as docs/simulator.md names it. */
static const char *price_term(const fe_sim_group_result *s)
{
    const char *name[] = {"launch", "tiles", "collective", "compute", "device memory",
                          "on-chip traffic", "spills"};
    double v[] = {s->launch_s, s->tile_s, s->collective_s, s->compute_s, s->l3_s, s->l2_s,
                  s->spill_s};
    int best = 0;
    for (int i = 1; i < 7; i++)
        if (v[i] > v[best])
            best = i;
    return name[best];
}

/* One plan's groups the other lacks: their sums into x (side 0 the plan
 * that lost, 1 the best), and the worst miss in the loss's direction kept
 * in *worst (signed so that larger explains more). */
static void tally_side(const fe_plan *p, const fe_sim_report *sr, const double *gms,
                       const fe_plan *other, const int32_t *other_map, int side, fe_ab_miss *x,
                       double *worst)
{
    for (int i = 0; i < p->ngroups; i++) {
        if (shared_group(p, i, other, other_map) >= 0)
            continue;
        const fe_sim_group_result *s = &sr->groups[i];
        double sim_ms = s->time_s * 1e3, meas_ms = gms[i];
        x->groups++;
        *(side ? &x->best_sim : &x->lost_sim) += sim_ms;
        *(side ? &x->best_meas : &x->lost_meas) += meas_ms;
        /* the plan lost: its groups cost more than priced, the best's less */
        double explains = side == 0 ? meas_ms - sim_ms : sim_ms - meas_ms;
        if (explains > *worst) {
            *worst = explains;
            x->in_best = side;
            x->nodes = p->groups[i].n;
            x->sim_us = sim_ms * 1e3;
            x->meas_us = meas_ms * 1e3;
            fe_sim_group_label(p->g, &p->members[p->groups[i].off], p->groups[i].n, x->label,
                               sizeof x->label);
            snprintf(x->term, sizeof x->term, "%s", price_term(s));
        }
    }
}

/* Time plans lost and best group by group on ex and fill x. */
static int explain(fe_exec *ex, const fe_machine *m, fe_plan *lost, fe_plan *best, int lc,
                   int bc, const fe_ab_run_options *o, fe_ab_miss *x, fe_error *err)
{
    fe_plan *pl[2] = {lost, best};
    fe_sim_report sr[2] = {{0}};
    double *gms[2] = {NULL, NULL}, *ms = NULL;
    int32_t *map[2] = {NULL, NULL};
    int rounds = 0, rc = FE_OK;
    for (int k = 0; k < 2 && rc == FE_OK; k++) {
        gms[k] = calloc((size_t)pl[k]->ngroups + 1, sizeof *gms[k]);
        map[k] = group_map(pl[k]);
        if (!gms[k] || !map[k])
            rc = fe_error_set(err, FE_ENOMEM, "out of memory");
        else
            rc = fe_sim_plan(pl[k], m, &sr[k], err);
    }
    fe_paired_opts po = {.budget = o->budget, .reps = o->reps, .group_ms = gms};
    if (rc == FE_OK)
        rc = fe_paired_rounds_opts(ex, pl, 2, &po, &ms, &rounds, err);
    if (rc == FE_OK) {
        double worst = -INFINITY;
        memset(x, 0, sizeof *x);
        x->lost = lc;
        x->best = bc;
        tally_side(pl[0], &sr[0], gms[0], pl[1], map[1], 0, x, &worst);
        tally_side(pl[1], &sr[1], gms[1], pl[0], map[0], 1, x, &worst);
        x->set = x->groups > 0;
    }
    for (int k = 0; k < 2; k++) {
        fe_sim_report_free(&sr[k]);
        free(gms[k]);
        free(map[k]);
    }
    free(ms);
    return rc;
}

/* The column named name, or -1. */
static int column(const fe_ab *ab, const char *name)
{
    for (int c = 0; name && c < ab->ncols; c++)
        if (strcmp(ab->cnames[c], name) == 0)
            return c;
    return -1;
}

int fe_ab_miss_row(fe_ab *ab, int r, fe_exec *ex, const fe_machine *m, fe_plan *const *plans,
                   const fe_ab_run_options *o, fe_error *err)
{
    fe_ab_rowres *rr = &ab->rows[r];
    int pick = fe_ab_sim_winner(ab, r), best = fe_ab_winner(ab, r);
    int lost[FE_AB_MISSES] = {pick, fe_ab_optimal_col(ab)}, rc = FE_OK;
    memset(rr->miss, 0, sizeof rr->miss);
    if (fe_ab_ranks_agree(ab, r) < 0 || best < 0)
        return FE_OK;
    for (int k = 0; k < FE_AB_MISSES && rc == FE_OK; k++) {
        int c = lost[k];
        if (c < 0 || c == best || !plans[c] || !plans[best] || fe_ab_as_fast(ab, r, c, best) ||
            (k == FE_AB_MISS_OPTIMAL && c == pick))
            continue;
        rc = explain(ex, m, plans[c], plans[best], c, best, o, &rr->miss[k], err);
    }
    return rc;
}

void fe_ab_miss_text(const fe_ab *ab, int r, int k, char *buf, size_t size)
{
    const fe_ab_miss *x = &ab->rows[r].miss[k];
    buf[0] = '\0';
    if (!x->set)
        return;
    const char *ln = ab->cnames[x->lost], *bn = ab->cnames[x->best];
    int n = snprintf(buf, size,
                     "why %s (%s) lost to %s: their plans differ in %d group%s, simulated %.3f "
                     "against %.3f ms, measured group by group %.3f against %.3f ms",
                     ln, k == FE_AB_MISS_PICK ? "the simulated best" : "the optimum", bn,
                     x->groups, x->groups == 1 ? "" : "s", x->lost_sim, x->best_sim, x->lost_meas,
                     x->best_meas);
    if (n < 0 || (size_t)n >= size)
        return;
    if (x->lost_meas <= x->best_meas || !x->label[0])
        snprintf(buf + n, size - (size_t)n,
                 "; the groups' own times do not account for the loss: it lies between kernels "
                 "(a cache left warm, launches overlapping), which the simulator does not model");
    else if (x->sim_us <= 0)   /* a view to the simulator, work to the device */
        snprintf(buf + n, size - (size_t)n,
                 "; mispriced most: %s (%d node%s, %s's plan), simulated as a view (no kernel, "
                 "0 us), measured %.1f us", x->label, x->nodes, x->nodes == 1 ? "" : "s",
                 x->in_best ? bn : ln, x->meas_us);
    else
        snprintf(buf + n, size - (size_t)n,
                 "; mispriced most: %s (%d node%s, %s's plan), simulated %.1f us (mostly %s), "
                 "measured %.1f us (%s %.1fx)",
                 x->label, x->nodes, x->nodes == 1 ? "" : "s", x->in_best ? bn : ln, x->sim_us,
                 x->term, x->meas_us, x->in_best ? "overpriced" : "underpriced",
                 x->in_best ? x->sim_us / fmax(x->meas_us, 1e-9)
                            : x->meas_us / fmax(x->sim_us, 1e-9));
}

static const char *const MISS_KEY[FE_AB_MISSES] = {"miss", "optimal_miss"};

void fe_ab_miss_json(const fe_ab *ab, int r, fe_jw *w)
{
    for (int k = 0; k < FE_AB_MISSES; k++) {
        const fe_ab_miss *x = &ab->rows[r].miss[k];
        if (!x->set)
            continue;
        char text[1024];
        fe_ab_miss_text(ab, r, k, text, sizeof text);
        fe_jw_key(w, MISS_KEY[k]);
        fe_jw_obj(w);
        fe_ab_jstr(w, "lost", ab->cnames[x->lost]);
        fe_ab_jstr(w, "best", ab->cnames[x->best]);
        fe_ab_jint(w, "groups", x->groups);
        fe_ab_jnum(w, "lost_sim_ms", x->lost_sim);
        fe_ab_jnum(w, "lost_meas_ms", x->lost_meas);
        fe_ab_jnum(w, "best_sim_ms", x->best_sim);
        fe_ab_jnum(w, "best_meas_ms", x->best_meas);
        if (x->label[0]) {
            fe_ab_jstr(w, "group", x->label);
            fe_ab_jint(w, "nodes", x->nodes);
            fe_ab_jstr(w, "plan", ab->cnames[x->in_best ? x->best : x->lost]);
            fe_ab_jnum(w, "sim_us", x->sim_us);
            fe_ab_jnum(w, "meas_us", x->meas_us);
            fe_ab_jstr(w, "term", x->term);
        }
        fe_ab_jstr(w, "text", text);
        fe_jw_end(w);
    }
}

/* One miss object read back into x: 1, or -1 when malformed. */
static int read_one(const fe_ab *ab, const json_t *o, fe_ab_miss *x)
{
    const json_t *v[5] = {json_object_get(o, "lost_sim_ms"), json_object_get(o, "lost_meas_ms"),
                          json_object_get(o, "best_sim_ms"), json_object_get(o, "best_meas_ms"),
                          json_object_get(o, "groups")};
    memset(x, 0, sizeof *x);
    x->lost = column(ab, json_string_value(json_object_get(o, "lost")));
    x->best = column(ab, json_string_value(json_object_get(o, "best")));
    if (!json_is_object(o) || x->lost < 0 || x->best < 0 || !json_is_integer(v[4]))
        return -1;
    for (int i = 0; i < 4; i++)
        if (!json_is_number(v[i]))
            return -1;
    x->lost_sim = json_number_value(v[0]);
    x->lost_meas = json_number_value(v[1]);
    x->best_sim = json_number_value(v[2]);
    x->best_meas = json_number_value(v[3]);
    x->groups = (int)json_integer_value(v[4]);
    const char *label = json_string_value(json_object_get(o, "group"));
    if (label) {
        const json_t *n = json_object_get(o, "nodes"), *s = json_object_get(o, "sim_us"),
                     *m = json_object_get(o, "meas_us");
        const char *term = json_string_value(json_object_get(o, "term"));
        int in = column(ab, json_string_value(json_object_get(o, "plan")));
        if (!json_is_integer(n) || !json_is_number(s) || !json_is_number(m) || !term ||
            (in != x->lost && in != x->best))
            return -1;
        snprintf(x->label, sizeof x->label, "%s", label);
        snprintf(x->term, sizeof x->term, "%s", term);
        x->nodes = (int)json_integer_value(n);
        x->in_best = in == x->best;
        x->sim_us = json_number_value(s);
        x->meas_us = json_number_value(m);
    }
    x->set = 1;
    return 1;
}

int fe_ab_miss_read(const fe_ab *ab, const json_t *row, fe_ab_rowres *rr)
{
    int any = 0;
    memset(rr->miss, 0, sizeof rr->miss);
    for (int k = 0; k < FE_AB_MISSES; k++) {
        const json_t *o = json_object_get(row, MISS_KEY[k]);
        if (o && read_one(ab, o, &rr->miss[k]) < 0)
            return -1;
        any |= o != NULL;
    }
    return any;
}
