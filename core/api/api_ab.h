/* api_ab.h: the objects behind fuseeng ab, shared by its files: the suite
 * (api_ab_suite.c reads it), the results (api_ab.c runs them, api_ab_stats.c
 * measures them, api_ab_merge.c reads shard files back), and their outputs
 * (api_ab_format.c, api_ab_html.c).
 *
 * A suite is a table: a row is one model at one dims setting on one
 * machine, a column one policy (possibly parameterised or a combination).
 * Column 0 is the baseline every ratio is taken against. Rows are the unit
 * of sharding: a row's policies always run together, on one host, so the
 * measured ones can be interleaved and the baseline is at hand.
 */
#ifndef FE_API_AB_H
#define FE_API_AB_H

#include <stdint.h>
#include <stdio.h>

#include "api.h"
#include "dimarg.h"
#include "provenance.h"

#define FE_AB_MAXDIMS 16

/* One row of the suite. */
typedef struct fe_ab_row {
    char path[1024];                 /* the model file */
    int ndims;
    char dim_names[FE_AB_MAXDIMS][FE_DIMARG_NAME];
    int64_t dim_values[FE_AB_MAXDIMS];
    char dims_label[256];            /* "S=512 B=1": the dims that vary, "" if none */
    int machine;                     /* index in the suite's machines; -1: the engine's */
    char weights[1024], inputs[1024]; /* the model's own data for --measure, "" if none */
} fe_ab_row;

/* One column: a loaded policy. */
typedef struct fe_ab_col {
    fe_policy *policy;
    int owned;                       /* the suite frees it */
    char name[256];
} fe_ab_col;

struct fe_ab_suite {
    int nrows, ncols, nmachines;
    fe_ab_row *rows;
    fe_ab_col *cols;
    fe_machine *machines;
    char id[17];                     /* hex fingerprint: shard files of other suites are refused */
};

/* Suite reading (api_ab_spec.c). json_t is Jansson's. */
struct json_t;
/* Sets err to FE_EINPUT "src: where: message"; returns FE_EINPUT. */
int fe_ab_fail(fe_error *err, const char *src, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* A policy from a spec string, or from a suite's policy entry (a string
 * or an object; its "name", if any, into name). Caller frees. */
fe_policy *fe_ab_load_spec(fe_engine *e, const char *src, const char *where, const char *spec,
                           fe_error *err);
fe_policy *fe_ab_load_entry(fe_engine *e, const char *src, const char *where,
                            const struct json_t *v, char *name, size_t nsize, fe_error *err);
/* A JSON scalar as parameter text; -1 for arrays, objects and null. */
int fe_ab_scalar_text(const struct json_t *v, char *buf, size_t size);
/* FE_OK, or FE_EINPUT naming the first key of o not in keys (NULL-ended). */
int fe_ab_only_keys(const struct json_t *o, const char *const *keys, const char *src,
                    const char *where, fe_error *err);

/* The figures of one cell (a row planned with a column). */
typedef struct fe_ab_cell {
    int status;                      /* FE_AB_* */
    char *error;                     /* FE_AB_FAILED: why (owned) */
    char *trace;                     /* the plan's Perfetto trace when asked for (owned) */
    char *diff;                      /* the same: fuseeng ab --diff baseline this (owned) */
    fe_figures fig;                  /* simulated */
    double plan_s;                   /* planning time */
    /* measured */
    double cpu_ms;                   /* median */
    double ratio, lo, hi;            /* baseline / this, median of paired rounds and its 95% CI */
    int reps, cpu_ok;
    double cpu_max_rel;
    struct fe_ab_agree *agree;       /* --against: the plan held against the truth (owned) */
} fe_ab_cell;

enum { FE_AB_NOTRUN = 0, FE_AB_OK = 1, FE_AB_FAILED = 2 };

/* Mark x failed with why (copied); FE_OK, or FE_ENOMEM. A cell that fails
 * keeps the rest of the report: only memory ends a comparison. */
int fe_ab_cell_fail(fe_ab_cell *x, const char *why);

typedef struct fe_ab_rowres {
    char model[256], file[1024], dims[256], machine[64], description[256];
    char weights[1024], inputs[1024]; /* the row's own data files for --measure, "" if none */
    char sha256[65];                 /* the model file's content hash, hex */
    char machine_file[1024];         /* the machine file the row simulated on, "" if built in */
    int ran;                         /* in this shard (or merged) */
    double unfused_ms, cpu_unfused_ms;
    /* --optimal (api_ab_optimal.c) */
    int optimal;                     /* 1 planned, -1 failed (optimal_error), 0 not asked */
    double optimal_s;                /* its simulated time */
    int optimal_proven, optimal_windows;   /* every window proven optimal; windows */
    double optimal_gap;              /* the worst window's gap at a solver's time limit */
    char optimal_error[1024];
    /* --measure, where the simulated best lost (api_ab_miss.c) */
    int miss;                        /* 1: explained by the fields below; 0: nothing to explain */
    int miss_pick, miss_best;        /* columns: the simulated best, the measured best */
    int miss_groups;                 /* groups of either plan the other lacks */
    double miss_pick_sim, miss_pick_meas;  /* ms: the pick's groups of those, simulated, measured */
    double miss_best_sim, miss_best_meas;  /* ms: the best's */
    char miss_label[128];            /* the group mispriced most in the loss's direction */
    int miss_in_best, miss_nodes;    /* 1: in the best's plan, 0: the pick's; its members */
    double miss_sim_us, miss_meas_us;
    char miss_term[24];              /* its price's largest term ("device memory", "launch") */
    struct fe_ab_truthrow *truth;    /* --against: the row's truth file facts, NULL if none (owned) */
} fe_ab_rowres;

struct fe_ab {
    char id[17];
    int shard, nshards;              /* 0/0: every row */
    int nrows, ncols, measure, nmachines;
    int optimal;                     /* --optimal: rows carry the optimum, cells their gap */
    int against;                     /* --against: truth files given, rows carry agreement */
    int device;                      /* FE_DEVICE_* the measured figures ran on */
    fe_ab_rowres *rows;
    char (*cnames)[256];
    fe_ab_cell *cells;               /* row-major */
    char **faults;
    int nfaults;
    fe_prov prov;                    /* where the report came from */
    int interrupted;                 /* Ctrl-C: the rows that ran are complete, the rest did not */
    char trace_link[512];            /* the page links traces there, "" embeds them */
};

/* A new empty result shaped like the suite (rows and columns named from
 * nothing yet); NULL on FE_ENOMEM. */
fe_ab *fe_ab_alloc(int nrows, int ncols, fe_error *err);

/* Does shard (1-based i of n; n = 0: all) run row r? */
static inline int fe_ab_in_shard(int r, int i, int n)
{
    return n == 0 || r % n == i - 1;
}

/* Per column over the suite's rows: geometric mean of the simulated ratios
 * against column 0, wins, ties, losses and failures; measured the same
 * from the confidence intervals ("same" when one holds 1). */
typedef struct fe_ab_tally {
    double geomean, cpu_geomean;
    int wins, ties, losses, failed, cpu_wins, cpu_same, cpu_losses;
} fe_ab_tally;
void fe_ab_tally_col(const fe_ab *ab, int col, fe_ab_tally *t);
/* Simulated ratio of cell (r, c) against the baseline; 0 if either failed. */
double fe_ab_ratio(const fe_ab *ab, int r, int c);
/* Two cells' plans the simulator cannot tell apart: the same time,
 * kernels, extern calls and L3 bytes (fidelity counts them once). */
int fe_ab_same_plan(const fe_figures *a, const fe_figures *b);
/* The best column of row r: by measured time when the row was measured,
 * else by simulated time (fe_ab_sim_winner); -1 if none ran. */
int fe_ab_winner(const fe_ab *ab, int r);
/* Where the report came from (provenance.h), as the text report's closing
 * lines and as the JSON report's "provenance" member: fidelity's too. */
void fe_ab_text_provenance(const fe_ab *ab, FILE *f);
void fe_ab_json_provenance(const fe_ab *ab, fe_jw *w);
/* The column with the least simulated time in row r, -1 if none ran. */
int fe_ab_sim_winner(const fe_ab *ab, int r);
/* Cell (r, c)'s simulated rank in its row, 1 the fastest (ties, within the
 * table's tie margin, share one); 0 for a failed cell. */
int fe_ab_sim_rank(const fe_ab *ab, int r, int c);
/* Whether column c of measured row r is as fast as column best: the same
 * plan, or its ratio interval reaches best's. 1 or 0. */
int fe_ab_as_fast(const fe_ab *ab, int r, int c, int best);
/* Whether the simulator's fastest plan of row r is the measured best
 * (the same plan, or its ratio interval reaching the best's): 1 or 0;
 * -1 when the row was not measured. */
int fe_ab_ranks_agree(const fe_ab *ab, int r);

/* Measure row r's plans (column order; NULL for failed cells) on o's
 * device, interleaved, into the cells, with o's budget, reps and data files;
 * where the simulated best (on m) lost, say why (fe_ab_miss_row)
 * (api_ab_stats.c). */
int fe_ab_measure_row(fe_ab *ab, int r, const fe_graph *g, const fe_machine *m,
                      fe_plan *const *plans, const fe_ab_run_options *o, fe_error *err);

/* Row r measured (its cells filled): if its simulated best is not its
 * measured best within its interval, time both plans group by group on ex
 * and fill the row's miss fields; else clear them. FE_OK, or an error of
 * the runs (api_ab_miss.c). */
struct fe_exec;
int fe_ab_miss_row(fe_ab *ab, int r, struct fe_exec *ex, const fe_machine *m,
                   fe_plan *const *plans, const fe_ab_run_options *o, fe_error *err);
/* The row's miss as one sentence ("why gcu_tlf (the simulated best) lost
 * to fuse_all: ..."), "" when it has none. */
void fe_ab_miss_text(const fe_ab *ab, int r, char *buf, size_t size);
/* The row's "miss" member in JSON (nothing without one), and a shard
 * file's row read back into rr after its cells' columns are named (1
 * read, 0 absent, -1 malformed). */
void fe_ab_miss_json(const fe_ab *ab, int r, fe_jw *w);
int fe_ab_miss_read(const fe_ab *ab, const struct json_t *row, fe_ab_rowres *rr);

/* The text of fuseeng ab --diff for plans a and b of one model on machine
 * m (api_ab_diff.c); caller frees with fe_free. */
char *fe_ab_diff_text(const fe_machine *m, const fe_plan *a, const fe_plan *b, const char *an,
                      const char *bn, fe_error *err);

/* A key and its value, for the JSON writers of these files. */
static inline void fe_ab_jint(fe_jw *w, const char *key, int64_t v)
{
    fe_jw_key(w, key);
    fe_jw_int(w, v);
}
static inline void fe_ab_jnum(fe_jw *w, const char *key, double v)
{
    fe_jw_key(w, key);
    fe_jw_num(w, v);
}
static inline void fe_ab_jstr(fe_jw *w, const char *key, const char *v)
{
    fe_jw_key(w, key);
    fe_jw_str(w, v);
}

/* --optimal (api_ab_optimal.c): plan row rr's model m with the optimal
 * policy opt and simulate it on e's machine into rr (a failure goes into
 * rr, FE_ENOMEM alone is returned); cell (r, c)'s gap to the row's
 * optimum, (time - optimum) / optimum, NaN when either is missing; a
 * column's gaps averaged geometrically (over 1 + gap); the gap as text
 * ("+4.2%", "-" when NaN); the row's optimum as a note ("optimal 3.804
 * ms, proven"); the row's "optimal" object and the cell's "gap_pct" in
 * JSON (nothing without --optimal); and a shard file's row read back (1
 * read, 0 absent, -1 malformed). */
int fe_ab_optimal_row(fe_engine *e, fe_policy *opt, const fe_model *m, fe_ab_rowres *rr);
double fe_ab_gap(const fe_ab *ab, int r, int c);
double fe_ab_gap_mean(const fe_ab *ab, int c);
void fe_ab_gap_text(double gap, char *buf, size_t size);
void fe_ab_optimal_note(const fe_ab *ab, int r, char *buf, size_t size);
void fe_ab_optimal_json(const fe_ab *ab, int r, fe_jw *w, int part);
void fe_ab_gap_json(const fe_ab *ab, int r, int c, fe_jw *w);
int fe_ab_optimal_read(const struct json_t *row, fe_ab_rowres *rr);

/* --against (api_ab_truth.c): truth files read and checked against the
 * suite's models (format, model hash, node names: FE_EINPUT naming the
 * file and place) before anything runs; caller frees with
 * fe_ab_truths_free. fe_ab_truth_row measures row r's plans (NULL for a
 * failed cell) on graph g against its truth, if it has one (FE_OK or
 * FE_ENOMEM). The recall and precision of cell (r, c), NaN when there is
 * nothing to divide by or no truth; fe_ab_truth_free frees what the rows
 * and cells hold (fe_ab_free calls it). The rest print the agreement in
 * each output. */
typedef struct fe_ab_truths fe_ab_truths;
fe_ab_truths *fe_ab_truths_open(const fe_ab_suite *s, int n, const char *const *paths, fe_error *err);
void fe_ab_truths_free(fe_ab_truths *ts);
int fe_ab_truth_row(const fe_ab_truths *ts, int r, const fe_graph *g, fe_plan *const *plans, fe_ab *ab);
void fe_ab_truth_free(fe_ab *ab);
double fe_ab_recall(const fe_ab *ab, int r, int c);
double fe_ab_precision(const fe_ab *ab, int r, int c);
void fe_ab_truth_note(const fe_ab *ab, int r, char *buf, size_t size);
void fe_ab_truth_text(const fe_ab *ab, int r, int name_width, FILE *f);
void fe_ab_truth_text_summary(const fe_ab *ab, int name_width, FILE *f);
void fe_ab_truth_json_row(const fe_ab *ab, int r, fe_jw *w);
void fe_ab_truth_json_cell(const fe_ab *ab, int r, int c, fe_jw *w);
void fe_ab_truth_json_summary(const fe_ab *ab, int c, fe_jw *w);
void fe_ab_truth_csv(const fe_ab *ab, int r, int c, FILE *f);   /* ",recall,precision,kernels_differ,differ" */
void fe_ab_truth_md(const fe_ab *ab, FILE *f);
void fe_ab_truth_html(const fe_ab *ab, int r, FILE *f);
void fe_ab_truth_html_summary(const fe_ab *ab, FILE *f);

/* Text escaped for HTML and SVG (api_ab_format.c). */
void fe_ab_xml_text(FILE *f, const char *s);
/* Row r's label: "llama2-7b-layer S=512 on gcu_big", what varies naming
 * the row; a row whose label another row has too gets its file after it,
 * so that two models of one name stay two rows (api_ab_format.c). */
void fe_ab_row_label(const fe_ab *ab, int r, char *buf, size_t size);
/* Round axis ticks (1-2-5 steps) for values up to maxv: the step, and the
 * axis top, a whole number of steps at or above maxv. */
double fe_ab_tick_step(double maxv, int nticks, double *top);

/* Outputs (api_ab_format.c, api_ab_html.c). */
void fe_ab_write_json(const fe_ab *ab, FILE *f, int part);
void fe_ab_write_svg(const fe_ab *ab, FILE *f);
void fe_ab_write_html(const fe_ab *ab, FILE *f);

#endif
