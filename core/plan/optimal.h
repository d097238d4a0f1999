/* optimal.h: the optimal plan of a window under a cost per group (Korch,
 * ASPLOS '24, casts fusion as this binary program): choose candidate
 * groups (candidates.h) so that every node of the window is in exactly
 * one, the groups form no cycle, and the sum of their costs is least.
 * optimal.c opens with the formulation; milp.h solves it.
 */
#ifndef FE_OPTIMAL_H
#define FE_OPTIMAL_H

#include "candidates.h"
#include "milp.h"

typedef struct fe_opt_problem {
    const fe_graph *g;
    const int32_t *win;        /* the window: sorted node ids, convex */
    int nw;
    const fe_cands *cands;     /* sets of window nodes, each node alone among them */
    const double *cost;        /* per candidate, seconds: finite, >= 0 */
    const int64_t *start;      /* a cover to start from, acyclic (candidate indices: an
                                  earlier solution); NULL: every node alone */
    int64_t nstart;
    double time_limit;         /* seconds for the solver, > 0 */
} fe_opt_problem;

typedef struct fe_opt_result {
    int status;                /* FE_MILP_OPTIMAL, or FE_MILP_LIMIT: the best found */
    double value, bound;       /* seconds: the plan's cost, a lower bound on the optimum */
    int64_t *chosen;           /* candidate indices, groups in a dependency order
                                  (caller frees) */
    int64_t nchosen;
    int64_t columns;           /* candidates the solver saw, */
    int64_t dominated;         /* and those left out: dearer than their nodes alone */
    int64_t cuts, nodes;       /* cycle cuts added, branch-and-bound subproblems */
    double seconds;
} fe_opt_result;

/* Solve p. FE_OK with *out filled (free out->chosen); FE_EINPUT when a
 * node of the window has no candidate of its own (the start cover); the
 * solver's errors otherwise. The chosen groups cover the window, each
 * node once, and form no cycle. */
int fe_opt_solve(const fe_opt_problem *p, fe_opt_result *out, fe_error *err);

#endif
