/* fuseeng.h: the public C API of fuseeng, a Lua-scriptable operator-fusion
 * policy engine.
 *
 * An engine holds a sandboxed Lua state in which policies are loaded,
 * combined and swapped; a model is a validated graph; running the engine's
 * active policy on a model gives a plan, which can be written as JSON.
 * The second half of the API block is everything the fuseeng command does
 * (it uses nothing else): plan files read for a model, simulation against
 * the unfused plan, execution against the reference, timing and profiles,
 * policy comparison, scripts. docs/c-api.md is the reference.
 *
 *     fe_error err;
 *     fe_engine *e = fe_engine_new(NULL, &err);
 *     fe_model *m = fe_model_load_file("llama2_7b_layer.json", NULL, &err);
 *     fe_policy *p = fe_engine_load_policy(e, "static_rules", &err);
 *     fe_engine_use(e, p, &err);
 *     fe_plan *plan = fe_engine_plan(e, m, &err);
 *     char *json = fe_plan_to_json(plan, &err);
 *     ... fe_free(json); fe_plan_free(plan); fe_policy_free(p);
 *     fe_model_free(m); fe_engine_free(e);
 *
 * The block between the FE_API_BEGIN and FE_API_END lines holds only plain
 * C declarations (no macros, no inline code), so LuaJIT can feed it to
 * ffi.cdef unchanged. Ownership: every pointer returned by a function is
 * owned by the object it came from (and valid until that object is freed)
 * unless the comment says "caller frees", in which case the fe_*_free or
 * fe_free function named there releases it. Functions that can fail take
 * an fe_error (which may be NULL) and return NULL or a nonzero code.
 */
#ifndef FUSEENG_H
#define FUSEENG_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* FE_API_BEGIN */

/* Error codes. The CLI exits with 2 for FE_EINPUT and 1 for the others. */
enum {
    FE_OK = 0,
    FE_ERUNTIME = 1,   /* the engine failed while doing what was asked */
    FE_EINPUT = 2,     /* bad input: model, plan, policy, option or usage */
    FE_ENOMEM = 3,     /* an allocation failed */
    FE_ECHECK = 4      /* a numeric check failed (fused != reference) */
};

/* Every call that can fail takes an fe_error; on failure it holds the code
 * and one message naming the file, the place and what to fix. */
typedef struct fe_error {
    int code;
    char message[1024];
} fe_error;

typedef struct fe_engine fe_engine;   /* Lua state, policies, machine */
typedef struct fe_model fe_model;     /* a validated graph */
typedef struct fe_policy fe_policy;   /* a policy loaded in an engine */
typedef struct fe_plan fe_plan;       /* groups, decisions, figures */

/* Engine options; zero means the default. */
typedef struct fe_engine_options {
    int64_t max_instructions;   /* Lua instructions per run (2e9) */
    int64_t max_memory;         /* bytes the Lua state may hold (512 MiB) */
    const char *home;           /* directory with lua/ and policies/ (found) */
    const char *machine;        /* machine name or file (gcu) */
    double bench_budget;        /* seconds ctx:bench may measure per run (60) */
    double max_seconds;         /* wall-clock seconds per run, loading included (300); see
                                   docs/policy-guide.md (the sandbox) for what it cannot stop */
    const char *weights;        /* safetensors files ctx:bench fills weights and inputs from */
    const char *inputs;         /* (NULL: seeded random; see fe_model_check_data) */
} fe_engine_options;

/* Version string of the library, e.g. "0.1.0"; static storage. */
const char *fe_version(void);

/* Release memory returned as "caller frees with fe_free". */
void fe_free(void *p);

/* Copy src into dst (size bytes, always terminated, truncated if need be)
 * with each control character written as \xNN, so that text from an input
 * file cannot move the cursor, recolour or split a line of a terminal:
 * C0 and DEL bytes, and the C1 controls U+0080..U+009F. keep_lines keeps
 * '\n' and '\t'. Returns the length of dst. Every fe_error message and
 * every text result of this library is escaped this way already. */
size_t fe_escape(char *dst, size_t size, const char *src, int keep_lines);

/* A new engine (caller frees with fe_engine_free), or NULL. opts may be NULL. */
fe_engine *fe_engine_new(const fe_engine_options *opts, fe_error *err);
/* Frees the engine and its Lua state. Free its policies and plans first. */
void fe_engine_free(fe_engine *e);

/* Load a model file or a JSON buffer; dims is NULL or "B=8,S=4096" (dim
 * overrides). Caller frees with fe_model_free. label names a buffer in
 * messages. */
fe_model *fe_model_load_file(const char *path, const char *dims, fe_error *err);
fe_model *fe_model_load_buffer(const char *json, size_t len, const char *label,
                               const char *dims, fe_error *err);
void fe_model_free(fe_model *m);
/* The model's name; owned by the model. */
const char *fe_model_name(const fe_model *m);
int fe_model_nodes(const fe_model *m);

/* Load a policy by name (resolved in policies/) or path, or from Lua
 * source. Caller frees with fe_policy_free (before the engine). */
fe_policy *fe_engine_load_policy(fe_engine *e, const char *name_or_path, fe_error *err);
fe_policy *fe_engine_load_policy_buffer(fe_engine *e, const char *source, size_t len,
                                        const char *label, fe_error *err);
/* Combine policies: how is "all", "any", "chain" or "vote". The result is
 * a new policy (caller frees); the inputs stay usable. */
fe_policy *fe_engine_combine(fe_engine *e, const char *how, fe_policy *const *policies,
                             int n, fe_error *err);
/* Override a parameter ("margin", "0.2"), typed by its default. */
int fe_policy_set_param(fe_policy *p, const char *key, const char *value, fe_error *err);
/* Name, driver and one-line description; owned by the policy. */
const char *fe_policy_name(const fe_policy *p);
const char *fe_policy_driver(const fe_policy *p);
const char *fe_policy_description(const fe_policy *p);
/* The document and section the policy reproduces ("" if it does not say);
 * owned by the policy. */
const char *fe_policy_source(const fe_policy *p);
void fe_policy_free(fe_policy *p);

/* Make p the engine's active policy (swapping out the previous one). */
int fe_engine_use(fe_engine *e, fe_policy *p, fe_error *err);

/* Run the active policy on m. The plan refers to m: free the plan first.
 * Caller frees with fe_plan_free. */
fe_plan *fe_engine_plan(fe_engine *e, const fe_model *m, fe_error *err);

/* The plan as fuseeng.plan/1 JSON; caller frees with fe_free. */
char *fe_plan_to_json(const fe_plan *p, fe_error *err);
int fe_plan_groups(const fe_plan *p);
int fe_plan_group_size(const fe_plan *p, int group);
/* Name of the k-th node of a group; owned by the plan's model. */
const char *fe_plan_group_node(const fe_plan *p, int group, int k);
int fe_plan_decisions(const fe_plan *p);
void fe_plan_free(fe_plan *p);

/* ---- Everything the fuseeng command does (core/api) ----
 *
 * Handles below are opaque; each is freed by its own fe_*_free, which
 * accepts NULL. Results meant for people or files come back as text the
 * caller frees with fe_free, in the format a *_format call is asked for:
 * one FE_FORMAT_* value, ORed with FE_WITH_* flags where the call says.
 * Array options are a count and pointers; zero or NULL means the default. */

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
    FE_FORMAT_MASK = 15,
    FE_WITH_GROUPS = 16,       /* add each group's simulated figures */
    FE_WITH_STATS = 32,        /* fe_plan_format text: the run's Lua statistics */
    FE_WITH_VERSUS = 64        /* fe_plan_format JSON: the comparison with unfused */
};

/* What a planning run cost and whether the policy fell back. */
typedef struct fe_plan_stats {
    int64_t hook_calls;        /* Lua hooks called (decide, score, plan, ...) */
    double hook_seconds;       /* time in them (their simulator calls included) */
    int64_t decide_calls;
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
} fe_plan_stats;

/* Simulated figures of a whole plan (fe_report_figures). */
typedef struct fe_figures {
    double time_s;             /* simulated time */
    int kernels;               /* generated kernels (not extern calls, not view groups),
                                  layout copies included */
    int tiled;                 /* groups split into tiles */
    int64_t l3_bytes;          /* traffic to the large slow memory */
    int64_t l2_peak;           /* largest working set of a group in L2 */
    int64_t mem_peak;          /* device-memory peak over the schedule */
    int64_t spill_bytes;       /* register spill traffic */
    int extern_calls;          /* library calls: a lone matmul, conv2d or sdpa */
    int views;                 /* groups of views only: they launch nothing */
    int copies;                /* layout copies (a policy's copies hook, a plan file's
                                  "copies"): part of kernels */
} fe_figures;

/* How to read a plan file (fe_saved_plan_read). */
typedef struct fe_read_options {
    int ndims;                       /* dims overriding the plan's: names[i] = values[i] */
    const char *const *dim_names;
    const int64_t *dim_values;
    const char *machine;             /* machine name or file overriding the plan's (NULL: the
                                        plan's, else the engine's) */
    int ignore_model_name;           /* accept a plan made for another model */
} fe_read_options;

/* How to execute a plan on this CPU (fe_plan_execute). */
typedef struct fe_execute_options {
    uint64_t seed;             /* random inputs and weights (1) */
    double budget;             /* seconds of timed runs per measurement (0.5) */
    double rtol;               /* one relative tolerance for every output (by dtype:
                                  f32 1e-4, f16 1e-2, bf16 5e-2) */
    int no_timing;             /* only compare the numbers */
    const char *weights;       /* safetensors file of the model's weights (NULL: random) */
    const char *inputs;        /* safetensors file of the graph inputs (NULL: random) */
    const char *expect;        /* safetensors file of outputs to compare both runs with */
    double expect_rtol;        /* tolerance against expect (by output: f32 1e-3, f16 1e-2,
                                  bf16 5e-2) */
} fe_execute_options;

/* How to time a plan's groups (fe_plan_time). */
typedef struct fe_timing_options {
    uint64_t seed;             /* random inputs and weights (1) */
    double budget;             /* seconds of repetitions per item (0.2) */
    int totals;                /* also time the plan and the unfused plan end to end */
    const char *weights;       /* safetensors files of weights and inputs (NULL: random) */
    const char *inputs;
} fe_timing_options;

/* What fe_timing_write_profile wrote. */
typedef struct fe_profile_info {
    int single;                /* entries for single ops */
    int fused;                 /* entries for fused groups */
    int groups;                /* groups of two or more nodes measured */
} fe_profile_info;

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
} fe_ab_run_options;

typedef struct fe_ab_suite fe_ab_suite;       /* models x dims x machines, policy columns */
typedef struct fe_saved_plan fe_saved_plan;   /* a plan file read for a model */
typedef struct fe_report fe_report;           /* a plan and the unfused plan, simulated */
typedef struct fe_result fe_result;           /* a plan executed against the reference */
typedef struct fe_timing fe_timing;           /* a plan's groups and ops timed */
typedef struct fe_ab fe_ab;                   /* policies compared on models */

/* Put text before err's message ("model.json: "), keeping its code; does
 * nothing when err is NULL or holds no error. */
void fe_error_prepend(fe_error *err, const char *text);

/* Path of the directory holding lua/ and policies/; owned by the engine. */
const char *fe_engine_home(const fe_engine *e);
/* Set the Lua limits of the runs that follow (max_instructions, max_memory,
 * max_seconds of o; zero keeps the current one). */
void fe_engine_set_limits(fe_engine *e, const fe_engine_options *o);
/* Replace the machine plans are made and simulated for. FE_OK or FE_EINPUT. */
int fe_engine_set_machine(fe_engine *e, const char *name_or_path, fe_error *err);
/* Load a profile file for ctx.profile, replacing any. FE_OK or FE_EINPUT. */
int fe_engine_set_profile(fe_engine *e, const char *path, fe_error *err);
/* The machine's name and one-line description; owned by the engine. */
const char *fe_engine_machine(const fe_engine *e);
const char *fe_engine_machine_description(const fe_engine *e);

/* Load a model file with dims names[i] = values[i] (n may be 0); caller
 * frees with fe_model_free. */
fe_model *fe_model_load_dims(const char *path, int n, const char *const *names,
                             const int64_t *values, fe_error *err);
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
 * and the previous handlers are put back after). *notes (if
 * not NULL) gets the warnings and notes for the user, one per line, or
 * NULL; caller frees it with fe_free, also after an error. FE_OK, or
 * FE_EINPUT naming the file and the node or tensor. */
int fe_import_onnx(const char *path, const char *out, const fe_import_options *o, char **notes,
                   fe_error *err);

/* Plan m with policy p (active in its engine or not), filling stats if not
 * NULL. The plan refers to m; caller frees with fe_plan_free. */
fe_plan *fe_policy_plan(fe_policy *p, const fe_model *m, fe_plan_stats *stats, fe_error *err);
/* The unfused plan of m: one group per node. Caller frees with fe_plan_free. */
fe_plan *fe_model_unfused(const fe_model *m, fe_error *err);
/* Name of the policy that made p (or that its file records), or NULL; owned by p. */
const char *fe_plan_policy(const fe_plan *p);
/* p as text (FE_FORMAT_TEXT: the summary, stats with FE_WITH_STATS and st;
 * FE_FORMAT_DECISIONS; FE_FORMAT_DOT; FE_FORMAT_KERNELS: each group as this
 * CPU's kernels run it, fused programs listed) or as fuseeng.plan/1 JSON whose
 * "summary" adds r's figures (FE_WITH_GROUPS: per group too; FE_WITH_VERSUS:
 * against unfused) and x's execution. st, r, x may be NULL. Caller frees
 * with fe_free. */
char *fe_plan_format(const fe_plan *p, const fe_plan_stats *st, const fe_report *r,
                     const fe_result *x, int format, fe_error *err);

/* Write text to path whole or not at all (a temporary file renamed into
 * place); what names it in messages ("the plan"). FE_OK or FE_EINPUT. */
int fe_write_file(const char *path, const char *what, const char *text, fe_error *err);

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
void fe_saved_plan_free(fe_saved_plan *s);

/* Simulate p and the unfused plan of its model on e's machine. The report
 * refers to p; caller frees with fe_report_free. */
fe_report *fe_engine_simulate(fe_engine *e, const fe_plan *p, fe_error *err);
/* Totals of the plan (unfused = 0) or of the unfused plan (1) into out. */
void fe_report_figures(const fe_report *r, int unfused, fe_figures *out);
/* The report as a text table of plan against unfused (FE_WITH_GROUPS: a line
 * per group), JSON ({"setup" from s if not NULL, "plan", "versus_unfused"}),
 * or a trace of both (labelled by s's file, else the plan's policy).
 * Caller frees with fe_free. */
char *fe_report_format(const fe_report *r, const fe_saved_plan *s, int format, fe_error *err);
void fe_report_free(fe_report *r);

/* A dispatch table (seed 004's DAFE): a plan per bucket value of one dim,
 * bucket v serving the values above the bucket before it, up to v. */
typedef struct fe_dispatch fe_dispatch;
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
void fe_dispatch_free(fe_dispatch *d);

/* Run p and its unfused reference on this CPU's kernels on the same seeded
 * inputs, compare every output and time both. A result comes back whether
 * or not the numbers agree (fe_result_check). o may be NULL. The result
 * refers to p; caller frees with fe_result_free. */
fe_result *fe_plan_execute(const fe_plan *p, const fe_execute_options *o, fe_error *err);
/* 1 if every output is within tolerance of the reference. */
int fe_result_ok(const fe_result *x);
/* Write the reference run's outputs to path as safetensors, named as the
 * model's outputs, whole or not at all. FE_OK or FE_EINPUT / FE_ENOMEM. */
int fe_result_save_outputs(const fe_result *x, const char *path, fe_error *err);
/* FE_OK, or FE_ECHECK naming the first output outside tolerance (of the
 * reference, then of o->expect's outputs). */
int fe_result_check(const fe_result *x, fe_error *err);
/* The execution as text lines or a JSON object; caller frees with fe_free. */
char *fe_result_format(const fe_result *x, int format, fe_error *err);
/* Measured medians in ms of the plan (unfused = 0) or the reference (1); 0 untimed. */
double fe_result_ms(const fe_result *x, int unfused);
void fe_result_free(fe_result *x);

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
void fe_timing_free(fe_timing *t);
/* "2 threads, passive waits": how the kernels run here; static storage. */
const char *fe_threads(void);

/* Plan every model with every policy on e's machine (and with measure, on
 * this CPU). Caller frees with fe_ab_free. */
fe_ab *fe_engine_ab(fe_engine *e, const fe_ab_options *o, fe_error *err);
/* The comparison as text, JSON, CSV or SVG; caller frees with fe_free. */
char *fe_ab_format(const fe_ab *ab, int format, fe_error *err);
/* Plans whose results differed from the reference (with measure). */
int fe_ab_wrong(const fe_ab *ab);
/* Cells whose policy failed on the model (each says why in the table). */
int fe_ab_failed(const fe_ab *ab);
/* Faults of policies that fell back to unfused, in run order; owned by ab. */
int fe_ab_faults(const fe_ab *ab);
const char *fe_ab_fault(const fe_ab *ab, int i);
void fe_ab_free(fe_ab *ab);

/* A suite from lists, checked whole before any planning (files, globs,
 * dims, machines, policies, parameters). Caller frees with fe_ab_suite_free
 * (before the engine). */
fe_ab_suite *fe_ab_suite_new(fe_engine *e, const fe_ab_suite_options *o, fe_error *err);
/* A suite file (.json, or .lua returning the same table), checked whole;
 * the machines of over (may be NULL) replace the file's, its params and
 * dims add to the file's top-level ones. Errors name the file and the
 * place ("suite.json: models[1].dims.S[2]: ..."). Caller frees. */
fe_ab_suite *fe_ab_suite_read(fe_engine *e, const char *path, const fe_ab_suite_options *over,
                              fe_error *err);
/* Rows (model x dims x machine) and columns (policies) of s. */
int fe_ab_suite_rows(const fe_ab_suite *s);
int fe_ab_suite_cols(const fe_ab_suite *s);
void fe_ab_suite_free(fe_ab_suite *s);
/* Run suite s (its shard, with o->nshards) on e; a policy that fails on a
 * model fails only its cell. o may be NULL. Caller frees with fe_ab_free. */
fe_ab *fe_engine_ab_suite(fe_engine *e, const fe_ab_suite *s, const fe_ab_run_options *o,
                          fe_error *err);
/* Merge shard files (FE_FORMAT_PART) of one suite into the whole result:
 * every shard once, all of the same suite. Caller frees with fe_ab_free. */
fe_ab *fe_ab_merge(int n, const char *const *paths, fe_error *err);
/* The groups that differ between the plans of policies a and b for model
 * (with dims "S=512" or NULL) on e's machine: the decisions that made each,
 * and each difference simulated. Text or JSON; caller frees with fe_free. */
char *fe_engine_ab_diff(fe_engine *e, const char *model, const char *dims, fe_policy *a,
                        fe_policy *b, int format, fe_error *err);

/* Run the Lua file path in the policy sandbox under limits (NULL: the
 * defaults) with arg = {[0] = path, args...}; *status gets the integer it
 * returns, else 0. FE_OK, or the error (FE_EINPUT for a Lua error). */
int fe_script_run(const char *path, int nargs, const char *const *args,
                  const fe_engine_options *limits, int *status, fe_error *err);

/* End the process when a Lua run stays in one C call past its time limit
 * (for programs that must never hang, such as the fuseeng command). */
void fe_watchdog(void);

/* FE_API_END */

#ifdef __cplusplus
}
#endif

#endif
