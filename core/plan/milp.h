/* milp.h: exact set partitioning by a MILP solver (GLPK; milp.c says why
 * this one), with lazy constraints: the wrapper, and all of the engine
 * that knows a solver exists.
 *
 *   minimise    sum_j cost_j x_j
 *   subject to  sum_{j covers r} x_j = 1    for every row r
 *               x_j in {0, 1}
 *   and the cuts check adds, each "at most |S| - 1 of the columns S",
 *   whenever the solver is about to accept an integral solution.
 */
#ifndef FE_MILP_H
#define FE_MILP_H

#include <stdint.h>

#include "error.h"

typedef struct fe_milp_cuts fe_milp_cuts;

/* Add the cut "at most n - 1 of cols[0..n) are chosen" (n >= 2, distinct
 * columns). FE_OK, or FE_EINPUT for a column out of range or n < 2. */
int fe_milp_cut(fe_milp_cuts *c, const int64_t *cols, int n);

typedef struct fe_milp_cover {
    int32_t nrows;
    int64_t ncols;
    const int64_t *off;        /* column j covers rows[off[j] .. off[j + 1]) */
    const int32_t *rows;
    const double *cost;        /* finite, >= 0 */
    const uint8_t *start;      /* a solution to start from (1: chosen), which check
                                  would accept; NULL: none */
    double time_limit;         /* seconds of solving, > 0 */
    /* Called with every integral solution the solver is about to accept
     * (the chosen columns, ascending): add cuts that it violates with
     * fe_milp_cut, or none to accept it. Nonzero stops the solve with that
     * error code (err set by the callee). */
    int (*check)(void *ctx, const int64_t *chosen, int64_t n, fe_milp_cuts *cuts);
    void *ctx;
} fe_milp_cover;

enum {
    FE_MILP_OPTIMAL = 1,       /* value is the optimum: bound == value */
    FE_MILP_LIMIT = 2,         /* stopped at the time limit: the best solution found,
                                  bound the best lower bound proven */
};

typedef struct fe_milp_result {
    int status;
    double value, bound;       /* the solution's cost, a lower bound on the optimum */
    uint8_t *chosen;           /* per column, 1 if chosen (caller frees) */
    int64_t cuts;              /* lazy cuts added */
    int64_t fixed;             /* columns left out by reduced-cost fixing */
    int64_t nodes;             /* branch-and-bound subproblems solved */
    double seconds;
} fe_milp_result;

/* Solve c. FE_OK with *out filled; FE_EINPUT when the time limit passed
 * with no solution (give a start); FE_ERUNTIME if the solver failed,
 * FE_ENOMEM; or check's error. The solver prints nothing. */
int fe_milp_solve(const fe_milp_cover *c, fe_milp_result *out, fe_error *err);

/* The solver's name and version, e.g. "GLPK 5.0" (static storage). */
const char *fe_milp_solver(void);

#endif
