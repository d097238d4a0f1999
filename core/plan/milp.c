/* milp.c: exact set partitioning with lazy constraints, by GLPK (see
 * milp.h).
 *
 * Note on the solver. Debian offers two MILP solvers with a C interface,
 * GLPK (libglpk-dev) and CBC (coinor-libcbc-dev). Both were run on the
 * covers the engine builds (tests/tools/milp_compare.sh; the figures are
 * in docs/policy-guide.md, "Choosing the solver"): the same optima, and
 * GLPK faster on every one, from the 11 columns of a small model (where
 * CBC's set-up dominates) to hub_conflict's 48,339 (2.3 s against 11.4
 * s, both solving the plain cover; 0.55 s with the incumbent and fixing
 * below) and 200 windows of the 100k-node model (1.5 s against 6.9 s).
 * GLPK also has what the cycle rule needs: a callback at each
 * subproblem whose LP optimum would become the new best solution
 * (GLP_IROWGEN), where rows may be added; CBC 2.10's C interface has a
 * cut callback but no lazy constraints, so there each cut means solving
 * again. And GLPK is one small library (CBC brings four more).
 *
 * How it runs. Rows are fixed at 1, columns are binary, costs are scaled
 * to microseconds (the solver's tolerances are absolute in places). The
 * LP relaxation is solved first by the simplex method; branch and bound
 * then runs without the MIP presolver, which would hide the rows the
 * callback must see and change, and without the solver's heuristics that
 * accept integral points without the callback (feasibility pump,
 * proximity search, simple rounding), so no solution escapes the lazy
 * rows. Two things keep large covers quick (hub_conflict has 48,339
 * candidates of which the optimum uses 7):
 *
 *   an incumbent: the best cover of the columns the LP optimum uses and
 *   the caller's start (the nodes alone, or the last round's plan), a
 *   small problem solved the same way, cycles cut;
 *
 *   reduced-cost fixing: a column whose LP reduced cost exceeds the gap
 *   between the incumbent and the LP bound is in no better plan, so it is
 *   left out (fixable has the argument); the search runs on the rest,
 *   and when a short round finds a better plan, the gap shrinks and the
 *   problem with it.
 *
 * The best plan known is offered to the search as its first solution:
 * under a short limit it is what comes back.
 *
 * The bound. A lower bound on the optimum is the largest of: the sum over
 * rows of the cheapest cost per row of a column covering it (any cover
 * pays at least that), the LP relaxation's value, and the best bound of
 * the open subproblems the callback last saw (in the problem the last
 * round searched: what it left out costs more than the incumbent, so
 * that bound, capped at the plan's cost, holds for the whole). So a
 * solve stopped at its limit reports a gap it can prove.
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
    const int *inv;           /* the cover's column -> P's (1-based; 0: left out), NULL: j + 1 */
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
        int col = cols[k] < 0 || cols[k] >= c->ncols ? 0 : c->inv ? c->inv[cols[k]] : (int)cols[k] + 1;
        if (col == 0) {
            free(ind);
            free(val);
            return FE_EINPUT;
        }
        ind[k + 1] = col;
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
    double *start;            /* the incumbent to offer, 1-based in P's columns */
    int64_t *map;             /* P's column - 1 -> the cover's; NULL: the same */
    int ncols;                /* P's columns */
    double bound;             /* scaled */
    int offered, rc;
    int64_t nodes;
} solve;

/* An integral LP optimum about to be accepted: let check cut it off. */
static void row_generation(solve *s, glp_tree *T)
{
    glp_prob *P = glp_ios_get_prob(T);
    int64_t n = 0;
    for (int j = 0; j < s->ncols; j++) {
        double v = glp_get_col_prim(P, j + 1);
        if (v > 1e-5 && v < 1 - 1e-5)
            return;   /* fractional: branching goes on */
        if (v > 0.5)
            s->chosen[n++] = s->map ? s->map[j] : j;
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
        s->nodes = total;   /* this round's tree */
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

/* The problem into P: every column, or with keep the keep[0..nkeep) ones
 * (P's column k + 1 is the cover's keep[k]). */
static int load(glp_prob *P, const fe_milp_cover *c, const int64_t *keep, int64_t nkeep)
{
    int64_t ncols = keep ? nkeep : c->ncols, nnz = 0;
    for (int64_t k = 0; k < ncols; k++) {
        int64_t j = keep ? keep[k] : k;
        nnz += c->off[j + 1] - c->off[j];
    }
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
    glp_add_cols(P, (int)ncols);
    int64_t at = 1;
    for (int64_t k = 0; k < ncols; k++) {
        int64_t j = keep ? keep[k] : k;
        glp_set_col_kind(P, (int)k + 1, GLP_BV);
        glp_set_obj_coef(P, (int)k + 1, c->cost[j] * SCALE);
        for (int64_t e = c->off[j]; e < c->off[j + 1]; e++, at++) {
            ia[at] = (int)c->rows[e] + 1;
            ja[at] = (int)k + 1;
            ar[at] = 1.0;
        }
    }
    glp_load_matrix(P, (int)nnz, ia, ja, ar);
    free(ia);
    free(ja);
    free(ar);
    return FE_OK;
}

/* ---- an incumbent, and the columns it rules out ---- */

static double cost_of(const fe_milp_cover *c, const uint8_t *pick)
{
    double v = 0;
    for (int64_t j = 0; j < c->ncols; j++)
        v += pick[j] ? c->cost[j] : 0;
    return v;
}

/* A problem of the columns keep[0..n) (inv[j]: the cover's column j's
 * place in it, 1-based), with P's cut rows over them if P is given (P's
 * column k + 1 is the cover's pmap[k], or k without pmap; a cut over a
 * column left out holds anyway: that column is 0), its LP solved within
 * seconds. NULL if the LP did not solve. */
static glp_prob *subproblem(const fe_milp_cover *c, glp_prob *P, const int64_t *pmap,
                            const int64_t *keep, int64_t n, const int *inv, double seconds)
{
    glp_prob *R = glp_create_prob();
    if (load(R, c, keep, n) != FE_OK) {
        glp_delete_prob(R);
        return NULL;
    }
    int ncols = P ? glp_get_num_cols(P) : 0;
    int *ind = P ? malloc(((size_t)ncols + 1) * sizeof *ind) : NULL;
    double *val = P ? malloc(((size_t)ncols + 1) * sizeof *val) : NULL;
    for (int i = (int)c->nrows + 1; ind && val && i <= glp_get_num_rows(P); i++) {
        int len = glp_get_mat_row(P, i, ind, val), all = 1;
        for (int k = 1; k <= len && all; k++)
            all = (ind[k] = inv[pmap ? pmap[ind[k] - 1] : ind[k] - 1]) > 0;
        if (!all)
            continue;
        int r = glp_add_rows(R, 1);
        glp_set_row_bnds(R, r, GLP_UP, 0.0, glp_get_row_ub(P, i));
        glp_set_mat_row(R, r, len, ind, val);
    }
    free(ind);
    free(val);
    glp_smcp lp;
    glp_init_smcp(&lp);
    lp.msg_lev = GLP_MSG_OFF;
    lp.tm_lim = limit_ms(seconds);
    if (glp_simplex(R, &lp) != 0 || glp_get_status(R) != GLP_OPT) {
        glp_delete_prob(R);
        return NULL;
    }
    return R;
}

/* Branch and bound on P (its LP solved) with s's callback, for at most
 * seconds. GLPK's status of the MIP solution after it. */
static int branch(solve *s, glp_prob *P, double seconds)
{
    glp_iocp mip;
    glp_init_iocp(&mip);
    mip.msg_lev = GLP_MSG_OFF;
    mip.tm_lim = limit_ms(seconds);
    mip.presolve = GLP_OFF;
    mip.fp_heur = mip.ps_heur = mip.sr_heur = GLP_OFF;
    /* Clique cuts are what set partitioning calls for, but GLPK builds its
     * conflict graph over every pair of columns: on hub_conflict's 48k
     * candidates the solve took 10 s with them, 2.4 s without. */
    mip.clq_cuts = GLP_OFF;
    mip.mip_gap = 0;
    mip.cb_func = callback;
    mip.cb_info = s;
    glp_intopt(P, &mip);
    return glp_mip_status(P);
}

/* An incumbent: the best cover of the columns the LP optimum x uses and
 * the start's (a small problem, solved the same way, cycles cut), if it
 * beats the start. Into inc; its cost, or INFINITY when there is none. */
static double incumbent(solve *s, const double *x, uint8_t *inc, double seconds)
{
    const fe_milp_cover *c = s->c;
    double t0 = fe_clock_s(), best = c->start ? cost_of(c, c->start) : INFINITY;
    for (int64_t j = 0; c->start && j < c->ncols; j++)
        inc[j] = c->start[j] != 0;
    int64_t *keep = malloc((size_t)c->ncols * sizeof *keep), n = 0;
    int *inv = calloc((size_t)c->ncols, sizeof *inv);
    double *start = calloc((size_t)c->ncols + 1, sizeof *start);
    for (int64_t j = 0; keep && inv && start && j < c->ncols; j++)
        if (x[j] > 1e-6 || (c->start && c->start[j])) {
            keep[n] = j;
            inv[j] = (int)++n;
            start[n] = c->start && c->start[j];
        }
    glp_prob *R = keep && inv && start ? subproblem(c, NULL, NULL, keep, n, inv, seconds) : NULL;
    if (R) {
        solve h = {.c = c, .cuts = {.ncols = c->ncols, .inv = inv}, .chosen = s->chosen,
                   .start = c->start ? start : NULL, .map = keep, .ncols = (int)n,
                   .bound = -INFINITY};
        int st = branch(&h, R, seconds - (fe_clock_s() - t0));
        s->rc = h.rc;
        s->cuts.added += h.cuts.added;
        if (!h.rc && (st == GLP_OPT || st == GLP_FEAS) && glp_mip_obj_val(R) / SCALE < best) {
            best = glp_mip_obj_val(R) / SCALE;
            memset(inc, 0, (size_t)c->ncols);
            for (int64_t k = 0; k < n; k++)
                inc[keep[k]] = glp_mip_col_val(R, (int)k + 1) > 0.5;
        }
        glp_delete_prob(R);
    }
    free(keep);
    free(inv);
    free(start);
    return best;
}

/* Reduced-cost fixing: with the LP optimum z (scaled) and an incumbent of
 * cost zi, a column at its lower bound (lower[j]) whose reduced cost d[j]
 * exceeds zi - z is in no solution better than the incumbent (any
 * solution costs at least z plus the reduced costs of such columns in
 * it: c x = z + sum d_j x_j over those at the lower bound + sum d_j (x_j -
 * 1) over those at the upper, each term >= 0), so it is left out. The
 * incumbent's columns stay. The kept columns into keep; returns their
 * count. */
static int64_t fixable(const fe_milp_cover *c, const double *d, const uint8_t *lower, double z,
                       double zi, const uint8_t *inc, int64_t *keep)
{
    double gap = zi - z, tol = 1e-9 * (zi > 1 ? zi : 1);
    int64_t n = 0;
    for (int64_t j = 0; j < c->ncols; j++)
        if (inc[j] || !lower[j] || !(d[j] > gap + tol))
            keep[n++] = j;
    return n;
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

/* The scratch of a solve, freed together. */
typedef struct work {
    uint8_t *inc, *lower;     /* the incumbent; columns at their lower bound in the LP */
    double *x, *d;            /* the LP's values and reduced costs */
    int64_t *keep;            /* the columns the next problem keeps */
    int *inv;                 /* the cover's column -> its place in that problem */
} work;

static void work_free(work *w, solve *s)
{
    free(w->inc);
    free(w->lower);
    free(w->x);
    free(w->d);
    free(w->keep);
    free(w->inv);
    free(s->chosen);
    free(s->start);
    free(s->map);
}

/* Leave out what incumbent zi rules out (fixable) when that is a tenth of
 * P's columns or more: P becomes the smaller problem. */
static void shrink(solve *s, work *w, glp_prob **P, double z, double zi, double seconds,
                   fe_milp_result *out)
{
    const fe_milp_cover *c = s->c;
    int64_t n = fixable(c, w->d, w->lower, z, zi, w->inc, w->keep);
    if (n >= s->ncols - s->ncols / 10)
        return;
    memset(w->inv, 0, (size_t)c->ncols * sizeof *w->inv);
    for (int64_t k = 0; k < n; k++)
        w->inv[w->keep[k]] = (int)k + 1;
    glp_prob *R = subproblem(c, *P, s->map, w->keep, n, w->inv, seconds);
    if (!R)
        return;
    glp_delete_prob(*P);
    *P = R;
    if (!s->map)
        s->map = malloc((size_t)c->ncols * sizeof *s->map);
    if (!s->map) {
        s->rc = FE_ENOMEM;
        return;
    }
    memcpy(s->map, w->keep, (size_t)n * sizeof *s->map);
    s->ncols = (int)n;
    s->cuts.inv = w->inv;
    out->fixed = c->ncols - n;
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
    solve s = {.c = c, .cuts = {.ncols = c->ncols}, .bound = -INFINITY, .ncols = (int)c->ncols};
    size_t nc = (size_t)c->ncols;
    work w = {.inc = calloc(nc, 1), .lower = malloc(nc), .x = malloc(nc * sizeof *w.x),
              .d = malloc(nc * sizeof *w.d), .keep = malloc(nc * sizeof *w.keep),
              .inv = calloc(nc, sizeof *w.inv)};
    out->chosen = calloc(nc, 1);
    s.chosen = malloc(nc * sizeof *s.chosen);
    s.start = calloc(nc + 1, sizeof *s.start);
    if (!out->chosen || !s.chosen || !s.start || !w.inc || !w.lower || !w.x || !w.d || !w.keep ||
        !w.inv) {
        work_free(&w, &s);
        free(out->chosen);
        out->chosen = NULL;
        return fe_error_set(err, FE_ENOMEM, "out of memory setting up the MILP");
    }
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
        work_free(&w, &s);
        free(out->chosen);
        out->chosen = NULL;
        return fe_error_set(err, FE_ERUNTIME, "the MILP solver (%s) failed on a cover of %d rows "
                            "and %lld columns (out of memory?)", "GLPK", (int)c->nrows,
                            (long long)c->ncols);
    }
    P = glp_create_prob();
    if (load(P, c, NULL, 0) != FE_OK) {
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
    double z = glp_get_obj_val(P);
    trivial = z > trivial ? z : trivial;
    for (int64_t j = 0; j < c->ncols; j++) {
        w.x[j] = glp_get_col_prim(P, (int)j + 1);
        w.d[j] = glp_get_col_dual(P, (int)j + 1);
        w.lower[j] = glp_get_col_stat(P, (int)j + 1) == GLP_NL;
    }
    /* An incumbent from a quarter of the time, then rounds of branch and
     * bound, each on the columns the best plan so far leaves: while the
     * problem is large a round stops after a second (or a quarter of the
     * time left), and a better plan found by then shrinks the problem for
     * the next; a round that finds none is the last, with all the time
     * left. (hub_conflict on gcu_big: 10 s in one round, 2.7 s so.) */
    double zi = incumbent(&s, w.x, w.inc, (c->time_limit - (fe_clock_s() - t0)) / 4) * SCALE;
    int st = GLP_UNDEF, last = 0;
    while (!s.rc) {
        double left = c->time_limit - (fe_clock_s() - t0);
        if (isfinite(zi))
            shrink(&s, &w, (glp_prob **)&P, z, zi, left, out);
        for (int k = 0; isfinite(zi) && k < s.ncols; k++)
            s.start[k + 1] = w.inc[s.map ? s.map[k] : k];
        s.offered = !isfinite(zi);
        s.bound = -INFINITY;
        left = c->time_limit - (fe_clock_s() - t0);
        last = last || s.ncols < 2000 || left < 0.05;
        st = branch(&s, P, last ? left : fmin(left / 4, 1.0));
        out->nodes += s.nodes;
        s.nodes = 0;
        if (s.rc || st == GLP_OPT || last)
            break;
        double v = st == GLP_FEAS ? glp_mip_obj_val(P) : INFINITY;
        if (!(v < zi)) {
            last = 1;   /* no better plan this round: the rest of the time to one more */
            continue;
        }
        zi = v;   /* stopped with a better plan: it rules out more */
        memset(w.inc, 0, nc);
        for (int k = 0; k < s.ncols; k++)
            w.inc[s.map ? s.map[k] : k] = glp_mip_col_val(P, k + 1) > 0.5;
    }
    if (s.rc) {
        rc = s.rc;
        goto out;
    }
    if (st == GLP_FEAS && !(glp_mip_obj_val(P) < zi))
        st = GLP_UNDEF;   /* the incumbent is as good */
    if (st == GLP_OPT || st == GLP_FEAS) {
        out->status = st == GLP_OPT ? FE_MILP_OPTIMAL : FE_MILP_LIMIT;
        out->value = glp_mip_obj_val(P) / SCALE;
        for (int k = 0; k < s.ncols; k++)
            out->chosen[s.map ? s.map[k] : k] = glp_mip_col_val(P, k + 1) > 0.5;
    } else if (isfinite(zi)) {
        /* the search found nothing better in time: the incumbent */
        out->status = FE_MILP_LIMIT;
        out->value = zi / SCALE;
        memcpy(out->chosen, w.inc, nc);
    } else {
        rc = from_start(c, out, err);
    }
    if (rc == FE_OK) {
        double b = (s.bound > trivial ? s.bound : trivial) / SCALE;
        out->bound = out->status == FE_MILP_OPTIMAL ? out->value : b < out->value ? b : out->value;
    }
out:
    out->cuts = s.cuts.added;
    glp_delete_prob(P);
    glp_error_hook(NULL, NULL);
    failed = NULL;
    work_free(&w, &s);
    if (rc != FE_OK) {
        free(out->chosen);
        out->chosen = NULL;
    }
    out->seconds = fe_clock_s() - t0;
    return rc;
}
