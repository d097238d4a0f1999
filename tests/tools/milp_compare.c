/* milp_compare.c: the covers of the optimal plan (core/plan/optimal.h)
 * solved by whichever solver this program is linked with: the engine's
 * own (GLPK, core/plan/milp.c) or the CBC variant beside it
 * (milp_cbc.c). milp_compare.sh builds both and prints their times side by
 * side; docs/policy-guide.md ("Choosing the solver") has the figures.
 *
 *   milp_compare K WINDOW NWINDOWS MODEL...
 *
 * Each model's candidates (connected legal groups of up to K nodes,
 * priced by the simulator on the gcu machine, each at its cheaper split)
 * are solved whole when the model has at most 512 nodes, else in its
 * first NWINDOWS windows of WINDOW nodes. One line per model: rows,
 * columns the solver saw, seconds in fe_opt_solve, the optimum, and how
 * many solves were proven optimal. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "candidates.h"
#include "clock.h"
#include "optimal.h"
#include "sim.h"

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: milp_compare K WINDOW NWINDOWS MODEL...\n");
        return 2;
    }
    int k = atoi(argv[1]), wsize = atoi(argv[2]), nwin = atoi(argv[3]);
    fe_error err = {0};
    fe_engine *e = fe_engine_new(NULL, &err);
    if (!e) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    const fe_machine *mach = fe_api_machine(e);
    for (int a = 4; a < argc; a++) {
        fe_model *m = fe_model_load_file(argv[a], NULL, &err);
        if (!m) {
            fprintf(stderr, "%s\n", err.message);
            return 1;
        }
        const fe_graph *g = fe_api_graph(m);
        fe_cand_space *sp = fe_cand_space_new(g, &err);
        int size = g->nnodes <= 512 ? g->nnodes : wsize, n = g->nnodes <= 512 ? 1 : nwin;
        int32_t *win = malloc((size_t)size * sizeof *win);
        double seconds = 0, value = 0;
        int64_t cols = 0;
        int proven = 0, solves = 0;
        for (int w = 0; w < n && w * size < g->nnodes; w++) {
            int nw = 0;
            for (int v = w * size; v < g->nnodes && nw < size; v++)
                win[nw++] = v;
            fe_cands c = {0};
            fe_cand_opts o = {.max_group = k, .siblings = 1, .max_candidates = 50000000};
            if (fe_cands_enumerate(sp, win, nw, &o, &c, NULL, &err) != FE_OK) {
                fprintf(stderr, "%s\n", err.message);
                return 1;
            }
            double *cost = malloc((size_t)c.n * sizeof *cost);
            for (int64_t j = 0; j < c.n; j++) {
                fe_sim_group_result r1, rd;
                int len = (int)(c.off[j + 1] - c.off[j]);
                fe_sim_group(g, mach, c.nodes + c.off[j], len, 1, &r1, &err);
                fe_sim_group(g, mach, c.nodes + c.off[j], len, 0, &rd, &err);
                cost[j] = r1.time_s < rd.time_s ? r1.time_s : rd.time_s;
            }
            fe_opt_problem p = {.g = g, .win = win, .nw = nw, .cands = &c, .cost = cost,
                                .time_limit = 600};
            fe_opt_result r;
            double t0 = fe_clock_s();
            if (fe_opt_solve(&p, &r, &err) != FE_OK) {
                fprintf(stderr, "%s\n", err.message);
                return 1;
            }
            seconds += fe_clock_s() - t0;
            value += r.value;
            cols += r.columns;
            proven += r.status == FE_MILP_OPTIMAL;
            solves++;
            free(r.chosen);
            free(cost);
            fe_cands_free(&c);
        }
        const char *base = strrchr(argv[a], '/');
        printf("%-28s %-10s %5d x %-4d %9lld columns %9.3f s  optimum %.3f ms  proven %d/%d\n",
               base ? base + 1 : argv[a], fe_milp_solver(), size, solves, (long long)cols, seconds,
               value * 1e3, proven, solves);
        free(win);
        fe_cand_space_free(sp);
        fe_model_free(m);
    }
    fe_engine_free(e);
    return 0;
}
