/* milp.c: exact set partitioning with lazy constraints, by GLPK (see
 * milp.h).
 *
 * Note on the solver. Debian offers two MILP solvers with a C interface,
 * GLPK (libglpk-dev) and CBC (coinor-libcbc-dev). Both were run on the
 * covers the engine builds (tests/tools/milp_compare.sh; the figures are
 * in docs/policy-guide.md, "Choosing the solver"): the same optima, and
 * GLPK 2 to 15 times faster on every one, from the 11 columns of a small
 * model (where CBC's set-up dominates) to hub_conflict's 48,339 (2.3 s
 * against 11.4 s) and 200 windows of the 100k-node model (1.5 s against
 * 6.9 s). GLPK also has what the cycle rule needs: a callback at each
 * subproblem whose LP optimum would become the new best solution
 * (GLP_IROWGEN), where rows may be added; CBC 2.10's C interface has a
 * cut callback but no lazy constraints, so there each cut means solving
 * again. And GLPK is one small library (CBC brings four more).
 *
 * How it runs. Rows are fixed at 1, columns are binary, costs are scaled
 * to microseconds (the solver's tolerances are absolute in places). The
 * LP relaxation is solved first by the simplex method, then branch and
 * bound runs without the MIP presolver, which would hide the rows the
 * callback must see and change; the solver's own heuristics that accept
 * integral points without the callback (feasibility pump, proximity
 * search, simple rounding) are off, so no solution escapes the lazy
 * rows. The caller's start solution is offered as the first heuristic
 * one: under a short limit it is what comes back.
 *
 * The bound. A lower bound on the optimum is the largest of: the sum over
 * rows of the cheapest cost per row of a column covering it (any cover
 * pays at least that), the LP relaxation's value, and the best bound of
 * the open subproblems the callback last saw. So a solve stopped at its
 * limit reports a gap it can prove.
 *
 * Errors. GLPK stops the process on an internal error; an error hook
 * jumps back here instead, frees GLPK's environment and reports it.
 */
#include <glpk.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "milp.h"

#define SCALE 1e6   /* seconds -> microseconds */

const char *fe_milp_solver(void)
{
    static char name[32];
    if (!name[0])
        snprintf(name, sizeof name, "GLPK %s", glp_version());
    return name;
}

struct fe_milp_cuts {
    glp_prob *P;
    int64_t ncols;
    int64_t added;
};

int fe_milp_cut(fe_milp_cuts *c, const int64_t *cols, int n)
{
    if (n < 2)
        return FE_EINPUT;
    int *ind = malloc(((size_t)n + 1) * sizeof *ind);
    double *val = malloc(((size_t)n + 1) * sizeof *val);
    if (!ind || !val) {
        free(ind);
        free(val);
        return FE_ENOMEM;
    }
    for (int k = 0; k < n; k++) {
        if (cols[k] < 0 || cols[k] >= c->ncols) {
            free(ind);
            free(val);
            return FE_EINPUT;
        }
        ind[k + 1] = (int)cols[k] + 1;
        val[k + 1] = 1.0;
    }
    int i = glp_add_rows(c->P, 1);
    glp_set_row_bnds(c->P, i, GLP_UP, 0.0, (double)(n - 1));
    glp_set_mat_row(c->P, i, n, ind, val);
    free(ind);
    free(val);
    c->added++;
    return FE_OK;
}

typedef struct solve {
    const fe_milp_cover *c;
    fe_milp_cuts cuts;
    int64_t *chosen;          /* scratch: an integral solution's columns */
    double *start;            /* the start solution, 1-based, for glp_ios_heur_sol */
    double bound;             /* scaled */
    int offered, rc;
    int64_t nodes;
} solve;

/* An integral LP optimum about to be accepted: let check cut it off. */
static void row_generation(solve *s, glp_tree *T)
{
    glp_prob *P = glp_ios_get_prob(T);
    int64_t n = 0;
    for (int64_t j = 0; j < s->c->ncols; j++) {
        double v = glp_get_col_prim(P, (int)j + 1);
        if (v > 1e-5 && v < 1 - 1e-5)
            return;   /* fractional: branching goes on */
        if (v > 0.5)
            s->chosen[n++] = j;
    }
    s->cuts.P = P;
    s->rc = s->c->check(s->c->ctx, s->chosen, n, &s->cuts);
    if (s->rc)
        glp_ios_terminate(T);
}

static void callback(glp_tree *T, void *info)
{
    solve *s = info;
    int p = glp_ios_best_node(T);
    if (p) {
        double b = glp_ios_node_bound(T, p);
        if (b > s->bound)
            s->bound = b;
    }
    int total;
    glp_ios_tree_size(T, NULL, NULL, &total);
    if (total > s->nodes)
        s->nodes = total;
    if (s->rc) {
        glp_ios_terminate(T);
        return;
    }
    switch (glp_ios_reason(T)) {
    case GLP_IHEUR:
        if (s->start && !s->offered) {
            s->offered = 1;
            glp_ios_heur_sol(T, s->start);
        }
        break;
    case GLP_IROWGEN:
        if (s->c->check)
            row_generation(s, T);
        break;
    default:
        break;
    }
}

static _Thread_local jmp_buf *failed;   /* where on_error jumps, during a solve */

static void on_error(void *info)
{
    (void)info;
    longjmp(*failed, 1);
}

/* Sum over rows of the least cost per row of a column covering it. */
static double row_bound(const fe_milp_cover *c)
{
    double *least = malloc((size_t)(c->nrows > 0 ? c->nrows : 1) * sizeof *least), sum = 0;
    if (!least)
        return 0;
    for (int32_t r = 0; r < c->nrows; r++)
        least[r] = INFINITY;
    for (int64_t j = 0; j < c->ncols; j++) {
        int64_t len = c->off[j + 1] - c->off[j];
        for (int64_t k = c->off[j]; k < c->off[j + 1]; k++)
            if (c->cost[j] / (double)len < least[c->rows[k]])
                least[c->rows[k]] = c->cost[j] / (double)len;
    }
    for (int32_t r = 0; r < c->nrows; r++)
        sum += least[r];
    free(least);
    return isfinite(sum) ? sum : 0;
}

static int limit_ms(double seconds)
{
    double ms = seconds * 1e3;
    return ms < 1 ? 1 : ms > INT_MAX / 2 ? INT_MAX / 2 : (int)ms;
}

/* The problem into P. */
static int load(glp_prob *P, const fe_milp_cover *c)
{
    int64_t nnz = c->off[c->ncols];
    int *ia = malloc(((size_t)nnz + 1) * sizeof *ia), *ja = malloc(((size_t)nnz + 1) * sizeof *ja);
    double *ar = malloc(((size_t)nnz + 1) * sizeof *ar);
    if (!ia || !ja || !ar) {
        free(ia);
        free(ja);
        free(ar);
        return FE_ENOMEM;
    }
    glp_set_obj_dir(P, GLP_MIN);
    glp_add_rows(P, (int)c->nrows);
    for (int32_t r = 0; r < c->nrows; r++)
        glp_set_row_bnds(P, (int)r + 1, GLP_FX, 1.0, 1.0);
    glp_add_cols(P, (int)c->ncols);
    int64_t k = 1;
    for (int64_t j = 0; j < c->ncols; j++) {
        glp_set_col_kind(P, (int)j + 1, GLP_BV);
        glp_set_obj_coef(P, (int)j + 1, c->cost[j] * SCALE);
        for (int64_t e = c->off[j]; e < c->off[j + 1]; e++, k++) {
            ia[k] = (int)c->rows[e] + 1;
            ja[k] = (int)j + 1;
            ar[k] = 1.0;
        }
    }
    glp_load_matrix(P, (int)nnz, ia, ja, ar);
    free(ia);
    free(ja);
    free(ar);
    return FE_OK;
}

/* The start solution as the result (the LP or the search found nothing). */
static int from_start(const fe_milp_cover *c, fe_milp_result *out, fe_error *err)
{
    if (!c->start)
        return fe_error_set(err, FE_EINPUT, "the MILP solver found no solution within its time "
                            "limit of %g s", c->time_limit);
    out->status = FE_MILP_LIMIT;
    out->value = 0;
    for (int64_t j = 0; j < c->ncols; j++) {
        out->chosen[j] = c->start[j] != 0;
        out->value += out->chosen[j] ? c->cost[j] : 0;
    }
    return FE_OK;
}

int fe_milp_solve(const fe_milp_cover *c, fe_milp_result *out, fe_error *err)
{
    memset(out, 0, sizeof *out);
    if (c->nrows < 1 || c->ncols < 1 || c->ncols >= INT_MAX / 2 || c->nrows >= INT_MAX / 2 ||
        c->off[c->ncols] >= INT_MAX / 2 || !(c->time_limit > 0))
        return fe_error_set(err, FE_EINPUT, "a cover of %d rows, %lld columns and %lld entries "
                            "with a time limit of %g s is out of the solver's range",
                            (int)c->nrows, (long long)c->ncols, (long long)c->off[c->ncols],
                            c->time_limit);
    double t0 = fe_clock_s();
    solve s = {.c = c, .cuts = {.ncols = c->ncols}, .bound = -INFINITY};
    out->chosen = calloc((size_t)c->ncols, 1);
    s.chosen = malloc((size_t)c->ncols * sizeof *s.chosen);
    s.start = c->start ? calloc((size_t)c->ncols + 1, sizeof *s.start) : NULL;
    if (!out->chosen || !s.chosen || (c->start && !s.start)) {
        free(s.chosen);
        free(s.start);
        free(out->chosen);
        out->chosen = NULL;
        return fe_error_set(err, FE_ENOMEM, "out of memory setting up the MILP");
    }
    for (int64_t j = 0; c->start && j < c->ncols; j++)
        s.start[j + 1] = c->start[j] ? 1.0 : 0.0;
    double trivial = row_bound(c) * SCALE;

    jmp_buf jb;
    glp_prob *volatile P = NULL;
    int rc = FE_OK;
    failed = &jb;
    glp_term_out(GLP_OFF);
    glp_error_hook(on_error, NULL);
    if (setjmp(jb)) {
        /* GLPK's environment is unusable after its error: free all of it. */
        glp_free_env();
        free(s.chosen);
        free(s.start);
        free(out->chosen);
        out->chosen = NULL;
        return fe_error_set(err, FE_ERUNTIME, "the MILP solver (%s) failed on a cover of %d rows "
                            "and %lld columns (out of memory?)", "GLPK", (int)c->nrows,
                            (long long)c->ncols);
    }
    P = glp_create_prob();
    if (load(P, c) != FE_OK) {
        rc = fe_error_set(err, FE_ENOMEM, "out of memory setting up the MILP");
        goto out;
    }
    glp_smcp lp;
    glp_init_smcp(&lp);
    lp.msg_lev = GLP_MSG_OFF;
    lp.tm_lim = limit_ms(c->time_limit);
    if (glp_simplex(P, &lp) != 0 || glp_get_status(P) != GLP_OPT) {
        out->bound = trivial / SCALE;
        rc = from_start(c, out, err);
        goto out;
    }
    if (glp_get_obj_val(P) > trivial)
        trivial = glp_get_obj_val(P);
    glp_iocp mip;
    glp_init_iocp(&mip);
    mip.msg_lev = GLP_MSG_OFF;
    mip.tm_lim = limit_ms(c->time_limit - (fe_clock_s() - t0));
    mip.presolve = GLP_OFF;
    mip.fp_heur = mip.ps_heur = mip.sr_heur = GLP_OFF;
    /* Clique cuts are what set partitioning calls for, but GLPK builds its
     * conflict graph over every pair of columns: on hub_conflict's 48k
     * candidates the solve took 10 s with them, 2.4 s without. */
    mip.clq_cuts = GLP_OFF;
    mip.mip_gap = 0;
    mip.cb_func = callback;
    mip.cb_info = &s;
    glp_intopt(P, &mip);
    if (s.rc) {
        rc = s.rc;
        goto out;
    }
    int st = glp_mip_status(P);
    if (st == GLP_OPT || st == GLP_FEAS) {
        out->status = st == GLP_OPT ? FE_MILP_OPTIMAL : FE_MILP_LIMIT;
        out->value = glp_mip_obj_val(P) / SCALE;
        for (int64_t j = 0; j < c->ncols; j++)
            out->chosen[j] = glp_mip_col_val(P, (int)j + 1) > 0.5;
    } else {
        rc = from_start(c, out, err);
    }
    if (rc == FE_OK) {
        double b = (s.bound > trivial ? s.bound : trivial) / SCALE;
        out->bound = out->status == FE_MILP_OPTIMAL ? out->value : b < out->value ? b : out->value;
    }
out:
    out->cuts = s.cuts.added;
    out->nodes = s.nodes;
    glp_delete_prob(P);
    glp_error_hook(NULL, NULL);
    failed = NULL;
    free(s.chosen);
    free(s.start);
    if (rc != FE_OK) {
        free(out->chosen);
        out->chosen = NULL;
    }
    out->seconds = fe_clock_s() - t0;
    return rc;
}
