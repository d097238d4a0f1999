/* bench_optimal.c: the optimal plan (policies/optimal.lua, ctx:optimal)
 * at its two scales, with the figures each solve recorded in the plan:
 * candidates the solver chose among, time spent searching, the status and
 * the gap.
 *
 *   every example model and each real export of up to ~300 nodes
 *   (SHARED/models, ../shared by default), solved whole: <= 10 s each
 *   the ~100k-node LLaMA model of bench_policy.c, in windows of 64 nodes:
 *   <= 60 s
 *
 * (Issue 36's targets.) Times are wall seconds of the whole planning run;
 * "search" is the part inside ctx:optimal (enumerating, pricing, solving).
 * BENCH_OPTIMAL_LAYERS=N plans the generated model of N layers instead of
 * 2500 (0 leaves it out). */
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "api.h"
#include "clock.h"
#include "fuseeng_cli.h"

#define T_WHOLE 10.0
#define T_WINDOWS 60.0
#define MAX_WHOLE_NODES 300

/* Plan path with p; print one line; 1 if over limit (or failed). */
static int one(fe_policy *p, const char *path, const char *label, double limit)
{
    fe_error err = {0};
    fe_model *m = fe_model_load_file(path, NULL, &err);
    if (!m) {
        printf("%-28s FAIL: %s\n", label, err.message);
        return 1;
    }
    const fe_graph *g = fe_api_graph(m);
    fe_plan_stats st;
    double t0 = fe_clock_s();
    fe_plan *plan = fe_policy_plan(p, m, &st, &err);
    double wall = fe_clock_s() - t0;
    if (!plan) {
        printf("%-28s FAIL: %s\n", label, err.message);
        fe_model_free(m);
        return 1;
    }
    int64_t cands = 0;
    int32_t proven = 0;
    double search = 0, worst = 0, value = 0;
    for (int32_t i = 0; i < plan->nsolves; i++) {
        const fe_solve *s = &plan->solves[i];
        cands += s->candidates;
        search += s->seconds;
        proven += s->optimal;
        value += s->value;
        double gap = s->value > 0 ? (s->value - s->bound) / s->value : 0;
        worst = gap > worst ? gap : worst;
    }
    int over = wall > limit;
    printf("%-28s %7d %8d %10lld %8.3f %8.3f  %4d/%-4d %8.2g%% %12.3f  %s\n", label, g->nnodes,
           plan->nsolves, (long long)cands, search, wall, proven, plan->nsolves, worst * 100,
           value * 1e3, over ? "FAIL: over the target" : "PASS");
    fflush(stdout);
    fe_plan_free(plan);
    fe_model_free(m);
    return over;
}

/* The generated LLaMA model of bench_policy.c, made if missing. */
static const char *big_model(int layers, char *buf, size_t size)
{
    snprintf(buf, size, "build/bench/llama_%d.json", layers);
    struct stat st;
    if (stat(buf, &st) == 0)
        return buf;
    char cmd[256];
    snprintf(cmd, sizeof cmd, "mkdir -p build/bench && lua5.4 examples/gen_models.lua --layers %d "
             "--compact --out %s >/dev/null", layers, buf);
    return system(cmd) == 0 ? buf : NULL;
}

int main(void)
{
    const char *shared = getenv("SHARED") ? getenv("SHARED") : "../shared";
    const char *env = getenv("BENCH_OPTIMAL_LAYERS");
    int layers = env ? atoi(env) : 2500;
    char pattern[4096];
    snprintf(pattern, sizeof pattern, "%s/models/*.json", shared);
    glob_t gl;
    if (glob("examples/models/*.json", 0, NULL, &gl) != 0) {
        fprintf(stderr, "bench_optimal: run from the repository root (no examples/models)\n");
        return 1;
    }
    int exports = glob(pattern, GLOB_APPEND, NULL, &gl) == 0;
    fe_error err = {0};
    /* An hour per run: the targets are checked here, not by the sandbox. */
    fe_engine_options eo = {.max_seconds = 3600};
    fe_engine *e = fe_engine_new(&eo, &err);
    fe_policy *whole = e ? fe_engine_load_policy(e, "optimal", &err) : NULL;
    fe_policy *windows = whole ? fe_engine_load_policy(e, "optimal", &err) : NULL;
    if (!windows || fe_policy_set_param(windows, "whole", "1", &err) != FE_OK) {
        fprintf(stderr, "bench_optimal: %s\n", err.message);
        return 1;
    }
    printf("the optimal plan on %s (machine %s, %s)\n",
           exports ? "the example models and the real exports" : "the example models (no real exports found)",
           fe_engine_machine(e), "GLPK");
    printf("%-28s %7s %8s %10s %8s %8s  %9s %9s %12s\n", "model", "nodes", "windows", "candidates",
           "search s", "plan s", "proven", "worst gap", "optimum ms");
    int failed = 0;
    for (size_t i = 0; i < gl.gl_pathc; i++) {
        fe_error lerr = {0};
        fe_model *m = fe_model_load_file(gl.gl_pathv[i], NULL, &lerr);
        int n = m ? fe_api_graph(m)->nnodes : 0;
        fe_model_free(m);
        if (m && n > MAX_WHOLE_NODES)
            continue;
        const char *base = strrchr(gl.gl_pathv[i], '/');
        failed |= one(whole, gl.gl_pathv[i], base ? base + 1 : gl.gl_pathv[i], T_WHOLE);
    }
    printf("target: at most %.0f s each, solved whole\n", T_WHOLE);
    if (layers > 0) {
        char buf[128];
        const char *path = big_model(layers, buf, sizeof buf);
        if (!path) {
            printf("llama_%d: FAIL: cannot generate it\n", layers);
            failed = 1;
        } else {
            failed |= one(windows, path, "llama (windows of 64)", T_WINDOWS);
            printf("target: at most %.0f s in windows of 64 nodes\n", T_WINDOWS);
        }
    }
    globfree(&gl);
    fe_policy_free(whole);
    fe_policy_free(windows);
    fe_engine_free(e);
    return failed;
}
