/* api_ab_stats.c: fuseeng ab --measure: a row's plans timed on this CPU
 * in a way that survives a shared, drifting machine.
 *
 * Note on the method. Timing plan A for a while and then plan B compares A
 * at one moment of the machine with B at another: a neighbour's job, a
 * frequency change or a warm cache shifts one and not the other. So every
 * round runs each plan once (the unfused plan too), in an order shuffled
 * per round, after two warm-up runs of each:
 *
 *     round 1:  B  unfused  A      round 2:  A  B  unfused   ...
 *
 * and the figure of a policy is the paired ratio baseline / policy of each
 * round, whose median is the estimate. Its 95% confidence interval is the
 * 2.5 and 97.5 percentiles of the medians of 2000 bootstrap resamples of
 * the rounds (a fixed seed: the same samples give the same interval). An
 * interval that holds 1 means the data cannot tell the two apart: the
 * table says "same" and the tally counts neither a win nor a loss.
 */
#include <stdlib.h>
#include <string.h>

#include "api_ab.h"
#include "compare.h"
#include "exec.h"
#include "timing.h"

#define BOOT 2000
#define WARMUP 2
#define MINREPS 5
#define MAXREPS 200

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

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Median of the paired ratios q[0..n) and its bootstrap interval. */
static void interval(const double *q, int n, double *est, double *lo, double *hi, double *tmp,
                     double *meds)
{
    memcpy(tmp, q, (size_t)n * sizeof *tmp);
    *est = median(tmp, n);
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    for (int b = 0; b < BOOT; b++) {
        for (int i = 0; i < n; i++)
            tmp[i] = q[next(&seed) % (uint64_t)n];
        meds[b] = median(tmp, n);
    }
    qsort(meds, BOOT, sizeof *meds, cmp_d);
    *lo = meds[(int)(0.025 * BOOT)];
    *hi = meds[(int)(0.975 * BOOT) - 1];
}

/* Check each plan's results against the reference. */
static int check(fe_exec *ex, const fe_exec_result *ref, const fe_plan *p, fe_ab_cell *x,
                 fe_error *err)
{
    fe_exec_result *got = NULL;
    fe_cmp cmp;
    int rc = fe_exec_plan(ex, p, &got, err);
    if (rc == FE_OK && (rc = fe_exec_compare(p->g, ref, got, &cmp, err)) == FE_OK) {
        x->cpu_ok = cmp.ok;
        for (int i = 0; i < cmp.n; i++)
            if (cmp.items[i].max_rel > x->cpu_max_rel)
                x->cpu_max_rel = cmp.items[i].max_rel;
        fe_cmp_free(&cmp);
    }
    fe_exec_result_free(got);
    return rc;
}

/* Run the participants (plans[0..n)) for rounds rounds in shuffled order;
 * ms[i * rounds + k] is plan i's time in round k. */
static int rounds_run(fe_exec *ex, fe_plan *const *pl, int n, int rounds, double *ms, fe_error *err)
{
    int order[80];
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

int fe_ab_measure_row(fe_ab *ab, int r, const fe_graph *g, fe_plan *const *plans, double budget,
                      int reps, fe_error *err)
{
    int nc = ab->ncols, n = 0, idx[80];
    fe_plan *pl[80];
    fe_exec_opts eo = {.seed = 1};
    fe_exec *ex = NULL;
    fe_exec_result *ref = NULL;
    fe_plan *unf = NULL;
    double *ms = NULL, *q = NULL, *tmp = NULL, *meds = NULL;
    int rc = fe_exec_executable(g, err);
    if (rc == FE_OK && !(ex = fe_exec_new(g, &eo, err)))
        rc = err ? err->code : FE_ENOMEM;
    if (rc == FE_OK)
        rc = fe_exec_reference(ex, &ref, err);
    if (rc == FE_OK && !(unf = fe_plan_unfused(g, err)))
        rc = FE_ENOMEM;
    if (rc != FE_OK)
        goto out;
    pl[n] = unf;
    idx[n++] = -1;
    for (int c = 0; c < nc && c < 79 && rc == FE_OK; c++)
        if (plans[c]) {
            rc = check(ex, ref, plans[c], &ab->cells[r * nc + c], err);
            pl[n] = plans[c];
            idx[n++] = c;
        }
    /* Warm up, and size the rounds by the budget from the last warm-up. */
    double round_ms = 0;
    for (int w = 0; w < WARMUP && rc == FE_OK; w++)
        for (int i = 0; i < n && rc == FE_OK; i++) {
            double t;
            rc = fe_exec_plan_time(ex, pl[i], &t, NULL, err);
            if (w == WARMUP - 1)
                round_ms += t;
        }
    if (rc != FE_OK)
        goto out;
    int rounds = reps;
    if (rounds <= 0) {
        double per = round_ms > 0 ? round_ms / n : 1e-3;
        rounds = (int)((budget > 0 ? budget : 0.5) * 1e3 / per);
        rounds = rounds < MINREPS ? MINREPS : rounds > MAXREPS ? MAXREPS : rounds;
    }
    ms = malloc((size_t)n * (size_t)rounds * sizeof *ms);
    q = malloc((size_t)rounds * sizeof *q);
    tmp = malloc((size_t)rounds * sizeof *tmp);
    meds = malloc(BOOT * sizeof *meds);
    if (!ms || !q || !tmp || !meds) {
        rc = fe_error_set(err, FE_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = rounds_run(ex, pl, n, rounds, ms, err)) != FE_OK)
        goto out;
    memcpy(tmp, ms, (size_t)rounds * sizeof *tmp);
    ab->rows[r].cpu_unfused_ms = median(tmp, rounds);
    /* The baseline column's times, for the pairs. */
    int bi = -1;
    for (int i = 1; i < n; i++)
        if (idx[i] == 0)
            bi = i;
    for (int i = 1; i < n; i++) {
        fe_ab_cell *x = &ab->cells[r * nc + idx[i]];
        memcpy(tmp, &ms[i * rounds], (size_t)rounds * sizeof *tmp);
        x->cpu_ms = median(tmp, rounds);
        x->reps = rounds;
        if (bi < 0)
            continue;
        for (int k = 0; k < rounds; k++)
            q[k] = ms[i * rounds + k] > 0 ? ms[bi * rounds + k] / ms[i * rounds + k] : 1;
        interval(q, rounds, &x->ratio, &x->lo, &x->hi, tmp, meds);
    }
out:
    free(ms);
    free(q);
    free(tmp);
    free(meds);
    fe_plan_free(unf);
    fe_exec_result_free(ref);
    fe_exec_free(ex);
    return rc;
}
