/* api_ab_miss.c: why the simulator's pick lost (fuseeng ab --measure,
 * fuseeng fidelity). Where a measured row's simulated best is not its
 * measured best, the two plans are timed once more group by group, and the
 * groups one plan has and the other lacks are held against their simulated
 * prices: the group the simulator mispriced most in the direction of the
 * loss (a group of the pick it underpriced, or one of the winner it
 * overpriced) is named, with the term that dominated its price. With the
 * optimal policy among the columns this is the answer to "why is the
 * optimum not the fastest": the optimum is optimal for the cost model, so
 * every loss of it is a cost-model miss, and this names the miss.
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

/* One plan's groups the other lacks: their sums into rr (side 0 the pick,
 * 1 the best), and the worst miss in the loss's direction kept in *worst
 * (signed so that larger explains more). */
static void tally_side(const fe_plan *p, const fe_sim_report *sr, const double *gms,
                       const fe_plan *other, const int32_t *other_map, int side,
                       fe_ab_rowres *rr, double *worst)
{
    for (int i = 0; i < p->ngroups; i++) {
        if (shared_group(p, i, other, other_map) >= 0)
            continue;
        const fe_sim_group_result *s = &sr->groups[i];
        double sim_ms = s->time_s * 1e3, meas_ms = gms[i];
        rr->miss_groups++;
        if (side == 0) {
            rr->miss_pick_sim += sim_ms;
            rr->miss_pick_meas += meas_ms;
        } else {
            rr->miss_best_sim += sim_ms;
            rr->miss_best_meas += meas_ms;
        }
        /* the pick lost: its groups cost more than priced, the best's less */
        double explains = side == 0 ? meas_ms - sim_ms : sim_ms - meas_ms;
        if (explains > *worst) {
            *worst = explains;
            rr->miss_in_best = side;
            rr->miss_nodes = p->groups[i].n;
            rr->miss_sim_us = sim_ms * 1e3;
            rr->miss_meas_us = meas_ms * 1e3;
            fe_sim_group_label(p->g, &p->members[p->groups[i].off], p->groups[i].n,
                               rr->miss_label, sizeof rr->miss_label);
            snprintf(rr->miss_term, sizeof rr->miss_term, "%s", price_term(s));
        }
    }
}

int fe_ab_miss_row(fe_ab *ab, int r, fe_exec *ex, const fe_machine *m, fe_plan *const *plans,
                   const fe_ab_run_options *o, fe_error *err)
{
    fe_ab_rowres *rr = &ab->rows[r];
    int pick = fe_ab_sim_winner(ab, r), best = fe_ab_winner(ab, r);
    rr->miss = 0;
    rr->miss_label[0] = '\0';
    if (fe_ab_ranks_agree(ab, r) != 0 || pick < 0 || best < 0 || pick == best || !plans[pick] ||
        !plans[best])
        return FE_OK;
    fe_plan *pl[2] = {plans[pick], plans[best]};
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
        rr->miss_pick = pick;
        rr->miss_best = best;
        rr->miss_groups = 0;
        rr->miss_pick_sim = rr->miss_pick_meas = rr->miss_best_sim = rr->miss_best_meas = 0;
        tally_side(pl[0], &sr[0], gms[0], pl[1], map[1], 0, rr, &worst);
        tally_side(pl[1], &sr[1], gms[1], pl[0], map[0], 1, rr, &worst);
        rr->miss = rr->miss_groups > 0 ? 1 : 0;
    }
    for (int k = 0; k < 2; k++) {
        fe_sim_report_free(&sr[k]);
        free(gms[k]);
        free(map[k]);
    }
    free(ms);
    return rc;
}

void fe_ab_miss_text(const fe_ab *ab, int r, char *buf, size_t size)
{
    const fe_ab_rowres *rr = &ab->rows[r];
    buf[0] = '\0';
    if (rr->miss != 1)
        return;
    const char *pn = ab->cnames[rr->miss_pick], *bn = ab->cnames[rr->miss_best];
    int n = snprintf(buf, size,
                     "why %s (the simulated best) lost to %s: their plans differ in %d group%s, "
                     "simulated %.3f against %.3f ms, measured group by group %.3f against %.3f ms",
                     pn, bn, rr->miss_groups, rr->miss_groups == 1 ? "" : "s", rr->miss_pick_sim,
                     rr->miss_best_sim, rr->miss_pick_meas, rr->miss_best_meas);
    if (n < 0 || (size_t)n >= size)
        return;
    if (rr->miss_pick_meas <= rr->miss_best_meas || !rr->miss_label[0])
        snprintf(buf + n, size - (size_t)n,
                 "; the groups' own times do not account for the loss: it lies between kernels "
                 "(a cache left warm, launches overlapping), which the simulator does not model");
    else if (rr->miss_sim_us <= 0)   /* a view to the simulator, work to the device */
        snprintf(buf + n, size - (size_t)n,
                 "; mispriced most: %s (%d node%s, %s's plan), simulated as a view (no kernel, "
                 "0 us), measured %.1f us", rr->miss_label, rr->miss_nodes,
                 rr->miss_nodes == 1 ? "" : "s", rr->miss_in_best ? bn : pn, rr->miss_meas_us);
    else
        snprintf(buf + n, size - (size_t)n,
                 "; mispriced most: %s (%d node%s, %s's plan), simulated %.1f us (mostly %s), "
                 "measured %.1f us (%s %.1fx)",
                 rr->miss_label, rr->miss_nodes, rr->miss_nodes == 1 ? "" : "s",
                 rr->miss_in_best ? bn : pn, rr->miss_sim_us, rr->miss_term, rr->miss_meas_us,
                 rr->miss_in_best ? "overpriced" : "underpriced",
                 rr->miss_in_best ? rr->miss_sim_us / fmax(rr->miss_meas_us, 1e-9)
                                  : rr->miss_meas_us / fmax(rr->miss_sim_us, 1e-9));
}

void fe_ab_miss_json(const fe_ab *ab, int r, fe_jw *w)
{
    const fe_ab_rowres *rr = &ab->rows[r];
    if (rr->miss != 1)
        return;
    char text[1024];
    fe_ab_miss_text(ab, r, text, sizeof text);
    fe_jw_key(w, "miss");
    fe_jw_obj(w);
    fe_ab_jstr(w, "pick", ab->cnames[rr->miss_pick]);
    fe_ab_jstr(w, "best", ab->cnames[rr->miss_best]);
    fe_ab_jint(w, "groups", rr->miss_groups);
    fe_ab_jnum(w, "pick_sim_ms", rr->miss_pick_sim);
    fe_ab_jnum(w, "pick_meas_ms", rr->miss_pick_meas);
    fe_ab_jnum(w, "best_sim_ms", rr->miss_best_sim);
    fe_ab_jnum(w, "best_meas_ms", rr->miss_best_meas);
    if (rr->miss_label[0]) {
        fe_ab_jstr(w, "group", rr->miss_label);
        fe_ab_jint(w, "nodes", rr->miss_nodes);
        fe_ab_jstr(w, "plan", ab->cnames[rr->miss_in_best ? rr->miss_best : rr->miss_pick]);
        fe_ab_jnum(w, "sim_us", rr->miss_sim_us);
        fe_ab_jnum(w, "meas_us", rr->miss_meas_us);
        fe_ab_jstr(w, "term", rr->miss_term);
    }
    fe_ab_jstr(w, "text", text);
    fe_jw_end(w);
}

/* The column named s, or -1. */
static int column(const fe_ab *ab, const char *s)
{
    for (int c = 0; s && c < ab->ncols; c++)
        if (strcmp(ab->cnames[c], s) == 0)
            return c;
    return -1;
}

int fe_ab_miss_read(const fe_ab *ab, const json_t *row, fe_ab_rowres *rr)
{
    const json_t *o = json_object_get(row, "miss");
    rr->miss = 0;
    rr->miss_label[0] = '\0';
    if (!o)
        return 0;
    const json_t *v[5] = {json_object_get(o, "pick_sim_ms"), json_object_get(o, "pick_meas_ms"),
                          json_object_get(o, "best_sim_ms"), json_object_get(o, "best_meas_ms"),
                          json_object_get(o, "groups")};
    rr->miss_pick = column(ab, json_string_value(json_object_get(o, "pick")));
    rr->miss_best = column(ab, json_string_value(json_object_get(o, "best")));
    if (!json_is_object(o) || rr->miss_pick < 0 || rr->miss_best < 0 || !json_is_integer(v[4]))
        return -1;
    for (int i = 0; i < 4; i++)
        if (!json_is_number(v[i]))
            return -1;
    rr->miss_pick_sim = json_number_value(v[0]);
    rr->miss_pick_meas = json_number_value(v[1]);
    rr->miss_best_sim = json_number_value(v[2]);
    rr->miss_best_meas = json_number_value(v[3]);
    rr->miss_groups = (int)json_integer_value(v[4]);
    const char *label = json_string_value(json_object_get(o, "group"));
    if (label) {
        const json_t *n = json_object_get(o, "nodes"), *s = json_object_get(o, "sim_us"),
                     *m = json_object_get(o, "meas_us");
        const char *plan = json_string_value(json_object_get(o, "plan"));
        const char *term = json_string_value(json_object_get(o, "term"));
        int in = column(ab, plan);
        if (!json_is_integer(n) || !json_is_number(s) || !json_is_number(m) || !term ||
            (in != rr->miss_pick && in != rr->miss_best))
            return -1;
        snprintf(rr->miss_label, sizeof rr->miss_label, "%s", label);
        snprintf(rr->miss_term, sizeof rr->miss_term, "%s", term);
        rr->miss_nodes = (int)json_integer_value(n);
        rr->miss_in_best = in == rr->miss_best;
        rr->miss_sim_us = json_number_value(s);
        rr->miss_meas_us = json_number_value(m);
    }
    rr->miss = 1;
    return 1;
}
