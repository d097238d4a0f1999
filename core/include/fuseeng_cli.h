/* fuseeng_cli.h: everything the fuseeng command does, as calls: plan files
 * read for a model, reports and plans as text, dispatch tables, execution
 * details, timings and profiles, policy comparison, model import, scripts.
 * The command includes nothing else of the engine's (core/cli), so a
 * program that includes this header can do all the command does.
 *
 * It includes fuseeng.h, the embedding API, whose conventions (ownership,
 * errors, the FE_API_BEGIN/FE_API_END blocks for LuaJIT's ffi.cdef, fed
 * after fuseeng.h's) hold here too. Unlike fuseeng.h it makes no stability
 * promise: it follows the command, and a call changes when the command's
 * options or output do. docs/c-api.md is the reference.
 *
 * Handles here are opaque; each is freed by its own fe_*_free, which
 * accepts NULL. Results meant for people or files come back as text the
 * caller frees with fe_free, in the format a *_format call is asked for:
 * one FE_FORMAT_* value, ORed with FE_WITH_* flags where the call says.
 * Array options are a count and pointers; zero or NULL means the default.
 */
#ifndef FUSEENG_CLI_H
#define FUSEENG_CLI_H

#include "fuseeng.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A dim as options and files write it. The engine's own header
 * (core/ir/dimarg.h, its owner) defines the same struct under the same
 * guard, as fuseeng.h does fe_error; core/api/api_abi.c checks that the
 * two agree. */
#ifndef FE_DIMARG_DEFINED
#define FE_DIMARG_DEFINED
/* FE_API_BEGIN */

/* "NAME=V", or a sweep "NAME=V1,V2,..." (a dispatch table's buckets, an
 * A/B suite's rows). */
typedef struct fe_dimarg {
    char name[128];       /* 1 to 127 bytes: everything before the first '=' */
    int n;                /* values: 1 to 64 */
    int64_t values[64];   /* each positive */
} fe_dimarg;

/* FE_API_END */
#endif

/* FE_API_BEGIN */

/* ---- Handles (opaque) ---- */

typedef struct fe_saved_plan fe_saved_plan;   /* a plan file read for a model */
typedef struct fe_dispatch fe_dispatch;       /* plans per bucket of one dim */
typedef struct fe_timing fe_timing;           /* a plan's groups and ops timed */
typedef struct fe_ab fe_ab;                   /* policies compared on models */
typedef struct fe_ab_suite fe_ab_suite;       /* models x dims x machines, policy columns */

/* ---- Formats ---- */

enum {
    FE_FORMAT_TEXT = 0,        /* aligned text lines, as the fuseeng command prints them */
    FE_FORMAT_JSON = 1,        /* one JSON document */
    FE_FORMAT_CSV = 2,         /* fe_ab_format: one row per model and policy */
    FE_FORMAT_SVG = 3,         /* fe_ab_format: a bar chart of the speedups */
    FE_FORMAT_TRACE = 4,       /* fe_report_format: a Perfetto / Chrome trace */
    FE_FORMAT_DOT = 5,         /* fe_plan_format: Graphviz, one cluster per group */
    FE_FORMAT_DECISIONS = 6,   /* fe_plan_format: every decision, one per line */
    FE_FORMAT_MD = 7,          /* fe_ab_format: Markdown tables */
    FE_FORMAT_HTML = 8,        /* fe_ab_format: one self-contained page */
    FE_FORMAT_PART = 9,        /* fe_ab_format: a shard's result file, for fe_ab_merge */
    FE_FORMAT_KERNELS = 10,    /* fe_plan_format: what this CPU executes for each group */
    FE_FORMAT_KERNELS_CUDA = 11, /* fe_plan_format: the CUDA kernels generated for each group */
    FE_FORMAT_MASK = 15,       /* the format's bits of a format argument */
    FE_WITH_GROUPS = 16,       /* add each group's simulated figures */
    FE_WITH_STATS = 32,        /* fe_plan_format text: the run's Lua statistics */
    FE_WITH_VERSUS = 64        /* fe_plan_format JSON: the comparison with unfused */
};

/* ---- Errors and files ---- */

/* Put text before err's message ("model.json: "), keeping its code; does
 * nothing when err is NULL or holds no error. */
void fe_error_prepend(fe_error *err, const char *text);

/* Write text to path whole or not at all (a temporary file renamed into
 * place); what names it in messages ("the plan"). FE_OK or FE_EINPUT. */
int fe_write_file(const char *path, const char *what, const char *text, fe_error *err);

/* ---- Engines ---- */

/* Path of the directory holding lua/ and policies/; owned by the engine. */
const char *fe_engine_home(const fe_engine *e);
/* The shipped machines' names (lua/machines under the home), sorted and
 * joined by ", " into out (size bytes); returns out. */
const char *fe_engine_machine_names(const fe_engine *e, char *out, size_t size);
/* Set the Lua limits of the runs that follow (max_instructions, max_memory,
 * max_seconds of o; zero keeps the current one). */
void fe_engine_set_limits(fe_engine *e, const fe_engine_options *o);
/* Load a profile file for ctx.profile, replacing any. FE_OK or FE_EINPUT. */
int fe_engine_set_profile(fe_engine *e, const char *path, fe_error *err);
/* The machine's one-line description; owned by the engine. */
const char *fe_engine_machine_description(const fe_engine *e);

/* End the process when a Lua run stays in one C call past its time limit
 * (for programs that must never hang, such as the fuseeng command). */
void fe_watchdog(void);

/* ---- Models ---- */

/* Parse text[0..len) into d (fe_dimarg, above): the one parser of dims
 * (--dim, the dims text of fe_model_load_file, A/B suites). Values are
 * separated by commas, spaces around one are allowed. FE_OK, or FE_EINPUT
 * with a message saying what is wrong, without the text (callers put
 * "--dim TEXT: " or the like before it). */
int fe_dimarg_parse(const char *text, size_t len, fe_dimarg *d, fe_error *err);
/* FE_OK if the safetensors files (each may be NULL) match m at its dims:
 * weights holds exactly m's weights, inputs its graph inputs, outputs its
 * graph outputs, by name, dtype and shape; else FE_EINPUT naming the file
 * and the tensor (docs/formats.md). */
int fe_model_check_data(const fe_model *m, const char *weights, const char *inputs,
                        const char *outputs, fe_error *err);
/* Value of dim name in m, or 0 if m has no such dim. */
int64_t fe_model_dim(const fe_model *m, const char *name);
/* The path or label the model was loaded from; owned by the model. */
const char *fe_model_file(const fe_model *m);
/* Summary of m (ops, patterns, FLOPs, bytes) as text or JSON; caller frees
 * with fe_free. */
char *fe_model_format(const fe_model *m, int format, fe_error *err);
/* The op registry as a text table, or only op (NULL: all; unknown:
 * FE_EINPUT listing the known ones); caller frees with fe_free. */
char *fe_ops_format(const char *op, fe_error *err);

/* How fe_import_onnx writes its files; zeroed means the defaults. */
typedef struct fe_import_options {
    const char *weights_out;          /* NULL: the model path with .safetensors for .json */
    int ndims;                        /* --dim NAME=V: defaults of symbolic dims (else 1) */
    const char *const *dim_names;
    const int64_t *dim_values;
} fe_import_options;

/* Import the ONNX model at path as a fuseeng.model/1 file at out and its
 * weights as a safetensors file, both replaced or neither (docs/import.md;
 * while it writes them, SIGINT, SIGTERM, SIGHUP and SIGQUIT get a handler
 * that removes its temporary files, then does what the signal did before,
 * and the previous handlers are put back after). *notes (if not NULL)
 * gets the warnings and notes for the user, one per line, or NULL; caller
 * frees it with fe_free, also after an error. FE_OK, or FE_EINPUT naming
 * the file and the node or tensor. */
int fe_import_onnx(const char *path, const char *out, const fe_import_options *o, char **notes,
                   fe_error *err);

/* ---- Plans ---- */

/* What a planning run cost and whether the policy fell back. */
typedef struct fe_plan_stats {
    int64_t hook_calls;        /* Lua hooks called (decide, score, plan, ...) */
    double hook_seconds;       /* time in them (their simulator calls included) */
    int64_t decide_calls;      /* decide hooks called */
    int64_t instructions;      /* Lua instructions used */
    int64_t lua_bytes;         /* the Lua state's memory at the end */
    int rounds;                /* greedy rounds */
    double seconds;            /* the whole run: driver, legality, hooks, simulator calls */
    char fault[1024];          /* "file:LINE: message" when fallback_on_error = "unfused"
                                  dropped the policy's fusions; "" if none */
    int64_t sim_calls;         /* kernels the hooks priced with ctx:simulate* */
    double sim_seconds;        /* time in those calls (part of hook_seconds) */
    int64_t bench_measured;    /* ctx:bench: items timed on the CPU kernels */
    int64_t bench_cached;      /* ctx:bench: answers from the run's kernel cache */
    int64_t bench_fallbacks;   /* ctx:bench: calls refused, the budget spent */
    double bench_seconds;      /* ctx:bench: time spent measuring */
    int64_t decide_reused;     /* greedy: refused pairs of unchanged groups that decide
                                  was not asked about again in later rounds */
    int64_t hook_memo;         /* memo = true: hook answers reused for candidates of a
                                  structure asked about before, without a call */
    int64_t bench_compared;    /* ctx:bench: groups the simulator priced too */
    int64_t bench_agreed;      /* of those, where it agrees that fusing is faster or not */
    char bench_disagree[4][200];   /* the first disagreements: "ops: measured 1.10x,
                                      simulated 0.95x"; "" past the last */
    int64_t profile_compared;  /* ctx.profile:lookup: groups with both profiled times,
                                  priced by the simulator too */
    int64_t profile_agreed;    /* of those, where it agrees that fusing is faster or not */
    char profile_disagree[4][200];   /* the same lines, for the profile's times */
} fe_plan_stats;

/* Plan m with policy p (active in its engine or not), filling stats if not
 * NULL. The plan refers to m; caller frees with fe_plan_free. */
fe_plan *fe_policy_plan(fe_policy *p, const fe_model *m, fe_plan_stats *stats, fe_error *err);
/* The unfused plan of m: one group per node. Caller frees with fe_plan_free. */
fe_plan *fe_model_unfused(const fe_model *m, fe_error *err);
/* Name of the policy that made p (or that its file records), or NULL; owned by p. */
const char *fe_plan_policy(const fe_plan *p);
/* p as text (FE_FORMAT_TEXT: the summary, stats with FE_WITH_STATS and st;
 * FE_FORMAT_DECISIONS; FE_FORMAT_DOT; FE_FORMAT_KERNELS: each group as this
 * CPU's kernels run it, fused programs listed; FE_FORMAT_KERNELS_CUDA: each
 * group's generated CUDA source and launch, with registers and spills when
 * a GPU is present) or as fuseeng.plan/1 JSON whose
 * "summary" adds r's figures (FE_WITH_GROUPS: per group too; FE_WITH_VERSUS:
 * against unfused) and x's execution. st, r, x may be NULL. Caller frees
 * with fe_free. */
char *fe_plan_format(const fe_plan *p, const fe_plan_stats *st, const fe_report *r,
                     const fe_result *x, int format, fe_error *err);

/* ---- Plan files ---- */

/* How to read a plan file (fe_saved_plan_read). */
typedef struct fe_read_options {
    int ndims;                       /* dims overriding the plan's: names[i] = values[i] */
    const char *const *dim_names;
    const int64_t *dim_values;
    const char *machine;             /* machine name or file overriding the plan's (NULL: the
                                        plan's, else the engine's) */
    int ignore_model_name;           /* accept a plan made for another model */
} fe_read_options;

/* Read plan file path for model file model as the plan was made: at the
 * dims and on the machine it records (set as e's machine) unless o says
 * otherwise; refuses a plan for another model unless o->ignore_model_name;
 * checks legality. o may be NULL. Caller frees with fe_saved_plan_free,
 * after the reports and results made from its plan. */
fe_saved_plan *fe_saved_plan_read(fe_engine *e, const char *path, const char *model,
                                  const fe_read_options *o, fe_error *err);
/* The model and the plan; owned by s. */
fe_model *fe_saved_plan_model(const fe_saved_plan *s);
fe_plan *fe_saved_plan_plan(const fe_saved_plan *s);
/* The model the file names when ignore_model_name let it differ, else NULL. */
const char *fe_saved_plan_made_for(const fe_saved_plan *s);
/* For a dispatch table (fuseeng.dispatch/1): the bucket whose plan was read
 * (the smallest at or above the model's value of the table's dim, whose
 * name goes to *dim, owned by s); 0 for a plain plan file. */
int64_t fe_saved_plan_bucket(const fe_saved_plan *s, const char **dim);
/* Where the dims and the machine came from (plan, option, default) as text
 * lines or a JSON object; caller frees with fe_free. */
char *fe_saved_plan_format(const fe_saved_plan *s, int format, fe_error *err);
/* Free s, its model and its plan. */
void fe_saved_plan_free(fe_saved_plan *s);

/* ---- Reports ---- */

/* The report as a text table of plan against unfused (FE_WITH_GROUPS: a line
 * per group), JSON ({"setup" from s if not NULL, "plan", "versus_unfused"}),
 * or a trace of both (labelled by s's file, else the plan's policy).
 * Caller frees with fe_free. */
char *fe_report_format(const fe_report *r, const fe_saved_plan *s, int format, fe_error *err);

/* ---- Dispatch tables (seed 004's DAFE) ----
 * A plan per bucket value of one dim, bucket v serving the values above
 * the bucket before it, up to v. */

/* An empty table over dim (copied). Caller frees with fe_dispatch_free. */
fe_dispatch *fe_dispatch_new(const char *dim, fe_error *err);
/* Add bucket value (above the last one) with the plan made at it and that
 * plan's report; both are borrowed and must outlive the table's use.
 * FE_OK or FE_EINPUT. */
int fe_dispatch_add(fe_dispatch *d, int64_t value, const fe_plan *p, const fe_report *r,
                    fe_error *err);
/* The table as fuseeng.dispatch/1 JSON (FE_WITH_GROUPS: each plan's group
 * figures) or as text: per bucket kernels, simulated time and gain over
 * unfused, then the groups that differ between buckets. Caller frees with
 * fe_free. */
char *fe_dispatch_format(const fe_dispatch *d, int format, fe_error *err);
/* Free the table (not its plans and reports). */
void fe_dispatch_free(fe_dispatch *d);

/* ---- Execution, timing and profiles ---- */

/* Write the reference run's outputs to path as safetensors, named as the
 * model's outputs, whole or not at all. FE_OK or FE_EINPUT / FE_ENOMEM. */
int fe_result_save_outputs(const fe_result *x, const char *path, fe_error *err);
/* The execution as text lines or a JSON object; caller frees with fe_free. */
char *fe_result_format(const fe_result *x, int format, fe_error *err);

/* How to time a plan's groups (fe_plan_time). */
typedef struct fe_timing_options {
    uint64_t seed;             /* random inputs and weights (1) */
    double budget;             /* seconds of repetitions per item (0.2) */
    int totals;                /* also time the plan and the unfused plan end to end */
    const char *weights;       /* safetensors files of weights and inputs (NULL: random) */
    const char *inputs;
    int device;                /* FE_DEVICE_CPU or FE_DEVICE_CUDA (CPU); on CUDA the totals
                                  are also timed with both plans replayed as CUDA graphs */
} fe_timing_options;

/* What fe_timing_write_profile wrote. */
typedef struct fe_profile_info {
    int single;                /* entries for single ops */
    int fused;                 /* entries for fused groups */
    int groups;                /* groups of two or more nodes measured */
} fe_profile_info;

/* Time every group of p (as one kernel and member by member) and every op
 * on this CPU. o may be NULL. Refers to p; caller frees with fe_timing_free. */
fe_timing *fe_plan_time(const fe_plan *p, const fe_timing_options *o, fe_error *err);
/* The timings as text tables or fuseeng.bench/1 JSON; label names the plan.
 * Caller frees with fe_free. */
char *fe_timing_format(const fe_timing *t, const char *label, int format, fe_error *err);
/* Write the timings as a profile file (InfiniCore's form plus exact keys);
 * info, if not NULL, gets the counts. FE_OK or an error. */
int fe_timing_write_profile(const fe_timing *t, const char *path, fe_profile_info *info,
                            fe_error *err);
/* Free the timings. */
void fe_timing_free(fe_timing *t);
/* "2 threads, passive waits": how the kernels run here; static storage. */
const char *fe_threads(void);

/* ---- Comparing policies ---- */

/* Policies compared on models (fe_engine_ab). */
typedef struct fe_ab_options {
    int nmodels;                      /* model files */
    const char *const *models;
    int npolicies;                    /* loaded policies (at least one) */
    fe_policy *const *policies;
    int ndims;                        /* dims set in every model that has them */
    const char *const *dim_names;
    const int64_t *dim_values;
    int measure;                      /* also run every plan on this CPU and check it */
    double budget;                    /* seconds of timed runs per plan (0.5) */
} fe_ab_options;

/* A suite for fe_engine_ab_suite given as lists (fe_ab_suite_new). A policy
 * spec is a name or file, "NAME{K=V,K=V}" (with parameters) or
 * "HOW(SPEC,SPEC,...)" (a combination: all, any, chain, vote). */
typedef struct fe_ab_suite_options {
    int nmodels;                      /* model files or globs */
    const char *const *models;
    int npolicies;                    /* policy specs; the first is the baseline */
    const char *const *policies;
    int nparams;                      /* "K=V" set in every policy that has K */
    const char *const *params;
    int ndims;                        /* "NAME=V" or a sweep "NAME=V1,V2,..." in every model */
    const char *const *dims;          /* that has NAME */
    int nmachines;                    /* machine names or files (none: the engine's) */
    const char *const *machines;
    fe_policy *optimal;               /* the run's optimum policy (fe_ab_run_options.optimal),
                                         or NULL: it takes the parameters too, and one only it
                                         has is not an error (not owned) */
} fe_ab_suite_options;

/* How to run a suite (fe_engine_ab_suite). */
typedef struct fe_ab_run_options {
    int measure;                      /* also run the plans on this CPU, interleaved */
    double budget;                    /* seconds of timed rounds per row and policy (0.5) */
    int reps;                         /* timed rounds per row (0: as many as budget allows, 5..200) */
    int shard, nshards;               /* run rows i-1, i-1+n, ... (1 <= i <= n); 0, 0: all */
    int traces;                       /* keep each plan's trace and diffs (FE_FORMAT_HTML) */
    const char *weights;              /* with measure: safetensors files of weights and inputs */
    const char *inputs;               /* (NULL: random), matching every model */
    int device;                       /* with measure: FE_DEVICE_CPU or FE_DEVICE_CUDA (CPU) */
    fe_policy *optimal;               /* also plan every row with this policy (the optimal
                                         one, policies/optimal.lua): its simulated time is the
                                         optimum each cell's gap is given against; NULL: none */
    int ntruths;                      /* truth files (docs/formats.md) each plan is held */
    const char *const *truths;        /* against: pairwise agreement, kernels that differ */
} fe_ab_run_options;

/* Plan every model with every policy on e's machine (and with measure, on
 * this CPU). Caller frees with fe_ab_free. */
fe_ab *fe_engine_ab(fe_engine *e, const fe_ab_options *o, fe_error *err);
/* The comparison as text, JSON, CSV, Markdown, HTML, SVG or a shard's part
 * file; caller frees with fe_free. */
char *fe_ab_format(const fe_ab *ab, int format, fe_error *err);
/* Plans whose results differed from the reference (with measure). */
int fe_ab_wrong(const fe_ab *ab);
/* Cells whose policy failed on the model (each says why in the table). */
int fe_ab_failed(const fe_ab *ab);
/* Faults of policies that fell back to unfused, in run order; owned by ab. */
int fe_ab_faults(const fe_ab *ab);
const char *fe_ab_fault(const fe_ab *ab, int i);
/* The command line the report says made it (copied; the reports' other
 * provenance, date and host, is filled when the comparison runs). */
void fe_ab_set_command(fe_ab *ab, const char *command);
/* Keep the plans' traces out of the HTML page: it links each to
 * link_dir/rowR-C.trace.json (relative to the page), and
 * fe_ab_write_traces writes them into dir (made if need be). FE_OK, or
 * FE_ERUNTIME naming the file that could not be written. */
void fe_ab_link_traces(fe_ab *ab, const char *link_dir);
int fe_ab_write_traces(const fe_ab *ab, const char *dir, fe_error *err);
/* Free the comparison. */
void fe_ab_free(fe_ab *ab);

/* A suite from lists, checked whole before any planning (files, globs,
 * dims, machines, policies, parameters). Caller frees with fe_ab_suite_free
 * (before the engine). */
fe_ab_suite *fe_ab_suite_new(fe_engine *e, const fe_ab_suite_options *o, fe_error *err);
/* A suite file (.json, or .lua returning the same table, run in e's
 * sandbox under e's Lua limits), checked whole;
 * the machines of over (may be NULL) replace the file's, its params and
 * dims add to the file's top-level ones. Errors name the file and the
 * place ("suite.json: models[1].dims.S[2]: ..."). Caller frees. */
fe_ab_suite *fe_ab_suite_read(fe_engine *e, const char *path, const fe_ab_suite_options *over,
                              fe_error *err);
/* Rows (model x dims x machine) and columns (policies) of s. */
int fe_ab_suite_rows(const fe_ab_suite *s);
int fe_ab_suite_cols(const fe_ab_suite *s);
/* Free the suite (before its engine). */
void fe_ab_suite_free(fe_ab_suite *s);
/* Run suite s (its shard, with o->nshards) on e; a policy that fails on a
 * model fails only its cell. o may be NULL. Caller frees with fe_ab_free. */
fe_ab *fe_engine_ab_suite(fe_engine *e, const fe_ab_suite *s, const fe_ab_run_options *o,
                          fe_error *err);
/* Merge shard files (FE_FORMAT_PART) of one suite into the whole result:
 * every shard once, all of the same suite. Caller frees with fe_ab_free. */
fe_ab *fe_ab_merge(int n, const char *const *paths, fe_error *err);
/* Progress of long work (bench, profile, ab --measure, import): a line on
 * stderr with an estimate of the time left, only when stderr is a terminal
 * and never after fe_progress_set_quiet(1). Process-wide. */
void fe_progress_set_quiet(int quiet);
/* From now on the first Ctrl-C stops long work between its steps, which
 * keeps what it finished (fe_timing_interrupted, fe_ab_interrupted say
 * so); a second one ends the process. */
void fe_progress_catch_ctrl_c(void);
/* Whether a timing or a comparison was cut short by Ctrl-C. */
int fe_timing_interrupted(const fe_timing *t);
int fe_ab_interrupted(const fe_ab *ab);

/* " (did you mean 'x'?)" into hint for the name of list (names separated
 * by commas and spaces) nearest key, within two edits (a swap of
 * neighbours is one), or "" if none is that close; returns hint. The
 * engine's one edit distance: every "did you mean" uses it. */
const char *fe_did_you_mean(const char *key, const char *list, char *hint, size_t size);

/* The commit fuseeng was built from ("abc123def456", "-dirty" when the
 * tree differed from it, "unknown" without git); static. */
const char *fe_build_commit(void);

/* Measuring a device into a machine file (fe_calibrate_machine). */
typedef struct fe_calibrate_options {
    int device;                       /* FE_DEVICE_CPU or FE_DEVICE_CUDA */
    double budget;                    /* seconds of repetitions per probe (0.25) */
    const char *name;                 /* the machine's name (NULL: "host" or "cuda") */
    int progress;                     /* 1: a progress line on stderr */
} fe_calibrate_options;

/* Measure the device with the engine's own kernels and return a machine
 * file (Lua) whose every figure carries a comment saying how it was
 * measured and its spread (docs/fidelity.md). Caller frees with fe_free. */
char *fe_calibrate_machine(const fe_calibrate_options *o, fe_error *err);

/* How well the simulator predicted a measured comparison (fe_ab_fidelity;
 * docs/fidelity.md defines every figure). NaN where a figure has no data. */
typedef struct fe_fidelity_summary {
    int models, plans, failed;        /* rows; distinct measured plans; cells without one */
    int tied;                         /* models whose plans the device cannot tell apart */
    int rho_models;                   /* models with a rank correlation (3+ plans, not tied) */
    double mean_rho;                  /* the mean of their Spearman rank correlations */
    double median_abs_err;            /* median |simulated - measured| / measured, all plans */
    int pick_models, pick_hits;       /* models (2+ plans, not tied); where the simulator's */
    double pick_rate;                 /*   fastest plan is the measured best (its interval) */
    int optimal_models, optimal_best; /* models (not tied) with an "optimal" column measured;
                                         where its plan is the measured best (its interval) */
} fe_fidelity_summary;

typedef struct fe_fidelity fe_fidelity;

/* The fidelity of ab, which must have been measured; it refers to ab, so
 * free it first. Caller frees with fe_fidelity_free. */
fe_fidelity *fe_ab_fidelity(const fe_ab *ab, fe_error *err);
/* Its summary into *out. */
void fe_fidelity_summarise(const fe_fidelity *f, fe_fidelity_summary *out);
/* As text, JSON (fuseeng.fidelity/1) or an SVG scatter; caller frees with fe_free. */
char *fe_fidelity_format(const fe_fidelity *f, int format, fe_error *err);
void fe_fidelity_free(fe_fidelity *f);
/* The groups that differ between the plans of policies a and b for model
 * (with dims "S=512" or NULL) on e's machine: the decisions that made each,
 * and each difference simulated. Text or JSON; caller frees with fe_free. */
char *fe_engine_ab_diff(fe_engine *e, const char *model, const char *dims, fe_policy *a,
                        fe_policy *b, int format, fe_error *err);

/* ---- Scripts ---- */

/* Run the Lua file path in the policy sandbox under limits (NULL: the
 * defaults) with arg = {[0] = path, args...}; *status gets the integer it
 * returns, else 0. FE_OK, or the error (FE_EINPUT for a Lua error). */
int fe_script_run(const char *path, int nargs, const char *const *args,
                  const fe_engine_options *limits, int *status, fe_error *err);

/* FE_API_END */

#ifdef __cplusplus
}
#endif

#endif
