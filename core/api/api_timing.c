/* api_timing.c: a plan's groups and ops timed on a device (fuseeng bench)
 * and written as a profile file (fuseeng profile); core/exec/measure.c
 * does the timing. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "choice.h"
#include "cuda.h"
#include "groupkey.h"
#include "ops.h"
#include "profile.h"
#include "units.h"

fe_timing *fe_plan_time(const fe_plan *p, const fe_timing_options *o, fe_error *err)
{
    if (fe_api_null(p, "fe_plan_time", "the plan", err))
        return NULL;
    if (o && (o->budget < 0 || o->budget > 86400)) {
        fe_error_set(err, FE_EINPUT, "fe_plan_time: budget %g s is not in [0, 86400]", o->budget);
        return NULL;
    }
    fe_timing *t = calloc(1, sizeof *t);
    if (!t) {
        fe_error_set(err, FE_ENOMEM, "out of memory");
        return NULL;
    }
    fe_measure_opts mo = {0};
    if (o)
        mo = (fe_measure_opts){o->seed, o->budget, o->totals, o->weights, o->inputs, o->device};
    if (fe_measure_plan(p, &mo, &t->m, err) != FE_OK) {
        free(t);
        return NULL;
    }
    t->plan = p;
    t->seed = mo.seed ? mo.seed : 1;
    t->budget = mo.budget > 0 ? mo.budget : 0.2;
    return t;
}

void fe_timing_free(fe_timing *t)
{
    if (!t)
        return;
    fe_measured_free(&t->m);
    free(t);
}

static double gbps(int64_t bytes, double ms)
{
    return ms > 0 ? (double)bytes / (ms * 1e-3) / 1e9 : 0;
}

static void timing_text(const fe_timing *t, const char *label, FILE *f)
{
    const fe_plan *plan = t->plan;
    const fe_measured *m = &t->m;
    const fe_graph *g = plan->g;
    char b[32];
    fprintf(f, "model      %s (%d nodes, %s)\n", g->name[0] ? g->name : "(unnamed)", g->nnodes,
            g->file);
    fprintf(f, "plan       %s (%d groups)\n", label, plan->ngroups);
    if (m->device == FE_DEVICE_CUDA && fe_cuda_device())
        fprintf(f, "measured   on the GPU: %s (CUDA events after a warm-up run), seed %llu, %.2f s "
                "of repetitions per item\n", fe_cuda_device()->name, (unsigned long long)t->seed,
                t->budget);
    else
        fprintf(f, "measured   on this CPU: %s, seed %llu, %.2f s of repetitions per item\n",
                fe_threads(), (unsigned long long)t->seed, t->budget);
    fe_df_text(&m->files, f);
    fprintf(f, "\ngroups (as one kernel; separate = members one by one)\n");
    fprintf(f, "  %4s  %-34s %5s  %-14s %10s %10s %10s %9s %6s %10s %7s %11s %7s\n", "#", "ops",
            "nodes", "kernel", "median ms", "min", "max", "spread", "reps", "bytes", "GB/s",
            "separate ms", "speedup");
    for (int gi = 0; gi < m->ngroups; gi++) {
        const fe_bench_group *bg = &m->groups[gi];
        char key[40];
        fe_sim_group_label(g, bg->nodes, bg->n, key, sizeof key);
        fprintf(f, "  %4d  %-34.34s %5d  %-14s %10.4f %10.4f %10.4f %9.4f %6d %10s %7.1f %11.4f "
                "%6.2fx%s\n", gi, key, bg->n,
                fe_k_choice_name(bg->is_fused || bg->n == 1 ? bg->kernel : FE_K_CHOICE_PER_OP),
                bg->fused.median_ms, bg->fused.min_ms, bg->fused.max_ms, bg->fused.spread_ms,
                bg->fused.reps, fe_fmt_bytes((double)bg->bytes, b, sizeof b),
                gbps(bg->bytes, bg->fused.median_ms), bg->members_ms,
                bg->fused.median_ms > 0 ? bg->members_ms / bg->fused.median_ms : 0,
                bg->is_fused || bg->n == 1 ? "" : "  (not fused: see --json how)");
    }
    if (m->interrupted)
        fprintf(f, "interrupted (Ctrl-C): groups 0 to %d of %d measured, the rest and the totals "
                   "not\n", m->ngroups - 1, plan->ngroups);
    fprintf(f, "\nsingle ops (each alone)\n");
    fprintf(f, "  %-32s %-14s %5s %10s %10s %10s %9s %6s %10s %7s\n", "node", "op", "group",
            "median ms", "min", "max", "spread", "reps", "bytes", "GB/s");
    for (int32_t v = 0; v < g->nnodes; v++) {
        const fe_bench_stats *s = &m->node_ms[v];
        if (plan->group_of[v] >= m->ngroups)   /* interrupted before its group */
            continue;
        fprintf(f, "  %-32.32s %-14.14s %5d %10.4f %10.4f %10.4f %9.4f %6d %10s %7.1f\n",
                fe_node_name(g, fe_graph_node(g, v)), fe_node_op_name(fe_graph_node(g, v)),
                plan->group_of[v], s->median_ms, s->min_ms, s->max_ms, s->spread_ms, s->reps,
                fe_fmt_bytes((double)m->node_bytes[v], b, sizeof b),
                gbps(m->node_bytes[v], s->median_ms));
    }
    if (!m->timed_totals)
        return;
    double gsum = 0, osum = 0;
    for (int gi = 0; gi < m->ngroups; gi++)
        gsum += m->groups[gi].fused.median_ms;
    for (int32_t v = 0; v < g->nnodes; v++)
        osum += m->node_ms[v].median_ms;
    fprintf(f, "\ntotals\n");
    fprintf(f, "  plan, end to end        %10.4f ms (min %.4f, max %.4f, spread %.4f, %d rounds)\n",
            m->plan_st.median_ms, m->plan_st.min_ms, m->plan_st.max_ms, m->plan_st.spread_ms,
            m->plan_st.reps);
    fprintf(f, "  unfused, end to end     %10.4f ms (min %.4f, max %.4f, spread %.4f, %d rounds)\n",
            m->unfused_st.median_ms, m->unfused_st.min_ms, m->unfused_st.max_ms,
            m->unfused_st.spread_ms, m->unfused_st.reps);
    fprintf(f, "  speedup                 %10.2fx (95%% interval %.2fx to %.2fx%s)\n", m->speedup,
            m->lo, m->hi, m->lo <= 1 && m->hi >= 1 ? ": this host cannot tell them apart" : "");
    fprintf(f, "  sum of group medians    %10.4f ms; sum of single-op medians %.4f ms\n", gsum,
            osum);
    if (m->timed_graphs) {
        fprintf(f, "  as CUDA graphs (one launch a run):\n");
        fprintf(f, "  plan, end to end        %10.4f ms (min %.4f, max %.4f, %d rounds)\n",
                m->graph_plan_st.median_ms, m->graph_plan_st.min_ms, m->graph_plan_st.max_ms,
                m->graph_plan_st.reps);
        fprintf(f, "  unfused, end to end     %10.4f ms (min %.4f, max %.4f, %d rounds)\n",
                m->graph_unfused_st.median_ms, m->graph_unfused_st.min_ms,
                m->graph_unfused_st.max_ms, m->graph_unfused_st.reps);
        fprintf(f, "  speedup                 %10.2fx (95%% interval %.2fx to %.2fx)\n",
                m->graph_speedup, m->graph_lo, m->graph_hi);
    } else if (m->graph_why[0]) {
        fprintf(f, "  no CUDA graph figures: %s\n", m->graph_why);
    }
}

static void group_json(const fe_timing *t, int gi, fe_jw *w)
{
    const fe_graph *g = t->plan->g;
    const fe_bench_group *bg = &t->m.groups[gi];
    char key[4096];
    fe_jw_obj(w);
    fe_jw_key(w, "group");
    fe_jw_int(w, gi);
    fe_jw_key(w, "nodes");
    fe_jw_arr_flat(w);
    for (int k = 0; k < bg->n; k++)
        fe_jw_str(w, fe_node_name(g, fe_graph_node(g, bg->nodes[k])));
    fe_jw_end(w);
    fe_group_compat_key(g, bg->nodes, bg->n, key, sizeof key);
    fe_jw_key(w, "ops");
    fe_jw_str(w, key);
    fe_jw_key(w, "kernel");
    fe_jw_str(w, fe_k_choice_name(bg->kernel));
    fe_jw_key(w, "one_kernel");
    fe_jw_bool(w, bg->is_fused);
    fe_jw_key(w, "split");
    fe_jw_int(w, t->plan->groups[gi].split);
    fe_jw_key(w, "how");
    fe_jw_str(w, bg->how);
    fe_jw_key(w, "median_ms");
    fe_jw_num(w, bg->fused.median_ms);
    fe_jw_key(w, "min_ms");
    fe_jw_num(w, bg->fused.min_ms);
    fe_jw_key(w, "max_ms");
    fe_jw_num(w, bg->fused.max_ms);
    fe_jw_key(w, "spread_ms");
    fe_jw_num(w, bg->fused.spread_ms);
    fe_jw_key(w, "reps");
    fe_jw_int(w, bg->fused.reps);
    fe_jw_key(w, "bytes");
    fe_jw_int(w, bg->bytes);
    fe_jw_key(w, "gbps");
    fe_jw_num(w, gbps(bg->bytes, bg->fused.median_ms));
    fe_jw_key(w, "separate_ms");
    fe_jw_num(w, bg->members_ms);
    fe_jw_key(w, "separate_bytes");
    fe_jw_int(w, bg->members_bytes);
    fe_jw_key(w, "speedup");
    fe_jw_num(w, bg->fused.median_ms > 0 ? bg->members_ms / bg->fused.median_ms : 0);
    if (bg->device == FE_DEVICE_CUDA) {
        fe_jw_key(w, "cuda_kernels");
        fe_jw_int(w, bg->kernels);
        fe_jw_key(w, "registers");
        fe_jw_int(w, bg->regs);
        fe_jw_key(w, "spill_bytes");
        fe_jw_int(w, bg->spill_bytes);
        fe_jw_key(w, "blocks_per_sm");
        fe_jw_int(w, bg->blocks_per_sm);
        fe_jw_key(w, "host_steps");
        fe_jw_int(w, bg->host_steps);
    }
    fe_jw_end(w);
}

static void timing_json(const fe_timing *t, const char *label, FILE *f)
{
    const fe_plan *plan = t->plan;
    const fe_measured *m = &t->m;
    const fe_graph *g = plan->g;
    fe_jw w;
    fe_jw_init(&w, f, 2);
    fe_jw_obj(&w);
    fe_jw_key(&w, "format");
    fe_jw_str(&w, "fuseeng.bench/1");
    fe_jw_key(&w, "model");
    fe_jw_str(&w, g->name);
    fe_jw_key(&w, "plan");
    fe_jw_str(&w, label);
    fe_jw_key(&w, "device");
    fe_jw_str(&w, m->device == FE_DEVICE_CUDA ? "cuda" : "cpu");
    if (m->device == FE_DEVICE_CUDA && fe_cuda_device()) {
        fe_jw_key(&w, "device_name");
        fe_jw_str(&w, fe_cuda_device()->name);
    }
    fe_jw_key(&w, "threads");
    fe_jw_int(&w, omp_get_max_threads());
    fe_jw_key(&w, "seed");
    fe_jw_int(&w, (int64_t)t->seed);
    fe_df_json(&t->m.files, &w);
    fe_jw_key(&w, "budget_s");
    fe_jw_num(&w, t->budget);
    if (m->interrupted) {   /* Ctrl-C: the groups measured before it, no totals */
        fe_jw_key(&w, "interrupted");
        fe_jw_bool(&w, 1);
    }
    fe_jw_key(&w, "groups");
    fe_jw_arr(&w);
    for (int gi = 0; gi < m->ngroups; gi++)
        group_json(t, gi, &w);
    fe_jw_end(&w);
    fe_jw_key(&w, "ops");
    fe_jw_arr(&w);
    for (int32_t v = 0; v < g->nnodes; v++) {
        const fe_bench_stats *s = &m->node_ms[v];
        if (plan->group_of[v] >= m->ngroups)   /* interrupted before its group */
            continue;
        fe_jw_obj_flat(&w);
        fe_jw_key(&w, "node");
        fe_jw_str(&w, fe_node_name(g, fe_graph_node(g, v)));
        fe_jw_key(&w, "op");
        fe_jw_str(&w, fe_node_op_name(fe_graph_node(g, v)));
        fe_jw_key(&w, "group");
        fe_jw_int(&w, plan->group_of[v]);
        fe_jw_key(&w, "median_ms");
        fe_jw_num(&w, s->median_ms);
        fe_jw_key(&w, "min_ms");
        fe_jw_num(&w, s->min_ms);
        fe_jw_key(&w, "max_ms");
        fe_jw_num(&w, s->max_ms);
        fe_jw_key(&w, "spread_ms");
        fe_jw_num(&w, s->spread_ms);
        fe_jw_key(&w, "reps");
        fe_jw_int(&w, s->reps);
        fe_jw_key(&w, "bytes");
        fe_jw_int(&w, m->node_bytes[v]);
        fe_jw_end(&w);
    }
    fe_jw_end(&w);
    if (m->timed_totals) {
        fe_jw_key(&w, "totals");
        fe_jw_obj(&w);
        fe_bench_stats_json(&w, "plan", &m->plan_st);
        fe_bench_stats_json(&w, "unfused", &m->unfused_st);
        fe_jw_key(&w, "speedup");
        fe_jw_num(&w, m->speedup);
        fe_jw_key(&w, "speedup_interval");
        fe_jw_arr_flat(&w);
        fe_jw_num(&w, m->lo);
        fe_jw_num(&w, m->hi);
        fe_jw_end(&w);
        if (m->timed_graphs) {
            fe_bench_stats_json(&w, "plan_graph", &m->graph_plan_st);
            fe_bench_stats_json(&w, "unfused_graph", &m->graph_unfused_st);
            fe_jw_key(&w, "speedup_graph");
            fe_jw_num(&w, m->graph_speedup);
            fe_jw_key(&w, "speedup_graph_interval");
            fe_jw_arr_flat(&w);
            fe_jw_num(&w, m->graph_lo);
            fe_jw_num(&w, m->graph_hi);
            fe_jw_end(&w);
        } else if (m->graph_why[0]) {
            fe_jw_key(&w, "no_graph");
            fe_jw_str(&w, m->graph_why);
        }
        fe_jw_end(&w);
    }
    fe_jw_end(&w);
}

static int write_timing(const void *obj, const void *arg, int format, FILE *f, fe_error *err)
{
    (void)err;
    if ((format & FE_FORMAT_MASK) == FE_FORMAT_JSON)
        timing_json(obj, arg, f);
    else
        timing_text(obj, arg, f);
    return FE_OK;
}

char *fe_timing_format(const fe_timing *t, const char *label, int format, fe_error *err)
{
    if (fe_api_null(t, "fe_timing_format", "the timing", err))
        return NULL;
    if (!label)
        label = fe_plan_policy(t->plan) ? fe_plan_policy(t->plan) : "unfused";
    return fe_api_text(write_timing, t, label, format, err);
}

/* ---- profiles ---- */

/* One measurement under one key; entries with equal keys are merged. */
typedef struct entry {
    int fused;
    char *key, *text;
    double ms;
} entry;

typedef struct entries {
    entry *v;
    int n, cap;
} entries;

static int add(entries *es, int fused, const char *key, const char *text, double ms)
{
    if (es->n == es->cap) {
        int nc = es->cap ? 2 * es->cap : 64;
        entry *nv = realloc(es->v, (size_t)nc * sizeof *nv);
        if (!nv)
            return -1;
        es->v = nv;
        es->cap = nc;
    }
    entry *e = &es->v[es->n];
    e->fused = fused;
    e->ms = ms;
    e->key = strdup(key);
    e->text = text ? strdup(text) : NULL;
    if (!e->key || (text && !e->text)) {
        free(e->key);
        free(e->text);
        return -1;
    }
    es->n++;
    return 0;
}

static int by_key(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    if (x->fused != y->fused)
        return x->fused - y->fused;
    int c = strcmp(x->key, y->key);
    return c ? c : (x->ms > y->ms) - (x->ms < y->ms);
}

/* Both keys of the group nodes[0..n) with time ms. */
static int add_group(entries *es, const fe_graph *g, const int32_t *nodes, int n, double ms)
{
    char exact[17], compat[4096], text[4096];
    if (fe_group_exact_key(g, nodes, n, exact) != FE_OK)
        return -1;
    if (fe_group_compat_key(g, nodes, n, compat, sizeof compat) >= sizeof compat)
        return 0;   /* a compat key this long names nothing a lookup would ask for */
    fe_group_shape_text(g, nodes, n, text, sizeof text);
    int fused = n > 1;
    return add(es, fused, exact, text, ms) || add(es, fused, compat, NULL, ms) ? -1 : 0;
}

/* Merge equal keys (median of their times) into a profile. */
static fe_profile *collect(entries *es, fe_error *err)
{
    fe_profile *p = fe_profile_new(err);
    if (!p)
        return NULL;
    qsort(es->v, (size_t)es->n, sizeof *es->v, by_key);
    for (int i = 0; i < es->n;) {
        int j = i;
        while (j < es->n && es->v[j].fused == es->v[i].fused && !strcmp(es->v[j].key, es->v[i].key))
            j++;
        int k = i + (j - i) / 2;
        double med = (j - i) % 2 ? es->v[k].ms : 0.5 * (es->v[k - 1].ms + es->v[k].ms);
        if (fe_profile_add(p, es->v[i].fused, es->v[i].key, med, es->v[i].text) != FE_OK) {
            fe_profile_free(p);
            fe_error_set(err, FE_ENOMEM, "out of memory");
            return NULL;
        }
        i = j;
    }
    return p;
}

static void entries_free(entries *es)
{
    for (int i = 0; i < es->n; i++) {
        free(es->v[i].key);
        free(es->v[i].text);
    }
    free(es->v);
}

int fe_timing_write_profile(const fe_timing *t, const char *path, fe_profile_info *info,
                            fe_error *err)
{
    if (fe_api_null(t, "fe_timing_write_profile", "the timing", err) ||
        fe_api_null(path, "fe_timing_write_profile", "the path", err))
        return FE_EINPUT;
    const fe_graph *g = t->plan->g;
    const fe_measured *m = &t->m;
    entries es = {0};
    fe_profile *prof = NULL;
    int nfused = 0, oom = 0, rc = FE_OK;
    for (int32_t v = 0; v < g->nnodes && !oom; v++)
        if (t->plan->group_of[v] < m->ngroups)   /* all, unless interrupted */
            oom = add_group(&es, g, &v, 1, m->node_ms[v].median_ms);
    for (int gi = 0; gi < m->ngroups && !oom; gi++) {
        const fe_bench_group *bg = &m->groups[gi];
        if (bg->n > 1) {
            oom = add_group(&es, g, bg->nodes, bg->n, bg->fused.median_ms);
            nfused++;
        }
    }
    if (oom)
        rc = fe_error_set(err, FE_ENOMEM, "out of memory");
    else if (!(prof = collect(&es, err)))
        rc = err ? err->code : FE_ENOMEM;
    else if ((rc = fe_profile_write(prof, path, t->m.device == FE_DEVICE_CUDA && fe_cuda_device()
                                    ? fe_cuda_device()->name : "host", err)) == FE_OK && info)
        *info = (fe_profile_info){fe_profile_count(prof, 0), fe_profile_count(prof, 1), nfused};
    fe_profile_free(prof);
    entries_free(&es);
    return rc;
}

int fe_timing_interrupted(const fe_timing *t)
{
    return t && t->m.interrupted;
}
