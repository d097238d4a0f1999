/* api_sim.c: a plan simulated on the engine's machine beside its model's
 * unfused plan (fuseeng run's figures, fuseeng sim): tables, JSON, traces
 * and the totals as numbers. */
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "trace.h"

fe_report *fe_engine_simulate(fe_engine *e, const fe_plan *p, fe_error *err)
{
    if (fe_api_null(e, "fe_engine_simulate", "the engine", err) ||
        fe_api_null(p, "fe_engine_simulate", "the plan", err))
        return NULL;
    fe_report *r = calloc(1, sizeof *r);
    if (!r) {
        fe_error_set(err, FE_ENOMEM, "out of memory");
        return NULL;
    }
    const fe_machine *m = fe_api_machine(e);
    if ((r->unfused = fe_plan_unfused(p->g, err)) && fe_sim_plan(p, m, &r->plan, err) == FE_OK) {
        r->have_plan = 1;
        if (fe_sim_plan(r->unfused, m, &r->base, err) == FE_OK)
            r->have_base = 1;
    }
    if (!r->have_base) {
        fe_report_free(r);
        return NULL;
    }
    return r;
}

void fe_api_figures(const fe_sim_totals *t, fe_figures *out)
{
    out->time_s = t->time_s;
    out->kernels = t->kernels;
    out->extern_calls = t->extern_calls;
    out->views = t->views;
    out->copies = t->copies;
    out->tiled = t->tiled;
    out->l3_bytes = t->l3_bytes;
    out->l2_peak = t->l2_peak;
    out->mem_peak = t->mem_peak;
    out->spill_bytes = t->spill_bytes;
}

void fe_report_figures(const fe_report *r, int unfused, fe_figures *out)
{
    if (!out)
        return;
    memset(out, 0, sizeof *out);
    if (!r)
        return;
    fe_api_figures(unfused ? &r->base.total : &r->plan.total, out);
}

static int write_report(const void *obj, const void *arg, int format, FILE *f, fe_error *err)
{
    const fe_report *r = obj;
    const fe_saved_plan *s = arg;
    int kind = format & FE_FORMAT_MASK;
    if (kind == FE_FORMAT_TRACE) {
        const fe_sim_report *reps[2] = {&r->plan, &r->base};
        const char *labels[2] = {s ? fe_api_saved_path(s) : fe_plan_policy(r->plan.plan),
                                 "unfused"};
        return fe_trace_write(f, reps, labels, 2, err);
    }
    if (kind == FE_FORMAT_JSON) {
        fe_jw w;
        fe_jw_init(&w, f, 2);
        fe_jw_obj(&w);
        if (s) {
            fe_jw_key(&w, "setup");
            fe_api_saved_json(s, &w);
        }
        fe_jw_key(&w, "plan");
        fe_sim_report_json(&r->plan, &w, (format & FE_WITH_GROUPS) != 0);
        fe_jw_key(&w, "versus_unfused");
        fe_sim_report_compare_json(&r->plan, &r->base, &w);
        fe_jw_end(&w);
    } else {
        fe_sim_report_compare_table(&r->plan, &r->base, f);
        if (format & FE_WITH_GROUPS) {
            fprintf(f, "\ngroups\n");
            fe_sim_report_groups_table(&r->plan, f);
        }
    }
    return FE_OK;
}

char *fe_report_format(const fe_report *r, const fe_saved_plan *s, int format, fe_error *err)
{
    if (fe_api_null(r, "fe_report_format", "the report", err))
        return NULL;
    int kind = format & FE_FORMAT_MASK;
    if (kind != FE_FORMAT_TEXT && kind != FE_FORMAT_JSON && kind != FE_FORMAT_TRACE) {
        fe_error_set(err, FE_EINPUT, "fe_report_format: format %d is not text, JSON or a trace",
                     kind);
        return NULL;
    }
    return fe_api_text(write_report, r, s, format, err);
}

void fe_report_free(fe_report *r)
{
    if (!r)
        return;
    if (r->have_plan)
        fe_sim_report_free(&r->plan);
    if (r->have_base)
        fe_sim_report_free(&r->base);
    fe_plan_free(r->unfused);
    free(r);
}
