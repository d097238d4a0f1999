/* paired.h: plans timed against each other on a shared, drifting machine
 * (fuseeng ab --measure, run --execute): interleaved shuffled rounds and
 * paired ratios with a bootstrap interval. */
#ifndef FE_PAIRED_H
#define FE_PAIRED_H

#include "exec.h"
#include "plan.h"
#include "timing.h"

/* Run plans pl[0..n) (n <= 80) in rounds, each plan once per round in an
 * order shuffled per round, after two warm-up runs of each. reps > 0 fixes
 * the rounds; else they are sized so the rounds take about budget seconds
 * (0.5 when 0), from 5 to 200. On FE_OK *ms (caller frees) holds plan i's
 * time of round k at (*ms)[i * *rounds + k]. */
int fe_paired_rounds(fe_exec *ex, fe_plan *const *pl, int n, double budget, int reps,
                     double **ms, int *rounds, fe_error *err);

/* The median of v[0..n) (reordered in place). */
double fe_paired_median(double *v, int n);

/* The median of the paired ratios base[k] / x[k] over the rounds, and its
 * 95% interval: the 2.5 and 97.5 percentiles of the medians of 2000
 * bootstrap resamples of the rounds (a fixed seed). FE_OK or FE_ENOMEM. */
int fe_paired_ratio(const double *base, const double *x, int rounds, double *est, double *lo,
                    double *hi, fe_error *err);

/* A plan against its baseline, end to end (run --execute, bench): both
 * in interleaved rounds (fe_paired_rounds), their times summarised over the
 * rounds into *base_st and *plan_st, and the median of the rounds'
 * base / plan with its 95% interval into v[0], v[1], v[2]. */
int fe_paired_versus(fe_exec *ex, const fe_plan *base, const fe_plan *plan, double budget,
                     fe_bench_stats *base_st, fe_bench_stats *plan_st, double v[3], fe_error *err);

#endif
