/* show.c: a plan's groups as the executor compiles them, for the CPU or
 * the GPU (show.h). */
#include <omp.h>
#include "cache.h"
#include "cuda_group.h"
#include "exec.h"
#include "group.h"
#include "show.h"
#include "vecprog.h"

/* "[a, b, c]", the first few members, then how many more. */
static void members(FILE *f, const fe_graph *g, const int32_t *nodes, int n)
{
    enum { SHOWN = 8 };
    fprintf(f, "[");
    for (int i = 0; i < n && i < SHOWN; i++)
        fprintf(f, "%s%s", i ? ", " : "", fe_node_name(g, fe_graph_node(g, nodes[i])));
    if (n > SHOWN)
        fprintf(f, ", ... %d more", n - SHOWN);
    fprintf(f, "]");
}

int fe_exec_show_plan(const fe_plan *p, FILE *f, fe_error *err)
{
    const fe_graph *g = p->g;
    if (fe_exec_executable(g, err) != FE_OK) {
        fe_exec_name_file(g, err);
        return err->code;
    }
    int threads = omp_get_max_threads();
    fprintf(f, "kernels on this CPU: vectors of %d floats (%s), %d thread%s, L2 %ld KiB per core, "
            "last-level cache %ld MiB\n", FE_K_VLANES, FE_K_VLANES == 16 ? "AVX-512" : "AVX2",
            threads, threads == 1 ? "" : "s", fe_k_cache_l2() >> 10, fe_k_cache_llc() >> 20);
    for (int s = 0; s < p->ngroups; s++) {
        const fe_group *gp = &p->groups[s];
        const int32_t *nodes = fe_group_nodes(p, gp);
        fprintf(f, "\ngroup %d ", s);
        members(f, g, nodes, gp->n);
        if (gp->split > 1)
            fprintf(f, ", TLF split %d", gp->split);
        if (fe_exec_view_source(g, nodes, gp->n) >= 0) {
            fprintf(f, "\n  %s\n", FE_EXEC_VIEW_HOW);
            continue;
        }
        fe_k_group *gr = fe_k_group_new(g, nodes, gp->n, gp->split, gp->kernel, err);
        if (!gr)
            return err->code;
        fprintf(f, "\n  %s\n", fe_k_group_how(gr));
        fe_k_group_show(gr, "    ", f);
        fe_k_group_free(gr);
    }
    return FE_OK;
}

int fe_exec_show_plan_cuda(const fe_plan *p, FILE *f, fe_error *err)
{
    const fe_graph *g = p->g;
    fe_error why = {0};
    if (fe_exec_executable(g, err) != FE_OK) {   /* what the card could not run either */
        fe_exec_name_file(g, err);
        return err->code;
    }
    int gpu = fe_cuda_open(&why) == FE_OK;
    const fe_cuda_dev *d = fe_cuda_device();
    if (gpu)
        fprintf(f, "kernels on %s (sm_%d%d, %d multiprocessors), CUDA driver %d, NVRTC %d.%d\n",
                d->name, d->cc_major, d->cc_minor, d->sms, d->driver_version, d->nvrtc_major,
                d->nvrtc_minor);
    else
        fprintf(f, "CUDA kernels as generated, without a GPU (%s): not compiled, grids sized for "
                "%d multiprocessors\n", why.message, FE_SHOW_CUDA_SMS);
    for (int s = 0; s < p->ngroups; s++) {
        const fe_group *gp = &p->groups[s];
        const int32_t *nodes = fe_group_nodes(p, gp);
        fprintf(f, "\ngroup %d ", s);
        members(f, g, nodes, gp->n);
        if (fe_exec_view_source(g, nodes, gp->n) >= 0) {
            fprintf(f, "\n  %s\n", FE_EXEC_VIEW_HOW);
            continue;
        }
        fe_cuda_group *gr = gpu ? fe_cuda_group_new(g, nodes, gp->n, err)
                                : fe_cuda_group_plan(g, nodes, gp->n, FE_SHOW_CUDA_SMS, err);
        if (!gr)
            return err->code;
        fprintf(f, "\n  %s\n", fe_cuda_group_how(gr));
        fe_cuda_group_show(gr, "    ", f);
        fe_cuda_group_free(gr);
    }
    return FE_OK;
}
