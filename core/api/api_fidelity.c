/* api_fidelity.c: how well the simulator predicts a device (fuseeng
 * fidelity): the figures of a measured A/B run (every policy's plan of
 * every model, simulated on one machine and timed on the device in
 * interleaved rounds) read as predictions against measurements.
 *
 * Note on the figures.
 *
 * A model's plans are its policies' plans with duplicates merged: plans the
 * simulator cannot tell apart (the same time, kernels, extern calls and L3
 * bytes) are one plan measured several times, and counting each would
 * rank noise against a tie. The first policy's cell stands for the plan
 * (the others are listed beside it).
 *
 *   rel_err   (simulated - measured) / measured, per plan
 *   rho       Spearman's rank correlation of simulated and measured times
 *             within one model (average ranks for ties): the Pearson
 *             correlation of the ranks. Pooled across models it would
 *             mostly say that big models are slow, so it is never pooled;
 *             the summary gives the mean of the models' rho.
 *   tied      every plan's measured interval (its ratio to the baseline,
 *             ab's bootstrap interval) overlaps every other's: the device
 *             cannot tell the plans apart, and the model counts neither for
 *             nor against the simulator (no rho, no pick)
 *   pick      the simulator's fastest plan is the measured best "within
 *             its interval" when its interval reaches the best plan's
 *
 * rho needs three plans (two give only +1 or -1); a pick needs two.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "api_ab.h"
#include "units.h"

typedef struct fid_plan {
    int col;                    /* the cell standing for the plan */
    char same[512];             /* other policies with this plan, ", "-joined */
    double sim_ms, meas_ms, ratio, lo, hi;
    double rel_err, sim_rank, meas_rank;
} fid_plan;

typedef struct fid_model {
    int row, nplans;
    fid_plan *plans;
    int failed;                 /* cells that failed or were not measured */
    int tied, has_rho, has_pick, hit;
    double rho;
    int pick, best;             /* indices in plans (-1: none) */
    int has_optimal, optimal_best;  /* an "optimal" column measured, not tied; as fast as best */
} fid_model;

struct fe_fidelity {
    const fe_ab *ab;            /* not owned: freed after this */
    int nmodels;
    fid_model *models;
    fe_fidelity_summary sum;
};

/* Average ranks (1-based) of v[0..n) into rank. */
static void ranks(const double *v, int n, double *rank)
{
    for (int i = 0; i < n; i++) {
        int below = 0, equal = 0;
        for (int j = 0; j < n; j++)
            below += v[j] < v[i], equal += v[j] == v[i];
        rank[i] = below + (equal + 1) / 2.0;
    }
}

/* Pearson correlation of x and y; 0 with *ok = 0 when either is constant. */
static double pearson(const double *x, const double *y, int n, int *ok)
{
    double mx = 0, my = 0, sxy = 0, sxx = 0, syy = 0;
    for (int i = 0; i < n; i++)
        mx += x[i] / n, my += y[i] / n;
    for (int i = 0; i < n; i++) {
        sxy += (x[i] - mx) * (y[i] - my);
        sxx += (x[i] - mx) * (x[i] - mx);
        syy += (y[i] - my) * (y[i] - my);
    }
    *ok = sxx > 0 && syy > 0;
    return *ok ? sxy / sqrt(sxx * syy) : 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The model's distinct measured plans. */
static int collect(const fe_ab *ab, int r, fid_model *m, fe_error *err)
{
    int nc = ab->ncols;
    m->row = r;
    if (!(m->plans = calloc((size_t)nc, sizeof *m->plans)))
        return fe_error_set(err, FE_ENOMEM, "out of memory");
    for (int c = 0; c < nc; c++) {
        const fe_ab_cell *x = &ab->cells[r * nc + c];
        if (x->status != FE_AB_OK || !x->reps || x->cpu_ms <= 0 || x->fig.time_s <= 0) {
            m->failed++;
            continue;
        }
        fid_plan *dup = NULL;
        for (int i = 0; i < m->nplans && !dup; i++)
            if (fe_ab_same_plan(&ab->cells[r * nc + m->plans[i].col].fig, &x->fig))
                dup = &m->plans[i];
        if (dup) {
            size_t len = strlen(dup->same);
            snprintf(dup->same + len, sizeof dup->same - len, "%s%s", len ? ", " : "",
                     ab->cnames[c]);
            continue;
        }
        fid_plan *p = &m->plans[m->nplans++];
        p->col = c;
        p->sim_ms = x->fig.time_s * 1e3;
        p->meas_ms = x->cpu_ms;
        p->ratio = c == 0 ? 1 : x->ratio;
        p->lo = c == 0 ? 1 : x->lo;
        p->hi = c == 0 ? 1 : x->hi;
        p->rel_err = (p->sim_ms - p->meas_ms) / p->meas_ms;
    }
    return FE_OK;
}

/* The plan of m standing for column c (c's own or the one it duplicates),
 * or -1. */
static int plan_of(const fe_ab *ab, const fid_model *m, int c)
{
    if (c < 0)
        return -1;
    const fe_ab_cell *x = &ab->cells[m->row * ab->ncols + c];
    for (int i = 0; i < m->nplans; i++)
        if (m->plans[i].col == c || fe_ab_same_plan(&ab->cells[m->row * ab->ncols + m->plans[i].col].fig, &x->fig))
            return i;
    return -1;
}

/* The column named name, or -1. */
static int column(const fe_ab *ab, const char *name)
{
    for (int c = 0; c < ab->ncols; c++)
        if (strcmp(ab->cnames[c], name) == 0)
            return c;
    return -1;
}

static void judge(const fe_ab *ab, fid_model *m)
{
    int n = m->nplans;
    m->pick = m->best = n == 1 ? 0 : -1;
    if (n < 2)
        return;
    double lo = -HUGE_VAL, hi = HUGE_VAL;
    int has_ci = ab->cells[m->row * ab->ncols].status == FE_AB_OK;   /* baseline measured */
    for (int i = 0; i < n; i++) {
        lo = fmax(lo, m->plans[i].lo);
        hi = fmin(hi, m->plans[i].hi);
    }
    m->tied = has_ci && lo <= hi;
    double sim[80], meas[80], rs[80], rm[80];
    for (int i = 0; i < n && i < 80; i++)
        sim[i] = m->plans[i].sim_ms, meas[i] = m->plans[i].meas_ms;
    n = n < 80 ? n : 80;
    ranks(sim, n, rs);
    ranks(meas, n, rm);
    for (int i = 0; i < n; i++)
        m->plans[i].sim_rank = rs[i], m->plans[i].meas_rank = rm[i];
    /* the pick and the best are ab's (one rule for both reports): the
     * plans standing for its columns */
    m->pick = plan_of(ab, m, fe_ab_sim_winner(ab, m->row));
    m->best = plan_of(ab, m, fe_ab_winner(ab, m->row));
    int opt = column(ab, "optimal");
    if (opt >= 0 && plan_of(ab, m, opt) >= 0 && !m->tied) {
        m->has_optimal = 1;
        m->optimal_best = fe_ab_as_fast(ab, m->row, opt, fe_ab_winner(ab, m->row));
    }
    if (m->tied || m->pick < 0 || m->best < 0)
        return;
    int ok;
    if (n >= 3) {
        m->rho = pearson(rs, rm, n, &ok);
        m->has_rho = ok;
    }
    m->has_pick = 1;
    m->hit = has_ci && fe_ab_ranks_agree(ab, m->row) == 1;
}

static void summarise(fe_fidelity *f, double *errs, int nerr)
{
    fe_fidelity_summary *s = &f->sum;
    double rho = 0;
    for (int i = 0; i < f->nmodels; i++) {
        const fid_model *m = &f->models[i];
        s->models++;
        s->tied += m->tied;
        s->plans += m->nplans;
        s->failed += m->failed;
        if (m->has_rho)
            rho += m->rho, s->rho_models++;
        if (m->has_pick)
            s->pick_models++, s->pick_hits += m->hit;
        if (m->has_optimal)
            s->optimal_models++, s->optimal_best += m->optimal_best;
    }
    s->mean_rho = s->rho_models ? rho / s->rho_models : NAN;
    if (nerr) {
        qsort(errs, (size_t)nerr, sizeof *errs, cmp_double);
        s->median_abs_err = nerr % 2 ? errs[nerr / 2] : (errs[nerr / 2 - 1] + errs[nerr / 2]) / 2;
    } else {
        s->median_abs_err = NAN;
    }
    s->pick_rate = s->pick_models ? (double)s->pick_hits / s->pick_models : NAN;
}

fe_fidelity *fe_ab_fidelity(const fe_ab *ab, fe_error *err)
{
    if (fe_api_null(ab, "fe_ab_fidelity", "the comparison", err))
        return NULL;
    if (!ab->measure) {
        fe_error_set(err, FE_EINPUT, "fe_ab_fidelity: the comparison was not measured "
                     "(run it with measure)");
        return NULL;
    }
    fe_fidelity *f = calloc(1, sizeof *f);
    double *errs = malloc(((size_t)ab->nrows * (size_t)ab->ncols + 1) * sizeof *errs);
    if (!f || !errs || !(f->models = calloc((size_t)ab->nrows + 1, sizeof *f->models))) {
        free(errs);
        fe_fidelity_free(f);
        fe_error_set(err, FE_ENOMEM, "out of memory");
        return NULL;
    }
    f->ab = ab;
    int nerr = 0;
    for (int r = 0; r < ab->nrows; r++) {
        if (!ab->rows[r].ran)
            continue;
        fid_model *m = &f->models[f->nmodels++];
        if (collect(ab, r, m, err) != FE_OK) {
            free(errs);
            fe_fidelity_free(f);
            return NULL;
        }
        judge(ab, m);
        for (int i = 0; i < m->nplans; i++)
            errs[nerr++] = fabs(m->plans[i].rel_err);
    }
    summarise(f, errs, nerr);
    free(errs);
    return f;
}

void fe_fidelity_summarise(const fe_fidelity *f, fe_fidelity_summary *out)
{
    if (f && out)
        *out = f->sum;
}

void fe_fidelity_free(fe_fidelity *f)
{
    if (!f)
        return;
    for (int i = 0; i < f->nmodels; i++)
        free(f->models[i].plans);
    free(f->models);
    free(f);
}

/* ---- text ---- */

/* "llama2-7b-layer S=512", escaped for a terminal. */
static void model_label(const fe_ab *ab, int r, char *buf, size_t size)
{
    const fe_ab_rowres *rr = &ab->rows[r];
    char raw[600];
    snprintf(raw, sizeof raw, "%s%s%s", rr->model, rr->dims[0] ? " " : "", rr->dims);
    fe_escape_into(buf, size, raw, 0);
}

static const char *device_name(const fe_ab *ab)
{
    return ab->device == FE_DEVICE_CUDA ? "the GPU" : "this CPU";
}

static void text_model(const fe_fidelity *f, const fid_model *m, FILE *fo)
{
    const fe_ab *ab = f->ab;
    char label[1200], name[520], same[1040];
    model_label(ab, m->row, label, sizeof label);
    fe_escape_into(name, sizeof name, ab->rows[m->row].machine, 0);
    fprintf(fo, "%s (simulated on %s)\n", label, name);
    fprintf(fo, "  %-20s %10s %10s  %-16s %8s %5s %5s\n", "policy", "sim ms", "meas ms",
            "ratio 95% CI", "error", "sim#", "meas#");
    for (int i = 0; i < m->nplans; i++) {
        const fid_plan *p = &m->plans[i];
        char ci[64];
        snprintf(ci, sizeof ci, "[%.3f, %.3f]", p->lo, p->hi);
        fe_escape_into(name, sizeof name, ab->cnames[p->col], 0);
        fe_escape_into(same, sizeof same, p->same, 0);
        fprintf(fo, "%s %-20s %10.3f %10.3f  %-16s %+7.1f%% %5.1f %5.1f%s%s%s\n",
                i == m->pick ? "s" : " ", name, p->sim_ms, p->meas_ms, ci, 100 * p->rel_err,
                p->sim_rank, p->meas_rank, i == m->best ? "  measured best" : "",
                same[0] ? "  same plan: " : "", same);
    }
    if (m->failed)
        fprintf(fo, "  %d polic%s without a measured plan (failed: see fuseeng ab)\n", m->failed,
                m->failed == 1 ? "y" : "ies");
    if (m->nplans < 2)
        fprintf(fo, "  one plan: nothing to rank\n");
    else if (m->tied)
        fprintf(fo, "  tied: every plan's measured interval overlaps the others' (not counted)\n");
    else if (m->has_rho)
        fprintf(fo, "  rank correlation %.3f; the simulator's pick (s) %s\n", m->rho,
                m->hit ? "is the measured best" : "is NOT the measured best");
    else
        fprintf(fo, "  rank correlation n/a (%s); the simulator's pick (s) %s\n",
                m->nplans < 3 ? "two plans" : "constant times",
                m->hit ? "is the measured best" : "is NOT the measured best");
    char why[1024];
    fe_ab_miss_text(ab, m->row, why, sizeof why);
    if (why[0])
        fprintf(fo, "  %s\n", why);
    fputc('\n', fo);
}

static void text(const fe_fidelity *f, FILE *fo)
{
    const fe_fidelity_summary *s = &f->sum;
    for (int i = 0; i < f->nmodels; i++)
        text_model(f, &f->models[i], fo);
    fprintf(fo, "fidelity over %d model%s, %d distinct plans, measured on %s\n", s->models,
            s->models == 1 ? "" : "s", s->plans, device_name(f->ab));
    if (s->rho_models)
        fprintf(fo, "  mean rank correlation      %.3f over %d model%s\n", s->mean_rho,
                s->rho_models, s->rho_models == 1 ? "" : "s");
    else
        fprintf(fo, "  mean rank correlation      n/a (no model with 3 plans the device tells apart)\n");
    if (s->plans)
        fprintf(fo, "  median |relative error|    %.1f%%\n", 100 * s->median_abs_err);
    if (s->pick_models)
        fprintf(fo, "  simulator picks the best   %d of %d model%s (%.0f%%)\n", s->pick_hits,
                s->pick_models, s->pick_models == 1 ? "" : "s", 100 * s->pick_rate);
    if (s->optimal_models)
        fprintf(fo, "  the optimum is the best    %d of %d model%s (%.0f%%)\n", s->optimal_best,
                s->optimal_models, s->optimal_models == 1 ? "" : "s",
                100.0 * s->optimal_best / s->optimal_models);
    if (s->tied)
        fprintf(fo, "  tied (within noise)        %d model%s, not counted\n", s->tied,
                s->tied == 1 ? "" : "s");
    fe_ab_text_provenance(f->ab, fo);
}

/* ---- JSON ---- */

static void jnum_or_null(fe_jw *w, const char *key, double v, int ok)
{
    fe_jw_key(w, key);
    if (ok && isfinite(v))
        fe_jw_num(w, v);
    else
        fe_jw_null(w);
}

static void json(const fe_fidelity *f, FILE *fo)
{
    const fe_ab *ab = f->ab;
    const fe_fidelity_summary *s = &f->sum;
    fe_jw w;
    fe_jw_init(&w, fo, 2);
    fe_jw_obj(&w);
    fe_jw_key(&w, "format");
    fe_jw_str(&w, "fuseeng.fidelity/1");
    fe_ab_json_provenance(ab, &w);
    fe_jw_key(&w, "device");
    fe_jw_str(&w, ab->device == FE_DEVICE_CUDA ? "cuda" : "cpu");
    fe_jw_key(&w, "summary");
    fe_jw_obj(&w);
    fe_ab_jint(&w, "models", s->models);
    fe_ab_jint(&w, "plans", s->plans);
    fe_ab_jint(&w, "failed", s->failed);
    fe_ab_jint(&w, "tied_models", s->tied);
    jnum_or_null(&w, "mean_rho", s->mean_rho, s->rho_models > 0);
    fe_ab_jint(&w, "rho_models", s->rho_models);
    jnum_or_null(&w, "median_abs_rel_error", s->median_abs_err, s->plans > 0);
    fe_ab_jint(&w, "pick_models", s->pick_models);
    fe_ab_jint(&w, "pick_hits", s->pick_hits);
    jnum_or_null(&w, "pick_rate", s->pick_rate, s->pick_models > 0);
    if (s->optimal_models) {
        fe_ab_jint(&w, "optimal_models", s->optimal_models);
        fe_ab_jint(&w, "optimal_best", s->optimal_best);
    }
    fe_jw_end(&w);
    fe_jw_key(&w, "models");
    fe_jw_arr(&w);
    for (int i = 0; i < f->nmodels; i++) {
        const fid_model *m = &f->models[i];
        const fe_ab_rowres *rr = &ab->rows[m->row];
        fe_jw_obj(&w);
        fe_jw_key(&w, "model");
        fe_jw_str(&w, rr->model);
        fe_jw_key(&w, "file");
        fe_jw_str(&w, rr->file);
        fe_jw_key(&w, "dims");
        fe_jw_str(&w, rr->dims);
        fe_jw_key(&w, "machine");
        fe_jw_str(&w, rr->machine);
        if (rr->machine_file[0]) {
            fe_jw_key(&w, "machine_file");
            fe_jw_str(&w, rr->machine_file);
        }
        fe_jw_key(&w, "tied");
        fe_jw_bool(&w, m->tied);
        jnum_or_null(&w, "rho", m->rho, m->has_rho && !m->tied);
        fe_jw_key(&w, "pick");
        if (m->pick >= 0)
            fe_jw_str(&w, ab->cnames[m->plans[m->pick].col]);
        else
            fe_jw_null(&w);
        fe_jw_key(&w, "measured_best");
        if (m->best >= 0)
            fe_jw_str(&w, ab->cnames[m->plans[m->best].col]);
        else
            fe_jw_null(&w);
        if (m->has_optimal) {
            fe_jw_key(&w, "optimal_is_best");
            fe_jw_bool(&w, m->optimal_best);
        }
        fe_ab_miss_json(ab, m->row, &w);
        fe_jw_key(&w, "pick_is_best");
        if (m->has_pick)
            fe_jw_bool(&w, m->hit);
        else
            fe_jw_null(&w);
        fe_ab_jint(&w, "failed", m->failed);
        fe_jw_key(&w, "plans");
        fe_jw_arr(&w);
        for (int k = 0; k < m->nplans; k++) {
            const fid_plan *p = &m->plans[k];
            fe_jw_obj(&w);
            fe_jw_key(&w, "policy");
            fe_jw_str(&w, ab->cnames[p->col]);
            fe_jw_key(&w, "same_plan");
            fe_jw_arr_flat(&w);
            for (int c = 0; c < ab->ncols; c++)
                if (c != p->col && ab->cells[m->row * ab->ncols + c].status == FE_AB_OK &&
                    ab->cells[m->row * ab->ncols + c].reps &&
                    fe_ab_same_plan(&ab->cells[m->row * ab->ncols + c].fig,
                              &ab->cells[m->row * ab->ncols + p->col].fig) && c > p->col)
                    fe_jw_str(&w, ab->cnames[c]);
            fe_jw_end(&w);
            fe_ab_jnum(&w, "sim_ms", p->sim_ms);
            fe_ab_jnum(&w, "measured_ms", p->meas_ms);
            fe_ab_jnum(&w, "ratio", p->ratio);
            fe_ab_jnum(&w, "ratio_lo", p->lo);
            fe_ab_jnum(&w, "ratio_hi", p->hi);
            fe_ab_jnum(&w, "rel_error", p->rel_err);
            fe_ab_jnum(&w, "sim_rank", p->sim_rank);
            fe_ab_jnum(&w, "measured_rank", p->meas_rank);
            fe_jw_end(&w);
        }
        fe_jw_end(&w);
        fe_jw_end(&w);
    }
    fe_jw_end(&w);
    fe_jw_end(&w);
    fputc('\n', fo);
}

/* ---- SVG: simulated against measured, log-log ---- */

/* A round tick at or below v: 1, 2 or 5 times a power of ten. */
static double tick_floor(double v)
{
    double p = pow(10, floor(log10(v)));
    return v >= 5 * p ? 5 * p : v >= 2 * p ? 2 * p : p;
}

static void svg(const fe_fidelity *f, FILE *fo)
{
    static const char *const colors[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                                         "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
    const fe_ab *ab = f->ab;
    double lo = HUGE_VAL, hi = 0;
    for (int i = 0; i < f->nmodels; i++)
        for (int k = 0; k < f->models[i].nplans; k++) {
            const fid_plan *p = &f->models[i].plans[k];
            lo = fmin(lo, fmin(p->sim_ms, p->meas_ms));
            hi = fmax(hi, fmax(p->sim_ms, p->meas_ms));
        }
    if (!(hi > 0)) {
        lo = 0.1;
        hi = 1;
    }
    lo = tick_floor(lo);
    hi = pow(10, ceil(log10(hi)));
    double span = log10(hi) - log10(lo);
    if (span <= 0)
        span = 1;
    int left = 70, top = 40, size = 420, legend = 240;
    int width = left + size + 30 + legend, height = top + size + 60;
#define POS(v) ((log10(v) - log10(lo)) / span * size)
    fprintf(fo, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                "font-family=\"Helvetica, Arial, sans-serif\" font-size=\"11\">\n", width, height);
    fprintf(fo, "<text x=\"%d\" y=\"20\" font-size=\"14\">Simulated against measured plan time "
                "(ms, %s)</text>\n", left, ab->device == FE_DEVICE_CUDA ? "GPU" : "CPU");
    fprintf(fo, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#999\"/>\n",
            left, top, size, size);
    for (double d = pow(10, floor(log10(lo))); d <= hi * 1.0001; d *= 10)
        for (int k = 0; k < 3; k++) {
            double t = d * (k == 0 ? 1 : k == 1 ? 2 : 5);
            if (t < lo * 0.9999 || t > hi * 1.0001)
                continue;
            double x = left + POS(t), y = top + size - POS(t);
            fprintf(fo, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#eee\"/>\n", x,
                    top, x, top + size);
            fprintf(fo, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#eee\"/>\n", left,
                    y, left + size, y);
            fprintf(fo, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n", x,
                    top + size + 14, t);
            fprintf(fo, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", left - 4, y + 4,
                    t);
        }
    fprintf(fo, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#999\" "
                "stroke-dasharray=\"4 3\"/>\n", left, top + size, left + size, top);
    fprintf(fo, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">measured ms</text>\n",
            left + size / 2, top + size + 34);
    fprintf(fo, "<text transform=\"translate(%d,%d) rotate(-90)\" text-anchor=\"middle\">"
                "simulated ms</text>\n", 16, top + size / 2);
    for (int i = 0; i < f->nmodels; i++) {
        const fid_model *m = &f->models[i];
        char label[600];
        snprintf(label, sizeof label, "%s%s%s", ab->rows[m->row].model,
                 ab->rows[m->row].dims[0] ? " " : "", ab->rows[m->row].dims);
        for (int k = 0; k < m->nplans; k++) {
            const fid_plan *p = &m->plans[k];
            fprintf(fo, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\" fill-opacity=\"0.8\">"
                        "<title>", left + POS(p->meas_ms), top + size - POS(p->sim_ms),
                    colors[i % 10]);
            fe_ab_xml_text(fo, label);
            fputs(", ", fo);
            fe_ab_xml_text(fo, ab->cnames[p->col]);
            fprintf(fo, ": simulated %.3f ms, measured %.3f ms</title></circle>\n", p->sim_ms,
                    p->meas_ms);
        }
        int lx = left + size + 30, ly = top + i * 16;
        if (i < 30) {
            fprintf(fo, "<circle cx=\"%d\" cy=\"%d\" r=\"5\" fill=\"%s\"/>\n", lx + 5, ly + 5,
                    colors[i % 10]);
            fprintf(fo, "<text x=\"%d\" y=\"%d\">", lx + 16, ly + 9);
            fe_ab_xml_text(fo, label);
            if (m->has_rho && !m->tied)
                fprintf(fo, " (rho %.2f)", m->rho);
            else if (m->tied)
                fputs(" (tied)", fo);
            fputs("</text>\n", fo);
        }
    }
#undef POS
    fprintf(fo, "</svg>\n");
}

static int write_fidelity(const void *obj, const void *arg, int format, FILE *fo, fe_error *err)
{
    (void)arg, (void)err;
    const fe_fidelity *f = obj;
    if (format == FE_FORMAT_JSON)
        json(f, fo);
    else if (format == FE_FORMAT_SVG)
        svg(f, fo);
    else
        text(f, fo);
    return FE_OK;
}

char *fe_fidelity_format(const fe_fidelity *f, int format, fe_error *err)
{
    if (fe_api_null(f, "fe_fidelity_format", "the fidelity", err))
        return NULL;
    int kind = format & FE_FORMAT_MASK;
    if (kind != FE_FORMAT_TEXT && kind != FE_FORMAT_JSON && kind != FE_FORMAT_SVG) {
        fe_error_set(err, FE_EINPUT, "fe_fidelity_format: format %d is not text, JSON or SVG",
                     kind);
        return NULL;
    }
    return fe_api_text(write_fidelity, f, NULL, kind, err);
}
