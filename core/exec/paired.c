/* paired.c: plans timed against each other (paired.h).
 *
 * Note on the method. Timing plan A for a while and then plan B compares A
 * at one moment of the machine with B at another: a neighbour's job, a
 * frequency change or a warm cache shifts one and not the other. So every
 * round runs each plan once, in an order shuffled per round, after two
 * warm-up runs of each:
 *
 *     round 1:  B  unfused  A      round 2:  A  B  unfused   ...
 *
 * and the figure of a plan against a baseline is the paired ratio
 * baseline / plan of each round, whose median is the estimate. Its 95%
 * interval is the 2.5 and 97.5 percentiles of the medians of 2000
 * bootstrap resamples of the rounds (a fixed seed: the same samples give
 * the same interval). An interval that holds 1 means the data cannot tell
 * the two apart on this host.
 */
#include <stdlib.h>
#include <string.h>

#include "paired.h"

#define BOOT 2000
#define WARMUP 2
#define MINREPS 5
#define MAXREPS 200
#define MAXPLANS 80

static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double fe_paired_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int fe_paired_ratio(const double *base, const double *x, int rounds, double *est, double *lo,
                    double *hi, fe_error *err)
{
    double *q = malloc((size_t)rounds * sizeof *q), *tmp = malloc((size_t)rounds * sizeof *tmp);
    double *meds = malloc(BOOT * sizeof *meds);
    if (!q || !tmp || !meds) {
        free(q);
        free(tmp);
        free(meds);
        return fe_error_set(err, FE_ENOMEM, "out of memory");
    }
    for (int k = 0; k < rounds; k++)
        q[k] = x[k] > 0 ? base[k] / x[k] : 1;
    memcpy(tmp, q, (size_t)rounds * sizeof *tmp);
    *est = fe_paired_median(tmp, rounds);
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    for (int b = 0; b < BOOT; b++) {
        for (int i = 0; i < rounds; i++)
            tmp[i] = q[next(&seed) % (uint64_t)rounds];
        meds[b] = fe_paired_median(tmp, rounds);
    }
    qsort(meds, BOOT, sizeof *meds, cmp_d);
    *lo = meds[(int)(0.025 * BOOT)];
    *hi = meds[(int)(0.975 * BOOT) - 1];
    free(q);
    free(tmp);
    free(meds);
    return FE_OK;
}

/* Run the plans for `rounds` rounds in shuffled order into ms. */
static int rounds_run(fe_exec *ex, fe_plan *const *pl, int n, int rounds, double *ms, fe_error *err)
{
    int order[MAXPLANS];
    uint64_t seed = 0x2545f4914f6cdd1dull;
    for (int i = 0; i < n; i++)
        order[i] = i;
    for (int k = 0; k < rounds; k++) {
        for (int i = n - 1; i > 0; i--) {
            int j = (int)(next(&seed) % (uint64_t)(i + 1)), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        for (int i = 0; i < n; i++) {
            int rc = fe_exec_plan_time(ex, pl[order[i]], &ms[order[i] * rounds + k], NULL, err);
            if (rc != FE_OK)
                return rc;
        }
    }
    return FE_OK;
}

int fe_paired_rounds(fe_exec *ex, fe_plan *const *pl, int n, double budget, int reps,
                     double **ms, int *rounds, fe_error *err)
{
    *ms = NULL;
    if (n < 1 || n > MAXPLANS)
        return fe_error_set(err, FE_EINPUT, "paired timing takes 1 to %d plans, not %d", MAXPLANS, n);
    /* Warm up, and size the rounds by the budget from the last warm-up. */
    double round_ms = 0;
    for (int w = 0; w < WARMUP; w++)
        for (int i = 0; i < n; i++) {
            double t;
            int rc = fe_exec_plan_time(ex, pl[i], &t, NULL, err);
            if (rc != FE_OK)
                return rc;
            if (w == WARMUP - 1)
                round_ms += t;
        }
    int r = reps;
    if (r <= 0) {
        double per = round_ms > 0 ? round_ms / n : 1e-3;
        double want = (budget > 0 ? budget : 0.5) * 1e3 / per;
        r = want < MINREPS ? MINREPS : want > MAXREPS ? MAXREPS : (int)want;
    }
    double *m = malloc((size_t)n * (size_t)r * sizeof *m);
    if (!m)
        return fe_error_set(err, FE_ENOMEM, "out of memory");
    int rc = rounds_run(ex, pl, n, r, m, err);
    if (rc != FE_OK) {
        free(m);
        return rc;
    }
    *ms = m;
    *rounds = r;
    return FE_OK;
}

int fe_paired_versus(fe_exec *ex, const fe_plan *base, const fe_plan *plan, double budget,
                     fe_bench_stats *base_st, fe_bench_stats *plan_st, double v[3], fe_error *err)
{
    fe_plan *pair[2] = {(fe_plan *)base, (fe_plan *)plan};
    double *ms = NULL;
    int rounds = 0;
    int rc = fe_paired_rounds(ex, pair, 2, budget, 0, &ms, &rounds, err);
    if (rc != FE_OK)
        return rc;
    rc = fe_paired_ratio(ms, ms + rounds, rounds, &v[0], &v[1], &v[2], err);
    fe_bench_summary(ms, rounds, base_st);
    fe_bench_summary(ms + rounds, rounds, plan_st);
    free(ms);
    return rc;
}
