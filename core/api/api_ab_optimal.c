/* api_ab_optimal.c: fuseeng ab --optimal: each row planned once more with
 * the optimal policy (policies/optimal.lua), its simulated time the
 * reference every cell's gap is taken to, gap = (time - optimum) / optimum.
 * The outputs (api_ab_format.c, api_ab_html.c) and the shard files
 * (api_ab_merge.c) print and read these through the calls below.
 *
 * The optimum is the one under the cost model and among the candidates
 * the policy searched (docs/policy-guide.md, "The optimal plan"): a row
 * says whether every window of it was proven optimal, and the worst gap a
 * solver stopped by its time limit left. A plan in windows is optimal
 * per window, so a policy may beat it across a window's edge: its gap is
 * then negative, and printed so. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "api_ab.h"

int fe_ab_optimal_row(fe_engine *e, fe_policy *opt, const fe_model *m, fe_ab_rowres *rr)
{
    fe_plan_stats st;
    fe_error err = {0};
    fe_plan *p = fe_policy_plan(opt, m, &st, &err);
    fe_sim_report rep;
    if (p && fe_sim_plan(p, fe_api_machine(e), &rep, &err) == FE_OK) {
        rr->optimal = 1;
        rr->optimal_s = rep.total.time_s;
        fe_sim_report_free(&rep);
        rr->optimal_proven = p->nsolves > 0;
        rr->optimal_gap = 0;
        for (int32_t i = 0; i < p->nsolves; i++) {
            const fe_solve *s = &p->solves[i];
            double gap = s->value > 0 ? (s->value - s->bound) / s->value : 0;
            rr->optimal_proven &= s->optimal && fe_plan_solve_applied(p, i);
            rr->optimal_gap = gap > rr->optimal_gap ? gap : rr->optimal_gap;
        }
        rr->optimal_windows = p->nsolves;
    } else {
        rr->optimal = -1;
        snprintf(rr->optimal_error, sizeof rr->optimal_error, "%s", err.message);
    }
    fe_plan_free(p);
    return err.code == FE_ENOMEM ? FE_ENOMEM : FE_OK;
}

double fe_ab_gap(const fe_ab *ab, int r, int c)
{
    const fe_ab_rowres *rr = &ab->rows[r];
    const fe_ab_cell *x = &ab->cells[r * ab->ncols + c];
    if (rr->optimal != 1 || rr->optimal_s <= 0 || x->status != FE_AB_OK)
        return NAN;
    return (x->fig.time_s - rr->optimal_s) / rr->optimal_s;
}

double fe_ab_gap_mean(const fe_ab *ab, int c)
{
    double logs = 0;
    int n = 0;
    for (int r = 0; r < ab->nrows; r++) {
        double g = ab->rows[r].ran ? fe_ab_gap(ab, r, c) : NAN;
        if (!isnan(g) && g > -1) {
            logs += log1p(g);
            n++;
        }
    }
    return n ? expm1(logs / n) : NAN;
}

void fe_ab_gap_text(double gap, char *buf, size_t size)
{
    if (isnan(gap))
        snprintf(buf, size, "-");
    else if (fabs(gap) < 5e-5)
        snprintf(buf, size, "0.0%%");
    else
        snprintf(buf, size, "%+.1f%%", gap * 100);
}

void fe_ab_optimal_note(const fe_ab *ab, int r, char *buf, size_t size)
{
    const fe_ab_rowres *rr = &ab->rows[r];
    if (rr->optimal == 1 && rr->optimal_proven)
        snprintf(buf, size, "optimal %.3f ms, proven%s", rr->optimal_s * 1e3,
                 rr->optimal_windows > 1 ? " per window" : "");
    else if (rr->optimal == 1)
        snprintf(buf, size, "optimal %.3f ms, within %.2g%% of the optimum%s", rr->optimal_s * 1e3,
                 rr->optimal_gap * 100, rr->optimal_windows > 1 ? " per window" : "");
    else if (rr->optimal < 0)
        snprintf(buf, size, "optimal failed: %s", rr->optimal_error);
    else
        buf[0] = '\0';
}

void fe_ab_optimal_json(const fe_ab *ab, int r, fe_jw *w, int part)
{
    const fe_ab_rowres *rr = &ab->rows[r];
    if (!ab->optimal)
        return;
    fe_jw_key(w, "optimal");
    fe_jw_obj_flat(w);
    if (rr->optimal == 1) {
        fe_ab_jnum(w, "sim_ms", rr->optimal_s * 1e3);
        if (part)
            fe_ab_jnum(w, "time_s", rr->optimal_s);   /* exact: gaps are recomputed from it */
        fe_jw_key(w, "proven");
        fe_jw_bool(w, rr->optimal_proven);
        fe_ab_jint(w, "windows", rr->optimal_windows);
        fe_ab_jnum(w, "gap_bound", rr->optimal_gap);
    } else {
        fe_ab_jstr(w, "error", rr->optimal_error);
    }
    fe_jw_end(w);
}

void fe_ab_gap_json(const fe_ab *ab, int r, int c, fe_jw *w)
{
    double g = fe_ab_gap(ab, r, c);
    if (!ab->optimal || isnan(g))
        return;
    fe_ab_jnum(w, "gap_pct", g * 100);
}

int fe_ab_optimal_read(const struct json_t *row, fe_ab_rowres *rr)
{
    const json_t *o = json_object_get(row, "optimal");
    if (!o)
        return 0;
    const char *e = json_string_value(json_object_get(o, "error"));
    const json_t *t = json_object_get(o, "time_s"), *pr = json_object_get(o, "proven"),
                 *n = json_object_get(o, "windows"), *g = json_object_get(o, "gap_bound");
    if (e) {
        rr->optimal = -1;
        snprintf(rr->optimal_error, sizeof rr->optimal_error, "%s", e);
        return 1;
    }
    if (!json_is_number(t) || !json_is_boolean(pr) || !json_is_integer(n) || !json_is_number(g))
        return -1;
    rr->optimal = 1;
    rr->optimal_s = json_number_value(t);
    rr->optimal_proven = json_is_true(pr);
    rr->optimal_windows = (int)json_integer_value(n);
    rr->optimal_gap = json_number_value(g);
    return 1;
}

int fe_ab_optimal_col(const fe_ab *ab)
{
    for (int c = 0; c < ab->ncols; c++)
        if (strcmp(ab->cnames[c], "optimal") == 0 || strncmp(ab->cnames[c], "optimal{", 8) == 0)
            return c;
    return -1;
}
