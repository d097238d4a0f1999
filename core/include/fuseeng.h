/* fuseeng.h: the embedding API of fuseeng, a Lua-scriptable operator-fusion
 * policy engine: what a host program needs to load models, plan them with
 * policies, simulate the plans and execute them. docs/c-api.md is the
 * reference; fuseeng_cli.h adds everything else the fuseeng command does.
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
 * Stability: this header changes only by addition. No call is removed or
 * changes its signature or meaning, and a struct gains fields only at its
 * end, zero meaning the old behaviour; so a program that compiles against
 * it compiles against later versions (rebuild it: a grown struct changes
 * size). fuseeng_cli.h makes no such promise.
 *
 * Ownership: every pointer a function returns is owned by the object it
 * came from (and valid until that object is freed) unless the comment says
 * "caller frees", in which case the fe_*_free or fe_free function named
 * there releases it. Every fe_*_free accepts NULL. Free a handle before
 * the ones it refers to: policies before their engine, plans before their
 * model, reports and results before their plan.
 *
 * Errors: a function that can fail takes an fe_error (which may be NULL)
 * and returns NULL or a nonzero code; the error then holds the code and one
 * message naming the file, the place and what to fix.
 *
 * FFI: the blocks between FE_API_BEGIN and FE_API_END hold only plain C
 * declarations (no macros, no inline code), so that LuaJIT can feed them to
 * ffi.cdef unchanged, every block in order (examples/ffi_demo.lua).
 */
#ifndef FUSEENG_H
#define FUSEENG_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The error type. The engine's own headers define the same codes and
 * struct (core/ir/error.h, their owner) under the same guard, so that a
 * file which sees both gets one definition; core/api/api_abi.c checks at
 * compile time that the two agree. This header stays whole for users. */
#ifndef FE_ERROR_DEFINED
#define FE_ERROR_DEFINED
/* FE_API_BEGIN */

/* Error codes. The fuseeng command exits with 2 for FE_EINPUT and 1 for
 * the others. */
enum {
    FE_OK = 0,         /* success */
    FE_ERUNTIME = 1,   /* the engine failed while doing what was asked */
    FE_EINPUT = 2,     /* bad input: model, plan, policy, option, a NULL argument */
    FE_ENOMEM = 3,     /* an allocation failed */
    FE_ECHECK = 4      /* a numeric check failed (a plan's results differ from the reference) */
};

/* What went wrong: the code and one message ("model.json:3:7: ..."), its
 * control characters escaped (fe_escape). */
typedef struct fe_error {
    int code;            /* FE_OK or one of the codes above */
    char message[1024];  /* "" when code is FE_OK */
} fe_error;

/* FE_API_END */
#endif

/* FE_API_BEGIN */

/* ---- Handles (opaque) ---- */

typedef struct fe_engine fe_engine;   /* a sandboxed Lua state, its policies and machine */
typedef struct fe_model fe_model;     /* a validated graph at its dims */
typedef struct fe_policy fe_policy;   /* a policy loaded in an engine */
typedef struct fe_plan fe_plan;       /* the groups a policy made of a model, and why */
typedef struct fe_report fe_report;   /* a plan and its model's unfused plan, simulated */
typedef struct fe_result fe_result;   /* a plan executed against the unfused reference */

/* ---- The library ---- */

/* The library's version, e.g. "0.1.0"; static storage. */
const char *fe_version(void);

/* Free memory returned as "caller frees with fe_free" (NULL: nothing). */
void fe_free(void *p);

/* Copy src into dst (size bytes, always terminated, truncated if need be)
 * with each control character written as \xNN, so that text from an input
 * file cannot move the cursor, recolour or split a line of a terminal:
 * C0 and DEL bytes, and the C1 controls U+0080..U+009F. keep_lines keeps
 * '\n' and '\t'. Returns the length of dst. Every fe_error message and
 * every text result of this library is escaped this way already. */
size_t fe_escape(char *dst, size_t size, const char *src, int keep_lines);

/* ---- Engines ---- */

/* How to make an engine (fe_engine_new). A zero field means its default,
 * given in parentheses. */
typedef struct fe_engine_options {
    int64_t max_instructions;   /* Lua instructions per run (2e9) */
    int64_t max_memory;         /* bytes the Lua state may hold (512 MiB) */
    const char *home;           /* directory with lua/ and policies/ (found) */
    const char *machine;        /* machine name or file (gcu) */
    double bench_budget;        /* seconds ctx:bench may measure per run (60) */
    double max_seconds;         /* wall-clock seconds per run, loading included (300); see
                                   docs/policy-guide.md (the sandbox) for what it cannot stop */
    const char *weights;        /* safetensors files ctx:bench fills weights and inputs from */
    const char *inputs;         /* (NULL: seeded random) */
    int bench_device;           /* FE_DEVICE_CPU or FE_DEVICE_CUDA: where ctx:bench measures (CPU) */
} fe_engine_options;

/* A new engine with the policy library loaded, or NULL; opts may be NULL
 * (all defaults). Caller frees with fe_engine_free. FE_EINPUT for a bad
 * machine or home. */
fe_engine *fe_engine_new(const fe_engine_options *opts, fe_error *err);
/* Free the engine and its Lua state. Free its policies first. */
void fe_engine_free(fe_engine *e);

/* Replace the machine plans are made and simulated for: a name in
 * lua/machines or a machine file. FE_OK, or FE_EINPUT naming the file and
 * the field. */
int fe_engine_set_machine(fe_engine *e, const char *name_or_path, fe_error *err);
/* The machine's name; owned by the engine (until the machine changes). */
const char *fe_engine_machine(const fe_engine *e);

/* ---- Models ---- */

/* Load a fuseeng.model/1 file; dims is NULL or "B=8,S=4096" (overriding
 * the file's defaults). Caller frees with fe_model_free. FE_EINPUT names
 * the file and the place. */
fe_model *fe_model_load_file(const char *path, const char *dims, fe_error *err);
/* The same from the JSON text json[0..len); label names it in messages. */
fe_model *fe_model_load_buffer(const char *json, size_t len, const char *label,
                               const char *dims, fe_error *err);
/* The same with n dims given as arrays: names[i] = values[i]. */
fe_model *fe_model_load_dims(const char *path, int n, const char *const *names,
                             const int64_t *values, fe_error *err);
/* Free the model. Free its plans first. */
void fe_model_free(fe_model *m);
/* The model's name; owned by the model. */
const char *fe_model_name(const fe_model *m);
/* Its number of nodes. */
int fe_model_nodes(const fe_model *m);

/* ---- Policies ---- */

/* Load a policy: a name (policies/NAME.lua of the engine's home) or a
 * file. Its file runs once in the sandbox and must return fe.policy{...}.
 * Caller frees with fe_policy_free. FE_EINPUT with "file:LINE: message". */
fe_policy *fe_engine_load_policy(fe_engine *e, const char *name_or_path, fe_error *err);
/* The same from Lua source[0..len); label names it in messages. */
fe_policy *fe_engine_load_policy_buffer(fe_engine *e, const char *source, size_t len,
                                        const char *label, fe_error *err);
/* Combine n policies of e: how is "all", "any", "chain" or "vote". The
 * result is a new policy (caller frees); the inputs stay usable. */
fe_policy *fe_engine_combine(fe_engine *e, const char *how, fe_policy *const *policies,
                             int n, fe_error *err);
/* Override a parameter of p ("margin", "0.2"), typed by its default.
 * FE_OK, or FE_EINPUT for an unknown key or a value of the wrong type. */
int fe_policy_set_param(fe_policy *p, const char *key, const char *value, fe_error *err);
/* The policy's name, driver and one-line description; owned by it. */
const char *fe_policy_name(const fe_policy *p);
const char *fe_policy_driver(const fe_policy *p);
const char *fe_policy_description(const fe_policy *p);
/* The document and section the policy reproduces ("" if it does not say);
 * owned by the policy. */
const char *fe_policy_source(const fe_policy *p);
/* Free the policy (before its engine); an engine's active policy too. */
void fe_policy_free(fe_policy *p);
/* Make p, a policy of e, e's active policy (replacing the previous one).
 * FE_OK, or FE_EINPUT if p belongs to another engine. */
int fe_engine_use(fe_engine *e, fe_policy *p, fe_error *err);

/* ---- Plans ---- */

/* Run e's active policy on m. The plan refers to m; caller frees with
 * fe_plan_free. FE_EINPUT when no policy is active or the policy fails. */
fe_plan *fe_engine_plan(fe_engine *e, const fe_model *m, fe_error *err);
/* The plan as a fuseeng.plan/1 file; caller frees with fe_free. */
char *fe_plan_to_json(const fe_plan *p, fe_error *err);
/* Its number of groups (each one kernel, extern call or view group). */
int fe_plan_groups(const fe_plan *p);
/* The number of nodes in group (0 <= group < fe_plan_groups). */
int fe_plan_group_size(const fe_plan *p, int group);
/* The name of the k-th node of group; owned by the plan's model. */
const char *fe_plan_group_node(const fe_plan *p, int group, int k);
/* The number of decisions in its log (each merge asked, and the answer). */
int fe_plan_decisions(const fe_plan *p);
/* Free the plan. Free its reports and results first. */
void fe_plan_free(fe_plan *p);

/* ---- Simulation ---- */

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

/* Simulate p and the unfused plan of its model on e's machine. The report
 * refers to p; caller frees with fe_report_free. */
fe_report *fe_engine_simulate(fe_engine *e, const fe_plan *p, fe_error *err);
/* The totals of the plan (unfused = 0) or of the unfused plan (1) into out. */
void fe_report_figures(const fe_report *r, int unfused, fe_figures *out);
/* Free the report. */
void fe_report_free(fe_report *r);

/* ---- Execution on this CPU ---- */

/* Where fe_plan_execute runs a plan: this CPU's kernels, or kernels
 * generated for the first NVIDIA GPU (CUDA, loaded at run time). The
 * unfused reference always runs on the CPU. (core/exec/exec.h defines the
 * same under the same guard.) */
/* FE_API_END */
#ifndef FE_DEVICE_DEFINED
#define FE_DEVICE_DEFINED
/* FE_API_BEGIN */
enum { FE_DEVICE_CPU = 0, FE_DEVICE_CUDA = 1 };
/* FE_API_END */
#endif
/* FE_API_BEGIN */

/* How to execute a plan (fe_plan_execute). A zero field means its
 * default, given in parentheses. */
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
    int device;                /* FE_DEVICE_CPU or FE_DEVICE_CUDA (CPU) */
} fe_execute_options;

/* Run p and its unfused reference on this CPU's kernels on the same seeded
 * inputs, compare every output and (unless o->no_timing) time both. A
 * result comes back whether or not the numbers agree (fe_result_check).
 * o may be NULL. The result refers to p; caller frees with fe_result_free.
 * FE_EINPUT for an op no kernel runs or a data file that does not match. */
fe_result *fe_plan_execute(const fe_plan *p, const fe_execute_options *o, fe_error *err);
/* 1 if every output is within tolerance of the reference, else 0. */
int fe_result_ok(const fe_result *x);
/* FE_OK, or FE_ECHECK naming the first output outside tolerance (of the
 * reference, then of o->expect's outputs) and its worst element. */
int fe_result_check(const fe_result *x, fe_error *err);
/* The measured median in ms of the plan (unfused = 0) or the reference
 * (1); 0 when untimed. */
double fe_result_ms(const fe_result *x, int unfused);
/* Free the result. */
void fe_result_free(fe_result *x);

/* ---- Kernels for custom nodes ---- */

/* A custom node is an op fuseeng does not know (the importers write one
 * for what they cannot map). A program runs it by registering a kernel
 * under the name the node asks for: its attrs.kernel, else attrs.aten,
 * else attrs.onnx_op, else the target of attrs.torch ("call_function
 * mylib.op" asks for "mylib.op"). The kernel then runs wherever the node
 * does: in fe_plan_execute and every measurement, on the CPU, and on a GPU
 * as a step on the host. docs/kernels.md has a whole example. */

/* One tensor of a call: dense and row-major. */
typedef struct fe_kernel_tensor {
    void *data;                 /* NULL in a check (fe_kernel_call.check) */
    const char *dtype;          /* "f32", "f16", "bf16", "i64", "i32", "i8", "u8" or "bool" */
    int rank;
    const int64_t *shape;       /* rank sizes */
} fe_kernel_tensor;

/* What a kernel is called with. Output shapes and dtypes are the model's
 * declared ones. The call and everything it points to live for the call. */
typedef struct fe_kernel_call {
    const char *node;           /* the node's name */
    const char *kernel;         /* the name the kernel was registered under */
    const char *attrs;          /* the node's attrs as one JSON object, dims as numbers */
    int nin, nout;
    const fe_kernel_tensor *in; /* read them only */
    const fe_kernel_tensor *out;/* fill every element */
    int check;                  /* 1: no data; say whether you take these dtypes and shapes */
    void *user;                 /* what fe_kernel_register was given */
    char *why;                  /* on failure, write the reason here: why_size bytes */
    size_t why_size;
} fe_kernel_call;

/* A kernel returns 0 when done (in a check: when it takes the call), or
 * nonzero after writing why; the engine then reports it naming the node. */
typedef int (*fe_kernel_fn)(const fe_kernel_call *call);

/* Register fn under name for every custom node that asks for it, with user
 * passed back in each call; a second registration of a name replaces the
 * first. The registry is the process's: register before planning or
 * executing. FE_EINPUT for an empty name, one of 256 bytes or more, a NULL
 * fn, or a 257th kernel. */
int fe_kernel_register(const char *name, fe_kernel_fn fn, void *user, fe_error *err);

/* What a plugin exports for fe_kernel_load: its function
 *     int fuseeng_kernels(fe_kernel_register_fn reg, fe_error *err)
 * registers its kernels through reg and returns 0 (or nonzero, err set). */
typedef int (*fe_kernel_register_fn)(const char *name, fe_kernel_fn fn, void *user,
                                     fe_error *err);

/* Open the shared library at path (dlopen; kept open) and call its
 * fuseeng_kernels. FE_EINPUT naming the file for one that does not open,
 * has no fuseeng_kernels, or whose fuseeng_kernels fails. */
int fe_kernel_load(const char *path, fe_error *err);

/* FE_API_END */

#ifdef __cplusplus
}
#endif

#endif
