/* measure.c: time every group of a plan and every node on a device's
 * kernels (bench and profile). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cuda.h"
#include "gpu_exec.h"
#include "measure.h"
#include "paired.h"
#include "progress.h"
#include "sim.h"

const char *fe_exec_threads(void)
{
    static char buf[96];
    const char *w = getenv("OMP_WAIT_POLICY");
    int n = omp_get_max_threads();
    snprintf(buf, sizeof buf, "%d thread%s, %s waits", n, n == 1 ? "" : "s",
             !w ? "spinning" : !strcasecmp(w, "passive") ? "passive" : !strcasecmp(w, "active")
                                                                         ? "active" : w);
    return buf;
}


int fe_measure_plan(const fe_plan *plan, const fe_measure_opts *o, fe_measured *m,
                   fe_error *err)
{
    const fe_graph *g = plan->g;
    fe_exec_opts eo = {.seed = o->seed};
    fe_bench_opts bo = {.budget_s = o->budget > 0 ? o->budget : 0.2};
    fe_plan *base = NULL;
    int rc;
    memset(m, 0, sizeof *m);
    m->device = o->device;
    /* the card first: without it, say so before any work */
    if ((o->device == FE_DEVICE_CUDA && (rc = fe_cuda_open(err)) != FE_OK) ||
        (rc = fe_exec_executable(g, err)) != FE_OK ||
        (rc = fe_df_open(&m->files, g, o->weights, o->inputs, NULL, err)) != FE_OK)
        return rc;
    eo.weights = m->files.weights;
    eo.inputs = m->files.inputs;
    if (!(m->ex = fe_exec_new(g, &eo, err)) ||
        (o->device == FE_DEVICE_CUDA && (rc = fe_gpu_exec_attach(m->ex, err)) != FE_OK)) {
        rc = err->code;
        fe_measured_free(m);
        return rc;
    }
    /* long models take minutes: a progress line on a terminal, and Ctrl-C
     * keeps the groups measured so far */
    fe_progress pr;
    fe_progress_begin(&pr, "measuring group", plan->ngroups + (o->totals ? 1 : 0));
    m->groups = calloc((size_t)(plan->ngroups + 1), sizeof *m->groups);
    m->node_ms = calloc((size_t)(g->nnodes + 1), sizeof *m->node_ms);
    m->node_bytes = calloc((size_t)(g->nnodes + 1), sizeof *m->node_bytes);
    if (!m->groups || !m->node_ms || !m->node_bytes) {
        rc = fe_error_set(err, FE_ENOMEM, "out of memory");
        goto fail;
    }
    for (int32_t gi = 0; gi < plan->ngroups; gi++) {
        const fe_group *gr = &plan->groups[gi];
        if (fe_progress_interrupted()) {
            m->interrupted = 1;
            break;
        }
        fe_progress_step(&pr, gi, NULL);
        rc = fe_bench_group_run(m->ex, fe_group_nodes(plan, gr), gr->n, gr->split, gr->kernel, &bo,
                                &m->groups[gi], err);
        if (rc) {
            fe_error_prefix(err, "group %d: ", gi);
            goto fail;
        }
        m->ngroups = gi + 1;
        for (int k = 0; k < m->groups[gi].n; k++) {
            m->node_ms[m->groups[gi].nodes[k]] = m->groups[gi].members[k];
            m->node_bytes[m->groups[gi].nodes[k]] = m->groups[gi].member_bytes[k];
        }
    }
    if (o->totals && !m->interrupted) {
        /* End to end, the plan against unfused in interleaved rounds
         * (paired.h), so that both meet the same machine. */
        fe_progress_step(&pr, plan->ngroups, "(the plan against unfused)");
        if (!(base = fe_plan_unfused(g, err))) {
            rc = FE_ENOMEM;
            goto fail;
        }
        double v[3];
        if ((rc = fe_paired_versus(m->ex, base, plan, bo.budget_s, &m->unfused_st, &m->plan_st, v,
                                   err)) != FE_OK)
            goto fail;
        m->speedup = v[0], m->lo = v[1], m->hi = v[2];
        m->timed_totals = 1;
        if (o->device == FE_DEVICE_CUDA &&
            (rc = fe_gpu_exec_versus_graphs(m->ex, base, plan, bo.budget_s, &m->graph_unfused_st,
                                            &m->graph_plan_st, v, m->graph_why,
                                            sizeof m->graph_why, err)))
            goto fail;
        m->timed_graphs = o->device == FE_DEVICE_CUDA && !m->graph_why[0];
        m->graph_speedup = v[0], m->graph_lo = v[1], m->graph_hi = v[2];
    }
    fe_progress_end(&pr);
    fe_plan_free(base);
    return FE_OK;
fail:
    fe_exec_name_file(g, err);
    fe_progress_end(&pr);
    fe_plan_free(base);
    fe_measured_free(m);
    return rc;
}

void fe_measured_free(fe_measured *m)
{
    for (int i = 0; m->groups && i < m->ngroups; i++)
        fe_bench_group_free(&m->groups[i]);
    free(m->groups);
    free(m->node_ms);
    free(m->node_bytes);
    fe_exec_free(m->ex);
    fe_df_close(&m->files);   /* after the session that reads them */
    memset(m, 0, sizeof *m);
}
