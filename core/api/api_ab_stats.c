/* api_ab_stats.c: fuseeng ab --measure: a row's plans timed on this CPU
 * in a way that survives a shared, drifting machine: interleaved shuffled
 * rounds of every plan and the unfused one, and per policy the median of
 * the paired ratios baseline / policy with its bootstrap interval (the
 * method is core/exec/paired.c's). An interval that holds 1 means the data
 * cannot tell the two apart: the table says "same" and the tally counts
 * neither a win nor a loss.
 */
#include <stdlib.h>
#include <string.h>

#include "api_ab.h"
#include "compare.h"
#include "cuda.h"
#include "datafiles.h"
#include "exec.h"
#include "gpu_exec.h"
#include "paired.h"
#include "timing.h"

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

int fe_ab_measure_row(fe_ab *ab, int r, const fe_graph *g, const fe_machine *m,
                      fe_plan *const *plans, const fe_ab_run_options *o, fe_error *err)
{
    double budget = o->budget;
    int reps = o->reps;
    fe_df_files files = {0};
    int nc = ab->ncols, n = 0, idx[80];
    fe_plan *pl[80];
    fe_exec_opts eo = {.seed = 1};
    fe_exec *ex = NULL;
    fe_exec_result *ref = NULL;
    fe_plan *unf = NULL;
    double *ms = NULL, *tmp = NULL;
    int rc = fe_exec_executable(g, err);
    if (rc == FE_OK && (rc = fe_df_open(&files, g, o->weights, o->inputs, NULL, err)) == FE_OK) {
        eo.weights = files.weights;
        eo.inputs = files.inputs;
    }
    if (rc == FE_OK && o->device == FE_DEVICE_CUDA)
        rc = fe_cuda_open(err);   /* before any work: say what is missing */
    if (rc == FE_OK && !(ex = fe_exec_new(g, &eo, err)))
        rc = err ? err->code : FE_ENOMEM;
    if (rc == FE_OK && o->device == FE_DEVICE_CUDA)
        rc = fe_gpu_exec_attach(ex, err);
    if (rc == FE_OK)
        rc = fe_exec_reference(ex, &ref, err);
    if (rc == FE_OK && !(unf = fe_plan_unfused(g, err)))
        rc = FE_ENOMEM;
    if (rc != FE_OK)
        goto out;
    pl[n] = unf;
    idx[n++] = -1;
    /* a plan that does not run fails its cell and is not timed */
    for (int c = 0; c < nc && c < 79 && rc == FE_OK; c++)
        if (plans[c]) {
            fe_error cerr = {0};
            if (check(ex, ref, plans[c], &ab->cells[r * nc + c], &cerr) != FE_OK) {
                if (cerr.code == FE_ENOMEM)
                    rc = fe_error_set(err, FE_ENOMEM, "%s", cerr.message);
                else {
                    fe_error_prefix(&cerr, "--measure: the plan did not run: ");
                    rc = fe_ab_cell_fail(&ab->cells[r * nc + c], cerr.message);
                }
                continue;
            }
            pl[n] = plans[c];
            idx[n++] = c;
        }
    int rounds = 0;
    if (rc != FE_OK || (rc = fe_paired_rounds(ex, pl, n, budget, reps, &ms, &rounds, err)) != FE_OK)
        goto out;
    if (!(tmp = malloc((size_t)rounds * sizeof *tmp))) {
        rc = fe_error_set(err, FE_ENOMEM, "out of memory");
        goto out;
    }
    memcpy(tmp, ms, (size_t)rounds * sizeof *tmp);
    ab->rows[r].cpu_unfused_ms = fe_paired_median(tmp, rounds);
    /* The baseline column's times, for the pairs. */
    int bi = -1;
    for (int i = 1; i < n; i++)
        if (idx[i] == 0)
            bi = i;
    for (int i = 1; i < n && rc == FE_OK; i++) {
        fe_ab_cell *x = &ab->cells[r * nc + idx[i]];
        memcpy(tmp, &ms[i * rounds], (size_t)rounds * sizeof *tmp);
        x->cpu_ms = fe_paired_median(tmp, rounds);
        x->reps = rounds;
        if (bi >= 0)
            rc = fe_paired_ratio(&ms[bi * rounds], &ms[i * rounds], rounds, &x->ratio, &x->lo,
                                 &x->hi, err);
    }
    if (rc == FE_OK)
        rc = fe_ab_miss_row(ab, r, ex, m, plans, o, err);
out:
    free(ms);
    free(tmp);
    fe_plan_free(unf);
    fe_exec_result_free(ref);
    fe_exec_free(ex);
    fe_df_close(&files);
    return rc;
}
