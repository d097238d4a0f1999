/* show.c: a plan's groups as the executor compiles them (show.h). */
#include <omp.h>

#include "cache.h"
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
