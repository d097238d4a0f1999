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
 * the rounds; else fe_paired_count sizes them by the last warm-up. On
 * FE_OK *ms (caller frees) holds plan i's
 * time of round k at (*ms)[i * *rounds + k]. */
int fe_paired_rounds(fe_exec *ex, fe_plan *const *pl, int n, double budget, int reps,
                     double **ms, int *rounds, fe_error *err);

/* What a caller may add to paired rounds. */
typedef struct fe_paired_opts {
    double budget;            /* seconds the rounds should take; 0 means 0.5 */
    int reps;                 /* > 0 fixes the rounds */
    const double *first_ms;   /* each plan's time in a run just before (a correctness check):
                                 it is the first warm-up and sizes the rounds; NULL: two
                                 warm-up runs of each */
    const double *const *first_group_ms;  /* per plan, its group times in that run, or NULL:
                                 with them, when one round is all that fits, that run is the
                                 plan's sample of the round instead of a pass more (the caller
                                 vouches that it was warm, e.g. it followed a pass over the same
                                 weights); its peak is then the caller's to keep */
    int *nkept;               /* out (or NULL): how many plans took that run as their sample */
    double *const *group_ms;  /* per plan: its median per group over the rounds, into the
                                 caller's array of its ngroups, or NULL (groups not timed);
                                 NULL: no plan's groups are timed */
    int64_t *peak;            /* per plan, the most live activation bytes of its timed runs
                                 (caller's array, zeroed; NULL: not kept) */
} fe_paired_opts;

/* Rounds for a budget (seconds, 0 means 0.5) when one round of npl plans
 * takes round_ms: about budget's worth, from 5 to 200, except that rounds
 * are cut to what fits in max(budget, 10 s) (at least 1) when 5 would not. */
int fe_paired_count(double budget, double round_ms, int npl);

/* fe_paired_rounds with the options above (o may be NULL). */
int fe_paired_rounds_opts(fe_exec *ex, fe_plan *const *pl, int n, const fe_paired_opts *o,
                          double **ms, int *rounds, fe_error *err);

/* fe_paired_versus with the options above; plans are [base, plan]. */
int fe_paired_versus_opts(fe_exec *ex, const fe_plan *base, const fe_plan *plan,
                          const fe_paired_opts *o, fe_bench_stats *base_st, fe_bench_stats *plan_st,
                          double v[3], fe_error *err);

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
