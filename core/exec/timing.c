/* timing.c: the timing harness (see timing.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "timing.h"

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double quant(const double *s, int n, double q)
{
    double pos = q * (n - 1);
    int i = (int)pos;
    double f = pos - i;
    return i + 1 < n ? s[i] * (1 - f) + s[i + 1] * f : s[i];
}

void fe_bench_summary(double *ms, int n, fe_bench_stats *st)
{
    memset(st, 0, sizeof *st);
    if (n <= 0)
        return;
    qsort(ms, (size_t)n, sizeof(double), cmp_d);
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += ms[i];
    st->reps = n;
    st->min_ms = ms[0];
    st->max_ms = ms[n - 1];
    st->mean_ms = sum / n;
    st->median_ms = quant(ms, n, 0.5);
    st->spread_ms = quant(ms, n, 0.75) - quant(ms, n, 0.25);
}

static void defaults(const fe_bench_opts *in, fe_bench_opts *o)
{
    memset(o, 0, sizeof *o);
    if (in)
        *o = *in;
    if (o->budget_s <= 0)
        o->budget_s = 0.2;
    if (o->warmup <= 0)
        o->warmup = 1;
    if (o->min_reps <= 0)
        o->min_reps = 3;
    if (o->max_reps <= 0)
        o->max_reps = 10000;
    if (o->max_reps < o->min_reps)
        o->max_reps = o->min_reps;
}

/* A call of fn: its own time when it gives one (a device's events), else
 * its wall time, in seconds. */
static int call(fe_bench_fn_ms fn, void *ctx, double *t, fe_error *err)
{
    double own = -1, a = fe_clock_s();
    int rc = fn(ctx, &own, err);
    *t = own >= 0 ? own * 1e-3 : fe_clock_s() - a;
    return rc;
}

int fe_bench_run_ms(fe_bench_fn_ms fn, void *ctx, const fe_bench_opts *opts, fe_bench_stats *st,
                    fe_error *err)
{
    fe_bench_opts o;
    defaults(opts, &o);
    memset(st, 0, sizeof *st);
    /* Warm-up until the calls are steady: caches and page faults settle in
     * one call, but on a shared machine the thread team may not: a worker
     * whose core is busy or idle answers milliseconds late, so a kernel of
     * microseconds timed cold reads a thousand times its real time. Steady
     * means three calls in a row within 1.5x of the fastest so far; the
     * requested calls come first, and a quarter of the budget is the most
     * spent on it (then the repetitions' median absorbs what is left). */
    double t0 = fe_clock_s(), best = 1e300;
    for (int i = 0, steady = 0; i < o.warmup || steady < 3; i++) {
        double t;
        int rc = call(fn, ctx, &t, err);
        if (rc)
            return rc;
        if (t < best)
            best = t;
        if (o.bounded && i == 0 && t > o.budget_s) {
            /* One call outlasts the item's share: it is its own warm-up
             * (caches settle within a call this long) and the measurement. */
            double one = t * 1e3;
            fe_bench_summary(&one, 1, st);
            return FE_OK;
        }
        steady = t <= 1.5 * best ? steady + 1 : 0;
        if (i + 1 >= o.warmup && fe_clock_s() - t0 > 0.25 * o.budget_s)
            break;
    }
    if (o.bounded && best > o.budget_s / 3)
        o.min_reps = 1;
    int cap = 64, n = 0;
    double *ms = malloc((size_t)cap * sizeof(double));
    if (!ms)
        return fe_error_set(err, FE_ENOMEM, "out of memory");
    double start = fe_clock_s();
    while (n < o.max_reps && (n < o.min_reps || fe_clock_s() - start < o.budget_s)) {
        if (n == cap) {
            double *nm = realloc(ms, (size_t)(2 * cap) * sizeof(double));
            if (!nm)
                break;
            ms = nm;
            cap *= 2;
        }
        double t;
        int rc = call(fn, ctx, &t, err);
        if (rc) {
            free(ms);
            return rc;
        }
        ms[n++] = t * 1e3;
    }
    fe_bench_summary(ms, n, st);
    free(ms);
    return FE_OK;
}

typedef struct wall {
    fe_bench_fn fn;
    void *ctx;
} wall;

static int wall_call(void *ctx, double *ms, fe_error *err)
{
    wall *w = ctx;
    (void)ms;
    return w->fn(w->ctx, err);
}

int fe_bench_run(fe_bench_fn fn, void *ctx, const fe_bench_opts *opts, fe_bench_stats *st,
                 fe_error *err)
{
    wall w = {fn, ctx};
    return fe_bench_run_ms(wall_call, &w, opts, st, err);
}

/* Resize *a to n doubles; -1 (keeping *a) when out of memory. */
static int grow(double **a, size_t n)
{
    double *b = realloc(*a, n * sizeof(double));
    if (!b)
        return -1;
    *a = b;
    return 0;
}

int fe_bench_plan(fe_exec *ex, const fe_plan *p, const fe_bench_opts *opts, fe_bench_stats *st,
                  fe_error *err)
{
    return fe_bench_plan_groups(ex, p, opts, st, NULL, err);
}

int fe_bench_plan_groups(fe_exec *ex, const fe_plan *p, const fe_bench_opts *opts,
                         fe_bench_stats *st, double *group_ms, fe_error *err)
{
    fe_bench_opts o;
    defaults(opts, &o);
    int cap = 16, n = 0, rc = FE_OK, ng = p->ngroups;
    double *ms = malloc((size_t)cap * sizeof(double)), spent = 0;
    /* per group: one column of samples per repetition */
    double *gs = group_ms ? malloc((size_t)cap * (size_t)(ng > 0 ? ng : 1) * sizeof(double)) : NULL;
    if (!ms || (group_ms && !gs)) {
        free(ms);
        free(gs);
        return fe_error_set(err, FE_ENOMEM, "out of memory");
    }
    double *one = malloc((size_t)(ng > 0 ? ng : 1) * sizeof(double));
    if (!one)
        rc = fe_error_set(err, FE_ENOMEM, "out of memory");
    for (int i = 0; i < o.warmup + o.max_reps && rc == FE_OK; i++) {
        double t;
        rc = fe_exec_plan_time(ex, p, &t, one, err);
        if (rc)
            break;
        if (i < o.warmup)
            continue;
        if (n == cap) {
            size_t row = (size_t)(ng > 0 ? ng : 1);
            if (grow(&ms, (size_t)(2 * cap)) || (gs && grow(&gs, (size_t)(2 * cap) * row)))
                break;
            cap *= 2;
        }
        if (gs)
            memcpy(gs + (size_t)n * (size_t)ng, one, (size_t)ng * sizeof(double));
        ms[n++] = t;
        spent += t * 1e-3;
        if (n >= o.min_reps && spent >= o.budget_s)
            break;
    }
    free(one);
    if (rc == FE_OK) {
        fe_bench_summary(ms, n, st);
        for (int k = 0; gs && k < ng; k++) {
            for (int i = 0; i < n; i++)
                ms[i] = gs[(size_t)i * (size_t)ng + (size_t)k];
            fe_bench_stats gst;
            fe_bench_summary(ms, n, &gst);
            group_ms[k] = gst.median_ms;
        }
    }
    free(ms);
    free(gs);
    return rc;
}
