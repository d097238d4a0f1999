/* api_ab.c: policies compared on models (fuseeng ab): every row of a suite
 * (a model at some dims on some machine) planned with every policy column,
 * simulated, and with measure also run on this CPU's kernels; a policy
 * that fails on a model fails its cell and the table goes on. The tallies
 * over the suite (ratios against the baseline column, geometric means,
 * wins) are computed from the cells whenever they are printed, so a merged
 * set of shards prints exactly what one run would. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "api_ab.h"
#include "cuda.h"
#include "datafiles.h"
#include "progress.h"

/* Relative difference below which two simulated times tie. */
#define TIE 1e-9

fe_ab *fe_ab_alloc(int nrows, int ncols, fe_error *err)
{
    fe_ab *ab = calloc(1, sizeof *ab);
    if (ab) {
        ab->nrows = nrows;
        ab->ncols = ncols;
        ab->rows = calloc((size_t)(nrows ? nrows : 1), sizeof *ab->rows);
        ab->cnames = calloc((size_t)(ncols ? ncols : 1), sizeof *ab->cnames);
        ab->cells = calloc((size_t)(nrows ? nrows : 1) * (size_t)(ncols ? ncols : 1),
                           sizeof *ab->cells);
    }
    if (!ab || !ab->rows || !ab->cnames || !ab->cells) {
        fe_ab_free(ab);
        fe_error_set(err, FE_ENOMEM, "out of memory");
        return NULL;
    }
    return ab;
}

double fe_ab_ratio(const fe_ab *ab, int r, int c)
{
    const fe_ab_cell *b = &ab->cells[r * ab->ncols], *x = &ab->cells[r * ab->ncols + c];
    if (b->status != FE_AB_OK || x->status != FE_AB_OK || x->fig.time_s <= 0)
        return 0;
    return b->fig.time_s / x->fig.time_s;
}

int fe_ab_same_plan(const fe_figures *a, const fe_figures *b)
{
    return a->time_s == b->time_s && a->kernels == b->kernels &&
           a->extern_calls == b->extern_calls && a->l3_bytes == b->l3_bytes;
}

/* Was row r measured (some cell timed)? */
static int row_measured(const fe_ab *ab, int r)
{
    for (int c = 0; ab->measure && c < ab->ncols; c++)
        if (ab->cells[r * ab->ncols + c].status == FE_AB_OK && ab->cells[r * ab->ncols + c].reps)
            return 1;
    return 0;
}

int fe_ab_winner(const fe_ab *ab, int r)
{
    if (!row_measured(ab, r))
        return fe_ab_sim_winner(ab, r);
    int best = -1;
    for (int c = 0; c < ab->ncols; c++) {
        const fe_ab_cell *x = &ab->cells[r * ab->ncols + c];
        if (x->status == FE_AB_OK && x->reps && x->cpu_ms > 0 &&
            (best < 0 || x->cpu_ms < ab->cells[r * ab->ncols + best].cpu_ms))
            best = c;
    }
    return best;
}

int fe_ab_sim_rank(const fe_ab *ab, int r, int c)
{
    const fe_ab_cell *x = &ab->cells[r * ab->ncols + c];
    if (x->status != FE_AB_OK)
        return 0;
    int rank = 1;
    for (int k = 0; k < ab->ncols; k++) {
        const fe_ab_cell *y = &ab->cells[r * ab->ncols + k];
        rank += y->status == FE_AB_OK && y->fig.time_s < x->fig.time_s * (1 - TIE);
    }
    return rank;
}

int fe_ab_as_fast(const fe_ab *ab, int r, int c, int best)
{
    const fe_ab_cell *p = &ab->cells[r * ab->ncols + c], *b = &ab->cells[r * ab->ncols + best];
    if (c == best || fe_ab_same_plan(&p->fig, &b->fig))
        return 1;
    if (p->status != FE_AB_OK || !p->reps)
        return 0;
    /* ratios are baseline / plan (the baseline's is 1 exactly): c is as
     * fast as the best when its interval reaches the best's */
    double phi = c == 0 ? 1 : p->hi, blo = best == 0 ? 1 : b->lo;
    return phi >= blo;
}

int fe_ab_ranks_agree(const fe_ab *ab, int r)
{
    int pick = fe_ab_sim_winner(ab, r), best = fe_ab_winner(ab, r);
    if (!row_measured(ab, r) || pick < 0 || best < 0)
        return -1;
    return fe_ab_as_fast(ab, r, pick, best);
}

int fe_ab_sim_winner(const fe_ab *ab, int r)
{
    int best = -1;
    for (int c = 0; c < ab->ncols; c++) {
        const fe_ab_cell *x = &ab->cells[r * ab->ncols + c];
        if (x->status == FE_AB_OK &&
            (best < 0 || x->fig.time_s < ab->cells[r * ab->ncols + best].fig.time_s * (1 - TIE)))
            best = c;
    }
    return best;
}

void fe_ab_tally_col(const fe_ab *ab, int col, fe_ab_tally *t)
{
    memset(t, 0, sizeof *t);
    double logs = 0, cpu_logs = 0;
    int n = 0, cpu_n = 0;
    for (int r = 0; r < ab->nrows; r++) {
        const fe_ab_cell *x = &ab->cells[r * ab->ncols + col];
        if (!ab->rows[r].ran)
            continue;
        double q = fe_ab_ratio(ab, r, col);
        if (q <= 0) {
            t->failed++;
            continue;
        }
        logs += log(q);
        n++;
        if (q > 1 + TIE)
            t->wins++;
        else if (q < 1 - TIE)
            t->losses++;
        else
            t->ties++;
        if (ab->measure && x->ratio > 0) {
            cpu_logs += log(x->ratio);
            cpu_n++;
            if (x->lo > 1)
                t->cpu_wins++;
            else if (x->hi < 1)
                t->cpu_losses++;
            else
                t->cpu_same++;
        }
    }
    t->geomean = n ? exp(logs / n) : 0;
    t->cpu_geomean = cpu_n ? exp(cpu_logs / cpu_n) : 0;
}

static int add_fault(fe_ab *ab, const char *fault)
{
    char **nf = realloc(ab->faults, (size_t)(ab->nfaults + 1) * sizeof *nf);
    if (!nf)
        return -1;
    ab->faults = nf;
    if (!(nf[ab->nfaults] = strdup(fault)))
        return -1;
    ab->nfaults++;
    return 0;
}

int fe_ab_cell_fail(fe_ab_cell *x, const char *why)
{
    x->status = FE_AB_FAILED;
    free(x->error);
    return (x->error = strdup(why)) ? FE_OK : FE_ENOMEM;
}

/* Every cell of row r that has not failed yet fails with why ("--measure:
 * ..."): what went wrong was the row's (its data, its reference run), not
 * one policy's. */
static int row_fail(fe_ab *ab, int r, const char *why)
{
    int rc = FE_OK;
    for (int c = 0; c < ab->ncols && rc == FE_OK; c++)
        if (ab->cells[r * ab->ncols + c].status != FE_AB_FAILED)
            rc = fe_ab_cell_fail(&ab->cells[r * ab->ncols + c], why);
    return rc;
}

/* The plan's simulated figures into x (and its trace when asked for). */
static int simulate(fe_engine *e, const fe_plan *p, int trace, fe_ab_cell *x, fe_error *err)
{
    fe_sim_report rep;
    int rc = fe_sim_plan(p, fe_api_machine(e), &rep, err);
    if (rc != FE_OK)
        return rc;
    fe_api_figures(&rep.total, &x->fig);
    fe_sim_report_free(&rep);
    if (trace) {
        fe_report *r = fe_engine_simulate(e, p, err);
        x->trace = r ? fe_report_format(r, NULL, FE_FORMAT_TRACE, err) : NULL;
        fe_report_free(r);
        if (!x->trace)
            return err ? err->code : FE_ENOMEM;
    }
    return FE_OK;
}

/* One row: the unfused time, every column's plan and figures, and with
 * measure the interleaved timings. A policy that fails fails its cell; a
 * failure of the row's own at run time (an op no kernel runs, its
 * reference run) fails the row's cells; the rest of the comparison goes
 * on. Only memory ends it (bad input, a model that does not load or data
 * files that do not fit it, was refused before anything ran). */
static int one_row(fe_engine *e, const fe_ab_suite *s, const fe_ab_run_options *o, fe_ab *ab,
                   int r, const fe_ab_truths *ts, fe_error *err)
{
    const fe_ab_row *row = &s->rows[r];
    fe_ab_rowres *rr = &ab->rows[r];
    const char *names[FE_AB_MAXDIMS];
    for (int k = 0; k < row->ndims; k++)
        names[k] = row->dim_names[k];
    fe_model *m = fe_model_load_dims(row->path, row->ndims, names, row->dim_values, err);
    fe_plan *base = m ? fe_model_unfused(m, err) : NULL;
    fe_plan **plans = calloc((size_t)s->ncols, sizeof *plans);
    fe_ab_cell unf = {0};
    int rc = base && plans ? simulate(e, base, 0, &unf, err) : err ? err->code : FE_ENOMEM;
    if (!plans)
        rc = fe_error_set(err, FE_ENOMEM, "out of memory");
    if (rc == FE_OK) {
        const fe_graph *g = fe_api_graph(m);
        snprintf(rr->model, sizeof rr->model, "%.255s", g->name[0] ? g->name : row->path);
        snprintf(rr->file, sizeof rr->file, "%s", row->path);
        fe_prov_file_sha256(row->path, rr->sha256);
        snprintf(rr->weights, sizeof rr->weights, "%s", o->measure ? row->weights : "");
        snprintf(rr->inputs, sizeof rr->inputs, "%s", o->measure ? row->inputs : "");
        snprintf(rr->dims, sizeof rr->dims, "%s", row->dims_label);
        snprintf(rr->machine, sizeof rr->machine, "%s", fe_engine_machine(e));
        snprintf(rr->machine_file, sizeof rr->machine_file, "%s", fe_api_machine(e)->file);
        snprintf(rr->description, sizeof rr->description, "%s", fe_engine_machine_description(e));
        rr->unfused_ms = unf.fig.time_s * 1e3;
        rr->ran = 1;
    }
    for (int c = 0; c < s->ncols && rc == FE_OK; c++) {
        fe_ab_cell *x = &ab->cells[r * s->ncols + c];
        fe_plan_stats st;
        fe_error perr = {0};
        if (!(plans[c] = fe_policy_plan(s->cols[c].policy, m, &st, &perr))) {
            rc = fe_ab_cell_fail(x, perr.message);
            continue;
        }
        x->status = FE_AB_OK;
        x->plan_s = st.seconds;
        if (st.fault[0] && add_fault(ab, st.fault) != 0)
            rc = FE_ENOMEM;
        if (rc == FE_OK && simulate(e, plans[c], o->traces, x, &perr) != FE_OK) {
            free(x->trace);
            x->trace = NULL;
            rc = fe_ab_cell_fail(x, perr.message);
            fe_plan_free(plans[c]);
            plans[c] = NULL;
        }
    }
    for (int c = 1; rc == FE_OK && o->traces && c < s->ncols; c++)
        if (plans[0] && plans[c] &&
            !(ab->cells[r * s->ncols + c].diff = fe_ab_diff_text(fe_api_machine(e), plans[0], plans[c],
                                                                  s->cols[0].name, s->cols[c].name,
                                                                  err)))
            rc = err ? err->code : FE_ENOMEM;
    if (rc == FE_OK && o->optimal)
        rc = fe_ab_optimal_row(e, o->optimal, m, rr);
    if (rc == FE_OK && ts)
        rc = fe_ab_truth_row(ts, r, fe_api_graph(m), plans, ab);
    if (rc == FE_ENOMEM)
        fe_error_set(err, FE_ENOMEM, "out of memory");
    if (rc == FE_OK && o->measure) {
        fe_ab_run_options ro = *o;   /* the model's own data, where the suite gives it */
        fe_error merr = {0};
        if (row->weights[0])
            ro.weights = row->weights;
        if (row->inputs[0])
            ro.inputs = row->inputs;
        if (fe_ab_measure_row(ab, r, fe_api_graph(m), fe_api_machine(e), plans, &ro, &merr) != FE_OK) {
            fe_error_prefix(&merr, "--measure: ");
            rc = merr.code == FE_ENOMEM ? fe_error_set(err, FE_ENOMEM, "%s: %s", row->path, merr.message)
                                        : row_fail(ab, r, merr.message);
        }
    }
    for (int c = 0; plans && c < s->ncols; c++)
        fe_plan_free(plans[c]);
    free(plans);
    fe_plan_free(base);
    fe_model_free(m);
    return rc;
}

/* With --measure, every row's data files (its own, else the run's) are
 * matched to its model before any row runs: a file that does not fit is
 * bad input, said at once, not minutes into a sweep (and not one row's
 * failure: the next row would fail the same way). */
static int check_data(const fe_ab_suite *s, const fe_ab_run_options *o, fe_error *err)
{
    for (int r = 0; r < s->nrows; r++) {
        const fe_ab_row *row = &s->rows[r];
        const char *w = row->weights[0] ? row->weights : o->weights;
        const char *in = row->inputs[0] ? row->inputs : o->inputs;
        if (!fe_ab_in_shard(r, o->shard, o->nshards) || (!w && !in))
            continue;
        const char *names[FE_AB_MAXDIMS];
        for (int k = 0; k < row->ndims; k++)
            names[k] = row->dim_names[k];
        fe_model *m = fe_model_load_dims(row->path, row->ndims, names, row->dim_values, err);
        fe_df_files f = {0};
        int rc = m ? fe_df_open(&f, fe_api_graph(m), w, in, NULL, err) : err ? err->code : FE_EINPUT;
        fe_df_close(&f);
        fe_model_free(m);
        if (rc != FE_OK) {
            fe_error_prefix(err, "%s: --measure: ", row->path);
            return rc;
        }
    }
    return FE_OK;
}

static int check_run(const fe_ab_run_options *o, fe_error *err)
{
    if (o->nshards < 0 || o->nshards > 100000 || (o->nshards && (o->shard < 1 || o->shard > o->nshards)) ||
        (!o->nshards && o->shard))
        return fe_error_set(err, FE_EINPUT, "fe_engine_ab_suite: shard %d/%d: give i/n with "
                            "1 <= i <= n (0/0: every row)", o->shard, o->nshards);
    if (o->budget < 0 || o->reps < 0 || o->reps > 100000)
        return fe_error_set(err, FE_EINPUT, "fe_engine_ab_suite: budget %g or reps %d is "
                            "negative or too large", o->budget, o->reps);
    return FE_OK;
}

fe_ab *fe_engine_ab_suite(fe_engine *e, const fe_ab_suite *s, const fe_ab_run_options *o,
                          fe_error *err)
{
    fe_ab_run_options none = {0};
    if (fe_api_null(e, "fe_engine_ab_suite", "the engine", err) ||
        fe_api_null(s, "fe_engine_ab_suite", "the suite", err))
        return NULL;
    if (!o)
        o = &none;
    if (check_run(o, err) != FE_OK)
        return NULL;
    /* no card is every row's problem, not one model's: say so before any work */
    if (o->measure && ((o->device == FE_DEVICE_CUDA && fe_cuda_open(err) != FE_OK) ||
                       check_data(s, o, err) != FE_OK))
        return NULL;
    if (o->ntruths && (o->ntruths < 0 || !o->truths || o->nshards)) {
        fe_error_set(err, FE_EINPUT, "fe_engine_ab_suite: truth files: give a count and the paths, "
                     "and no shard (a shard file does not carry the agreement)");
        return NULL;
    }
    fe_ab_truths *ts = o->ntruths ? fe_ab_truths_open(s, o->ntruths, o->truths, err) : NULL;
    if (o->ntruths && !ts)
        return NULL;
    fe_ab *ab = fe_ab_alloc(s->nrows, s->ncols, err);
    if (!ab) {
        fe_ab_truths_free(ts);
        return NULL;
    }
    ab->against = o->ntruths > 0;
    memcpy(ab->id, s->id, sizeof ab->id);
    ab->shard = o->shard;
    ab->nshards = o->nshards;
    ab->measure = o->measure;
    ab->device = o->device;
    ab->optimal = o->optimal != NULL;
    ab->nmachines = s->nmachines;
    for (int c = 0; c < s->ncols; c++)
        snprintf(ab->cnames[c], sizeof ab->cnames[c], "%s", s->cols[c].name);
    fe_machine saved = *fe_api_machine(e);
    int rc = FE_OK, nrun = 0, done = 0;
    for (int r = 0; r < s->nrows; r++)
        nrun += fe_ab_in_shard(r, o->shard, o->nshards);
    /* a row takes seconds to minutes measured: the progress line, and
     * Ctrl-C keeps the rows done (the report is of those) */
    fe_progress pr;
    fe_progress_begin(&pr, o->measure ? "ab --measure: row" : "ab: row", nrun);
    for (int r = 0; r < s->nrows && rc == FE_OK; r++) {
        if (!fe_ab_in_shard(r, o->shard, o->nshards))
            continue;
        if (fe_progress_interrupted()) {
            ab->interrupted = 1;
            break;
        }
        fe_progress_step(&pr, done++, s->rows[r].path);
        if (s->rows[r].machine >= 0)
            fe_api_set_machine(e, &s->machines[s->rows[r].machine]);
        rc = one_row(e, s, o, ab, r, ts, err);
    }
    fe_progress_end(&pr);
    fe_ab_truths_free(ts);
    fe_api_set_machine(e, &saved);
    fe_prov_now(&ab->prov, o->measure && o->device == FE_DEVICE_CUDA);
    if (rc != FE_OK) {
        fe_ab_free(ab);
        return NULL;
    }
    return ab;
}

/* The original call: the models with the loaded policies on e's machine,
 * one suite row per model. */
fe_ab *fe_engine_ab(fe_engine *e, const fe_ab_options *o, fe_error *err)
{
    if (fe_api_null(e, "fe_engine_ab", "the engine", err) ||
        fe_api_null(o, "fe_engine_ab", "the options struct", err))
        return NULL;
    if (o->nmodels < 1 || !o->models || o->npolicies < 1 || !o->policies ||
        (o->ndims > 0 && (!o->dim_names || !o->dim_values)) || o->ndims > FE_AB_MAXDIMS) {
        fe_error_set(err, FE_EINPUT, "fe_engine_ab: give at least one model and one policy "
                     "(and up to 16 dims with names and values)");
        return NULL;
    }
    for (int i = 0; i < o->npolicies; i++)
        if (fe_api_null(o->policies[i], "fe_engine_ab", "a policy", err))
            return NULL;
    for (int i = 0; i < o->nmodels; i++)
        if (fe_api_null(o->models[i], "fe_engine_ab", "a model path", err))
            return NULL;
    fe_ab_suite s = {.nrows = o->nmodels, .ncols = o->npolicies};
    s.rows = calloc((size_t)o->nmodels, sizeof *s.rows);
    s.cols = calloc((size_t)o->npolicies, sizeof *s.cols);
    fe_ab *ab = NULL;
    if (!s.rows || !s.cols) {
        fe_error_set(err, FE_ENOMEM, "out of memory");
        goto out;
    }
    for (int c = 0; c < o->npolicies; c++) {
        s.cols[c].policy = o->policies[c];
        snprintf(s.cols[c].name, sizeof s.cols[c].name, "%s", fe_policy_name(o->policies[c]));
    }
    for (int r = 0; r < o->nmodels; r++) {
        fe_ab_row *row = &s.rows[r];
        row->machine = -1;
        snprintf(row->path, sizeof row->path, "%s", o->models[r]);
        /* Only the dims a model has: they are shared by models that may not all have them. */
        fe_error probe_err = {0};
        fe_model *probe = o->ndims ? fe_model_load_dims(o->models[r], 0, NULL, NULL, &probe_err) : NULL;
        for (int k = 0; probe && k < o->ndims; k++)
            if (fe_model_dim(probe, o->dim_names[k])) {
                snprintf(row->dim_names[row->ndims], sizeof row->dim_names[0], "%s", o->dim_names[k]);
                row->dim_values[row->ndims++] = o->dim_values[k];
            }
        fe_model_free(probe);
    }
    fe_ab_run_options ro = {.measure = o->measure, .budget = o->budget};
    ab = fe_engine_ab_suite(e, &s, &ro, err);
out:
    free(s.rows);
    free(s.cols);
    return ab;
}

void fe_ab_set_command(fe_ab *ab, const char *command)
{
    if (ab && command)
        snprintf(ab->prov.command, sizeof ab->prov.command, "%s", command);
}

int fe_ab_interrupted(const fe_ab *ab)
{
    return ab && ab->interrupted;
}

int fe_ab_wrong(const fe_ab *ab)
{
    int wrong = 0;
    for (int i = 0; ab && ab->measure && i < ab->nrows * ab->ncols; i++)
        wrong += ab->cells[i].status == FE_AB_OK && ab->cells[i].reps > 0 && !ab->cells[i].cpu_ok;
    return wrong;
}

int fe_ab_failed(const fe_ab *ab)
{
    int failed = 0;
    for (int r = 0; ab && r < ab->nrows; r++)
        for (int c = 0; ab->rows[r].ran && c < ab->ncols; c++)
            failed += ab->cells[r * ab->ncols + c].status == FE_AB_FAILED;
    return failed;
}

int fe_ab_faults(const fe_ab *ab)
{
    return ab ? ab->nfaults : 0;
}

const char *fe_ab_fault(const fe_ab *ab, int i)
{
    return ab && i >= 0 && i < ab->nfaults ? ab->faults[i] : NULL;
}

void fe_ab_free(fe_ab *ab)
{
    if (!ab)
        return;
    fe_ab_truth_free(ab);
    for (int i = 0; i < ab->nfaults; i++)
        free(ab->faults[i]);
    for (int i = 0; ab->cells && i < ab->nrows * ab->ncols; i++) {
        free(ab->cells[i].error);
        free(ab->cells[i].trace);
        free(ab->cells[i].diff);
    }
    free(ab->faults);
    free(ab->rows);
    free(ab->cnames);
    free(ab->cells);
    free(ab);
}
