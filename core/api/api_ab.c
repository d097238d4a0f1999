/* api_ab.c: policies compared on models (fuseeng ab): every model planned
 * with every policy on the engine's machine, against its unfused plan, and
 * with measure also run on this CPU's kernels and checked. */
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "compare.h"
#include "exec.h"
#include "timing.h"
#include "units.h"

typedef struct cell {
    int kernels, extern_calls, tiled;
    double time_s, speedup;
    int64_t l3_bytes, mem_peak;
    double cpu_ms, cpu_speedup, cpu_max_rel;   /* measure */
    int cpu_ok;
} cell;

struct fe_ab {
    char machine[64], description[256];
    int nmodels, npolicies, measure;
    char (*mnames)[256], (*pnames)[256];
    cell *cells;                 /* model-major */
    double *base_ms, *cpu_ms;    /* per model: unfused, simulated and measured */
    char **faults;
    int nfaults;
};

/* Only dims a model has: the dims are shared by models that may not all
 * have them. */
static fe_model *load_model(const char *path, const fe_ab_options *o, fe_error *err)
{
    const char *names[64];
    int64_t values[64];
    int n = 0;
    fe_error probe_err = {0};
    fe_model *probe = o->ndims ? fe_model_load_dims(path, 0, NULL, NULL, &probe_err) : NULL;
    for (int i = 0; probe && i < o->ndims && n < 64; i++)
        if (fe_model_dim(probe, o->dim_names[i])) {
            names[n] = o->dim_names[i];
            values[n++] = o->dim_values[i];
        }
    fe_model_free(probe);
    return fe_model_load_dims(path, n, names, values, err);
}

/* The CPU side of one model for measure: a session, the reference's
 * results and the unfused plan's time, shared by every policy. */
typedef struct cpu_model {
    fe_exec *ex;
    fe_exec_result *ref;
    fe_bench_stats base;
    fe_bench_opts bo;
} cpu_model;

static int cpu_begin(const fe_graph *g, double budget, cpu_model *cm, fe_error *err)
{
    memset(cm, 0, sizeof *cm);
    cm->bo.budget_s = budget > 0 ? budget : 0.5;
    fe_exec_opts eo = {.seed = 1};
    fe_plan *base = NULL;
    int rc = fe_exec_executable(g, err);
    if (rc == FE_OK && !(cm->ex = fe_exec_new(g, &eo, err)))
        rc = err->code;
    if (rc == FE_OK)
        rc = fe_exec_reference(cm->ex, &cm->ref, err);
    if (rc == FE_OK && !(base = fe_plan_unfused(g, err)))
        rc = FE_ENOMEM;
    if (rc == FE_OK)
        rc = fe_bench_plan(cm->ex, base, &cm->bo, &cm->base, err);
    fe_plan_free(base);
    return rc;
}

static void cpu_end(cpu_model *cm)
{
    fe_exec_result_free(cm->ref);
    fe_exec_free(cm->ex);
    memset(cm, 0, sizeof *cm);
}

/* Run the plan against the reference and time it. */
static int cpu_measure(cpu_model *cm, const fe_plan *plan, cell *c, fe_error *err)
{
    fe_exec_result *got = NULL;
    fe_cmp cmp;
    fe_bench_stats st;
    int rc = fe_exec_plan(cm->ex, plan, &got, err);
    if (rc == FE_OK && (rc = fe_exec_compare(plan->g, cm->ref, got, &cmp, err)) == FE_OK) {
        c->cpu_ok = cmp.ok;
        for (int i = 0; i < cmp.n; i++)
            if (cmp.items[i].max_rel > c->cpu_max_rel)
                c->cpu_max_rel = cmp.items[i].max_rel;
        fe_cmp_free(&cmp);
    }
    fe_exec_result_free(got);
    if (rc == FE_OK && (rc = fe_bench_plan(cm->ex, plan, &cm->bo, &st, err)) == FE_OK) {
        c->cpu_ms = st.median_ms;
        c->cpu_speedup = st.median_ms > 0 ? cm->base.median_ms / st.median_ms : 0;
    }
    return rc;
}

static int add_fault(fe_ab *ab, const char *fault)
{
    char **nf = realloc(ab->faults, (size_t)(ab->nfaults + 1) * sizeof *nf);
    if (!nf)
        return -1;
    ab->faults = nf;
    if (!(nf[ab->nfaults] = strdup(fault)))
        return -1;
    ab->nfaults++;
    return 0;
}

/* The plan's simulated totals on e's machine (a report against unfused
 * would simulate the model's unfused plan again for every policy). */
static int sim_totals(fe_engine *e, const fe_plan *p, fe_sim_totals *t, fe_error *err)
{
    fe_sim_report r;
    int rc = fe_sim_plan(p, fe_api_machine(e), &r, err);
    if (rc == FE_OK) {
        *t = r.total;
        fe_sim_report_free(&r);
    }
    return rc;
}

static int measure(fe_engine *e, fe_ab *ab, fe_policy *p, const fe_model *m,
                   const fe_sim_totals *bt, cpu_model *cm, cell *c, fe_error *err)
{
    fe_plan_stats stats;
    fe_plan *plan = fe_policy_plan(p, m, &stats, err);
    if (!plan)
        return -1;
    if (stats.fault[0] && add_fault(ab, stats.fault) != 0) {
        fe_plan_free(plan);
        return fe_error_set(err, FE_ENOMEM, "out of memory");
    }
    fe_sim_totals pt;
    if ((cm && cpu_measure(cm, plan, c, err) != FE_OK) || sim_totals(e, plan, &pt, err) != FE_OK) {
        fe_plan_free(plan);
        return -1;
    }
    c->kernels = pt.kernels;
    c->extern_calls = pt.extern_calls;
    c->tiled = pt.tiled;
    c->time_s = pt.time_s;
    c->speedup = pt.time_s > 0 ? bt->time_s / pt.time_s : 0;
    c->l3_bytes = pt.l3_bytes;
    c->mem_peak = pt.mem_peak;
    fe_plan_free(plan);
    return 0;
}

/* Model mi against every policy. */
static int one_model(fe_engine *e, const fe_ab_options *o, fe_ab *ab, int mi, fe_error *err)
{
    const char *path = o->models[mi];
    fe_model *m = load_model(path, o, err);
    fe_plan *base = m ? fe_model_unfused(m, err) : NULL;
    fe_sim_totals bt;
    int rc = FE_OK;
    if (!base || sim_totals(e, base, &bt, err) != FE_OK) {
        rc = err ? err->code : FE_EINPUT;
        goto out;
    }
    const fe_graph *g = fe_api_graph(m);
    snprintf(ab->mnames[mi], sizeof ab->mnames[mi], "%s", g->name[0] ? g->name : path);
    ab->base_ms[mi] = bt.time_s * 1e3;
    cpu_model cm;
    if (o->measure && cpu_begin(g, o->budget, &cm, err) != FE_OK) {
        fe_error_prefix(err, "%s: --measure: ", path);
        rc = err ? err->code : FE_ERUNTIME;
    }
    if (o->measure)
        ab->cpu_ms[mi] = cm.base.median_ms;
    for (int pi = 0; pi < o->npolicies && rc == FE_OK; pi++)
        if (measure(e, ab, o->policies[pi], m, &bt, o->measure ? &cm : NULL,
                    &ab->cells[mi * o->npolicies + pi], err) != 0) {
            fe_error_prefix(err, "%s with %s: ", path, ab->pnames[pi]);
            rc = err ? err->code : FE_ERUNTIME;
        }
    if (o->measure)
        cpu_end(&cm);
out:
    fe_plan_free(base);
    fe_model_free(m);
    return rc;
}

fe_ab *fe_engine_ab(fe_engine *e, const fe_ab_options *o, fe_error *err)
{
    if (fe_api_null(e, "fe_engine_ab", "the engine", err) ||
        fe_api_null(o, "fe_engine_ab", "the options struct", err))
        return NULL;
    if (o->nmodels < 1 || !o->models || o->npolicies < 1 || !o->policies ||
        (o->ndims > 0 && (!o->dim_names || !o->dim_values))) {
        fe_error_set(err, FE_EINPUT, "fe_engine_ab: give at least one model and one policy "
                     "(and dims with names and values)");
        return NULL;
    }
    for (int i = 0; i < o->npolicies; i++)
        if (fe_api_null(o->policies[i], "fe_engine_ab", "a policy", err))
            return NULL;
    for (int i = 0; i < o->nmodels; i++)
        if (fe_api_null(o->models[i], "fe_engine_ab", "a model path", err))
            return NULL;
    fe_ab *ab = calloc(1, sizeof *ab);
    if (!ab) {
        fe_error_set(err, FE_ENOMEM, "out of memory");
        return NULL;
    }
    ab->nmodels = o->nmodels;
    ab->npolicies = o->npolicies;
    ab->measure = o->measure;
    ab->mnames = calloc((size_t)o->nmodels, sizeof *ab->mnames);
    ab->pnames = calloc((size_t)o->npolicies, sizeof *ab->pnames);
    ab->cells = calloc((size_t)o->nmodels * (size_t)o->npolicies, sizeof *ab->cells);
    ab->base_ms = calloc((size_t)o->nmodels, sizeof *ab->base_ms);
    ab->cpu_ms = calloc((size_t)o->nmodels, sizeof *ab->cpu_ms);
    if (!ab->mnames || !ab->pnames || !ab->cells || !ab->base_ms || !ab->cpu_ms) {
        fe_ab_free(ab);
        fe_error_set(err, FE_ENOMEM, "out of memory");
        return NULL;
    }
    for (int i = 0; i < o->npolicies; i++)
        snprintf(ab->pnames[i], sizeof ab->pnames[i], "%s", fe_policy_name(o->policies[i]));
    for (int mi = 0; mi < o->nmodels; mi++)
        if (one_model(e, o, ab, mi, err) != FE_OK) {
            fe_ab_free(ab);
            return NULL;
        }
    snprintf(ab->machine, sizeof ab->machine, "%s", fe_engine_machine(e));
    snprintf(ab->description, sizeof ab->description, "%s", fe_engine_machine_description(e));
    return ab;
}

int fe_ab_wrong(const fe_ab *ab)
{
    int wrong = 0;
    for (int i = 0; ab && ab->measure && i < ab->nmodels * ab->npolicies; i++)
        wrong += !ab->cells[i].cpu_ok;
    return wrong;
}

int fe_ab_faults(const fe_ab *ab)
{
    return ab ? ab->nfaults : 0;
}

const char *fe_ab_fault(const fe_ab *ab, int i)
{
    return ab && i >= 0 && i < ab->nfaults ? ab->faults[i] : NULL;
}

void fe_ab_free(fe_ab *ab)
{
    if (!ab)
        return;
    for (int i = 0; i < ab->nfaults; i++)
        free(ab->faults[i]);
    free(ab->faults);
    free(ab->mnames);
    free(ab->pnames);
    free(ab->cells);
    free(ab->base_ms);
    free(ab->cpu_ms);
    free(ab);
}

/* ---- output ---- */

static void ab_svg(const fe_ab *ab, FILE *f)
{
    static const char *const colors[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                                         "#edc948", "#b07aa1", "#ff9da7"};
    int np = ab->npolicies, nm = ab->nmodels;
    const cell *cells = ab->cells;
    double maxv = 1;
    for (int i = 0; i < nm * np; i++)
        if (cells[i].speedup > maxv)
            maxv = cells[i].speedup;
    int bar = 18, gap = 14, left = 60, top = 40, h = 260;
    int width = left + nm * (np * bar + gap) + 220, height = top + h + 120;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "font-family=\"Helvetica, Arial, sans-serif\" font-size=\"11\">\n", width, height);
    fprintf(f, "<text x=\"%d\" y=\"20\" font-size=\"14\">Simulated speedup over unfused</text>\n", left);
    for (int t = 0; t <= 4; t++) {
        double v = maxv * t / 4;
        int y = top + h - (int)(h * t / 4);
        fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#ddd\"/>\n", left, y,
                left + nm * (np * bar + gap), y);
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%.2fx</text>\n", left - 6, y + 4, v);
    }
    int y1 = top + h - (int)(h / maxv);
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#999\" stroke-dasharray=\"4 3\"/>\n",
            left, y1, left + nm * (np * bar + gap), y1);
    for (int mi = 0; mi < nm; mi++) {
        int x0 = left + mi * (np * bar + gap) + gap / 2;
        for (int pi = 0; pi < np; pi++) {
            const cell *c = &cells[mi * np + pi];
            int bh = (int)(h * c->speedup / maxv);
            fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"><title>%s, %s: "
                       "%.2fx</title></rect>\n", x0 + pi * bar, top + h - bh, bar - 2, bh,
                    colors[pi % 8], ab->mnames[mi], ab->pnames[pi], c->speedup);
        }
        fprintf(f, "<text transform=\"translate(%d,%d) rotate(35)\">%s</text>\n", x0, top + h + 14,
                ab->mnames[mi]);
    }
    for (int pi = 0; pi < np; pi++) {
        int x = left + nm * (np * bar + gap) + 20, y = top + pi * 18;
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>\n", x, y,
                colors[pi % 8]);
        fprintf(f, "<text x=\"%d\" y=\"%d\">%s</text>\n", x + 18, y + 10, ab->pnames[pi]);
    }
    fprintf(f, "</svg>\n");
}

static void cell_json(const fe_ab *ab, const cell *c, int pi, fe_jw *w)
{
    fe_jw_obj_flat(w);
    fe_jw_key(w, "policy");
    fe_jw_str(w, ab->pnames[pi]);
    fe_jw_key(w, "kernels");
    fe_jw_int(w, c->kernels);
    fe_jw_key(w, "extern");
    fe_jw_int(w, c->extern_calls);
    fe_jw_key(w, "sim_ms");
    fe_jw_num(w, c->time_s * 1e3);
    fe_jw_key(w, "speedup");
    fe_jw_num(w, c->speedup);
    fe_jw_key(w, "l3_bytes");
    fe_jw_int(w, c->l3_bytes);
    fe_jw_key(w, "mem_peak");
    fe_jw_int(w, c->mem_peak);
    fe_jw_key(w, "tiled_groups");
    fe_jw_int(w, c->tiled);
    if (ab->measure) {
        fe_jw_key(w, "cpu_ms");
        fe_jw_num(w, c->cpu_ms);
        fe_jw_key(w, "cpu_speedup");
        fe_jw_num(w, c->cpu_speedup);
        fe_jw_key(w, "cpu_ok");
        fe_jw_bool(w, c->cpu_ok);
        fe_jw_key(w, "cpu_max_rel");
        fe_jw_num(w, c->cpu_max_rel);
    }
    fe_jw_end(w);
}

static void ab_json(const fe_ab *ab, FILE *f)
{
    fe_jw w;
    fe_jw_init(&w, f, 2);
    fe_jw_obj(&w);
    fe_jw_key(&w, "machine");
    fe_jw_str(&w, ab->machine);
    fe_jw_key(&w, "models");
    fe_jw_arr(&w);
    for (int mi = 0; mi < ab->nmodels; mi++) {
        fe_jw_obj(&w);
        fe_jw_key(&w, "model");
        fe_jw_str(&w, ab->mnames[mi]);
        fe_jw_key(&w, "unfused_ms");
        fe_jw_num(&w, ab->base_ms[mi]);
        if (ab->measure) {
            fe_jw_key(&w, "cpu_unfused_ms");
            fe_jw_num(&w, ab->cpu_ms[mi]);
        }
        fe_jw_key(&w, "policies");
        fe_jw_arr(&w);
        for (int pi = 0; pi < ab->npolicies; pi++)
            cell_json(ab, &ab->cells[mi * ab->npolicies + pi], pi, &w);
        fe_jw_end(&w);
        fe_jw_end(&w);
    }
    fe_jw_end(&w);
    fe_jw_end(&w);
}

static void ab_csv(const fe_ab *ab, FILE *f)
{
    fprintf(f, "model,policy,kernels,extern,sim_ms,speedup,l3_bytes,mem_peak,tiled_groups,machine%s\n",
            ab->measure ? ",cpu_ms,cpu_speedup,cpu_ok,cpu_max_rel" : "");
    for (int mi = 0; mi < ab->nmodels; mi++)
        for (int pi = 0; pi < ab->npolicies; pi++) {
            const cell *c = &ab->cells[mi * ab->npolicies + pi];
            fprintf(f, "%s,%s,%d,%d,%.6f,%.4f,%lld,%lld,%d,%s", ab->mnames[mi], ab->pnames[pi],
                    c->kernels, c->extern_calls, c->time_s * 1e3, c->speedup, (long long)c->l3_bytes,
                    (long long)c->mem_peak, c->tiled, ab->machine);
            if (ab->measure)
                fprintf(f, ",%.6f,%.4f,%d,%.3g", c->cpu_ms, c->cpu_speedup, c->cpu_ok,
                        c->cpu_max_rel);
            fprintf(f, "\n");
        }
}

static void ab_text(const fe_ab *ab, FILE *f)
{
    int np = ab->npolicies;
    fprintf(f, "machine %s: %s\n", ab->machine, ab->description);
    for (int mi = 0; mi < ab->nmodels; mi++) {
        int best = 0;
        for (int pi = 1; pi < np; pi++)
            if (ab->cells[mi * np + pi].time_s < ab->cells[mi * np + best].time_s)
                best = pi;
        fprintf(f, "\n%s (unfused %.3f ms simulated", ab->mnames[mi], ab->base_ms[mi]);
        if (ab->measure)
            fprintf(f, ", %.3f ms measured", ab->cpu_ms[mi]);
        fprintf(f, ")\n");
        fprintf(f, "  %-32s %8s %6s %12s %8s %12s %12s %6s", "policy", "kernels", "extern", "sim ms", "speedup",
                "L3 traffic", "mem peak", "tiled");
        if (ab->measure)
            fprintf(f, " %10s %8s %8s", "cpu ms", "speedup", "results");
        fprintf(f, "\n");
        for (int pi = 0; pi < np; pi++) {
            const cell *c = &ab->cells[mi * np + pi];
            char l3[32], mp[32];
            fprintf(f, "%s %-32s %8d %6d %12.3f %7.2fx %12s %12s %6d", pi == best ? "*" : " ",
                    ab->pnames[pi], c->kernels, c->extern_calls, c->time_s * 1e3, c->speedup,
                    fe_fmt_bytes((double)c->l3_bytes, l3, sizeof l3),
                    fe_fmt_bytes((double)c->mem_peak, mp, sizeof mp), c->tiled);
            if (ab->measure)
                fprintf(f, " %10.3f %7.2fx %8s", c->cpu_ms, c->cpu_speedup,
                        c->cpu_ok ? "ok" : "WRONG");
            fprintf(f, "\n");
        }
    }
}

static int write_ab(const void *obj, const void *arg, int format, FILE *f, fe_error *err)
{
    (void)arg, (void)err;
    if (format == FE_FORMAT_JSON)
        ab_json(obj, f);
    else if (format == FE_FORMAT_CSV)
        ab_csv(obj, f);
    else if (format == FE_FORMAT_SVG)
        ab_svg(obj, f);
    else
        ab_text(obj, f);
    return FE_OK;
}

char *fe_ab_format(const fe_ab *ab, int format, fe_error *err)
{
    if (fe_api_null(ab, "fe_ab_format", "the comparison", err))
        return NULL;
    int kind = format & FE_FORMAT_MASK;
    if (kind != FE_FORMAT_TEXT && kind != FE_FORMAT_JSON && kind != FE_FORMAT_CSV &&
        kind != FE_FORMAT_SVG) {
        fe_error_set(err, FE_EINPUT, "fe_ab_format: format %d is not text, JSON, CSV or SVG", kind);
        return NULL;
    }
    return fe_api_text(write_ab, ab, NULL, kind, err);
}
