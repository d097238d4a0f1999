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
 *
 * The budget bounds the rounds, not only sizes them: 5 rounds of a model
 * whose pass takes seconds (a 7B export) would cost minutes, so when 5
 * rounds would outlast both the budget and SLOW_S, only the rounds that fit
 * in the larger of the two run (at least one). Fewer than 5 rounds give no
 * interval worth the name: callers say how many ran. A run of each plan
 * just before (the caller's correctness check) counts as a warm-up, and a
 * pass longer than the budget warms up in that one run. When a single
 * round is all that fits, a plan whose run before was warm (the caller
 * says so) takes that run as its sample: first-use costs (page faults,
 * primitive setup) measured about 0.1 s on the shipped models, under 2% of
 * a pass that long, and a 7B export saves a 9-second pass.
 */
#include <stdlib.h>
#include <string.h>

#include "paired.h"

#define BOOT 2000
#define WARMUP 2
#define MINREPS 5
#define MAXREPS 200
#define MAXPLANS 80
#define SLOW_S 10.0

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

/* Run the plans for `rounds` rounds in shuffled order into ms; plan p's
 * group samples into gs[p] (round k's at k * ngroups) where gs and gs[p]
 * are set, and peaks as o asks. A plan with kept[p] set already has its
 * sample of round 0 (its run before) and does not run in it. */
static int rounds_run(fe_exec *ex, fe_plan *const *pl, int n, int rounds, double *ms,
                      double *const *gs, const unsigned char *kept, const fe_paired_opts *o,
                      fe_error *err)
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
            int p = order[i];
            if (k == 0 && kept[p])
                continue;
            double *g = gs && gs[p] ? gs[p] + (size_t)k * (size_t)pl[p]->ngroups : NULL;
            int rc = fe_exec_plan_time(ex, pl[p], &ms[p * rounds + k], g, err);
            if (rc != FE_OK)
                return rc;
            if (o && o->peak && fe_exec_last_peak(ex) > o->peak[p])
                o->peak[p] = fe_exec_last_peak(ex);
        }
    }
    return FE_OK;
}

int fe_paired_count(double budget, double round_ms, int npl)
{
    double per = round_ms > 0 ? round_ms / npl : 1e-3;
    double b = budget > 0 ? budget : 0.5;
    double want = b * 1e3 / per;
    int r = want < MINREPS ? MINREPS : want > MAXREPS ? MAXREPS : (int)want;
    double cap = (b > SLOW_S ? b : SLOW_S) * 1e3;
    if (r * round_ms > cap) {
        r = (int)(cap / round_ms);
        if (r < 1)
            r = 1;
    }
    return r;
}

int fe_paired_rounds_opts(fe_exec *ex, fe_plan *const *pl, int n, const fe_paired_opts *o,
                          double **ms, int *rounds, fe_error *err)
{
    double budget = o ? o->budget : 0;
    *ms = NULL;
    if (n < 1 || n > MAXPLANS)
        return fe_error_set(err, FE_EINPUT, "paired timing takes 1 to %d plans, not %d", MAXPLANS, n);
    /* Warm up, and size the rounds by the last warm-up. */
    double round_ms = 0;
    int warm = WARMUP;
    if (o && o->first_ms) {
        for (int i = 0; i < n; i++)
            round_ms += o->first_ms[i];
        warm = round_ms / n > (budget > 0 ? budget : 0.5) * 1e3 ? 0 : WARMUP - 1;
    }
    for (int w = 0; w < warm; w++) {
        double sum = 0;
        for (int i = 0; i < n; i++) {
            double t;
            int rc = fe_exec_plan_time(ex, pl[i], &t, NULL, err);
            if (rc != FE_OK)
                return rc;
            sum += t;
        }
        round_ms = sum;
    }
    int r = o && o->reps > 0 ? o->reps : fe_paired_count(budget, round_ms, n);
    double *m = malloc((size_t)n * (size_t)r * sizeof *m), *col = NULL;
    double *gs[MAXPLANS] = {0};
    unsigned char kept[MAXPLANS] = {0};
    int rc = m ? FE_OK : fe_error_set(err, FE_ENOMEM, "out of memory");
    for (int i = 0; i < n && rc == FE_OK; i++)
        if (o && o->group_ms && o->group_ms[i] && pl[i]->ngroups > 0 &&
            !(gs[i] = malloc((size_t)pl[i]->ngroups * (size_t)r * sizeof *gs[i])))
            rc = fe_error_set(err, FE_ENOMEM, "out of memory");
    /* One round of passes longer than the budget: a warm run just before is
     * as good a sample as a run more, which would cost a whole pass. */
    for (int i = 0; rc == FE_OK && r == 1 && warm == 0 && i < n; i++)
        if (o->first_group_ms && o->first_group_ms[i]) {
            kept[i] = 1;
            if (o->nkept)
                ++*o->nkept;
            m[i] = o->first_ms[i];
            if (gs[i])
                memcpy(gs[i], o->first_group_ms[i], (size_t)pl[i]->ngroups * sizeof *gs[i]);
        }
    if (rc == FE_OK)
        rc = rounds_run(ex, pl, n, r, m, o && o->group_ms ? gs : NULL, kept, o, err);
    if (rc == FE_OK && !(col = malloc((size_t)r * sizeof *col)))
        rc = fe_error_set(err, FE_ENOMEM, "out of memory");
    for (int i = 0; rc == FE_OK && i < n; i++)
        for (size_t g = 0; gs[i] && g < (size_t)pl[i]->ngroups; g++) {
            for (int k = 0; k < r; k++)
                col[k] = gs[i][(size_t)k * (size_t)pl[i]->ngroups + g];
            o->group_ms[i][g] = fe_paired_median(col, r);
        }
    free(col);
    for (int i = 0; i < n; i++)
        free(gs[i]);
    if (rc != FE_OK) {
        free(m);
        return rc;
    }
    *ms = m;
    *rounds = r;
    return FE_OK;
}

int fe_paired_rounds(fe_exec *ex, fe_plan *const *pl, int n, double budget, int reps,
                     double **ms, int *rounds, fe_error *err)
{
    fe_paired_opts o = {.budget = budget, .reps = reps};
    return fe_paired_rounds_opts(ex, pl, n, &o, ms, rounds, err);
}

int fe_paired_versus_opts(fe_exec *ex, const fe_plan *base, const fe_plan *plan,
                          const fe_paired_opts *o, fe_bench_stats *base_st, fe_bench_stats *plan_st,
                          double v[3], fe_error *err)
{
    fe_plan *pair[2] = {(fe_plan *)base, (fe_plan *)plan};
    double *ms = NULL;
    int rounds = 0;
    int rc = fe_paired_rounds_opts(ex, pair, 2, o, &ms, &rounds, err);
    if (rc != FE_OK)
        return rc;
    rc = fe_paired_ratio(ms, ms + rounds, rounds, &v[0], &v[1], &v[2], err);
    fe_bench_summary(ms, rounds, base_st);
    fe_bench_summary(ms + rounds, rounds, plan_st);
    free(ms);
    return rc;
}

int fe_paired_versus(fe_exec *ex, const fe_plan *base, const fe_plan *plan, double budget,
                     fe_bench_stats *base_st, fe_bench_stats *plan_st, double v[3], fe_error *err)
{
    fe_paired_opts o = {.budget = budget};
    return fe_paired_versus_opts(ex, base, plan, &o, base_st, plan_st, v, err);
}
