/* milp_cbc.c: core/plan/milp.h's interface on CBC (coinor-libcbc-dev), for
 * the solver comparison only (milp_compare.sh links it in place of the
 * engine's GLPK wrapper; the engine never uses it).
 *
 * CBC 2.10's C interface, as Debian ships it, has a cut callback but no
 * lazy-constraint one (Cbc_addCutCallback takes no "at solution" flag),
 * so the cycle rule is kept the plain way: solve, let check cut the
 * solution's cycles, solve again with the cuts as rows, until a solution
 * has none. */
#include <coin/Cbc_C_Interface.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "milp.h"

#define SCALE 1e6   /* seconds -> microseconds, as milp.c */

const char *fe_milp_solver(void)
{
    static char name[32];
    if (!name[0])
        snprintf(name, sizeof name, "CBC %s", Cbc_getVersion());
    return name;
}

/* The cuts found so far, each a list of columns. */
struct fe_milp_cuts {
    int64_t ncols, added;
    int n, cap;
    int *len;
    int **cols;
};

int fe_milp_cut(fe_milp_cuts *c, const int64_t *cols, int n)
{
    if (n < 2)
        return FE_EINPUT;
    if (c->n == c->cap) {
        int cap = c->cap ? 2 * c->cap : 16;
        int *len = realloc(c->len, (size_t)cap * sizeof *len);
        int **cs = len ? realloc(c->cols, (size_t)cap * sizeof *cs) : NULL;
        if (len)
            c->len = len;
        if (!cs)
            return FE_ENOMEM;
        c->cols = cs;
        c->cap = cap;
    }
    int *row = malloc((size_t)n * sizeof *row);
    if (!row)
        return FE_ENOMEM;
    for (int k = 0; k < n; k++) {
        if (cols[k] < 0 || cols[k] >= c->ncols) {
            free(row);
            return FE_EINPUT;
        }
        row[k] = (int)cols[k];
    }
    c->cols[c->n] = row;
    c->len[c->n++] = n;
    c->added++;
    return FE_OK;
}

int fe_milp_solve(const fe_milp_cover *c, fe_milp_result *out, fe_error *err)
{
    memset(out, 0, sizeof *out);
    double t0 = fe_clock_s();
    int nnz = (int)c->off[c->ncols], nc = (int)c->ncols;
    fe_milp_cuts cuts = {.ncols = c->ncols};
    int *start = malloc(((size_t)nc + 1) * sizeof *start), *index = malloc((size_t)nnz * sizeof *index);
    double *val = malloc((size_t)nnz * sizeof *val), *lb = calloc((size_t)nc, sizeof *lb);
    double *ub = malloc((size_t)nc * sizeof *ub), *obj = malloc((size_t)nc * sizeof *obj);
    double *rl = malloc((size_t)c->nrows * sizeof *rl), *x = malloc((size_t)nc * sizeof *x);
    double *ones = malloc((size_t)nc * sizeof *ones);
    int64_t *chosen = malloc((size_t)nc * sizeof *chosen);
    out->chosen = calloc((size_t)nc, 1);
    int rc = FE_OK;
    if (!start || !index || !val || !lb || !ub || !obj || !rl || !x || !ones || !chosen || !out->chosen)
        rc = fe_error_set(err, FE_ENOMEM, "out of memory");
    for (int j = 0; rc == FE_OK && j <= nc; j++)
        start[j] = (int)c->off[j];
    for (int k = 0; rc == FE_OK && k < nnz; k++) {
        index[k] = c->rows[k];
        val[k] = 1;
    }
    for (int j = 0; rc == FE_OK && j < nc; j++) {
        ub[j] = ones[j] = 1;
        obj[j] = c->cost[j] * SCALE;
        x[j] = c->start ? c->start[j] : 0;
    }
    for (int r = 0; rc == FE_OK && r < c->nrows; r++)
        rl[r] = 1;
    while (rc == FE_OK) {
        Cbc_Model *m = Cbc_newModel();
        Cbc_loadProblem(m, nc, c->nrows, start, index, val, lb, ub, obj, rl, rl);
        for (int j = 0; j < nc; j++)
            Cbc_setInteger(m, j);
        for (int q = 0; q < cuts.n; q++)
            Cbc_addRow(m, "", cuts.len[q], cuts.cols[q], ones, 'L', cuts.len[q] - 1);
        Cbc_setLogLevel(m, 0);
        double left = c->time_limit - (fe_clock_s() - t0);
        Cbc_setMaximumSeconds(m, left > 0.01 ? left : 0.01);
        if (c->start)
            Cbc_setInitialSolution(m, x);
        Cbc_solve(m);
        const double *sol = Cbc_bestSolution(m);
        if (!sol) {
            rc = fe_error_set(err, FE_EINPUT, "CBC found no solution");
            Cbc_deleteModel(m);
            break;
        }
        int64_t n = 0;
        for (int j = 0; j < nc; j++)
            if (sol[j] > 0.5)
                chosen[n++] = j;
        int before = cuts.n;
        rc = c->check(c->ctx, chosen, n, &cuts);
        out->nodes += Cbc_getNodeCount(m);
        int limit = Cbc_isSecondsLimitReached(m);
        if (rc == FE_OK && (cuts.n == before || limit)) {
            out->status = Cbc_isProvenOptimal(m) && cuts.n == before ? FE_MILP_OPTIMAL : FE_MILP_LIMIT;
            out->value = Cbc_getObjValue(m) / SCALE;
            out->bound = Cbc_getBestPossibleObjValue(m) / SCALE;
            for (int j = 0; j < nc; j++)   /* a cyclic solution at the limit: the start */
                out->chosen[j] = cuts.n == before ? sol[j] > 0.5 : c->start && c->start[j];
            Cbc_deleteModel(m);
            break;
        }
        Cbc_deleteModel(m);
    }
    out->cuts = cuts.added;
    out->seconds = fe_clock_s() - t0;
    for (int q = 0; q < cuts.n; q++)
        free(cuts.cols[q]);
    free(cuts.cols);
    free(cuts.len);
    free(start);
    free(index);
    free(val);
    free(lb);
    free(ub);
    free(obj);
    free(rl);
    free(x);
    free(ones);
    free(chosen);
    if (rc != FE_OK) {
        free(out->chosen);
        out->chosen = NULL;
    }
    return rc;
}
