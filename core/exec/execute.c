/* execute.c: run a plan on the CPU kernels next to the unfused reference
 * (fe_plan_execute: run --execute): numeric agreement output by output, and
 * measured times of the plan, each of its groups and the unfused plan.
 * A plan's layout copies (plan.h) are not run: the CPU kernels take one
 * layout, so a copy would be a memcpy that changes no value; the numbers
 * and the group times are the plan's without them. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "cuda.h"
#include "execute.h"
#include "gpu_exec.h"
#include "measure.h"
#include "ops.h"
#include "paired.h"
#include "sim.h"
#include "units.h"

/* The process's peak resident set so far, in bytes (0 if unknown). */
static int64_t peak_rss(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (int64_t)ru.ru_maxrss * 1024;   /* Linux reports KiB */
}

/* The time of plan's groups that hold a library op, from their medians. */
static double library_ms(const fe_plan *plan, const double *group_ms)
{
    double ms = 0;
    for (int32_t gi = 0; gi < plan->ngroups; gi++) {
        const fe_group *gr = &plan->groups[gi];
        const int32_t *ids = fe_group_nodes(plan, gr);
        for (int i = 0; i < gr->n; i++)
            if (fe_op_get(fe_graph_node(plan->g, ids[i])->op)->flags & FE_OPF_LIBRARY) {
                ms += group_ms[gi];
                break;
            }
    }
    return ms;
}

double fe_execution_ceiling(const fe_execution *x)
{
    return x->timed && x->library_ms > 0 ? x->base_st.median_ms / x->library_ms : 0;
}

int fe_execute_plan(const fe_plan *plan, const fe_execution_opts *o, fe_execution *x, fe_error *err)
{
    const fe_graph *g = plan->g;
    fe_exec_opts eo = {.seed = o->seed};
    fe_bench_opts bo = {.budget_s = o->budget > 0 ? o->budget : 0.5};
    fe_plan *base = NULL;
    double *base_ms = NULL;
    int rc;
    memset(x, 0, sizeof *x);
    x->seed = o->seed ? o->seed : 1;
    x->device = o->device;
    if ((rc = fe_exec_executable(g, err)) != FE_OK)
        return rc;
    /* a missing GPU is said before anything is read or filled */
    if (o->device == FE_DEVICE_CUDA && (rc = fe_cuda_open(err)) != FE_OK)
        return rc;
    /* Files first: their errors name the file, not the model. */
    if ((rc = fe_df_open(&x->files, g, o->weights, o->inputs, o->expect, err)) != FE_OK)
        return rc;
    eo.weights = x->files.weights;
    eo.inputs = x->files.inputs;
    if (!(x->ex = fe_exec_new(g, &eo, err)) ||
        (o->device == FE_DEVICE_CUDA && fe_gpu_exec_attach(x->ex, err))) {
        rc = err->code;
        fe_execution_free(x);
        return rc;
    }
    /* Correctness first: one run of each on the same inputs. */
    if ((rc = fe_exec_reference(x->ex, &x->ref, err)) != FE_OK) {
        fe_error_prefix(err, "the unfused reference: ");
        goto fail;
    }
    if ((rc = fe_exec_plan(x->ex, plan, &x->got, err)) != FE_OK) {
        fe_error_prefix(err, "the plan: ");
        goto fail;
    }
    if ((rc = fe_exec_compare_floor(g, x->ref, x->got, o->rtol > 0 ? o->rtol : -1,
                                    o->device == FE_DEVICE_CUDA ? FE_CMP_DEVICE_ATOL : 0, &x->cmp,
                                    err)) !=
        FE_OK)
        goto fail;
    x->have_cmp = 1;
    if (x->files.expect) {
        x->have_expect = 1;
        x->expect_rtol = o->expect_rtol;
        if ((rc = fe_df_expect(g, x->got, x->files.expect, o->expect_rtol, &x->expect_got, err)) ||
            (rc = fe_df_expect(g, x->ref, x->files.expect, o->expect_rtol, &x->expect_ref, err)))
            goto fail;
    }
    x->check_ms = x->ref->ms + x->got->ms;
    x->floor_bytes = x->got->static_bytes + x->ref->peak_bytes;
    if (o->no_timing) {
        x->peak_rss = peak_rss();
        return FE_OK;
    }
    /* Then timing: the plan against every node as its own kernel on the
     * same (fast) kernels, the fair baseline, in interleaved rounds so that
     * both meet the same machine; the plan's groups are timed in the same
     * runs, and the check above was the first warm-up (paired.h). */
    if (!(x->group_ms = calloc((size_t)(plan->ngroups + 1), sizeof *x->group_ms)) ||
        !(base = fe_plan_unfused(g, err)) ||
        !(base_ms = calloc((size_t)(base->ngroups + 1), sizeof *base_ms))) {
        rc = fe_error_set(err, FE_ENOMEM, "out of memory");
        goto fail;
    }
    /* The plan's check run followed the reference's pass over the same
     * weights and memory, so it is warm: when one round is all that fits,
     * it is the plan's sample. The reference ran other kernels: not one. */
    double v[3], first[2] = {x->ref->ms, x->got->ms}, *gms[2] = {base_ms, x->group_ms};
    const double *first_gms[2] = {NULL, x->got->group_ms};
    int64_t peak[2] = {0, 0};
    fe_paired_opts po = {.budget = bo.budget_s, .first_ms = first, .first_group_ms = first_gms,
                         .nkept = &x->plan_from_check, .group_ms = gms, .peak = peak};
    /* On the GPU the reference's CPU time says nothing of the unfused plan
     * on the card (it had sized llama2_7b_layer's rounds to one): both are
     * warmed up and timed there. */
    if (o->device == FE_DEVICE_CUDA)
        po.first_ms = NULL, po.first_group_ms = NULL;
    if ((rc = fe_paired_versus_opts(x->ex, base, plan, &po, &x->base_st, &x->plan_st, v, err)) !=
        FE_OK)
        goto fail;
    x->library_ms = library_ms(base, base_ms);
    free(base_ms);
    x->speedup = v[0], x->lo = v[1], x->hi = v[2];
    x->rounds = x->plan_st.reps;
    if (o->device == FE_DEVICE_CUDA) {
        if ((rc = fe_gpu_exec_versus_graphs(x->ex, base, plan, bo.budget_s, &x->graph_base_st,
                                            &x->graph_plan_st, v, x->graph_why,
                                            sizeof x->graph_why, err)))
            goto fail;
        x->timed_graphs = !x->graph_why[0];
        x->graph_speedup = v[0], x->graph_lo = v[1], x->graph_hi = v[2];
    }
    x->base_peak = peak[0];
    fe_plan_free(base);
    x->timed = 1;
    x->peak_rss = peak_rss();
    return FE_OK;
fail:
    fe_exec_name_file(g, err);
    free(base_ms);
    fe_plan_free(base);
    fe_execution_free(x);
    return rc;
}

void fe_execution_free(fe_execution *x)
{
    if (x->have_cmp)
        fe_cmp_free(&x->cmp);
    if (x->have_expect) {
        fe_cmp_free(&x->expect_got);
        fe_cmp_free(&x->expect_ref);
    }
    fe_exec_result_free(x->ref);
    fe_exec_result_free(x->got);
    fe_exec_free(x->ex);
    fe_df_close(&x->files);   /* after the session that reads them */
    free(x->group_ms);
    memset(x, 0, sizeof *x);
}

/* The first output outside tolerance, or NULL. */
static const fe_cmp_item *first_bad(const fe_cmp *c)
{
    for (int i = 0; i < c->n; i++)
        if (!c->items[i].ok)
            return &c->items[i];
    return NULL;
}

/* Both runs against the expected outputs: which differs says whose fault. */
static int expect_check(const fe_graph *g, const fe_execution *x, fe_error *err)
{
    const fe_cmp_item *p = first_bad(&x->expect_got), *r = first_bad(&x->expect_ref);
    const fe_cmp_item *it = p ? p : r;
    if (!it)
        return FE_OK;
    return fe_error_set(err, FE_ECHECK, "the %s's results differ from the expected outputs in %s: "
                        "output '%s' has %lld element%s outside tolerance (rtol %.0e; worst at "
                        "index %lld: %s %.9g, expected %.9g)%s", p ? "plan" : "unfused reference",
                        fe_st_path(x->files.expect),
                        fe_tensor_name(g, fe_graph_tensor(g, it->tensor)), (long long)it->bad,
                        it->bad == 1 ? "" : "s", it->rtol, (long long)it->worst,
                        p ? "plan" : "reference", it->worst_got, it->worst_ref,
                        p && r ? "; the unfused reference differs too, so fusion is not the cause: "
                                 "are the model, --weights and --inputs those that made the file, "
                                 "and is the tolerance (--expect-rtol) right for it?"
                        : p ? "; the unfused reference agrees: the groups' 'how' lines say which "
                              "kernels ran" : "");
}

int fe_execution_check(const fe_plan *plan, const fe_execution *x, fe_error *err)
{
    const fe_cmp_item *it = first_bad(&x->cmp);
    const fe_graph *g = plan->g;
    if (!it)
        return x->have_expect ? expect_check(g, x, err) : FE_OK;
    int nbad = 0;
    for (int i = 0; i < x->cmp.n; i++)
        nbad += !x->cmp.items[i].ok;
    return fe_error_set(err, FE_ECHECK, "the plan's results differ from the unfused reference: "
                        "output '%s' has %lld element%s outside tolerance (rtol %.0e; worst at "
                        "index %lld: plan %.9g, reference %.9g)%s; the groups' 'how' lines say "
                        "which kernels ran",
                        fe_tensor_name(g, fe_graph_tensor(g, it->tensor)), (long long)it->bad,
                        it->bad == 1 ? "" : "s", it->rtol, (long long)it->worst, it->worst_got,
                        it->worst_ref, nbad > 1 ? " and other outputs too" : "");
}

/* One output's comparison line; run labels the run when there are two. */
static void cmp_line(const fe_graph *g, const char *run, const fe_cmp_item *it, FILE *f)
{
    fprintf(f, "           %-*s%-*.*s %12.3g %12.3g %9.0e %10lld  %s\n", *run ? 10 : 0, run,
            *run ? 18 : 28, *run ? 18 : 28, fe_tensor_name(g, fe_graph_tensor(g, it->tensor)),
            it->max_abs, it->max_rel, it->rtol, (long long)it->bad, it->ok ? "ok" : "MISMATCH");
}

void fe_execution_text(const fe_plan *plan, const fe_execution *x, FILE *f)
{
    const fe_graph *g = plan->g;
    char a[32], b[32], c[32];
    const fe_cuda_dev *d = x->device == FE_DEVICE_CUDA ? fe_cuda_device() : NULL;
    if (d)
        fprintf(f, "executed   on %s (CUDA events per group, launched kernel by kernel; the "
                "reference on this CPU, %s, seed %llu)", d->name, fe_exec_threads(),
                (unsigned long long)x->seed);
    else
        fprintf(f, "executed   on this CPU (%s, seed %llu)", fe_exec_threads(),
                (unsigned long long)x->seed);
    int few = x->timed && x->rounds < FE_EXEC_FEW_ROUNDS;
    if (x->timed && !few)
        fprintf(f, ": plan %.3f ms, unfused %.3f ms (medians of %d interleaved rounds), %.2fx "
                "(95%% interval %.2fx to %.2fx)", x->plan_st.median_ms, x->base_st.median_ms,
                x->plan_st.reps, x->speedup, x->lo, x->hi);
    else if (few)
        fprintf(f, ": plan %.3f ms, unfused %.3f ms (medians of %d interleaved round%s), %.2fx "
                "(rounds ranged %.2fx to %.2fx; too few for an interval)", x->plan_st.median_ms,
                x->base_st.median_ms, x->rounds, x->rounds == 1 ? "" : "s", x->speedup,
                x->lo, x->hi);
    fprintf(f, "\n");
    if (x->timed_graphs)
        fprintf(f, "graphs     as CUDA graphs (one launch a run): plan %.3f ms, unfused %.3f ms "
                "(medians of %d interleaved rounds), %.2fx (95%% interval %.2fx to %.2fx)\n",
                x->graph_plan_st.median_ms, x->graph_base_st.median_ms, x->graph_plan_st.reps,
                x->graph_speedup, x->graph_lo, x->graph_hi);
    else if (x->graph_why[0])
        fprintf(f, "graphs     none: %s\n", x->graph_why);
    fe_df_text(&x->files, f);
    if (few)
        fprintf(f, "noise      only %d round%s of the plan and unfused ran (a round takes %.1f s; "
                "%d would outlast --budget and 10 s)%s: the figure is one moment of this host, "
                "not an interval (a longer --budget runs more rounds)\n", x->rounds,
                x->rounds == 1 ? "" : "s", (x->plan_st.median_ms + x->base_st.median_ms) / 1e3,
                FE_EXEC_FEW_ROUNDS, x->plan_from_check ? "; the plan's sample is its "
                "correctness run, warm after the reference's pass" : "");
    else if (x->timed && x->lo <= 1 && x->hi >= 1)
        fprintf(f, "noise      this host cannot tell the plan from unfused: the interval holds "
                "1.00x (a longer --budget narrows it; %s)\n",
                x->hi - x->lo > 0.1 ? "the rounds varied a lot: a busy machine?"
                                    : "the plans may simply be as fast");
    if (fe_execution_ceiling(x) > 0)
        fprintf(f, "ceiling    the unfused plan spends %.3f of its %.3f ms (%.0f%%) in library ops "
                "(matmul, conv2d, sdpa), which a plan runs on the same kernels: even with "
                "everything else free, no plan beats unfused by more than %.2fx here\n",
                x->library_ms, x->base_st.median_ms, 100 * x->library_ms / x->base_st.median_ms,
                fe_execution_ceiling(x));
    fprintf(f, "memory     activations at peak %s (unfused %s); inputs and weights %s\n",
            fe_fmt_bytes((double)x->got->peak_bytes, a, sizeof a),
            fe_fmt_bytes((double)(x->timed ? x->base_peak : x->ref->peak_bytes), b, sizeof b),
            fe_fmt_bytes((double)x->got->static_bytes, c, sizeof c));
    fprintf(f, "           process peak %s against the model's floor %s (inputs and weights + "
            "unfused activations at peak, in the model's dtypes): %.2fx\n",
            fe_fmt_bytes((double)x->peak_rss, a, sizeof a),
            fe_fmt_bytes((double)x->floor_bytes, b, sizeof b),
            x->floor_bytes > 0 ? (double)x->peak_rss / (double)x->floor_bytes : 0.0);
    fprintf(f, "outputs    %-28s %12s %12s %9s %10s\n", "", "max abs err", "max rel err", "rtol",
            "bad");
    for (int i = 0; i < x->cmp.n; i++)
        cmp_line(g, "", &x->cmp.items[i], f);
    if (x->have_expect) {
        fprintf(f, "expected   outputs of %s, against each run\n", fe_st_path(x->files.expect));
        for (int i = 0; i < x->expect_got.n; i++) {
            cmp_line(g, "plan", &x->expect_got.items[i], f);
            cmp_line(g, "unfused", &x->expect_ref.items[i], f);
        }
    }
    fprintf(f, "groups     %s\n", x->timed ? "measured median per group (ms), and how each ran"
                                         : "how each ran (not timed: --no-timing)");
    for (int32_t gi = 0; gi < plan->ngroups; gi++) {
        const fe_group *gr = &plan->groups[gi];
        char key[48];
        fe_sim_group_label(g, fe_group_nodes(plan, gr), gr->n, key, sizeof key);
        fprintf(f, "  %4d  %-40.40s %3d  ", gi, key, gr->n);
        if (x->timed)
            fprintf(f, "%10.3f  ", x->group_ms[gi]);
        fprintf(f, "%s\n", gi < x->got->ngroups ? x->got->how[gi] : "");
    }
}

void fe_bench_stats_json(fe_jw *w, const char *key, const fe_bench_stats *s)
{
    fe_jw_key(w, key);
    fe_jw_obj_flat(w);
    fe_jw_key(w, "median_ms");
    fe_jw_num(w, s->median_ms);
    fe_jw_key(w, "min_ms");
    fe_jw_num(w, s->min_ms);
    fe_jw_key(w, "max_ms");
    fe_jw_num(w, s->max_ms);
    fe_jw_key(w, "spread_ms");
    fe_jw_num(w, s->spread_ms);
    fe_jw_key(w, "reps");
    fe_jw_int(w, s->reps);
    fe_jw_end(w);
}

/* JSON has no NaN or infinity: such errors are written as null. */
static void num_or_null(fe_jw *w, double v)
{
    if (isfinite(v))
        fe_jw_num(w, v);
    else
        fe_jw_null(w);
}

/* A comparison as an array of {"tensor", "max_abs", "max_rel", "rtol", "bad", "ok"}. */
static void cmp_json(const fe_graph *g, const fe_cmp *c, fe_jw *w)
{
    fe_jw_arr(w);
    for (int i = 0; i < c->n; i++) {
        const fe_cmp_item *it = &c->items[i];
        fe_jw_obj_flat(w);
        fe_jw_key(w, "tensor");
        fe_jw_str(w, fe_tensor_name(g, fe_graph_tensor(g, it->tensor)));
        fe_jw_key(w, "max_abs");
        num_or_null(w, it->max_abs);
        fe_jw_key(w, "max_rel");
        num_or_null(w, it->max_rel);
        fe_jw_key(w, "rtol");
        fe_jw_num(w, it->rtol);
        fe_jw_key(w, "bad");
        fe_jw_int(w, it->bad);
        fe_jw_key(w, "ok");
        fe_jw_bool(w, it->ok);
        fe_jw_end(w);
    }
    fe_jw_end(w);
}

void fe_execution_json(const fe_plan *plan, const fe_execution *x, fe_jw *w)
{
    const fe_graph *g = plan->g;
    fe_jw_obj(w);
    fe_jw_key(w, "seed");
    fe_jw_int(w, (int64_t)x->seed);
    fe_jw_key(w, "device");
    fe_jw_str(w, x->device == FE_DEVICE_CUDA ? "cuda" : "cpu");
    if (x->device == FE_DEVICE_CUDA && fe_cuda_device()) {
        fe_jw_key(w, "device_name");
        fe_jw_str(w, fe_cuda_device()->name);
    }
    fe_jw_key(w, "threads");
    fe_jw_int(w, omp_get_max_threads());
    fe_jw_key(w, "ok");
    fe_jw_bool(w, x->cmp.ok);
    if (x->timed) {
        fe_bench_stats_json(w, "plan", &x->plan_st);
        fe_bench_stats_json(w, "unfused", &x->base_st);
        fe_jw_key(w, "speedup");
        fe_jw_num(w, x->speedup);
        fe_jw_key(w, "speedup_interval");
        fe_jw_arr_flat(w);
        fe_jw_num(w, x->lo);
        fe_jw_num(w, x->hi);
        fe_jw_end(w);
        fe_jw_key(w, "rounds");
        fe_jw_int(w, x->rounds);
        fe_jw_key(w, "interval_is_range");   /* too few rounds: the rounds' range */
        fe_jw_bool(w, x->rounds < FE_EXEC_FEW_ROUNDS);
        fe_jw_key(w, "plan_sample_is_check");   /* one round: the plan's check run is it */
        fe_jw_bool(w, x->plan_from_check > 0);
        fe_jw_key(w, "unfused_library_ms");
        fe_jw_num(w, x->library_ms);
        fe_jw_key(w, "ceiling");   /* Amdahl's bound over unfused; null: no library op */
        if (fe_execution_ceiling(x) > 0)
            fe_jw_num(w, fe_execution_ceiling(x));
        else
            fe_jw_null(w);
        if (x->timed_graphs) {   /* the same, replayed as CUDA graphs */
            fe_bench_stats_json(w, "plan_graph", &x->graph_plan_st);
            fe_bench_stats_json(w, "unfused_graph", &x->graph_base_st);
            fe_jw_key(w, "speedup_graph");
            fe_jw_num(w, x->graph_speedup);
        } else if (x->graph_why[0]) {
            fe_jw_key(w, "no_graph");
            fe_jw_str(w, x->graph_why);
        }
    }
    fe_jw_key(w, "peak_bytes");
    fe_jw_int(w, x->got->peak_bytes);
    fe_jw_key(w, "unfused_peak_bytes");
    fe_jw_int(w, x->timed ? x->base_peak : x->ref->peak_bytes);
    fe_jw_key(w, "static_bytes");
    fe_jw_int(w, x->got->static_bytes);
    fe_jw_key(w, "check_ms");
    fe_jw_num(w, x->check_ms);
    fe_jw_key(w, "peak_rss_bytes");
    fe_jw_int(w, x->peak_rss);
    fe_jw_key(w, "floor_bytes");
    fe_jw_int(w, x->floor_bytes);
    fe_jw_key(w, "rss_over_floor");
    fe_jw_num(w, x->floor_bytes > 0 ? (double)x->peak_rss / (double)x->floor_bytes : 0.0);
    fe_jw_key(w, "outputs");
    cmp_json(g, &x->cmp, w);
    fe_df_json(&x->files, w);
    if (x->have_expect) {
        fe_jw_key(w, "expect");
        fe_jw_obj(w);
        fe_jw_key(w, "file");
        fe_jw_str(w, fe_st_path(x->files.expect));
        fe_jw_key(w, "ok");
        fe_jw_bool(w, x->expect_got.ok && x->expect_ref.ok);
        fe_jw_key(w, "plan");
        cmp_json(g, &x->expect_got, w);
        fe_jw_key(w, "unfused");
        cmp_json(g, &x->expect_ref, w);
        fe_jw_end(w);
    }
    fe_jw_key(w, "groups");
    fe_jw_arr(w);
    for (int32_t gi = 0; gi < plan->ngroups; gi++) {
        fe_jw_obj_flat(w);
        fe_jw_key(w, "group");
        fe_jw_int(w, gi);
        if (x->timed) {
            fe_jw_key(w, "median_ms");
            fe_jw_num(w, x->group_ms[gi]);
        }
        fe_jw_key(w, "how");
        fe_jw_str(w, gi < x->got->ngroups ? x->got->how[gi] : "");
        fe_jw_end(w);
    }
    fe_jw_end(w);
    fe_jw_end(w);
}
