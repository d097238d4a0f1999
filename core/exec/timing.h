/* timing.h: the timing harness: warm-up, repetitions until a time budget,
 * median / min / max / spread. Times one function or a whole plan; a
 * group alone is group_timing.h's. `fuseeng bench`, `fuseeng profile`,
 * run --execute and ctx:bench(group) are built on these.
 */
#ifndef FE_TIMING_H
#define FE_TIMING_H

#include <stdint.h>

#include "error.h"
#include "exec.h"
#include "plan.h"

typedef struct fe_bench_opts {
    double budget_s;    /* time to spend per item after warm-up; 0 means 0.2 s */
    int warmup;         /* warm-up calls; 0 means 1 (then more until steady, within 25% of the budget) */
    int min_reps;       /* 0 means 3 */
    int max_reps;       /* 0 means 10000 */
    int bounded;        /* the minimum repetitions rule for a budget: a first call longer
                           than budget_s is the measurement (its own warm-up); calls
                           longer than budget_s / 3 are timed once after the warm-up; else
                           min_reps calls. So an item costs about budget_s, or one call;
                           unbounded, min_reps calls whatever they take */
    const double *known_ms;   /* fe_bench_group_run: members' medians measured before (member
                                 order: ascending ids), < 0 for one to time; NULL times all */
} fe_bench_opts;

typedef struct fe_bench_stats {
    double median_ms, min_ms, max_ms, mean_ms;
    double spread_ms;   /* interquartile range (q3 - q1) */
    int reps;
} fe_bench_stats;

/* Note: OpenBLAS's worker threads keep spinning for a while after an
 * sgemm; time other kernels after a short pause or a longer warm-up.
 *
 * Call fn(ctx) repeatedly and summarise its wall times. fn returns FE_OK or
 * an error code (the run stops and returns it). opts may be NULL. */
typedef int (*fe_bench_fn)(void *ctx, fe_error *err);
int fe_bench_run(fe_bench_fn fn, void *ctx, const fe_bench_opts *opts, fe_bench_stats *st,
                 fe_error *err);
/* The same for a call that may time itself (a device's events): fn sets
 * *ms (preset to -1) to the call's own time, else its wall time counts. */
typedef int (*fe_bench_fn_ms)(void *ctx, double *ms, fe_error *err);
int fe_bench_run_ms(fe_bench_fn_ms fn, void *ctx, const fe_bench_opts *opts, fe_bench_stats *st,
                    fe_error *err);

/* Time a whole plan end to end (kernels only, as fe_exec_plan reports). */
int fe_bench_plan(fe_exec *ex, const fe_plan *p, const fe_bench_opts *opts, fe_bench_stats *st,
                  fe_error *err);
/* The same, also giving each group's median over the same runs in
 * group_ms[0..p->ngroups) (caller's array). */
int fe_bench_plan_groups(fe_exec *ex, const fe_plan *p, const fe_bench_opts *opts,
                         fe_bench_stats *st, double *group_ms, fe_error *err);

/* Summarise n samples (ms) into st. */
void fe_bench_summary(double *ms, int n, fe_bench_stats *st);

#endif
